// An AccessGrant's Enforced condition (docs/api.md, "AccessGrant"): every reason of the table, in
// its order; observedGeneration; a status write only when it changes; an Event only when the
// status or reason changes (Normal Enforced on becoming True, a Warning with the reason otherwise).
import t from 'tap';
import type { GrantGateFacts } from '../../../src/api/access-grants.ts';
import type { GrantProjection } from '../../../src/controller/reconcile/context.ts';
import { grantVerdict } from '../../../src/controller/reconcile/accessgrant.ts';
import { MemoryReconcileContext } from '../../support/memory-reconcile-context.ts';
import { reconcile, statusOf } from './reconcile-helpers.ts';

const NS = 'team-a';
const PASS: GrantGateFacts = { securityEnabled: true, userPlaneEnabled: true, projectionActive: true };

function setup(gates: GrantGateFacts, projection: (generation: number | undefined) => GrantProjection) {
  const ctx = new MemoryReconcileContext();
  ctx.grantProjection = { gates, of: (_ns, _name, generation) => projection(generation) };
  ctx.putKaos({ apiVersion: 'kaos.tools/v1alpha1', kind: 'AccessGrant', metadata: { name: 'g', namespace: NS }, spec: { subjects: [{ kind: 'User', name: 'alice' }], resources: [{ kind: 'Agent', name: 'a' }] } });
  return ctx;
}

const enforced = (ctx: MemoryReconcileContext) => {
  const status = statusOf(ctx, 'AccessGrant', NS, 'g');
  const c = (status.conditions as Record<string, unknown>[] | undefined)?.find((x) => x.type === 'Enforced');
  return { observedGeneration: status.observedGeneration, status: c?.status, reason: c?.reason, message: c?.message, conditionGeneration: c?.observedGeneration };
};

t.test('each reason of the table, first matching row wins, with its message and observedGeneration', async (t) => {
  const rows: [GrantGateFacts, GrantProjection, string, string, string][] = [
    [{ ...PASS, securityEnabled: false, userPlaneEnabled: false }, { state: 'failed' }, 'False', 'AuthorizationDisabled', 'Gateway authorization is not enabled; this AccessGrant is not enforced'],
    [{ ...PASS, userPlaneEnabled: false, projectionActive: false }, { state: 'failed' }, 'False', 'NoUserIdentityProvider', 'A user identity provider must be configured for this AccessGrant to be enforced'],
    [{ ...PASS, projectionActive: false }, { state: 'failed' }, 'False', 'PolicyProjectionInactive', 'Automated policy projection must be active for this AccessGrant to be enforced'],
    [PASS, { state: 'failed' }, 'False', 'ProjectionFailed', 'Policy projection failed; this AccessGrant is not currently enforced'],
    [PASS, { state: 'projected', generation: 1 }, 'True', 'Enforced', 'AccessGrant is included in the successfully projected authorization policy'],
  ];
  for (const [gates, projection, status, reason, message] of rows) {
    const ctx = setup(gates, () => projection);
    await reconcile(ctx, 'AccessGrant', NS, 'g');
    t.same(enforced(ctx), { observedGeneration: 1, status, reason, message, conditionGeneration: 1 }, reason);
    t.same(ctx.recorded.map((e) => [e.type, e.reason, e.note]), [[status === 'True' ? 'Normal' : 'Warning', reason, message]], `${reason}: one Event`);
  }
});

t.test('nothing to say until the projection read this generation; nothing at all for an unprojected namespace', async (t) => {
  const pending = setup(PASS, () => ({ state: 'pending' }));
  await reconcile(pending, 'AccessGrant', NS, 'g');
  t.same(pending.requests, [], 'no write: the status keeps the CRD default (Unknown)');
  const unprojected = setup({ ...PASS, securityEnabled: false }, () => ({ state: 'unprojected' }));
  await reconcile(unprojected, 'AccessGrant', NS, 'g');
  t.same(unprojected.requests, [], 'not even a gate');
  t.same(grantVerdict(PASS, { state: 'projected', generation: 3 }, 4), { state: { status: 'True', reason: 'Enforced', message: 'AccessGrant is included in the successfully projected authorization policy' }, generation: 3 }, 'observedGeneration is what the pass read');
});

t.test('a converged grant costs nothing; Events only on a change of status or reason', async (t) => {
  let projection: GrantProjection = { state: 'projected', generation: 1 };
  const ctx = setup(PASS, () => projection);
  await reconcile(ctx, 'AccessGrant', NS, 'g');
  ctx.clearRecords();
  await reconcile(ctx, 'AccessGrant', NS, 'g');
  await reconcile(ctx, 'AccessGrant', NS, 'g');
  t.same(ctx.requests, [], 'idle: no write');
  t.same(ctx.recorded, [], 'idle: no Event');

  projection = { state: 'failed' };
  await reconcile(ctx, 'AccessGrant', NS, 'g');
  await reconcile(ctx, 'AccessGrant', NS, 'g');
  t.equal(ctx.requests.length, 1, 'one status write for the failure');
  t.same(ctx.recorded.map((e) => [e.type, e.reason]), [['Warning', 'ProjectionFailed']], 'one Warning, not one per pass');

  ctx.clearRecords();
  projection = { state: 'projected', generation: 1 };
  await reconcile(ctx, 'AccessGrant', NS, 'g');
  t.same(ctx.recorded.map((e) => [e.type, e.reason, e.action]), [['Normal', 'Enforced', 'Project']]);
});

t.test('a new generation is Enforced once the projection read it; the transition time stays while the status does', async (t) => {
  let projection: GrantProjection = { state: 'projected', generation: 1 };
  let now = new Date('2026-01-02T03:04:05Z');
  const ctx = setup(PASS, () => projection);
  ctx.now = () => now;
  await reconcile(ctx, 'AccessGrant', NS, 'g');
  ctx.updateKaos('AccessGrant', NS, 'g', (o) => {
    (o.spec as { resources: unknown[] }).resources.push({ kind: 'MCPServer', name: 'm' });
  });
  now = new Date('2026-01-02T04:00:00Z');
  await reconcile(ctx, 'AccessGrant', NS, 'g');
  t.equal(enforced(ctx).observedGeneration, 1, 'still the generation the last pass read');
  projection = { state: 'projected', generation: 2 };
  await reconcile(ctx, 'AccessGrant', NS, 'g');
  t.same(enforced(ctx), { observedGeneration: 2, status: 'True', reason: 'Enforced', message: 'AccessGrant is included in the successfully projected authorization policy', conditionGeneration: 2 });
  const condition = (statusOf(ctx, 'AccessGrant', NS, 'g').conditions as Record<string, unknown>[])[0];
  t.equal(condition?.lastTransitionTime, '2026-01-02T03:04:05Z', 'True all along');
});
