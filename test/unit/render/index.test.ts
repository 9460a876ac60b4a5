import t from 'tap';
import {
  defaultImageFor,
  endpointFor,
  renderAgent,
  renderPodSpec,
  type AgentInput,
  type MCPServerInput,
  type ModelAPIInput,
} from '../../../src/render/index.ts';
import { POD_SPEC_HASH_ANNOTATION } from '../../../src/render/hash.ts';
import { POD_SPEC_HASH_PLACEHOLDER } from '../../../src/render/workload.ts';
import { config, envValue, mainContainer, sampleAgent, sampleMCPServer, sampleModelAPI } from './helpers.ts';

t.test('renderPodSpec returns the final merged pod and its Deployment, per kind', async (t) => {
  const agent: AgentInput = {
    metadata: { name: 'a', namespace: 'ns' },
    spec: { modelAPI: 'm', mcpServers: ['x'], agentNetwork: { access: ['b'] }, podSpec: { nodeSelector: { pool: 'gpu' } } },
  };
  const a = renderPodSpec('Agent', agent, config);
  t.equal(a.podSpec, a.deployment.spec.template.spec);
  t.strictSame(a.podSpec['nodeSelector'], { pool: 'gpu' });
  const c = a.podSpec.containers[0];
  t.equal(envValue(c?.env, 'MCP_SERVER_x_URL'), endpointFor('MCPServer', 'x', 'ns'));
  t.equal(envValue(c?.env, 'PEER_AGENT_B_CARD_URL'), endpointFor('Agent', 'b', 'ns'));
  t.equal(envValue(c?.env, 'MODEL_API_URL'), '');

  const deps = { modelAPI: { endpoint: 'http://real' }, mcpServers: [], peers: [] };
  const judged = renderPodSpec('Agent', agent, config, deps).deployment;
  t.strictSame(judged, renderAgent(agent, deps, { ...config, podSpecHash: false }).deployment, 'real deps → real pod');
  t.equal(judged.spec.template.metadata.annotations[POD_SPEC_HASH_ANNOTATION], POD_SPEC_HASH_PLACEHOLDER, 'judged, never run: its hash is a placeholder');
  t.match(renderAgent(agent, deps, config).deployment.spec.template.metadata.annotations[POD_SPEC_HASH_ANNOTATION], /^[0-9a-f]{16}$/, 'the pod that runs has its hash');

  const m = renderPodSpec('ModelAPI', sampleModelAPI('4-dev-ollama-proxy-agent.yaml', 'dev-ollama-proxy'), config);
  t.equal(m.deployment.metadata.name, 'modelapi-dev-ollama-proxy');
  t.equal(m.podSpec.containers[0]?.name, 'model-api');
  const x = renderPodSpec('MCPServer', sampleMCPServer('2-multi-agent-mcp.yaml', 'multi-echo-mcp'), config);
  t.equal(x.podSpec.containers[0]?.name, 'mcp-server');
});

t.test('renderPodSpec surfaces a bad override for the API server to reject', async (t) => {
  const agent: AgentInput = { metadata: { name: 'a' }, spec: { modelAPI: 'm', podSpec: { containers: [{ name: 'agent', image: '' }, { image: 'no-name' }] } } };
  const p = renderPodSpec('Agent', agent, config).podSpec;
  t.equal(p.containers[0]?.image, '');
  t.strictSame(p.containers[1], { image: 'no-name' });
});

t.test('defaultImageFor: per kind, mode and tools source (what the mutating webhook writes)', async (t) => {
  t.equal(defaultImageFor('Agent', { modelAPI: 'm' }, config), 'axsauze/kaos-agent:0.1.3');
  t.equal(defaultImageFor('ModelAPI', { mode: 'Proxy' }, config), 'ghcr.io/berriai/litellm:main-v1.74.3-stable');
  t.equal(defaultImageFor('ModelAPI', { mode: 'Hosted' }, config), 'ollama/ollama:0.11.4');
  const mcp = (type: MCPServerInput['spec']['type'], tools: object): MCPServerInput['spec'] => ({ type, config: { tools } });
  t.equal(defaultImageFor('MCPServer', mcp('python-runtime', { fromString: 'x' }), config), 'axsauze/kaos-agent:0.1.3');
  t.equal(defaultImageFor('MCPServer', mcp('python-runtime', { fromSecretKeyRef: { key: 'k' } }), config), 'axsauze/kaos-agent:0.1.3');
  t.equal(defaultImageFor('MCPServer', mcp('python-runtime', { fromPackage: 'p' }), config), 'python:3.12-slim');
  t.equal(defaultImageFor('MCPServer', mcp('node-runtime', { fromPackage: 'p' }), config), 'node:22-slim');
});

t.test('an image the webhook defaulted renders exactly like no image', async (t) => {
  const m = sampleModelAPI('1-simple-echo-agent.yaml', 'simple-modelapi');
  const defaulted: ModelAPIInput = { ...m, spec: { ...m.spec, container: { image: defaultImageFor('ModelAPI', m.spec, config) } } };
  t.strictSame(renderPodSpec('ModelAPI', defaulted, config).deployment, renderPodSpec('ModelAPI', m, config).deployment);
  const a = sampleAgent('1-simple-echo-agent.yaml', 'simple-agent');
  const agentDefaulted: AgentInput = { ...a, spec: { ...a.spec, container: { image: defaultImageFor('Agent', a.spec, config) } } };
  t.equal(mainContainer(renderPodSpec('Agent', agentDefaulted, config).deployment).image, 'axsauze/kaos-agent:0.1.3');
});
