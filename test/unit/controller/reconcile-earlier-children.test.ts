// Children left by an earlier object of the same kind and name (deleted, then created again):
// Kubernetes' garbage collector misses them when the owner was deleted and re-created while its
// watch was broken, so the reconcile of the new object deletes them — when it is failing or
// waiting and applies nothing, and when it applies, which then creates its own afresh. The cache
// alone cannot tell such a leftover from a later object's child, so one GET of the parent
// decides: only then, and never on the normal path. Children of anything else are never touched.
import t from 'tap';
import { earlierChildren, ORPHAN_GRACE_MS, orphanedBy } from '../../../src/controller/reconcile/earlier-children.ts';
import type { ObjectLike } from '../../../src/kube/apply.ts';
import { MemoryReconcileContext } from '../../support/memory-reconcile-context.ts';
import { deploymentStatus, owner, reconcile } from './reconcile-helpers.ts';

const NS = 'ns';
const EARLIER = 'uid-earlier';
const LATER = 'uid-later';

/** A child at `name` as the object `kind/ownerName` of uid `uid` (by default an earlier one) left it. */
function earlierChild(ctx: MemoryReconcileContext, kind: 'Deployment' | 'Service' | 'ConfigMap', name: string, ownerKind: 'Agent' | 'ModelAPI' | 'MCPServer', ownerName: string, uid = EARLIER, extra: Partial<NonNullable<ObjectLike['metadata']>> = {}): void {
  ctx.putChild({
    apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1',
    kind,
    metadata: { name, namespace: NS, uid: `${kind}-${uid}`, labels: { 'app.kubernetes.io/managed-by': 'kaos-operator' }, ownerReferences: [owner(ownerKind, ownerName, uid)], ...extra },
    spec: {},
  });
}

const agent = (spec: Record<string, unknown>) => ({ apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name: 'a', namespace: NS }, spec });
const requests = (ctx: MemoryReconcileContext): string[] => ctx.requests.map((r) => `${r.verb} ${r.target}`);

t.test('pure: which children are an earlier object\'s, and which of those are orphans', async (t) => {
  const ctx = new MemoryReconcileContext();
  earlierChild(ctx, 'Deployment', 'agent-a', 'Agent', 'a');
  earlierChild(ctx, 'Service', 'agent-a', 'Agent', 'a', LATER);
  const reads = ctx.reads;
  t.same(earlierChildren(reads, 'Agent', NS, 'a', 'uid-now').map((e) => [e.child.kind, e.ownerUid]), [['Deployment', EARLIER], ['Service', LATER]]);
  t.same(earlierChildren(reads, 'Agent', NS, 'a', EARLIER).map((e) => e.ownerUid), [LATER], 'its own child is not an earlier one');
  t.same(earlierChildren(reads, 'Agent', NS, 'b', 'uid-now'), [], 'another name: no child at its names');
  const earlier = earlierChildren(reads, 'Agent', NS, 'a', 'uid-now');
  t.same([...orphanedBy(earlier, 'uid-now').keys()], [EARLIER, LATER], 'the API server has the parent as cached: both owners are gone');
  t.same([...orphanedBy(earlier, undefined).keys()], [EARLIER, LATER], 'the API server has no such object: both owners are gone');
  t.same([...orphanedBy(earlier, LATER).keys()], [EARLIER], 'the owner the API server has now keeps its child');
  t.same(orphanedBy(earlier, LATER).get(EARLIER)?.map((c) => c.kind), ['Deployment']);
});

t.test('a failing Agent applies nothing, but the children of an earlier Agent a go, after one GET', async (t) => {
  const ctx = new MemoryReconcileContext();
  earlierChild(ctx, 'Deployment', 'agent-a', 'Agent', 'a');
  earlierChild(ctx, 'Service', 'agent-a', 'Agent', 'a');
  ctx.putKaos(agent({ modelAPI: 'missing' }));
  t.same(await reconcile(ctx, 'Agent', NS, 'a'), { requeue: true }, 'Failed: its ModelAPI is missing');
  t.same(requests(ctx), ['get Agent/ns/a', 'delete Deployment/ns/agent-a', 'delete Service/ns/agent-a', 'status Agent/ns/a']);
  t.same(ctx.childKeys(), []);
  t.match(ctx.recorded.find((e) => e.reason === 'Deleted'), {
    type: 'Normal',
    action: 'Prune',
    note: `Deleted Deployment agent-a, Service agent-a: left by an earlier Agent a (uid ${EARLIER}) that no longer exists`,
  });
  t.match(ctx.lines.find((l) => l.msg === 'reconciled')?.fields.changes, ['deleted Deployment/agent-a', 'deleted Service/agent-a', 'status']);
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, 'a');
  t.same(ctx.requests, [], 'nothing left to delete: the next reconcile reads and writes nothing');
});

t.test('an Agent that applies deletes the earlier Agent\'s children and creates its own afresh', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos({ apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'm', namespace: NS }, spec: { mode: 'Proxy', proxyConfig: { apiBase: 'http://b:4000' } } });
  await reconcile(ctx, 'ModelAPI', NS, 'm');
  ctx.setDeploymentStatus(NS, 'modelapi-m', deploymentStatus(1));
  await reconcile(ctx, 'ModelAPI', NS, 'm');
  earlierChild(ctx, 'Deployment', 'agent-a', 'Agent', 'a');
  earlierChild(ctx, 'Service', 'agent-a', 'Agent', 'a');
  ctx.putKaos(agent({ modelAPI: 'm' }));
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, 'a');
  t.same(requests(ctx).filter((r) => !r.startsWith('status')), ['get Agent/ns/a', 'delete Deployment/ns/agent-a', 'delete Service/ns/agent-a', 'apply Deployment/ns/agent-a', 'apply Service/ns/agent-a'],
    'the leftovers deleted first, then the Agent\'s own applied');
  const uid = ctx.kaos('Agent', NS, 'a')?.metadata?.uid;
  for (const kind of ['Deployment', 'Service'] as const) {
    const child = ctx.child(kind, NS, 'agent-a');
    t.not(child?.metadata?.uid, `${kind}-${EARLIER}`, `a new ${kind}`);
    t.same(child?.metadata?.ownerReferences?.map((r) => r.uid), [uid], `the ${kind} is the new Agent's`);
  }
  t.same(ctx.recorded.map((e) => e.reason), ['Deleted', 'Created'], 'told as deleted, then created (not updated)');
  t.match(ctx.recorded[1], { note: 'Created Deployment agent-a, Service agent-a' });
  ctx.clearRecords();
  ctx.setDeploymentStatus(NS, 'agent-a', deploymentStatus(1));
  await reconcile(ctx, 'Agent', NS, 'a');
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, 'a');
  t.same(ctx.requests, [], 'converged: no GET, no write');
});

t.test('other kinds: a ModelAPI waiting for its API key Secret drops an earlier ModelAPI\'s ConfigMap and Deployment', async (t) => {
  const ctx = new MemoryReconcileContext();
  earlierChild(ctx, 'ConfigMap', 'litellm-config-m', 'ModelAPI', 'm');
  earlierChild(ctx, 'Deployment', 'modelapi-m', 'ModelAPI', 'm');
  ctx.putKaos({ apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'm', namespace: NS }, spec: { mode: 'Proxy', proxyConfig: { models: ['x'], apiKey: { valueFrom: { secretKeyRef: { name: 'key', key: 'k' } } } } } });
  await reconcile(ctx, 'ModelAPI', NS, 'm');
  t.match(ctx.kaos('ModelAPI', NS, 'm')?.status, { phase: 'Failed', message: 'Failed to resolve Secret key: secrets "key" not found' });
  t.same(ctx.childKeys(), []);
});

t.test('children owned by anything else at those names are left alone, without a GET', async (t) => {
  const ctx = new MemoryReconcileContext();
  earlierChild(ctx, 'Deployment', 'agent-a', 'ModelAPI', 'a');
  earlierChild(ctx, 'Service', 'agent-a', 'Agent', 'other');
  ctx.putChild({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'agent-a', namespace: NS, ownerReferences: [{ ...owner('Agent', 'a', EARLIER), apiVersion: 'example.com/v1' }] }, spec: {} });
  ctx.putKaos(agent({ modelAPI: 'missing' }));
  await reconcile(ctx, 'Agent', NS, 'a');
  t.same(ctx.requests.map((r) => r.verb), ['status'], 'no GET, no delete');
  t.same(ctx.childKeys(), ['Deployment/ns/agent-a', 'Service/ns/agent-a']);
});

t.test('a child already being deleted costs no GET', async (t) => {
  const ctx = new MemoryReconcileContext();
  earlierChild(ctx, 'Deployment', 'agent-a', 'Agent', 'a', EARLIER, { deletionTimestamp: '2026-01-01T00:00:00Z' });
  ctx.putKaos(agent({ modelAPI: 'missing' }));
  await reconcile(ctx, 'Agent', NS, 'a');
  t.same(ctx.requests.map((r) => r.verb), ['status']);
});

t.test('a cache behind the API server: a later object\'s child is left alone, and nothing is done for the gone parent', async (t) => {
  const ctx = new MemoryReconcileContext();
  earlierChild(ctx, 'Deployment', 'agent-a', 'Agent', 'a', LATER);
  earlierChild(ctx, 'Service', 'agent-a', 'Agent', 'a', EARLIER);
  ctx.putKaos(agent({ modelAPI: 'missing' }));
  // The cache holds an Agent a the API server has since replaced with the one of uid-later.
  ctx.apiServerUids.set(`Agent/${NS}/a`, LATER);
  t.same(await reconcile(ctx, 'Agent', NS, 'a'), { requeue: true }, 'retried once the cache has caught up');
  t.same(requests(ctx), ['get Agent/ns/a', 'delete Service/ns/agent-a'], 'only the child of an owner that is gone for good; no status for a parent that is gone');
  t.same(ctx.childKeys(), ['Deployment/ns/agent-a']);
  t.match(ctx.recorded.find((e) => e.reason === 'Deleted'), { note: `Deleted Service agent-a: left by an earlier Agent a (uid ${EARLIER}) that no longer exists` });
});

t.test('a cache behind a deletion: the earlier owner\'s child goes, nothing is applied for the deleted parent', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos({ apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'm', namespace: NS }, spec: { mode: 'Proxy', proxyConfig: { apiBase: 'http://b:4000' } } });
  await reconcile(ctx, 'ModelAPI', NS, 'm');
  earlierChild(ctx, 'Deployment', 'agent-a', 'Agent', 'a');
  ctx.putKaos(agent({ modelAPI: 'm', waitForDependencies: false }));
  ctx.apiServerUids.set(`Agent/${NS}/a`, undefined);
  ctx.clearRecords();
  t.same(await reconcile(ctx, 'Agent', NS, 'a'), { requeue: true });
  t.same(requests(ctx), ['get Agent/ns/a', 'delete Deployment/ns/agent-a'], 'no apply, no status');
});

t.test('the GET fails: one Warning, retried, nothing deleted', async (t) => {
  const ctx = new MemoryReconcileContext();
  earlierChild(ctx, 'Deployment', 'agent-a', 'Agent', 'a');
  ctx.putKaos(agent({ modelAPI: 'missing' }));
  ctx.failWith = (r) => (r.verb === 'get' ? new Error('connection reset') : undefined);
  await t.rejects(reconcile(ctx, 'Agent', NS, 'a'), /connection reset/);
  t.same(requests(ctx), ['get Agent/ns/a']);
  t.match(ctx.recorded, [{ type: 'Warning', reason: 'ReconcileFailed', note: 'connection reset' }]);
  t.same(ctx.childKeys(), ['Deployment/ns/agent-a']);
});

t.test('no object of that name left (deleted, re-created, deleted again before a reconcile): its children are left to the garbage collector for the grace period, then deleted', async (t) => {
  let elapsed = 0;
  const ctx = new MemoryReconcileContext({ now: () => new Date(Date.UTC(2026, 0, 2) + elapsed) });
  t.same(await reconcile(ctx, 'Agent', NS, 'a'), undefined, 'nothing at its names: nothing to do');
  earlierChild(ctx, 'Deployment', 'agent-a', 'Agent', 'a');
  earlierChild(ctx, 'Service', 'agent-a', 'Agent', 'a');
  earlierChild(ctx, 'Deployment', 'agent-b', 'Agent', 'b');
  t.same(await reconcile(ctx, 'Agent', NS, 'a'), { requeueAfter: ORPHAN_GRACE_MS }, 'first seen: back after the grace period');
  elapsed = ORPHAN_GRACE_MS / 2;
  t.same(await reconcile(ctx, 'Agent', NS, 'a'), { requeueAfter: ORPHAN_GRACE_MS / 2 }, 'halfway: back when it ends');
  t.same(ctx.requests, [], 'within the grace period: no request');
  elapsed = ORPHAN_GRACE_MS;
  t.same(await reconcile(ctx, 'Agent', NS, 'a'), undefined);
  t.same(requests(ctx), ['get Agent/ns/a', 'delete Deployment/ns/agent-a', 'delete Service/ns/agent-a'], 'one GET decides, then the deletes');
  t.same(ctx.childKeys(), ['Deployment/ns/agent-b'], 'another name\'s child is not touched');
  t.match(ctx.recorded, [{
    type: 'Normal',
    reason: 'Deleted',
    action: 'Prune',
    regarding: { kind: 'Agent', name: 'a', namespace: NS, uid: EARLIER },
    note: `Deleted Deployment agent-a, Service agent-a: left by Agent a (uid ${EARLIER}), which no longer exists and whose children the garbage collector did not delete`,
  }]);
  ctx.clearRecords();
  t.same(await reconcile(ctx, 'Agent', NS, 'a'), undefined);
  t.same(ctx.requests, [], 'nothing left: no request');
});

t.test('the garbage collector deletes them within the grace period (the normal path): no request at all', async (t) => {
  let elapsed = 0;
  const ctx = new MemoryReconcileContext({ now: () => new Date(Date.UTC(2026, 0, 2) + elapsed) });
  earlierChild(ctx, 'Deployment', 'agent-a', 'Agent', 'a');
  t.same(await reconcile(ctx, 'Agent', NS, 'a'), { requeueAfter: ORPHAN_GRACE_MS });
  ctx.removeChild('Deployment', NS, 'agent-a');
  elapsed = ORPHAN_GRACE_MS;
  t.same(await reconcile(ctx, 'Agent', NS, 'a'), undefined);
  t.same(ctx.requests, []);
  earlierChild(ctx, 'Deployment', 'agent-a', 'Agent', 'a', LATER);
  t.same(await reconcile(ctx, 'Agent', NS, 'a'), { requeueAfter: ORPHAN_GRACE_MS }, 'a later leftover starts its own grace period');
});

t.test('after the grace period, a cache behind a re-creation: the object the API server has keeps its child', async (t) => {
  let elapsed = 0;
  const ctx = new MemoryReconcileContext({ now: () => new Date(Date.UTC(2026, 0, 2) + elapsed) });
  earlierChild(ctx, 'Deployment', 'agent-a', 'Agent', 'a', LATER);
  earlierChild(ctx, 'Service', 'agent-a', 'Agent', 'a', EARLIER);
  ctx.apiServerUids.set(`Agent/${NS}/a`, LATER);
  await reconcile(ctx, 'Agent', NS, 'a');
  elapsed = ORPHAN_GRACE_MS;
  t.same(await reconcile(ctx, 'Agent', NS, 'a'), undefined);
  t.same(requests(ctx), ['get Agent/ns/a', 'delete Service/ns/agent-a']);
  t.same(ctx.childKeys(), ['Deployment/ns/agent-a']);
});
