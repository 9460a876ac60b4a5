// End-to-end: the shapes KAOS released in v0.1.2–v0.1.3 (docs/api.md, "Newer KAOS shapes"), beside the original
// ones, against a real kube-apiserver with the operator started through dist/main.js. KAOS's own
// v0.1.3 sample manifests are applied unchanged with kubectl and reach the children docs/api.md, "Newer KAOS shapes" describes
// (every expectation written out from the contract, never computed with the renderer); mixed
// shapes are refused naming both fields; a model the ModelAPI does not serve is refused at apply
// time (Enforce) and reported by the controller in KAOS's words (Warn); a ModelAPI change that
// strands an Agent is warned about; an API key from a Secret or a ConfigMap is a dependency
// (absence in status, a change rolls the pods, the key in no Event or status); and original-shape objects survive a restart of the operator
// with new operator-wide defaults byte for byte (same resourceVersion, no rollout).
//
// Run `npm run build` first: the operator process is dist/main.js.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import type { OperatorProcess } from '../../scripts/local-stack.ts';
import { eventually } from '../support/poll.ts';
import {
  applyObjects,
  at,
  createNamespace,
  getObject,
  kaos,
  kubectlOk,
  podSpecOf,
  waitForObject,
  waitForPhase,
  type Json,
} from './support/children.ts';
import { operatorSettled, startAnotherOperator } from './support/lifecycle.ts';
import { IMAGES, OPERATOR_ENV, useStack } from './support/stack.ts';

const s = useStack(t);
const V013 = fileURLToPath(new URL('../fixtures/samples/kaos-v0.1.3/', import.meta.url));
const ORIGINAL = fileURLToPath(new URL('../fixtures/samples/', import.meta.url));

const container = (deployment: Json, name: string): Json | undefined =>
  (podSpecOf(deployment).containers as Json[] | undefined)?.find((c) => c.name === name);
const envOf = (deployment: Json, name: string): unknown => container(deployment, name)?.env;
const svc = (prefix: string, name: string, ns: string, port: number): string => `http://${prefix}-${name}.${ns}.svc.cluster.local:${port}`;

/** `kubectl apply -f <file>` as a user runs it, unchanged; returns kubectl's result. */
const applyFile = (file: string) => s().plane.kubectl(['apply', '-f', file]);
const applyJson = (ns: string, objects: readonly Json[]) =>
  s().plane.kubectl(['apply', '-n', ns, '-f', '-'], { input: objects.map((o) => JSON.stringify(o)).join('\n---\n') });

/**
 * Waits for every object of the file to be Ready: their pods run on the local control plane's
 * kwok nodes, so the Deployments become available by the real chain (`deployments` are named for
 * the reader; the Ready phase already implies their rollout is done).
 */
async function converge(ns: string, deployments: readonly string[], objects: readonly (readonly [string, string])[]): Promise<void> {
  for (const d of deployments) await waitForObject(s(), 'deployment', ns, d);
  for (const [resource, name] of objects) await waitForPhase(s(), resource, ns, name, 'Ready');
}

t.test('v0.1.3 sample 1 applies unchanged: the Agent gets MODEL_NAME from spec.model and LOG_LEVEL; the rest is original shape', async (t) => {
  const res = await applyFile(join(V013, '1-simple-echo-agent.yaml'));
  t.equal(res.code, 0, `applied: ${res.stderr}`);
  t.equal(res.stderr, '', 'no warning');
  const ns = 'kaos-simple';
  await waitForObject(s(), 'deployment', ns, 'modelapi-simple-modelapi');
  await waitForObject(s(), 'deployment', ns, 'mcpserver-simple-echo-mcp');
  await converge(ns, ['modelapi-simple-modelapi', 'mcpserver-simple-echo-mcp'], [['modelapi', 'simple-modelapi'], ['mcpserver', 'simple-echo-mcp']]);
  const deployment = await waitForObject(s(), 'deployment', ns, 'agent-simple-agent');
  await waitForPhase(s(), 'agent', ns, 'simple-agent', 'Ready');

  const agent = await waitForObject(s(), 'agent', ns, 'simple-agent');
  t.equal(at(agent, 'spec', 'model'), 'smollm2:135m', 'spec.model is stored as written');
  t.equal(at(agent, 'spec', 'config', 'env'), undefined, 'no MODEL_NAME defaulted into config.env');
  const instructions = String(at(agent, 'spec', 'config', 'instructions'));
  t.strictSame(envOf(deployment, 'agent'), [
    { name: 'AGENT_NAME', value: 'simple-agent' },
    { name: 'AGENT_DESCRIPTION', value: 'A simple echo agent for testing' },
    { name: 'AGENT_INSTRUCTIONS', value: instructions },
    { name: 'MODEL_API_URL', value: svc('modelapi', 'simple-modelapi', ns, 11434) },
    { name: 'MODEL_NAME', value: 'smollm2:135m' },
    { name: 'AGENTIC_LOOP_MAX_STEPS', value: '5' },
    { name: 'TOOL_CALL_MODE', value: 'auto' },
    { name: 'MCP_SERVERS', value: 'simple-echo-mcp' },
    { name: 'MCP_SERVER_simple-echo-mcp_URL', value: svc('mcpserver', 'simple-echo-mcp', ns, 8000) },
    { name: 'LOG_LEVEL', value: 'INFO' },
  ], 'the Agent env order with spec.model as MODEL_NAME, the defaulted toolCallMode and LOG_LEVEL (DEFAULT_LOG_LEVEL INFO)');
  t.equal(at(agent, 'spec', 'config', 'toolCallMode'), 'auto', 'toolCallMode defaulted in the config of a newer-shape Agent');
  t.equal(container(deployment, 'agent')?.image, IMAGES.agent);

  // The Hosted ModelAPI and the MCPServer are in the original shape: exactly as docs/api.md's ModelAPI and MCPServer sections say, no new env.
  const modelAPI = await waitForObject(s(), 'deployment', ns, 'modelapi-simple-modelapi');
  t.strictSame(envOf(modelAPI, 'model-api'), [{ name: 'OLLAMA_DEBUG', value: 'false' }]);
  const mcp = await waitForObject(s(), 'deployment', ns, 'mcpserver-simple-echo-mcp');
  t.strictSame(envOf(mcp, 'mcp-server'), [
    { name: 'LOG_LEVEL', value: 'INFO' },
    { name: 'MCP_PACKAGE', value: 'test-mcp-echo-server' },
    { name: 'MCP_ENTRYPOINT', value: 'test-mcp-echo-server' },
    { name: 'MCP_MODULE', value: 'test_mcp_echo_server' },
  ]);
  const columns = await kubectlOk(s(), ['get', 'agents', '-n', ns]);
  t.match(columns, /MODEL\s/, 'the Model printer column');
  t.match(columns, /simple-agent\s+simple-modelapi\s+smollm2:135m\s/);
});

t.test('v0.1.3 sample 4 applies unchanged: LiteLLM config from models, PROXY_API_BASE, the user LITELLM_LOG', async (t) => {
  const res = await applyFile(join(V013, '4-dev-ollama-proxy-agent.yaml'));
  t.equal(res.code, 0, `applied: ${res.stderr}`);
  const ns = 'kaos-dev';
  const configMap = await waitForObject(s(), 'configmap', ns, 'litellm-config-dev-ollama-proxy');
  t.same(parse(String(at(configMap, 'data', 'config.yaml'))), {
    model_list: [{ model_name: '*', litellm_params: { model: '*', api_base: 'os.environ/PROXY_API_BASE' } }],
    litellm_settings: { drop_params: true },
  }, 'one entry per model, api_base by reference to the env');
  const modelAPI = await waitForObject(s(), 'deployment', ns, 'modelapi-dev-ollama-proxy');
  t.strictSame(envOf(modelAPI, 'model-api'), [
    { name: 'PROXY_API_BASE', value: 'http://host.docker.internal:11434' },
    { name: 'LITELLM_LOG', value: 'INFO' },
  ], "PROXY_API_BASE, then proxyConfig.env; the user's LITELLM_LOG, no second one");
  t.same(container(modelAPI, 'model-api')?.args, ['--config', '/etc/litellm/config.yaml', '--port', '8000']);
  await waitForObject(s(), 'deployment', ns, 'mcpserver-dev-echo-mcp');
  await converge(ns, ['modelapi-dev-ollama-proxy', 'mcpserver-dev-echo-mcp'], [['modelapi', 'dev-ollama-proxy'], ['mcpserver', 'dev-echo-mcp']]);
  const agent = await waitForObject(s(), 'deployment', ns, 'agent-dev-agent');
  const env = envOf(agent, 'agent') as Json[];
  t.same(env.find((e) => e.name === 'MODEL_NAME'), { name: 'MODEL_NAME', value: 'ollama/smollm2:135m' }, 'any model is served by "*"');
  t.same(env.find((e) => e.name === 'MODEL_API_URL'), { name: 'MODEL_API_URL', value: svc('modelapi', 'dev-ollama-proxy', ns, 8000) });
});

t.test('v0.1.3 sample 2 applies unchanged: coordinator and workers converge with peers wired', async (t) => {
  const res = await applyFile(join(V013, '2-multi-agent-mcp.yaml'));
  t.equal(res.code, 0, `applied: ${res.stderr}`);
  const ns = 'kaos-multi';
  await waitForObject(s(), 'deployment', ns, 'modelapi-multi-modelapi');
  await waitForObject(s(), 'deployment', ns, 'mcpserver-multi-echo-mcp');
  await converge(ns, ['modelapi-multi-modelapi', 'mcpserver-multi-echo-mcp'], [['modelapi', 'multi-modelapi'], ['mcpserver', 'multi-echo-mcp']]);
  for (const w of ['worker-1', 'worker-2']) {
    await waitForObject(s(), 'deployment', ns, `agent-${w}`);
  }
  const coordinator = await waitForObject(s(), 'deployment', ns, 'agent-coordinator', (d) =>
    ((envOf(d, 'agent') as Json[] | undefined) ?? []).some((e) => e.name === 'PEER_AGENTS' && e.value === 'worker-1,worker-2'));
  const names = ((envOf(coordinator, 'agent') as Json[]) ?? []).map((e) => `${String(e.name)}=${String(e.value)}`);
  t.same(names.slice(-8), [
    'AGENTIC_LOOP_MAX_STEPS=10',
    'TOOL_CALL_MODE=auto',
    'MCP_SERVERS=multi-echo-mcp',
    `MCP_SERVER_multi-echo-mcp_URL=${svc('mcpserver', 'multi-echo-mcp', ns, 8000)}`,
    'PEER_AGENTS=worker-1,worker-2',
    `PEER_AGENT_WORKER_1_CARD_URL=${svc('agent', 'worker-1', ns, 8000)}`,
    `PEER_AGENT_WORKER_2_CARD_URL=${svc('agent', 'worker-2', ns, 8000)}`,
    'LOG_LEVEL=INFO',
  ]);
  t.ok(names.includes('MODEL_NAME=smollm2:135m'));
});

t.test('mixed shapes are refused, naming both fields', async (t) => {
  const ns = 'mixed-shapes';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [kaos('ModelAPI', 'llm', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } })]);
  const model = await applyJson(ns, [kaos('ModelAPI', 'both', { mode: 'Proxy', proxyConfig: { model: 'gpt-4o', models: ['gpt-4o'] } })]);
  t.strictSame(model, {
    code: 1,
    stdout: '',
    stderr: 'The ModelAPI "both" is invalid: spec.proxyConfig.models: Forbidden: may not be set together with spec.proxyConfig.model\n',
  });
  const agent = await applyJson(ns, [kaos('Agent', 'both', { modelAPI: 'llm', model: 'smollm2:135m', config: { env: [{ name: 'MODEL_NAME', value: 'smollm2:135m' }] } })]);
  t.strictSame(agent, {
    code: 1,
    stdout: '',
    stderr: 'The Agent "both" is invalid: spec.model: Forbidden: may not be set together with spec.config.env[MODEL_NAME]\n',
  });
  const env = await applyJson(ns, [
    kaos('Agent', 'envs', { modelAPI: 'llm', model: 'smollm2:135m', config: { env: [{ name: 'A', value: '1' }] }, container: { env: [{ name: 'B', value: '2' }] } }),
  ]);
  t.strictSame(env, {
    code: 1,
    stdout: '',
    stderr: 'The Agent "envs" is invalid: spec.config.env: Forbidden: may not be set together with spec.container.env\n',
  });
});

t.test('a model the ModelAPI does not serve: refused at apply time under Enforce', async (t) => {
  const ns = 'model-enforce';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [kaos('ModelAPI', 'llm', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } })]);
  for (const args of [['--dry-run=server'], []]) {
    const res = await s().plane.kubectl(['apply', '-n', ns, '-f', '-', ...args], { input: JSON.stringify(kaos('Agent', 'a', { modelAPI: 'llm', model: 'gpt-4o' })) });
    t.strictSame(res, {
      code: 1,
      stdout: '',
      stderr: 'The Agent "a" is invalid: spec.model: Not found: "gpt-4o": not supported by ModelAPI "llm" (supported: [smollm2:135m])\n',
    }, `refused ${args.join(' ')}`);
  }
});

t.test("under Warn: admitted with a warning, reported by the controller in KAOS's words; a stranding change is warned", async (t) => {
  const ns = 'model-warn';
  await kubectlOk(s(), ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'kaos.tools/reference-policy': 'Warn' } } }));
  await applyObjects(s(), ns, [kaos('ModelAPI', 'llm', { mode: 'Proxy', proxyConfig: { models: ['openai/*', 'claude'], apiBase: 'http://litellm.example:4000' } })]);
  const res = await applyJson(ns, [kaos('Agent', 'lost', { modelAPI: 'llm', model: 'gpt-4o' })]);
  t.equal(res.code, 0);
  t.equal(res.stdout, 'agent.kaos.tools/lost created\n');
  t.match(res.stderr, /^Warning: spec\.model: Not found: "gpt-4o": not supported by ModelAPI "llm" \(supported: \[openai\/\* claude\]\)/);
  const agent = await waitForPhase(s(), 'agent', ns, 'lost', 'Failed');
  t.equal(at(agent, 'status', 'message'), 'model "gpt-4o" not supported by ModelAPI "llm" (supported: [openai/* claude])');
  const stalled = ((at(agent, 'status', 'conditions') as Json[]) ?? []).find((c) => c.type === 'Stalled');
  t.equal(stalled?.status, 'True', 'Stalled: only a change fixes it');

  // An Agent that is served now, seen by the operator (it has a status), then stranded.
  await applyObjects(s(), ns, [kaos('Agent', 'served', { modelAPI: 'llm', model: 'openai/gpt-4o' })]);
  await waitForObject(s(), 'agent', ns, 'served', (o) => at(o, 'status', 'phase') !== undefined);
  const change = await applyJson(ns, [kaos('ModelAPI', 'llm', { mode: 'Proxy', proxyConfig: { models: ['claude'], apiBase: 'http://litellm.example:4000' } })]);
  t.equal(change.code, 0);
  t.equal(change.stderr, 'Warning: ModelAPI "llm" no longer serves the model of Agents: served\n', 'names the Agent it strands (not the one already lost)');
  const stranded = await waitForObject(s(), 'agent', ns, 'served', (o) => at(o, 'status', 'phase') === 'Failed');
  t.equal(at(stranded, 'status', 'message'), 'model "openai/gpt-4o" not supported by ModelAPI "llm" (supported: [claude])');
});

t.test('an apiKey from a Secret: its absence is the status; its creation and every change roll the pods', async (t) => {
  const ns = 'api-key';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [
    kaos('ModelAPI', 'cloud', {
      mode: 'Proxy',
      proxyConfig: { models: ['gpt-4o'], provider: 'openai', apiKey: { valueFrom: { secretKeyRef: { name: 'openai', key: 'api-key' } } } },
    }),
  ]);
  const failed = await waitForPhase(s(), 'modelapi', ns, 'cloud', 'Failed');
  t.equal(at(failed, 'status', 'message'), 'Failed to resolve Secret openai: secrets "openai" not found');
  t.equal(await getObject(s(), 'deployment', ns, 'modelapi-cloud'), undefined, 'no pod that cannot start');

  await kubectlOk(s(), ['create', 'secret', 'generic', 'openai', '-n', ns, '--from-literal=api-key=sk-one']);
  const first = await waitForObject(s(), 'deployment', ns, 'modelapi-cloud');
  t.strictSame(envOf(first, 'model-api'), [
    { name: 'PROXY_API_KEY', valueFrom: { secretKeyRef: { key: 'api-key', name: 'openai' } } },
    { name: 'LITELLM_LOG', value: 'INFO' },
  ], 'the key by reference: its value is never in the Deployment');
  const configMap = await waitForObject(s(), 'configmap', ns, 'litellm-config-cloud');
  t.same(parse(String(at(configMap, 'data', 'config.yaml'))), {
    model_list: [{ model_name: 'gpt-4o', litellm_params: { model: 'openai/gpt-4o', api_key: 'os.environ/PROXY_API_KEY' } }],
    litellm_settings: { drop_params: true },
  });
  const hashOf = (d: Json): unknown => at(d, 'spec', 'template', 'metadata', 'annotations', 'kaos.tools/config-hash');
  t.match(hashOf(first), /^[0-9a-f]{16}$/);
  await kubectlOk(s(), ['patch', 'secret', 'openai', '-n', ns, '--type=merge', '-p', JSON.stringify({ stringData: { 'api-key': 'sk-two' } })]);
  const rolled = await waitForObject(s(), 'deployment', ns, 'modelapi-cloud', (d) => hashOf(d) !== hashOf(first), 'a new config hash');
  t.not(hashOf(rolled), hashOf(first), 'a new key rolls the pods');
  const events = await kubectlOk(s(), ['get', 'events', '-n', ns, '-o', 'json']);
  t.notOk(events.includes('sk-one') || events.includes('sk-two'), 'the key is in no Event');
  const status = JSON.stringify(at(await getObject(s(), 'modelapi', ns, 'cloud') ?? {}, 'status'));
  t.notOk(status.includes('sk-'), 'nor in the status');
});

t.test('an apiKey from a ConfigMap: its absence is the status; its creation makes it Ready; a change rolls out a new ReplicaSet', async (t) => {
  const ns = 'api-key-cm';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [
    kaos('ModelAPI', 'cloud', {
      mode: 'Proxy',
      proxyConfig: { models: ['gpt-4o'], provider: 'openai', apiKey: { valueFrom: { configMapKeyRef: { name: 'openai', key: 'api-key' } } } },
    }),
  ]);
  const failed = await waitForPhase(s(), 'modelapi', ns, 'cloud', 'Failed');
  t.equal(at(failed, 'status', 'message'), 'Failed to resolve ConfigMap openai: configmaps "openai" not found');
  t.equal(await getObject(s(), 'deployment', ns, 'modelapi-cloud'), undefined, 'no pod that cannot start');

  await kubectlOk(s(), ['create', 'configmap', 'openai', '-n', ns, '--from-literal=api-key=sk-cm-one']);
  const first = await waitForObject(s(), 'deployment', ns, 'modelapi-cloud');
  t.strictSame(envOf(first, 'model-api'), [
    { name: 'PROXY_API_KEY', valueFrom: { configMapKeyRef: { key: 'api-key', name: 'openai' } } },
    { name: 'LITELLM_LOG', value: 'INFO' },
  ], 'the key by reference: its value is never in the Deployment');
  await waitForPhase(s(), 'modelapi', ns, 'cloud', 'Ready');
  const hashOf = (d: Json): unknown => at(d, 'spec', 'template', 'metadata', 'annotations', 'kaos.tools/config-hash');
  t.match(hashOf(first), /^[0-9a-f]{16}$/);
  const replicaSets = async (): Promise<string[]> =>
    (await kubectlOk(s(), ['get', 'replicasets', '-n', ns, '-o', 'jsonpath={range .items[*]}{.metadata.name} {end}'])).split(' ').filter((n) => n !== '');
  const before = await replicaSets();
  t.equal(before.length, 1, 'one ReplicaSet before the change');

  await kubectlOk(s(), ['patch', 'configmap', 'openai', '-n', ns, '--type=merge', '-p', JSON.stringify({ data: { 'api-key': 'sk-cm-two' } })]);
  const rolled = await waitForObject(s(), 'deployment', ns, 'modelapi-cloud', (d) => hashOf(d) !== hashOf(first), 'a new config hash');
  t.not(hashOf(rolled), hashOf(first), 'a new key rolls the pods');
  const after = await eventually('a new ReplicaSet', async () => {
    const names = await replicaSets();
    return names.length === 2 ? names : undefined;
  }, { timeoutMs: 30_000, intervalMs: 250 });
  t.ok(after.some((name) => !before.includes(name)), 'a new rollout');
  await waitForPhase(s(), 'modelapi', ns, 'cloud', 'Ready');
  const events = await kubectlOk(s(), ['get', 'events', '-n', ns, '-o', 'json']);
  t.notOk(events.includes('sk-cm-'), 'the key is in no Event');
  const status = JSON.stringify(at(await getObject(s(), 'modelapi', ns, 'cloud') ?? {}, 'status'));
  t.notOk(status.includes('sk-cm-'), 'nor in the status');
});

t.test('original-shape objects survive an operator restart with new defaults byte for byte: same resourceVersion, no rollout', async (t) => {
  // The original sample 4 uses v0.1.3's namespace and names: applied over them, it moves the
  // objects back to the original shape (kubectl's three-way merge drops models and spec.model).
  const res = await applyFile(join(ORIGINAL, '4-dev-ollama-proxy-agent.yaml'));
  t.equal(res.code, 0, `applied: ${res.stderr}`);
  const dev = 'kaos-dev';
  const agentDeployment = await waitForObject(s(), 'deployment', dev, 'agent-dev-agent', (d) =>
    !((envOf(d, 'agent') as Json[] | undefined) ?? []).some((e) => e.name === 'LOG_LEVEL'));
  t.ok(agentDeployment, 'back in the original shape: no LOG_LEVEL');
  const agentBack = await waitForObject(s(), 'agent', dev, 'dev-agent');
  t.equal(at(agentBack, 'spec', 'config', 'toolCallMode'), undefined, 'the toolCallMode the webhook chose went with spec.model');
  t.notOk(((envOf(agentDeployment, 'agent') as Json[] | undefined) ?? []).some((e) => e.name === 'TOOL_CALL_MODE'), 'and its env with it');
  const modelAPIDeployment = await waitForObject(s(), 'deployment', dev, 'modelapi-dev-ollama-proxy', (d) =>
    !((envOf(d, 'model-api') as Json[] | undefined) ?? []).some((e) => e.name === 'PROXY_API_BASE'));
  t.strictSame(envOf(modelAPIDeployment, 'model-api'), [
    { name: 'OPENAI_API_KEY', value: 'sk-test' },
    { name: 'LITELLM_LOG', value: 'INFO' },
  ], 'the original Proxy env exactly: proxyConfig.env, its LITELLM_LOG');
  await converge(dev, ['modelapi-dev-ollama-proxy', 'mcpserver-dev-echo-mcp', 'agent-dev-agent'], [
    ['modelapi', 'dev-ollama-proxy'], ['mcpserver', 'dev-echo-mcp'], ['agent', 'dev-agent'],
  ]);

  const versions = async (): Promise<string> =>
    kubectlOk(s(), ['get', 'agents,modelapis,mcpservers,deployments,services,configmaps', '-n', dev, '-o',
      'jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion} {end}']);
  const stored = async (): Promise<string> => kubectlOk(s(), ['get', 'agents,modelapis,mcpservers', '-n', dev, '-o', 'json']);
  const before = await versions();
  const storedBefore = await stored();

  const operator: OperatorProcess = s().operator;
  await operator.stop();
  const upgraded = await startAnotherOperator(s(), 'upgraded', {
    ...OPERATOR_ENV,
    DEFAULT_LOG_LEVEL: 'DEBUG',
    DEFAULT_TELEMETRY_ENABLED: 'true',
    DEFAULT_TELEMETRY_ENDPOINT: 'http://otel-collector.observability:4317',
  }, operator.webhookPort);
  t.teardown(() => upgraded.stop());
  await eventually('the new operator to reconcile everything', () => operatorSettled(upgraded.metricsPort, 3), {
    timeoutMs: 60_000, intervalMs: 250, retryErrors: true,
  });
  // The v0.1.3 Agents elsewhere are new-shape: they do follow the new defaults (proof the restart took effect).
  await waitForObject(s(), 'deployment', 'kaos-simple', 'agent-simple-agent', (d) =>
    ((envOf(d, 'agent') as Json[] | undefined) ?? []).some((e) => e.name === 'LOG_LEVEL' && e.value === 'DEBUG'));
  await eventually('the queues to drain again', () => operatorSettled(upgraded.metricsPort, 3), { timeoutMs: 30_000, intervalMs: 250, retryErrors: true });
  t.equal(await versions(), before, 'no resourceVersion moved in the original-shape namespace');
  t.equal(await stored(), storedBefore, 'the stored objects are byte for byte what they were');
});
