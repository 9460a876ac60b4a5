// An Agent's replicas and autoscaling through the reconciler (docs/api.md, "Agent replicas,
// kubectl scale and autoscaling"), against the in-memory context: who owns the Deployment's
// replicas, the HPA and PDB created and deleted, status.replicas and status.selector, ScaledToZero,
// and an Agent without the fields exactly as before.
import t from 'tap';
import { MemoryReconcileContext } from '../../support/memory-reconcile-context.ts';
import { reconcile, statusOf, type StoredObject } from './reconcile-helpers.ts';

const NS = 'team';
const kaos = (kind: string, name: string, spec: unknown): StoredObject => ({ apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name, namespace: NS }, spec } as StoredObject);
const agentSpec = (extra: Record<string, unknown> = {}) => ({ modelAPI: 'chat', config: { memory: { enabled: false } }, ...extra });
const replicasOf = (ctx: MemoryReconcileContext) => (ctx.child('Deployment', NS, 'agent-a')?.spec as { replicas?: number } | undefined)?.replicas;
const kinds = (ctx: MemoryReconcileContext) => ctx.childKeys().filter((k) => k.endsWith('/agent-a')).map((k) => k.split('/')[0]);
const writes = (ctx: MemoryReconcileContext) => ctx.requests.map((r) => `${r.verb} ${r.target}`);
const conditions = (status: Record<string, unknown>) =>
  ((status.conditions ?? []) as { type: string; status: string; reason: string }[]).map((c) => `${c.type}=${c.status}/${c.reason}`);

/** A ready ModelAPI `chat` and an Agent `a` with `spec`, reconciled once. */
async function world(spec: Record<string, unknown>): Promise<MemoryReconcileContext> {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos(kaos('ModelAPI', 'chat', { mode: 'Proxy', proxyConfig: { models: ['*'], apiBase: 'http://litellm.example:4000' } }));
  await reconcile(ctx, 'ModelAPI', NS, 'chat');
  ctx.setDeploymentStatus(NS, 'modelapi-chat', { replicas: 1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1 });
  await reconcile(ctx, 'ModelAPI', NS, 'chat');
  ctx.putKaos(kaos('Agent', 'a', spec));
  await reconcile(ctx, 'Agent', NS, 'a');
  return ctx;
}

/** The Deployment's status as the deployment controller would write it with `n` pods, all ready. */
const running = (ctx: MemoryReconcileContext, n: number) =>
  ctx.setDeploymentStatus(NS, 'agent-a', { observedGeneration: 0, replicas: n, readyReplicas: n, availableReplicas: n, updatedReplicas: n });

/** Someone scales the Deployment behind the Agent's back (`kubectl scale deployment`, an HPA). */
const scaleDeployment = (ctx: MemoryReconcileContext, n: number) => {
  const live = ctx.child('Deployment', NS, 'agent-a');
  ctx.putChild({ ...(live as StoredObject), kind: 'Deployment', spec: { ...(live?.spec as object), replicas: n } } as StoredObject & { kind: 'Deployment' });
};

t.test('no replicas, no autoscaling: one at creation, never reconciled, status as before', async (t) => {
  const ctx = await world(agentSpec());
  t.equal(replicasOf(ctx), 1);
  t.same(kinds(ctx), ['Deployment', 'Service']);
  scaleDeployment(ctx, 4);
  running(ctx, 4);
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, 'a');
  t.equal(replicasOf(ctx), 4, 'kubectl scale on the Deployment keeps working');
  t.notOk(writes(ctx).some((w) => w.startsWith('apply')), 'no apply');
  const status = statusOf(ctx, 'Agent', NS, 'a');
  t.equal(status.message, 'Deployment ready replicas: 4/4');
  t.notOk('replicas' in status, 'no status.replicas');
  t.notOk('selector' in status, 'no status.selector');
});

t.test('spec.replicas: applied, drift repaired, PDB from two up, status.replicas and selector', async (t) => {
  const ctx = await world(agentSpec({ replicas: 3 }));
  t.equal(replicasOf(ctx), 3);
  t.same(kinds(ctx), ['Deployment', 'PodDisruptionBudget', 'Service']);
  running(ctx, 3);
  await reconcile(ctx, 'Agent', NS, 'a');
  t.match(statusOf(ctx, 'Agent', NS, 'a'), { phase: 'Ready', ready: true, message: 'Deployment ready replicas: 3/3', replicas: 3, selector: 'agent=a,app=agent' });

  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, 'a');
  t.same(ctx.requests, [], 'idle: no write');

  scaleDeployment(ctx, 5);
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, 'a');
  t.equal(replicasOf(ctx), 3, 'the declared count wins over a scale of the Deployment');
  t.same(writes(ctx), [`apply Deployment/${NS}/agent-a`]);

  ctx.updateKaos('Agent', NS, 'a', (o) => Object.assign(o, { spec: agentSpec({ replicas: 1 }) }));
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, 'a');
  t.equal(replicasOf(ctx), 1);
  t.same(writes(ctx).slice(0, 2), [`apply Deployment/${NS}/agent-a`, `delete PodDisruptionBudget/${NS}/agent-a`], 'one replica: the PDB goes');
});

t.test('spec.replicas: 0 is ScaledToZero: Ready False, Pending, settled; the Service stays', async (t) => {
  const ctx = await world(agentSpec({ replicas: 0 }));
  t.equal(replicasOf(ctx), 0);
  t.same(kinds(ctx), ['Deployment', 'Service']);
  const status = statusOf(ctx, 'Agent', NS, 'a');
  t.match(status, { phase: 'Pending', ready: false, message: 'Agent is scaled to zero replicas', replicas: 0, selector: 'agent=a,app=agent', endpoint: 'http://agent-a.team.svc.cluster.local:8000' });
  t.same(conditions(status), ['Ready=False/ScaledToZero', 'Reconciling=False/ScaledToZero', 'Stalled=False/ScaledToZero']);
});

t.test('spec.autoscaling: the HPA owns the count; removing it deletes the HPA and keeps the count', async (t) => {
  const ctx = await world(agentSpec({ autoscaling: { minReplicas: 2, maxReplicas: 6 } }));
  t.equal(replicasOf(ctx), 2, 'created at minReplicas');
  t.same(kinds(ctx), ['Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Service']);
  scaleDeployment(ctx, 5);
  running(ctx, 5);
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, 'a');
  t.equal(replicasOf(ctx), 5, 'the HPA\'s count is left alone');
  t.notOk(writes(ctx).some((w) => w.startsWith('apply')), 'no apply');
  t.match(statusOf(ctx, 'Agent', NS, 'a'), { message: 'Deployment ready replicas: 5/5', replicas: 5, selector: 'agent=a,app=agent' });

  ctx.updateKaos('Agent', NS, 'a', (o) => Object.assign(o, { spec: agentSpec() }));
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, 'a');
  t.same(kinds(ctx), ['Deployment', 'Service'], 'the HPA and the PDB deleted');
  t.equal(replicasOf(ctx), 5, 'the Deployment keeps its current count');
  t.notOk('replicas' in statusOf(ctx, 'Agent', NS, 'a'), 'no longer reported');
});
