// The children half of a reconcile: apply what render desires (each apply skipped when the
// cached child already holds it), then delete the owned children that are no longer desired.
// Each write becomes a Normal Event on the parent and an entry of the reconcile's log line.
import { appliesReplicas, KIND_TABLE, possibleChildren, type ChildKind } from '../../cluster/kind-table.ts';
import { controllerUid, type ObjectLike } from '../../kube/apply.ts';
import { childrenOf, workloadName, type Child, type Rendered } from '../../render/index.ts';
import { parentIdentity } from '../../render/labels.ts';
import { renderSecurityChildren } from '../../render/security.ts';
import { isConflict } from '../../kube/errors.ts';
import { errorMessage } from '../../leaves/error-message.ts';
import type { ReconcileResult } from '../queue.ts';
import { securityInputs } from '../security-inputs.ts';
import {
  deploymentProgress,
  mirrorDeployment,
  scaledToZero,
  scaleStatus,
  securityPolicyApplied,
  securityPolicyApplyFailed,
  securityPolicyCrdMissing,
  type ExtraCondition,
  type Outcome,
} from '../status.ts';
import { regarding, settleStatus, type Run } from './frame.ts';

/**
 * The common tail once the parent is rendered: apply its children (with security enabled, the
 * route's policies: docs/api.md, "Per-route SecurityPolicy and NetworkPolicy"), prune the rest,
 * and report the Deployment's progress (Pending / Ready) with render's endpoint (none when there
 * is no Service, which clears a previous one) plus `extra` (an Agent's linkedResources) and the
 * GatewayAuthorization condition. A SecurityPolicy the API server refused is retried with backoff.
 */
export async function converge(
  run: Run,
  rendered: Rendered,
  extra: { linkedResources?: Record<string, string>; extraConditions?: readonly ExtraCondition[] } = {},
): Promise<ReconcileResult> {
  const { ctx } = run;
  const inputs = securityInputs(ctx.config.security, ctx.reads.serviceAccountIssuer());
  const exposed = rendered.service !== undefined;
  const security = renderSecurityChildren(parentIdentity(run.kind, run.parent.metadata), exposed, inputs);
  // Fail closed (docs/api.md): with security enabled, a route is served only behind its policy.
  const guarded = inputs.enabled && exposed;
  const served = ctx.reads.securityPoliciesServed();
  const desired = desiredChildren(rendered, ctx.reads.httpRoutesServed(), served ? security : { ...security, securityPolicy: undefined });
  const applied = await applyChildren(run, desired, guarded ? (served ? 'policy' : 'withhold') : 'open');
  const gateway = !guarded ? [] : !served ? [securityPolicyCrdMissing()] : applied.policyError === undefined
    ? [securityPolicyApplied(security.securityPolicy?.metadata.name ?? '')]
    : [securityPolicyApplyFailed(security.securityPolicy?.metadata.name ?? '', applied.policyError)];
  await settleStatus(run, {
    ...deploymentProgress(applied.deployment ?? {}),
    ...scaledToZero(run.kind, run.parent.spec),
    ...scaleStatus(run.kind, run.key.name, run.parent.spec, applied.deployment),
    ...(rendered.endpoint === undefined ? {} : { endpoint: rendered.endpoint }),
    ...extra,
    extraConditions: [...(extra.extraConditions ?? []), ...gateway],
  });
  return applied.policyError === undefined ? undefined : { requeue: true };
}

/**
 * The children to apply, in order: render's (config and storage first), with the security plane's
 * NetworkPolicy before the Deployment and SecurityPolicy before the HTTPRoute; without those whose
 * type needs the Gateway API when HTTPRoutes cannot be written (gateway off, or its CRD not
 * served: the kind table's `requires`). An HTTPRoute left over from before is then pruned if the
 * cache holds it.
 */
export function desiredChildren(rendered: Rendered, httpRoutesServed: boolean, security: { networkPolicy?: Child | undefined; securityPolicy?: Child | undefined } = {}): Child[] {
  const out: Child[] = [];
  for (const child of childrenOf(rendered)) {
    if (child.kind === 'Deployment' && security.networkPolicy !== undefined) out.push(security.networkPolicy);
    if (child.kind === 'HTTPRoute' && !httpRoutesServed) continue;
    if (child.kind === 'HTTPRoute' && security.securityPolicy !== undefined) out.push(security.securityPolicy);
    out.push(child);
  }
  if (security.securityPolicy !== undefined && !out.includes(security.securityPolicy)) out.push(security.securityPolicy);
  return out;
}

/**
 * How the HTTPRoute is treated: `open` (security disabled, or nothing to guard), `policy` (applied
 * only once its SecurityPolicy is), `withhold` (no SecurityPolicy can be written: not applied, and
 * a route from before is pruned).
 */
export type RouteGuard = 'open' | 'policy' | 'withhold';

/**
 * Applies `desired` in order (config first), then prunes. Returns the Deployment as it now is (the
 * apply's answer when one was made, else the cached one: what the status reads) and, when the API
 * server refused the SecurityPolicy, why — the route is then withheld like a route without a policy.
 */
export async function applyChildren(run: Run, desired: readonly Child[], guard: RouteGuard = 'open'): Promise<{ deployment?: ObjectLike; policyError?: string }> {
  const { ctx, key, signal } = run;
  const applyReplicas = appliesReplicas(run.kind, run.parent.spec);
  let deployment: ObjectLike | undefined;
  let policyError: string | undefined;
  const kept: Child[] = [];
  const written: Record<'Created' | 'Updated', string[]> = { Created: [], Updated: [] };
  try {
    for (const child of desired) {
      if (child.kind === 'HTTPRoute' && (guard === 'withhold' || policyError !== undefined)) continue;
      const name = child.metadata.name;
      // One just deleted as an earlier object's leftover (frame.ts) is created afresh.
      const live = run.cleared.has(`${child.kind}/${name}`) ? undefined : ctx.reads.child(child.kind, key.namespace, name);
      let result;
      try {
        result = await ctx.writes.ensureChild(child, live, signal, { applyReplicas });
      } catch (err) {
        // A refused SecurityPolicy is the parent's status (GatewayAuthorization), not a failed reconcile.
        if (child.kind !== 'SecurityPolicy' || signal.aborted || isConflict(err)) throw err;
        policyError = errorMessage(err);
        continue;
      }
      kept.push(child);
      if (child.kind === 'Deployment') deployment = result.object;
      if (result.action === 'unchanged') continue;
      run.changes.push(`${result.action} ${child.kind}/${name}`);
      written[result.action === 'created' ? 'Created' : 'Updated'].push(`${child.kind} ${name}`);
    }
  } finally {
    // One Event per kind of change, naming every child (a new Agent: one Event, not one per
    // child), told even when a later apply failed.
    for (const reason of ['Created', 'Updated'] as const) {
      if (written[reason].length > 0) {
        ctx.events.record({ regarding: regarding(run), type: 'Normal', reason, action: 'Apply', note: `${reason} ${written[reason].join(', ')}` });
      }
    }
  }

  run.applied = true;
  // What was not applied goes: a withheld route, and a refused policy only if it was never there
  // (one from before stays: an older policy still guards better than none).
  const keep = policyError === undefined ? kept : [...kept, ...desired.filter((c) => c.kind === 'SecurityPolicy')];
  const existing = ownedChildren(run);
  if (existing.length > 0) {
    const pruned = await ctx.writes.pruneChildren(existing, run.uid, keep, signal);
    const deleted = pruned.deleted.map((child) => `${child.kind ?? ''} ${child.metadata?.name ?? ''}`);
    for (const child of pruned.deleted) run.changes.push(`deleted ${child.kind ?? ''}/${child.metadata?.name ?? ''}`);
    if (deleted.length > 0) {
      ctx.events.record({ regarding: regarding(run), type: 'Normal', reason: 'Deleted', action: 'Prune', note: `Deleted ${deleted.join(', ')}: no longer desired` });
    }
  }
  return { ...(deployment === undefined ? {} : { deployment }), ...(policyError === undefined ? {} : { policyError }) };
}

/**
 * The cached children at the names this parent could own that its uid controls. Looked up by
 * name, never by scanning; prune re-checks ownership (and skips those already being deleted).
 */
export function ownedChildren(run: Pick<Run, 'ctx' | 'kind' | 'key' | 'uid'>): ObjectLike[] {
  const out: ObjectLike[] = [];
  for (const { kind, name } of possibleChildren(run.kind, run.key.name, KIND_TABLE)) {
    const child = run.ctx.reads.child(kind, run.key.namespace, name);
    if (child !== undefined && controllerUid(child) === run.uid) out.push(child);
  }
  return out;
}

/**
 * What the status says of children an earlier reconcile made, while dependencies hold the parent
 * back: the owned Deployment's mirror (and the scale subresource's replicas and selector), and
 * `endpoint` while the owned Service exists.
 */
export function existingChildren(run: Pick<Run, 'ctx' | 'kind' | 'key' | 'uid' | 'parent'>, endpoint: string): Pick<Outcome, 'deployment' | 'endpoint' | 'replicas' | 'selector'> {
  const name = workloadName(run.kind, run.key.name);
  const deployment = ownedChild(run, 'Deployment', name);
  const service = ownedChild(run, 'Service', name);
  return {
    ...(deployment === undefined ? {} : { deployment: mirrorDeployment(deployment) }),
    ...scaleStatus(run.kind, run.key.name, run.parent.spec, deployment),
    ...(service === undefined ? {} : { endpoint }),
  };
}

/** A cached child of `kind` at `name` controlled by this parent, if any. */
export function ownedChild(run: Pick<Run, 'ctx' | 'key' | 'uid'>, kind: ChildKind, name: string): ObjectLike | undefined {
  const child = run.ctx.reads.child(kind, run.key.namespace, name);
  return child !== undefined && controllerUid(child) === run.uid ? child : undefined;
}
