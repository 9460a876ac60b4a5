import t from 'tap';
import { loadConfig } from '../../../src/config/config.ts';
import { CONFIG_HASH_ANNOTATION } from '../../../src/render/index.ts';
import { MemoryReconcileContext } from '../../support/memory-reconcile-context.ts';
import { gatewayConfig } from '../render/helpers.ts';
import { deploymentStatus, owner, podSpecOf, reconcile, sampleObject, statusOf, templateAnnotations } from './reconcile-helpers.ts';

const ECHO = sampleObject('1-simple-echo-agent.yaml', 'MCPServer', 'simple-echo-mcp');
const NS = 'kaos-simple';
const NAME = 'simple-echo-mcp';

t.test('fromPackage sample: Deployment and Service, owned and labelled; Pending, then Ready; then nothing', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos(ECHO);
  t.equal(await reconcile(ctx, 'MCPServer', NS, NAME), undefined);
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [
    `apply Deployment/${NS}/mcpserver-${NAME}`,
    `apply Service/${NS}/mcpserver-${NAME}`,
    `status MCPServer/${NS}/${NAME}`,
  ]);
  for (const kind of ['Deployment', 'Service'] as const) {
    const child = ctx.child(kind, NS, `mcpserver-${NAME}`);
    t.same(child?.metadata?.labels, { app: 'mcpserver', mcpserver: NAME, 'app.kubernetes.io/managed-by': 'kaos-operator' }, `${kind} labels`);
    t.same(child?.metadata?.ownerReferences, [owner('MCPServer', NAME, `uid-${NAME}`)], `${kind} ownerReference`);
  }
  const deployment = ctx.child('Deployment', NS, `mcpserver-${NAME}`);
  t.same((deployment?.spec as { selector: unknown }).selector, { matchLabels: { app: 'mcpserver', mcpserver: NAME } });
  const main = podSpecOf(deployment).containers[0];
  t.equal(main?.name, 'mcp-server');
  t.equal(main?.image, 'python:3.12-slim');
  t.same(main?.env?.map((e) => e.name), ['LOG_LEVEL', 'MCP_PACKAGE', 'MCP_ENTRYPOINT', 'MCP_MODULE']);
  t.equal(templateAnnotations(deployment)['kubectl.kubernetes.io/default-container'], 'mcp-server');
  t.match(statusOf(ctx, 'MCPServer', NS, NAME), {
    phase: 'Pending',
    ready: false,
    endpoint: `http://mcpserver-${NAME}.${NS}.svc.cluster.local:8000`,
    message: 'Deployment ready replicas: 0/1',
    observedGeneration: 1,
  });

  ctx.setDeploymentStatus(NS, `mcpserver-${NAME}`, deploymentStatus(1));
  ctx.clearRecords();
  await reconcile(ctx, 'MCPServer', NS, NAME);
  t.same(ctx.requests.map((r) => r.verb), ['status']);
  t.match(statusOf(ctx, 'MCPServer', NS, NAME), { phase: 'Ready', ready: true, message: 'Deployment ready replicas: 1/1' });

  ctx.clearRecords();
  await reconcile(ctx, 'MCPServer', NS, NAME);
  t.same(ctx.requests, [], 'converged: zero write requests');
  t.same(ctx.recorded, []);
});

t.test('kubectl scale is left alone: replicas is applied at creation only', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos(ECHO);
  await reconcile(ctx, 'MCPServer', NS, NAME);
  const scaled = ctx.child('Deployment', NS, `mcpserver-${NAME}`);
  ctx.putChild({ ...(scaled as object), kind: 'Deployment', metadata: { ...scaled?.metadata, name: `mcpserver-${NAME}`, namespace: NS }, spec: { ...(scaled?.spec as object), replicas: 3 } });
  ctx.clearRecords();
  await reconcile(ctx, 'MCPServer', NS, NAME);
  t.same(ctx.requests.map((r) => r.verb), ['status'], 'no apply to take replicas back');
  t.equal(statusOf(ctx, 'MCPServer', NS, NAME).message, 'Deployment ready replicas: 0/3 (rolling out)', 'the status counts the scaled replicas');
  ctx.clearRecords();

  ctx.updateKaos('MCPServer', NS, NAME, (o) => {
    o.spec = { ...(o.spec as object), config: { tools: { fromPackage: 'test-mcp-echo-server==1.0' } } };
  });
  await reconcile(ctx, 'MCPServer', NS, NAME);
  const applied = ctx.requests.find((r) => r.verb === 'apply')?.body as { spec: Record<string, unknown> };
  t.notOk('replicas' in applied.spec, 'an update leaves spec.replicas out');
  t.equal((ctx.child('Deployment', NS, `mcpserver-${NAME}`)?.spec as { replicas: number }).replicas, 3);
});

t.test('tools.fromSecretKeyRef: a new Secret resourceVersion gives a new config hash', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos({ ...ECHO, spec: { type: 'python-runtime', config: { tools: { fromSecretKeyRef: { name: 'tools', key: 'tools.py' } } } } });
  ctx.setSecret(NS, 'tools', '10');
  await reconcile(ctx, 'MCPServer', NS, NAME);
  const first = templateAnnotations(ctx.child('Deployment', NS, `mcpserver-${NAME}`))[CONFIG_HASH_ANNOTATION];
  t.match(first, /^[0-9a-f]{16}$/);
  const main = podSpecOf(ctx.child('Deployment', NS, `mcpserver-${NAME}`)).containers[0];
  t.same(main?.env?.find((e) => e.name === 'MCP_TOOLS_STRING')?.valueFrom, { secretKeyRef: { name: 'tools', key: 'tools.py' } });

  ctx.setSecret(NS, 'tools', '11');
  ctx.clearRecords();
  await reconcile(ctx, 'MCPServer', NS, NAME);
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [`apply Deployment/${NS}/mcpserver-${NAME}`]);
  t.not(templateAnnotations(ctx.child('Deployment', NS, `mcpserver-${NAME}`))[CONFIG_HASH_ANNOTATION], first);
});

t.test('HTTPRoute mcp-<name> with the gateway, pruned when it is turned off', async (t) => {
  const ctx = new MemoryReconcileContext({ config: gatewayConfig });
  ctx.putKaos(ECHO);
  await reconcile(ctx, 'MCPServer', NS, NAME);
  t.ok(ctx.child('HTTPRoute', NS, `mcp-${NAME}`));
  ctx.config = loadConfig({});
  ctx.clearRecords();
  await reconcile(ctx, 'MCPServer', NS, NAME);
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [`delete HTTPRoute/${NS}/mcp-${NAME}`]);
  t.equal(ctx.child('HTTPRoute', NS, `mcp-${NAME}`), undefined);
});

t.test('prune deletes only children this parent controls', async (t) => {
  const ctx = new MemoryReconcileContext({ config: gatewayConfig });
  ctx.putKaos(ECHO);
  // Someone else's object at the name an HTTPRoute of ours would have (an earlier MCPServer of
  // this name's is reconcile-earlier-children.test.ts's).
  ctx.putChild({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: `mcp-${NAME}`, namespace: NS, ownerReferences: [owner('MCPServer', 'other', 'uid-other')] } });
  ctx.config = loadConfig({});
  await reconcile(ctx, 'MCPServer', NS, NAME);
  t.notOk(ctx.requests.some((r) => r.verb === 'delete'));
  t.ok(ctx.child('HTTPRoute', NS, `mcp-${NAME}`));
});

t.test('legacy finalizer of an MCPServer being deleted', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos({ ...ECHO, metadata: { ...ECHO.metadata, finalizers: ['kaos.tools/mcpserver-finalizer', 'kaos.tools/agent-finalizer'], deletionTimestamp: '2026-01-02T00:00:00Z' } });
  await reconcile(ctx, 'MCPServer', NS, NAME);
  t.same(ctx.requests, [{ verb: 'finalizers', target: `MCPServer/${NS}/${NAME}`, body: ['kaos.tools/mcpserver-finalizer'] }], "only this kind's finalizer");
  t.same(ctx.kaos('MCPServer', NS, NAME)?.metadata?.finalizers, ['kaos.tools/agent-finalizer']);
});
