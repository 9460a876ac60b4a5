// Children left by an earlier object of the same kind and name (deleted, then created again):
// Kubernetes' garbage collector misses them when the owner was deleted and re-created while its
// watch was broken, so the reconcile of the new object deletes them — when it is failing or
// waiting and applies nothing, and when it applies and no longer wants one of their names —
// and takes over those it applies. Only children created before the parent count (a cache still
// holding an earlier parent must not delete a later one's); children of anything else are
// never touched.
import t from 'tap';
import { MemoryReconcileContext } from '../../support/memory-reconcile-context.ts';
import { deploymentStatus, owner, reconcile } from './reconcile-helpers.ts';

const NS = 'ns';
const EARLIER = 'uid-earlier';
/** When the earlier object's children were created, and the parent after them. */
const BEFORE = '2026-01-01T00:00:00Z';
const CREATED = '2026-01-01T00:01:00Z';

/** A child at `name` as an earlier object `kind/ownerName` (uid-earlier) left it. */
function earlierChild(ctx: MemoryReconcileContext, kind: 'Deployment' | 'Service' | 'ConfigMap', name: string, ownerKind: 'Agent' | 'ModelAPI' | 'MCPServer', ownerName: string, created = BEFORE): void {
  ctx.putChild({
    apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1',
    kind,
    metadata: { name, namespace: NS, creationTimestamp: created, labels: { 'app.kubernetes.io/managed-by': 'kaos-operator' }, ownerReferences: [owner(ownerKind, ownerName, EARLIER)] },
    spec: {},
  });
}

const agent = (spec: Record<string, unknown>) => ({ apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name: 'a', namespace: NS, creationTimestamp: CREATED }, spec });

t.test('a failing Agent applies nothing, but the children of an earlier Agent a go', async (t) => {
  const ctx = new MemoryReconcileContext();
  earlierChild(ctx, 'Deployment', 'agent-a', 'Agent', 'a');
  earlierChild(ctx, 'Service', 'agent-a', 'Agent', 'a');
  ctx.putKaos(agent({ modelAPI: 'missing' }));
  t.same(await reconcile(ctx, 'Agent', NS, 'a'), { requeue: true }, 'Failed: its ModelAPI is missing');
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`).sort(), ['delete Deployment/ns/agent-a', 'delete Service/ns/agent-a', 'status Agent/ns/a']);
  t.same(ctx.childKeys(), []);
  t.match(ctx.recorded.find((e) => e.reason === 'Deleted'), { type: 'Normal', note: 'Deleted Deployment agent-a, Service agent-a: left by an earlier Agent a' });
  t.match(ctx.lines.find((l) => l.msg === 'reconciled')?.fields.changes, ['status', 'deleted Deployment/agent-a', 'deleted Service/agent-a']);
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, 'a');
  t.same(ctx.requests, [], 'nothing left to delete: the next reconcile writes nothing');
});

t.test('an Agent that applies takes over the children it wants and deletes the earlier one\'s others', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos({ apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'm', namespace: NS }, spec: { mode: 'Proxy', proxyConfig: { apiBase: 'http://b:4000' } } });
  await reconcile(ctx, 'ModelAPI', NS, 'm');
  ctx.setDeploymentStatus(NS, 'modelapi-m', deploymentStatus(1));
  await reconcile(ctx, 'ModelAPI', NS, 'm');
  earlierChild(ctx, 'Deployment', 'agent-a', 'Agent', 'a');
  earlierChild(ctx, 'Service', 'agent-a', 'Agent', 'a');
  ctx.putKaos(agent({ modelAPI: 'm', agentNetwork: { expose: false } }));
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, 'a');
  t.same(ctx.requests.filter((r) => r.verb !== 'status').map((r) => `${r.verb} ${r.target}`), ['apply Deployment/ns/agent-a', 'delete Service/ns/agent-a'],
    'the Deployment applied (now the new Agent\'s), the Service it no longer wants deleted');
  const uid = ctx.kaos('Agent', NS, 'a')?.metadata?.uid;
  t.same(ctx.child('Deployment', NS, 'agent-a')?.metadata?.ownerReferences?.map((r) => r.uid), [uid]);
  t.equal(ctx.child('Service', NS, 'agent-a'), undefined);
});

t.test('other kinds: a ModelAPI waiting for its API key Secret drops an earlier ModelAPI\'s ConfigMap and Deployment', async (t) => {
  const ctx = new MemoryReconcileContext();
  earlierChild(ctx, 'ConfigMap', 'litellm-config-m', 'ModelAPI', 'm');
  earlierChild(ctx, 'Deployment', 'modelapi-m', 'ModelAPI', 'm');
  ctx.putKaos({ apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'm', namespace: NS, creationTimestamp: CREATED }, spec: { mode: 'Proxy', proxyConfig: { models: ['x'], apiKey: { valueFrom: { secretKeyRef: { name: 'key', key: 'k' } } } } } });
  await reconcile(ctx, 'ModelAPI', NS, 'm');
  t.match(ctx.kaos('ModelAPI', NS, 'm')?.status, { phase: 'Failed', message: 'Failed to resolve Secret key: secrets "key" not found' });
  t.same(ctx.childKeys(), []);
});

t.test('children owned by anything else at those names are left alone', async (t) => {
  const ctx = new MemoryReconcileContext();
  earlierChild(ctx, 'Deployment', 'agent-a', 'ModelAPI', 'a');
  earlierChild(ctx, 'Service', 'agent-a', 'Agent', 'other');
  ctx.putChild({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'agent-a', namespace: NS, creationTimestamp: BEFORE, ownerReferences: [{ ...owner('Agent', 'a', EARLIER), apiVersion: 'example.com/v1' }] }, spec: {} });
  ctx.putKaos(agent({ modelAPI: 'missing' }));
  await reconcile(ctx, 'Agent', NS, 'a');
  t.same(ctx.requests.map((r) => r.verb), ['status'], 'no delete');
  t.same(ctx.childKeys(), ['Deployment/ns/agent-a', 'Service/ns/agent-a']);
});

t.test('a child created after the parent the cache holds is a later object\'s: left alone', async (t) => {
  const ctx = new MemoryReconcileContext();
  earlierChild(ctx, 'Deployment', 'agent-a', 'Agent', 'a', '2026-01-01T00:02:00Z');
  ctx.putKaos(agent({ modelAPI: 'missing' }));
  await reconcile(ctx, 'Agent', NS, 'a');
  t.same(ctx.requests.map((r) => r.verb), ['status'], 'no delete');
  t.same(ctx.childKeys(), ['Deployment/ns/agent-a']);
});
