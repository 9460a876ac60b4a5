import t from 'tap';
import type { WorkloadKind } from '../../../src/api/kinds.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { workloadName } from '../../../src/render/index.ts';
import { MemoryReconcileContext } from '../../support/memory-reconcile-context.ts';
import { deploymentStatus, owner, podSpecOf, reconcile, sampleObject, sampleObjects, statusOf } from './reconcile-helpers.ts';

const SIMPLE = '1-simple-echo-agent.yaml';
const NS = 'kaos-simple';
const AGENT = 'simple-agent';

/** Creates and reconciles a dependency until its status is Ready (or just reconciled). */
async function dependency(ctx: MemoryReconcileContext, file: string, kind: WorkloadKind, name: string, ready = true): Promise<void> {
  const object = sampleObject(file, kind, name);
  ctx.putKaos(object);
  await reconcile(ctx, kind, object.metadata.namespace, name);
  if (!ready) return;
  ctx.setDeploymentStatus(object.metadata.namespace, workloadName(kind, name), deploymentStatus(1));
  await reconcile(ctx, kind, object.metadata.namespace, name);
}

const agentEnv = (ctx: MemoryReconcileContext, ns: string, name: string) => podSpecOf(ctx.child('Deployment', ns, `agent-${name}`)).containers[0]?.env ?? [];

t.test('simple sample, dependencies arriving one by one: Failed → Waiting → Failed → Waiting → Pending → Ready', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos(sampleObject(SIMPLE, 'Agent', AGENT));

  t.same(await reconcile(ctx, 'Agent', NS, AGENT), { requeue: true }, 'a missing ModelAPI backs off');
  t.match(statusOf(ctx, 'Agent', NS, AGENT), {
    phase: 'Failed',
    ready: false,
    message: 'Failed to resolve ModelAPI: modelapis.kaos.tools "simple-modelapi" not found',
    linkedResources: { modelapi: 'simple-modelapi' },
    observedGeneration: 1,
  });
  t.same(ctx.childKeys(), [], 'no children');
  t.same(ctx.requests.map((r) => r.verb), ['status']);
  ctx.clearRecords();
  t.same(await reconcile(ctx, 'Agent', NS, AGENT), { requeue: true });
  t.same(ctx.requests, [], 'the same failure again writes nothing');

  await dependency(ctx, SIMPLE, 'ModelAPI', 'simple-modelapi', false);
  t.equal(await reconcile(ctx, 'Agent', NS, AGENT), undefined, 'Waiting: the ModelAPI status change wakes it');
  t.match(statusOf(ctx, 'Agent', NS, AGENT), { phase: 'Waiting', message: 'ModelAPI is not ready' });
  t.same(ctx.childKeys().filter((k) => k.includes('agent-')), []);

  ctx.setDeploymentStatus(NS, 'modelapi-simple-modelapi', deploymentStatus(1));
  await reconcile(ctx, 'ModelAPI', NS, 'simple-modelapi');
  t.same(await reconcile(ctx, 'Agent', NS, AGENT), { requeue: true });
  t.match(statusOf(ctx, 'Agent', NS, AGENT), { phase: 'Failed', message: 'Failed to resolve MCPServer simple-echo-mcp: mcpservers.kaos.tools "simple-echo-mcp" not found' });

  await dependency(ctx, SIMPLE, 'MCPServer', 'simple-echo-mcp', false);
  await reconcile(ctx, 'Agent', NS, AGENT);
  t.match(statusOf(ctx, 'Agent', NS, AGENT), { phase: 'Waiting', message: 'MCPServer simple-echo-mcp is not ready' });
  const conditions = statusOf(ctx, 'Agent', NS, AGENT).conditions as { type: string; status: string; reason: string }[];
  t.same(conditions.map((c) => `${c.type}=${c.status}/${c.reason}`), ['Ready=False/MCPServerNotReady', 'Reconciling=True/MCPServerNotReady', 'Stalled=False/MCPServerNotReady']);

  ctx.setDeploymentStatus(NS, 'mcpserver-simple-echo-mcp', deploymentStatus(1));
  await reconcile(ctx, 'MCPServer', NS, 'simple-echo-mcp');
  ctx.clearRecords();
  t.equal(await reconcile(ctx, 'Agent', NS, AGENT), undefined);
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [`apply Deployment/${NS}/agent-${AGENT}`, `apply Service/${NS}/agent-${AGENT}`, `status Agent/${NS}/${AGENT}`]);
  t.match(statusOf(ctx, 'Agent', NS, AGENT), {
    phase: 'Pending',
    message: 'Deployment ready replicas: 0/1',
    endpoint: `http://agent-${AGENT}.${NS}.svc.cluster.local:8000`,
    linkedResources: { modelapi: 'simple-modelapi' },
  });

  ctx.setDeploymentStatus(NS, `agent-${AGENT}`, deploymentStatus(1));
  await reconcile(ctx, 'Agent', NS, AGENT);
  t.match(statusOf(ctx, 'Agent', NS, AGENT), { phase: 'Ready', ready: true, message: 'Deployment ready replicas: 1/1' });
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, AGENT);
  t.same(ctx.requests, [], 'converged: zero write requests');
});

t.test('simple sample: exact children (names, labels, selector, ownerReference, env in order)', async (t) => {
  const ctx = new MemoryReconcileContext();
  await dependency(ctx, SIMPLE, 'ModelAPI', 'simple-modelapi');
  await dependency(ctx, SIMPLE, 'MCPServer', 'simple-echo-mcp');
  ctx.putKaos(sampleObject(SIMPLE, 'Agent', AGENT));
  await reconcile(ctx, 'Agent', NS, AGENT);

  const labels = { app: 'agent', agent: AGENT, 'app.kubernetes.io/managed-by': 'kaos-operator' };
  for (const kind of ['Deployment', 'Service'] as const) {
    const child = ctx.child(kind, NS, `agent-${AGENT}`);
    t.same(child?.metadata?.labels, labels, `${kind} labels`);
    t.same(child?.metadata?.ownerReferences, [owner('Agent', AGENT, `uid-${AGENT}`)], `${kind} ownerReference`);
  }
  t.same((ctx.child('Service', NS, `agent-${AGENT}`)?.spec as { selector: unknown }).selector, { app: 'agent', agent: AGENT });
  const env = agentEnv(ctx, NS, AGENT);
  t.same(env.map((e) => e.name), [
    'AGENT_NAME',
    'AGENT_DESCRIPTION',
    'AGENT_INSTRUCTIONS',
    'MODEL_NAME',
    'MODEL_API_URL',
    'AGENTIC_LOOP_MAX_STEPS',
    'MCP_SERVERS',
    'MCP_SERVER_simple-echo-mcp_URL',
  ]);
  const value = (name: string) => env.find((e) => e.name === name)?.value;
  t.equal(value('MODEL_API_URL'), 'http://modelapi-simple-modelapi.kaos-simple.svc.cluster.local:11434', "the ModelAPI's status.endpoint");
  t.equal(value('MODEL_NAME'), 'smollm2:135m');
  t.equal(value('MCP_SERVERS'), 'simple-echo-mcp');
  t.equal(value('MCP_SERVER_simple-echo-mcp_URL'), 'http://mcpserver-simple-echo-mcp.kaos-simple.svc.cluster.local:8000');
  t.equal(value('AGENTIC_LOOP_MAX_STEPS'), '5');
});

t.test('MODEL_NAME from the ModelAPI when config.env has none (hostedConfig.model)', async (t) => {
  const ctx = new MemoryReconcileContext();
  await dependency(ctx, SIMPLE, 'ModelAPI', 'simple-modelapi');
  ctx.putKaos({ kind: 'Agent', metadata: { name: 'bare', namespace: NS }, spec: { modelAPI: 'simple-modelapi' } });
  await reconcile(ctx, 'Agent', NS, 'bare');
  t.equal(agentEnv(ctx, NS, 'bare').find((e) => e.name === 'MODEL_NAME')?.value, 'smollm2:135m');
});

t.test('waitForDependencies: false — a ModelAPI not ready (no status yet) is used at its Service endpoint; a missing one still fails', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos({ kind: 'Agent', metadata: { name: 'eager', namespace: NS }, spec: { modelAPI: 'simple-modelapi', mcpServers: ['simple-echo-mcp'], waitForDependencies: false } });
  t.same(await reconcile(ctx, 'Agent', NS, 'eager'), { requeue: true });
  t.match(statusOf(ctx, 'Agent', NS, 'eager'), { phase: 'Failed', message: 'Failed to resolve ModelAPI: modelapis.kaos.tools "simple-modelapi" not found' });

  ctx.putKaos(sampleObject(SIMPLE, 'ModelAPI', 'simple-modelapi'));
  t.same(await reconcile(ctx, 'Agent', NS, 'eager'), { requeue: true });
  t.match(statusOf(ctx, 'Agent', NS, 'eager'), { phase: 'Failed', message: 'Failed to resolve MCPServer simple-echo-mcp: mcpservers.kaos.tools "simple-echo-mcp" not found' });

  ctx.putKaos(sampleObject(SIMPLE, 'MCPServer', 'simple-echo-mcp'));
  t.equal(await reconcile(ctx, 'Agent', NS, 'eager'), undefined);
  const env = agentEnv(ctx, NS, 'eager');
  t.equal(env.find((e) => e.name === 'MODEL_API_URL')?.value, 'http://modelapi-simple-modelapi.kaos-simple.svc.cluster.local:11434');
  t.equal(env.find((e) => e.name === 'MCP_SERVER_simple-echo-mcp_URL')?.value, 'http://mcpserver-simple-echo-mcp.kaos-simple.svc.cluster.local:8000');

  // The dependencies get their status: the same endpoints, so the Agent's pod spec does not move.
  await dependency(ctx, SIMPLE, 'ModelAPI', 'simple-modelapi');
  await dependency(ctx, SIMPLE, 'MCPServer', 'simple-echo-mcp');
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, 'eager');
  t.same(ctx.requests, []);
});

t.test('a ModelAPI going not-ready again: Waiting, existing children left as they are and reported', async (t) => {
  const ctx = new MemoryReconcileContext();
  await dependency(ctx, SIMPLE, 'ModelAPI', 'simple-modelapi');
  await dependency(ctx, SIMPLE, 'MCPServer', 'simple-echo-mcp');
  ctx.putKaos(sampleObject(SIMPLE, 'Agent', AGENT));
  await reconcile(ctx, 'Agent', NS, AGENT);
  ctx.setDeploymentStatus(NS, `agent-${AGENT}`, deploymentStatus(1));

  ctx.setDeploymentStatus(NS, 'modelapi-simple-modelapi', deploymentStatus(0));
  await reconcile(ctx, 'ModelAPI', NS, 'simple-modelapi');
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, AGENT);
  t.same(ctx.requests.map((r) => r.verb), ['status'], 'no apply, no prune');
  t.match(statusOf(ctx, 'Agent', NS, AGENT), {
    phase: 'Waiting',
    message: 'ModelAPI is not ready',
    endpoint: `http://agent-${AGENT}.${NS}.svc.cluster.local:8000`,
    deployment: { readyReplicas: 1 },
  });
  t.ok(ctx.child('Service', NS, `agent-${AGENT}`));
});

t.test('expose: false prunes the Service and clears status.endpoint', async (t) => {
  const ctx = new MemoryReconcileContext();
  await dependency(ctx, SIMPLE, 'ModelAPI', 'simple-modelapi');
  await dependency(ctx, SIMPLE, 'MCPServer', 'simple-echo-mcp');
  ctx.putKaos(sampleObject(SIMPLE, 'Agent', AGENT));
  await reconcile(ctx, 'Agent', NS, AGENT);
  ctx.updateKaos('Agent', NS, AGENT, (o) => {
    o.spec = { ...(o.spec as object), agentNetwork: { expose: false } };
  });
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, AGENT);
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [`delete Service/${NS}/agent-${AGENT}`, `status Agent/${NS}/${AGENT}`], 'the pod spec is unchanged');
  t.equal(ctx.child('Service', NS, `agent-${AGENT}`), undefined);
  const status = statusOf(ctx, 'Agent', NS, AGENT);
  t.notOk('endpoint' in status, 'endpoint cleared');
  t.equal(status.observedGeneration, 2);
  t.same(ctx.recorded.map((e) => `${e.type} ${e.reason} ${e.note}`), [`Normal Deleted Deleted Service agent-${AGENT}: no longer desired`]);
});

t.test('multi sample: peers missing are skipped, and wired in as soon as they exist (their endpoint follows from their spec)', async (t) => {
  const MULTI = '2-multi-agent-mcp.yaml';
  const ns = 'kaos-multi';
  const ctx = new MemoryReconcileContext();
  await dependency(ctx, MULTI, 'ModelAPI', 'multi-modelapi');
  await dependency(ctx, MULTI, 'MCPServer', 'multi-echo-mcp');
  ctx.putKaos(sampleObject(MULTI, 'Agent', 'coordinator'));
  t.equal(await reconcile(ctx, 'Agent', ns, 'coordinator'), undefined, 'missing peers are not an error');
  t.notOk(agentEnv(ctx, ns, 'coordinator').some((e) => e.name.startsWith('PEER_')), 'no peers yet');

  // worker-1 exists but has not been reconciled (no status): wired in at once.
  ctx.putKaos(sampleObject(MULTI, 'Agent', 'worker-1'));
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', ns, 'coordinator');
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [`apply Deployment/${ns}/agent-coordinator`], 'the Deployment alone is updated');
  await reconcile(ctx, 'Agent', ns, 'worker-1');
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', ns, 'coordinator');
  t.same(ctx.requests, [], "the peer's status changes nothing");
  const env = agentEnv(ctx, ns, 'coordinator');
  t.same(env.filter((e) => e.name.startsWith('PEER_')).map((e) => `${e.name}=${e.value}`), [
    'PEER_AGENTS=worker-1',
    'PEER_AGENT_WORKER_1_CARD_URL=http://agent-worker-1.kaos-multi.svc.cluster.local:8000',
  ]);

  ctx.putKaos(sampleObject(MULTI, 'Agent', 'worker-2'));
  await reconcile(ctx, 'Agent', ns, 'worker-2');
  await reconcile(ctx, 'Agent', ns, 'coordinator');
  t.same(agentEnv(ctx, ns, 'coordinator').map((e) => e.name), [
    'AGENT_NAME',
    'AGENT_DESCRIPTION',
    'AGENT_INSTRUCTIONS',
    'MODEL_NAME',
    'MODEL_API_URL',
    'AGENTIC_LOOP_MAX_STEPS',
    'MCP_SERVERS',
    'MCP_SERVER_multi-echo-mcp_URL',
    'PEER_AGENTS',
    'PEER_AGENT_WORKER_1_CARD_URL',
    'PEER_AGENT_WORKER_2_CARD_URL',
  ]);
  t.equal(agentEnv(ctx, ns, 'coordinator').find((e) => e.name === 'PEER_AGENTS')?.value, 'worker-1,worker-2');
});

t.test('dev sample: Proxy ModelAPI endpoint on 8000, model from config.env', async (t) => {
  const DEV = '4-dev-ollama-proxy-agent.yaml';
  const ctx = new MemoryReconcileContext();
  await dependency(ctx, DEV, 'ModelAPI', 'dev-ollama-proxy');
  await dependency(ctx, DEV, 'MCPServer', 'dev-echo-mcp');
  ctx.putKaos(sampleObject(DEV, 'Agent', 'dev-agent'));
  await reconcile(ctx, 'Agent', 'kaos-dev', 'dev-agent');
  const env = agentEnv(ctx, 'kaos-dev', 'dev-agent');
  t.equal(env.find((e) => e.name === 'MODEL_API_URL')?.value, 'http://modelapi-dev-ollama-proxy.kaos-dev.svc.cluster.local:8000');
  t.equal(env.find((e) => e.name === 'MODEL_NAME')?.value, 'ollama/smollm2:135m');
  t.equal(sampleObjects(DEV).length, 3);
  t.match(statusOf(ctx, 'Agent', 'kaos-dev', 'dev-agent'), { phase: 'Pending', linkedResources: { modelapi: 'dev-ollama-proxy' } });
});

t.test('legacy finalizer of an Agent being deleted, even with its ModelAPI missing', async (t) => {
  const ctx = new MemoryReconcileContext();
  const agent = sampleObject(SIMPLE, 'Agent', AGENT);
  ctx.putKaos({ ...agent, metadata: { ...agent.metadata, finalizers: ['kaos.tools/agent-finalizer'], deletionTimestamp: '2026-01-02T00:00:00Z' } });
  t.equal(await reconcile(ctx, 'Agent', NS, AGENT), undefined);
  t.same(ctx.requests, [{ verb: 'finalizers', target: `Agent/${NS}/${AGENT}`, body: ['kaos.tools/agent-finalizer'] }], 'no status');
  t.equal(ctx.kaos('Agent', NS, AGENT), undefined, 'its last finalizer gone, the object goes');
});

t.test('one Event per dependency transition, none for a retry of the same wait', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos(sampleObject(SIMPLE, 'Agent', AGENT));
  const events = () => ctx.recorded.map((e) => `${e.type} ${e.reason}: ${e.note}`);

  await reconcile(ctx, 'Agent', NS, AGENT);
  await reconcile(ctx, 'Agent', NS, AGENT);
  await reconcile(ctx, 'Agent', NS, AGENT);
  t.same(events(), ['Warning ModelAPIUnresolved: Failed to resolve ModelAPI: modelapis.kaos.tools "simple-modelapi" not found'], 'missing: one Warning over three retries');

  ctx.clearRecords();
  await dependency(ctx, SIMPLE, 'ModelAPI', 'simple-modelapi', false);
  await reconcile(ctx, 'Agent', NS, AGENT);
  await reconcile(ctx, 'Agent', NS, AGENT);
  t.same(events().filter((e) => e.includes('ModelAPINotReady')), ['Normal ModelAPINotReady: ModelAPI is not ready'], 'not ready: one Normal Event');

  ctx.setDeploymentStatus(NS, 'modelapi-simple-modelapi', deploymentStatus(1));
  await reconcile(ctx, 'ModelAPI', NS, 'simple-modelapi');
  await dependency(ctx, SIMPLE, 'MCPServer', 'simple-echo-mcp');
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, AGENT);
  t.same(events().filter((e) => e.includes('NotReady') || e.includes('Unresolved')), [], 'nothing to wait for: no dependency Event');

  ctx.setDeploymentStatus(NS, 'modelapi-simple-modelapi', deploymentStatus(0));
  await reconcile(ctx, 'ModelAPI', NS, 'simple-modelapi');
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, AGENT);
  await reconcile(ctx, 'Agent', NS, AGENT);
  t.same(events(), ['Normal ModelAPINotReady: ModelAPI is not ready'], 'the ModelAPI going unready again: one more');
});

t.test("a model the ModelAPI does not serve: Failed with KAOS's message, Stalled, no requeue; a ModelAPI change fixes it", async (t) => {
  const file = 'kaos-v0.1.3/4-dev-ollama-proxy-agent.yaml';
  const ns = 'kaos-dev';
  const ctx = new MemoryReconcileContext();
  for (const o of sampleObjects(file)) ctx.putKaos(o);
  ctx.updateKaos('ModelAPI', ns, 'dev-ollama-proxy', (m) => {
    (m.spec as { proxyConfig: { models: string[] } }).proxyConfig.models = ['openai/*', 'claude'];
  });
  t.equal(await reconcile(ctx, 'Agent', ns, 'dev-agent'), undefined, 'terminal: woken by a change, not polled');
  const status = statusOf(ctx, 'Agent', ns, 'dev-agent');
  t.match(status, { phase: 'Failed', ready: false, message: 'model "ollama/smollm2:135m" not supported by ModelAPI "dev-ollama-proxy" (supported: [openai/* claude])' });
  const conditions = status.conditions as { type: string; status: string; reason: string }[];
  t.same(conditions.map((c) => `${c.type}=${c.status}/${c.reason}`), ['Ready=False/ModelNotSupported', 'Reconciling=False/ModelNotSupported', 'Stalled=True/ModelNotSupported']);
  t.same(ctx.childKeys().filter((k) => k.includes('agent-')), [], 'no children');

  ctx.updateKaos('ModelAPI', ns, 'dev-ollama-proxy', (m) => {
    (m.spec as { proxyConfig: { models: string[] } }).proxyConfig.models = ['ollama/*'];
  });
  await reconcile(ctx, 'Agent', ns, 'dev-agent');
  t.match(statusOf(ctx, 'Agent', ns, 'dev-agent'), { phase: 'Waiting', message: 'ModelAPI is not ready' }, 'served now: on to the next step');
});

t.test('a v0.1.3 Agent renders MODEL_NAME from spec.model', async (t) => {
  const file = 'kaos-v0.1.3/1-simple-echo-agent.yaml';
  const ctx = new MemoryReconcileContext();
  for (const o of sampleObjects(file)) ctx.putKaos({ ...o, spec: { ...(o.spec as object), waitForDependencies: false } });
  await reconcile(ctx, 'Agent', NS, AGENT);
  const env = agentEnv(ctx, NS, AGENT);
  t.same(env.find((e) => e.name === 'MODEL_NAME'), { name: 'MODEL_NAME', value: 'smollm2:135m' });
});

t.test('ServiceAccount identity: the ServiceAccount applied before the Deployment; another provider deletes it; idle writes nothing', async (t) => {
  const ctx = new MemoryReconcileContext({ config: loadConfig({ SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount' }) });
  await dependency(ctx, SIMPLE, 'ModelAPI', 'simple-modelapi');
  await dependency(ctx, SIMPLE, 'MCPServer', 'simple-echo-mcp');
  ctx.putKaos(sampleObject(SIMPLE, 'Agent', AGENT));
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, AGENT);
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [
    `apply ServiceAccount/${NS}/kaos-agent-${AGENT}`,
    `apply Deployment/${NS}/agent-${AGENT}`,
    `apply Service/${NS}/agent-${AGENT}`,
    `status Agent/${NS}/${AGENT}`,
  ], 'the ServiceAccount first: a pod naming a missing one is refused');
  const sa = ctx.child('ServiceAccount', NS, `kaos-agent-${AGENT}`);
  t.match(sa, { metadata: { labels: { 'kaos.tools/agent': AGENT } }, automountServiceAccountToken: false });
  t.match(sa?.metadata?.ownerReferences, [{ kind: 'Agent', name: AGENT, controller: true, blockOwnerDeletion: true }], 'owned by the Agent');
  t.equal(podSpecOf(ctx.child('Deployment', NS, `agent-${AGENT}`)).serviceAccountName, `kaos-agent-${AGENT}`);
  t.same(ctx.recorded.filter((e) => e.reason === 'Created').map((e) => e.note), [`Created ServiceAccount kaos-agent-${AGENT}, Deployment agent-${AGENT}, Service agent-${AGENT}`], 'one Event naming every child');
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, AGENT);
  t.same(ctx.requests, [], 'converged: no write');

  ctx.config = loadConfig({});
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, AGENT);
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [`apply Deployment/${NS}/agent-${AGENT}`, `delete ServiceAccount/${NS}/kaos-agent-${AGENT}`], 'the pod first, then its ServiceAccount goes');
  t.equal(ctx.child('ServiceAccount', NS, `kaos-agent-${AGENT}`), undefined);
  t.equal(podSpecOf(ctx.child('Deployment', NS, `agent-${AGENT}`)).serviceAccountName, undefined);
});

t.test('KAOS\'s finalizers of an Agent being deleted, the oidc client\'s too, in one patch', async (t) => {
  const ctx = new MemoryReconcileContext();
  const agent = sampleObject(SIMPLE, 'Agent', AGENT);
  ctx.putKaos({ ...agent, metadata: { ...agent.metadata, finalizers: ['kaos.tools/oidc-client-finalizer', 'kaos.tools/agent-finalizer'], deletionTimestamp: '2026-01-02T00:00:00Z' } });
  await reconcile(ctx, 'Agent', NS, AGENT);
  t.same(ctx.requests, [{ verb: 'finalizers', target: `Agent/${NS}/${AGENT}`, body: ['kaos.tools/agent-finalizer', 'kaos.tools/oidc-client-finalizer'] }]);
  t.equal(ctx.kaos('Agent', NS, AGENT), undefined, 'nothing holds it');
});
