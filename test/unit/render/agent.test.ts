import t from 'tap';
import { agentEnv, peerEnvName, renderAgent } from '../../../src/render/agent.ts';
import type { AgentDeps, AgentInput } from '../../../src/render/inputs.ts';
import { childrenOf } from '../../../src/render/rendered.ts';
import { config, envNames, envValue, gatewayConfig, mainContainer, sampleAgent } from './helpers.ts';

/** The same value with the keys of every object in reverse order. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reverseKeys(v)]));
  }
  return value;
}

const MANAGED = { 'app.kubernetes.io/managed-by': 'kaos-operator' };

const rich: AgentInput = {
  metadata: { name: 'coordinator', namespace: 'team', uid: 'uid-c' },
  spec: {
    modelAPI: 'llm',
    mcpServers: ['zeta-tools', 'alpha-tools'],
    agentNetwork: { expose: true, access: ['worker-2', 'worker-1', 'ghost'] },
    config: {
      description: 'Coordinates',
      instructions: 'Delegate.',
      reasoningLoopMaxSteps: 7,
      memory: { enabled: false, type: 'local', contextLimit: 9, maxSessions: 50, maxSessionEvents: 20 },
      env: [
        { name: 'MODEL_NAME', value: 'gpt-4o' },
        { name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'keys', key: 'openai' } } },
      ],
    },
  },
};

const richDeps: AgentDeps = {
  modelAPI: { endpoint: 'http://modelapi-llm.team.svc.cluster.local:8000', model: 'ignored' },
  mcpServers: [
    { name: 'zeta-tools', endpoint: 'http://mcpserver-zeta-tools.team.svc.cluster.local:8000' },
    { name: 'alpha-tools', endpoint: 'http://mcpserver-alpha-tools.team.svc.cluster.local:8000' },
  ],
  peers: [
    { name: 'worker-2', endpoint: 'http://agent-worker-2.team.svc.cluster.local:8000' },
    { name: 'worker-1', endpoint: 'http://agent-worker-1.team.svc.cluster.local:8000' },
    { name: 'ghost', endpoint: '' },
  ],
};

t.test('rich agent: env in the documented order with exact values', async (t) => {
  t.strictSame(agentEnv(rich, richDeps, config), [
    { name: 'AGENT_NAME', value: 'coordinator' },
    { name: 'AGENT_DESCRIPTION', value: 'Coordinates' },
    { name: 'AGENT_INSTRUCTIONS', value: 'Delegate.' },
    { name: 'MODEL_NAME', value: 'gpt-4o' },
    { name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'keys', key: 'openai' } } },
    { name: 'MODEL_API_URL', value: 'http://modelapi-llm.team.svc.cluster.local:8000' },
    { name: 'AGENTIC_LOOP_MAX_STEPS', value: '7' },
    { name: 'MEMORY_ENABLED', value: 'false' },
    { name: 'MEMORY_TYPE', value: 'local' },
    { name: 'MEMORY_CONTEXT_LIMIT', value: '9' },
    { name: 'MEMORY_MAX_SESSIONS', value: '50' },
    { name: 'MEMORY_MAX_SESSION_EVENTS', value: '20' },
    { name: 'MCP_SERVERS', value: 'alpha-tools,zeta-tools' },
    { name: 'MCP_SERVER_alpha-tools_URL', value: 'http://mcpserver-alpha-tools.team.svc.cluster.local:8000' },
    { name: 'MCP_SERVER_zeta-tools_URL', value: 'http://mcpserver-zeta-tools.team.svc.cluster.local:8000' },
    { name: 'PEER_AGENTS', value: 'worker-1,worker-2' },
    { name: 'PEER_AGENT_WORKER_1_CARD_URL', value: 'http://agent-worker-1.team.svc.cluster.local:8000' },
    { name: 'PEER_AGENT_WORKER_2_CARD_URL', value: 'http://agent-worker-2.team.svc.cluster.local:8000' },
  ]);
});

t.test('peer env name: upper case, - to _', async (t) => {
  t.equal(peerEnvName('my-peer-2'), 'PEER_AGENT_MY_PEER_2_CARD_URL');
});

t.test('minimal agent: no optional entries; MODEL_NAME generated when config.env has none', async (t) => {
  const minimal: AgentInput = { metadata: { name: 'a', namespace: 'ns', uid: 'u' }, spec: { modelAPI: 'm' } };
  const deps: AgentDeps = { modelAPI: { endpoint: 'http://modelapi-m.ns.svc.cluster.local:11434' }, mcpServers: [], peers: [] };
  t.strictSame(agentEnv(minimal, deps, config), [
    { name: 'AGENT_NAME', value: 'a' },
    { name: 'MODEL_API_URL', value: 'http://modelapi-m.ns.svc.cluster.local:11434' },
    { name: 'MODEL_NAME', value: 'smollm2:135m' },
  ]);
  t.equal(
    envValue(agentEnv(minimal, { ...deps, modelAPI: { endpoint: 'x', model: 'ollama/llama3' } }, config), 'MODEL_NAME'),
    'ollama/llama3',
    "the ModelAPI's model when known",
  );
  const emptyStrings: AgentInput = { ...minimal, spec: { modelAPI: 'm', config: { description: '', instructions: '' } } };
  t.notOk(envNames(agentEnv(emptyStrings, deps, config)).includes('AGENT_DESCRIPTION'), 'empty description omitted');
  t.notOk(envNames(agentEnv(emptyStrings, deps, config)).includes('AGENT_INSTRUCTIONS'), 'empty instructions omitted');
  t.notOk(envNames(agentEnv(emptyStrings, deps, config)).includes('AGENTIC_LOOP_MAX_STEPS'), 'unset steps omitted');
});

t.test('memory present but partly empty: schema defaults fill it', async (t) => {
  const a: AgentInput = { metadata: { name: 'a' }, spec: { modelAPI: 'm', config: { memory: {} } } };
  const e = agentEnv(a, { modelAPI: { endpoint: 'u' }, mcpServers: [], peers: [] }, config);
  t.strictSame(
    e.filter((x) => x.name.startsWith('MEMORY_')),
    [
      { name: 'MEMORY_ENABLED', value: 'true' },
      { name: 'MEMORY_TYPE', value: 'local' },
      { name: 'MEMORY_CONTEXT_LIMIT', value: '6' },
      { name: 'MEMORY_MAX_SESSIONS', value: '1000' },
      { name: 'MEMORY_MAX_SESSION_EVENTS', value: '500' },
    ],
  );
});

t.test('order of spec lists and deps never changes the pod spec', async (t) => {
  const shuffled: AgentDeps = {
    modelAPI: richDeps.modelAPI,
    mcpServers: [...richDeps.mcpServers].reverse(),
    peers: [...richDeps.peers].reverse(),
  };
  const a = renderAgent(rich, richDeps, config).deployment;
  const b = renderAgent(rich, shuffled, config).deployment;
  t.strictSame(a, b);
});

t.test('container.env is appended and wins: generated entries of the same name are dropped', async (t) => {
  const agent: AgentInput = {
    ...rich,
    spec: {
      ...rich.spec,
      container: {
        env: [
          { name: 'MODEL_API_URL', value: 'http://override' },
          { name: 'EXTRA', value: 'x' },
          { name: 'MODEL_NAME', value: 'from-container' },
        ],
      },
    },
  };
  const e = mainContainer(renderAgent(agent, richDeps, config).deployment).env ?? [];
  t.strictSame(e.slice(-3), [
    { name: 'MODEL_API_URL', value: 'http://override' },
    { name: 'EXTRA', value: 'x' },
    { name: 'MODEL_NAME', value: 'from-container' },
  ]);
  t.equal(envNames(e).filter((n) => n === 'MODEL_API_URL').length, 1);
  t.equal(envNames(e).filter((n) => n === 'MODEL_NAME').length, 1);
  t.equal(new Set(envNames(e)).size, e.length, 'names are unique (server-side apply needs it)');
});

t.test('config.env clashing with a generated name: the later entry wins, names stay unique', async (t) => {
  const agent: AgentInput = {
    metadata: { name: 'a', namespace: 'ns' },
    spec: { modelAPI: 'm', config: { env: [{ name: 'MODEL_API_URL', value: 'user' }, { name: 'X', value: '1' }, { name: 'X', value: '2' }] } },
  };
  const e = agentEnv(agent, { modelAPI: { endpoint: 'generated' }, mcpServers: [], peers: [] }, config);
  t.strictSame(e, [
    { name: 'AGENT_NAME', value: 'a' },
    { name: 'X', value: '2' },
    { name: 'MODEL_API_URL', value: 'generated' },
    { name: 'MODEL_NAME', value: 'smollm2:135m' },
  ]);
});

t.test('sample 1: Deployment, Service, names, labels, selector, owner, probes', async (t) => {
  const agent = sampleAgent('1-simple-echo-agent.yaml', 'simple-agent');
  const deps: AgentDeps = {
    modelAPI: { endpoint: 'http://modelapi-simple-modelapi.kaos-simple.svc.cluster.local:11434' },
    mcpServers: [{ name: 'simple-echo-mcp', endpoint: 'http://mcpserver-simple-echo-mcp.kaos-simple.svc.cluster.local:8000' }],
    peers: [],
  };
  const r = renderAgent(agent, deps, config);
  const owner = {
    apiVersion: 'kaos.tools/v1alpha1',
    kind: 'Agent',
    name: 'simple-agent',
    uid: 'uid-simple-agent',
    controller: true,
    blockOwnerDeletion: true,
  };
  const labels = { app: 'agent', agent: 'simple-agent' };
  const d = r.deployment;
  t.equal(d.apiVersion, 'apps/v1');
  t.equal(d.kind, 'Deployment');
  t.strictSame(d.metadata, { name: 'agent-simple-agent', namespace: 'kaos-simple', labels: { ...labels, ...MANAGED }, ownerReferences: [owner] });
  t.equal(d.spec.replicas, 1);
  t.strictSame(d.spec.selector, { matchLabels: labels });
  t.strictSame(d.spec.template.metadata.labels, labels);
  t.strictSame(Object.keys(d.spec.template.metadata.annotations), ['kubectl.kubernetes.io/default-container', 'kaos.tools/pod-spec-hash']);
  t.equal(d.spec.template.metadata.annotations['kubectl.kubernetes.io/default-container'], 'agent', 'kubectl logs/exec pick the main container');
  const c = mainContainer(d);
  t.equal(c.name, 'agent');
  t.equal(c.image, 'axsauze/kaos-agent:0.1.3');
  t.equal(c.imagePullPolicy, 'IfNotPresent');
  t.strictSame(c.ports, [{ name: 'http', containerPort: 8000, protocol: 'TCP' }]);
  t.strictSame(c.livenessProbe, { httpGet: { path: '/health', port: 8000, scheme: 'HTTP' }, initialDelaySeconds: 30, periodSeconds: 10 });
  t.strictSame(c.readinessProbe, { httpGet: { path: '/ready', port: 8000, scheme: 'HTTP' }, initialDelaySeconds: 10, periodSeconds: 5 });
  t.strictSame(envNames(c.env), [
    'AGENT_NAME',
    'AGENT_DESCRIPTION',
    'AGENT_INSTRUCTIONS',
    'MODEL_NAME',
    'MODEL_API_URL',
    'AGENTIC_LOOP_MAX_STEPS',
    'MCP_SERVERS',
    'MCP_SERVER_simple-echo-mcp_URL',
  ]);
  t.equal(envValue(c.env, 'AGENT_INSTRUCTIONS')?.split('\n')[0], 'You are a helpful assistant with access to an echo tool.');
  t.equal(envValue(c.env, 'AGENTIC_LOOP_MAX_STEPS'), '5');
  t.strictSame(r.service, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'agent-simple-agent', namespace: 'kaos-simple', labels: { ...labels, ...MANAGED }, ownerReferences: [owner] },
    spec: { type: 'ClusterIP', selector: labels, ports: [{ name: 'http', port: 8000, targetPort: 8000, protocol: 'TCP' }] },
  });
  t.equal(r.endpoint, 'http://agent-simple-agent.kaos-simple.svc.cluster.local:8000');
  t.equal(r.httpRoute, undefined, 'gateway disabled');
  t.notOk('configMap' in r);
  t.same(childrenOf(r).map((c) => c.kind), ['Deployment', 'Service']);
});

t.test('sample 2 coordinator: peers wired in sorted', async (t) => {
  const agent = sampleAgent('2-multi-agent-mcp.yaml', 'coordinator');
  const r = renderAgent(
    agent,
    {
      modelAPI: { endpoint: 'http://modelapi-multi-modelapi.kaos-multi.svc.cluster.local:11434' },
      mcpServers: [{ name: 'multi-echo-mcp', endpoint: 'http://mcpserver-multi-echo-mcp.kaos-multi.svc.cluster.local:8000' }],
      peers: [
        { name: 'worker-2', endpoint: 'http://agent-worker-2.kaos-multi.svc.cluster.local:8000' },
        { name: 'worker-1', endpoint: 'http://agent-worker-1.kaos-multi.svc.cluster.local:8000' },
      ],
    },
    config,
  );
  const e = mainContainer(r.deployment).env;
  t.strictSame(envNames(e).slice(-3), ['PEER_AGENTS', 'PEER_AGENT_WORKER_1_CARD_URL', 'PEER_AGENT_WORKER_2_CARD_URL']);
  t.equal(envValue(e, 'PEER_AGENTS'), 'worker-1,worker-2');
  t.equal(envValue(e, 'AGENTIC_LOOP_MAX_STEPS'), '10');
});

t.test('expose: false → no Service, no HTTPRoute, no endpoint', async (t) => {
  const agent: AgentInput = { metadata: { name: 'a', namespace: 'ns', uid: 'u' }, spec: { modelAPI: 'm', agentNetwork: { expose: false } } };
  const r = renderAgent(agent, { modelAPI: { endpoint: 'x' }, mcpServers: [], peers: [] }, gatewayConfig);
  t.strictSame(Object.keys(r), ['deployment']);
});

t.test('ContainerOverride: image, command, args, resources on the agent container', async (t) => {
  const agent: AgentInput = {
    metadata: { name: 'a', namespace: 'ns', uid: 'u' },
    spec: {
      modelAPI: 'm',
      container: { image: 'my/agent:2', command: ['python'], args: ['-m', 'agent'], resources: { limits: { cpu: '1' } } },
    },
  };
  const c = mainContainer(renderAgent(agent, { modelAPI: { endpoint: 'x' }, mcpServers: [], peers: [] }, config).deployment);
  t.equal(c.image, 'my/agent:2');
  t.strictSame(c.command, ['python']);
  t.strictSame(c.args, ['-m', 'agent']);
  t.strictSame(c.resources, { limits: { cpu: '1' } });
});

t.test('DEFAULT_AGENT_IMAGE is used when spec.container.image is unset', async (t) => {
  const agent: AgentInput = { metadata: { name: 'a' }, spec: { modelAPI: 'm' } };
  const c = mainContainer(
    renderAgent(agent, { modelAPI: { endpoint: 'x' }, mcpServers: [], peers: [] }, { ...config, images: { ...config.images, agent: 'reg/agent:9' } })
      .deployment,
  );
  t.equal(c.image, 'reg/agent:9');
});

t.test('spec.podSpec merged onto the agent pod; the hash follows', async (t) => {
  const deps: AgentDeps = { modelAPI: { endpoint: 'x' }, mcpServers: [], peers: [] };
  const plain: AgentInput = { metadata: { name: 'a', namespace: 'ns' }, spec: { modelAPI: 'm' } };
  const patched: AgentInput = {
    ...plain,
    spec: { ...plain.spec, podSpec: { serviceAccountName: 'sa', containers: [{ name: 'agent', env: [{ name: 'AGENT_NAME', value: 'renamed' }] }] } },
  };
  const a = renderAgent(plain, deps, config).deployment;
  const b = renderAgent(patched, deps, config).deployment;
  t.equal(b.spec.template.spec['serviceAccountName'], 'sa');
  t.equal(envValue(mainContainer(b).env, 'AGENT_NAME'), 'renamed');
  t.equal(envNames(mainContainer(b).env)[0], 'AGENT_NAME', 'merged in place');
  t.not(a.spec.template.metadata.annotations['kaos.tools/pod-spec-hash'], b.spec.template.metadata.annotations['kaos.tools/pod-spec-hash']);
});

t.test('pod-spec-hash: same input → same hash; any change → different', async (t) => {
  const hash = (agent: AgentInput, deps: AgentDeps = richDeps): string | undefined =>
    renderAgent(agent, deps, config).deployment.spec.template.metadata.annotations['kaos.tools/pod-spec-hash'];
  t.match(hash(rich), /^[0-9a-f]{16}$/);
  t.equal(hash(rich), hash(structuredClone(rich)));
  // The same spec written with keys in another order.
  const reordered = reverseKeys(rich) as AgentInput;
  t.not(JSON.stringify(reordered), JSON.stringify(rich), 'really reordered');
  t.equal(hash(reordered), hash(rich));
  t.not(hash({ ...rich, spec: { ...rich.spec, config: { ...rich.spec.config, instructions: 'Other.' } } }), hash(rich));
  t.not(hash(rich, { ...richDeps, modelAPI: { endpoint: 'http://elsewhere' } }), hash(rich));
  t.not(hash(rich, { ...richDeps, peers: [] }), hash(rich));
});

t.test('gateway enabled: HTTPRoute agent-<name>', async (t) => {
  const agent = sampleAgent('1-simple-echo-agent.yaml', 'simple-agent');
  const r = renderAgent(agent, { modelAPI: { endpoint: 'x' }, mcpServers: [], peers: [] }, gatewayConfig);
  t.equal(r.httpRoute?.metadata.name, 'agent-simple-agent');
  t.strictSame(r.httpRoute?.spec.rules[0]?.timeouts, { request: '120s' });
  t.same(childrenOf(r).map((c) => c.kind), ['Deployment', 'Service', 'HTTPRoute']);
});
