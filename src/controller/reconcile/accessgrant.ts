// AccessGrant (docs/api.md, "AccessGrant"): its `Enforced` condition. The grant has no children;
// what it says comes from the operator's settings (the first gate they fail) or, past the gates,
// from the policy projection's last pass (controller/authz-projection.ts), which wakes every grant
// it read. The status is written only when it changes, and an Event is recorded only when the
// condition's status or reason changes (KAOS records a Warning on every pass): Normal `Enforced`
// on becoming True, a Warning with the reason otherwise.
import { asArray, asRecord } from '../../api/json.ts';
import { API_VERSION } from '../../api/kinds.ts';
import { ENFORCED, ENFORCED_CONDITION, failingGate, PROJECTION_FAILED, type EnforcedState, type GrantGateFacts } from '../../api/access-grants.ts';
import { isConflict } from '../../kube/errors.ts';
import { nextGrantStatus, statusChanged } from '../status.ts';
import type { GrantProjection, KindReconciler } from './context.ts';

/**
 * Pure: what the grant's condition says, and for which generation — or undefined while there is
 * nothing new to say (the projection has not read this generation yet, or does not judge its
 * namespace), in which case the status stays as it is.
 */
export function grantVerdict(gates: GrantGateFacts, projection: GrantProjection, generation: number | undefined): { state: EnforcedState; generation: number | undefined } | undefined {
  if (projection.state === 'unprojected') return undefined;
  const gate = failingGate(gates);
  if (gate !== undefined) return { state: gate, generation };
  switch (projection.state) {
    case 'failed':
      return { state: PROJECTION_FAILED, generation };
    case 'projected':
      return { state: ENFORCED, generation: projection.generation };
    case 'pending':
      return undefined;
  }
}

/** The Enforced condition the grant's status holds now, if any. */
function currentEnforced(status: unknown): { status?: unknown; reason?: unknown } | undefined {
  return (asArray(asRecord(status)?.conditions) ?? []).map(asRecord).find((c) => c?.type === ENFORCED_CONDITION);
}

export const reconcileAccessGrant: KindReconciler = async (ctx, key, signal) => {
  const grant = ctx.reads.kaos('AccessGrant', key.namespace, key.name);
  if (grant === undefined || grant.metadata?.deletionTimestamp !== undefined) return undefined;
  const projection = ctx.reads.grantProjection();
  const generation = grant.metadata?.generation;
  const verdict = grantVerdict(projection.gates, projection.of(key.namespace, key.name, generation), generation);
  if (verdict === undefined) return undefined;
  const next = nextGrantStatus(grant.status, verdict.generation, verdict.state, ctx.now());
  if (!statusChanged(grant.status, next)) return undefined;
  const started = performance.now();
  try {
    await ctx.writes.writeStatus('AccessGrant', grant, next, signal);
  } catch (err) {
    // The cache was behind our own last write: back with a fresher one, quietly.
    if (isConflict(err)) return { requeue: true };
    throw err;
  }
  const before = currentEnforced(grant.status);
  const { state } = verdict;
  if (before?.status !== state.status || before?.reason !== state.reason) {
    ctx.events.record({
      regarding: { apiVersion: API_VERSION, kind: 'AccessGrant', name: key.name, namespace: key.namespace, ...(grant.metadata?.uid === undefined ? {} : { uid: grant.metadata.uid }) },
      type: state.status === 'True' ? 'Normal' : 'Warning',
      reason: state.reason,
      action: 'Project',
      note: state.message,
    });
  }
  ctx.logger.info(
    { kind: 'AccessGrant', namespace: key.namespace, name: key.name, changes: ['status'], enforced: state.status, reason: state.reason, durationMs: Math.round((performance.now() - started) * 10) / 10 },
    'reconciled',
  );
  return undefined;
};
