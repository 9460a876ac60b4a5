// The children half of a reconcile: apply what render desires (each apply skipped when the
// cached child already holds it), then delete the owned children that are no longer desired.
// Each write becomes a Normal Event on the parent and an entry of the reconcile's log line.
import { appliesReplicas, childEntry, inApplyOrder, KIND_TABLE, possibleChildren, type ChildKind, type OptionalAPI } from '../../cluster/kind-table.ts';
import type { KaosKind } from '../../api/kinds.ts';
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
  securityPolicyUserIssuerUndiscovered,
  type ExtraCondition,
  type Outcome,
} from '../status.ts';
import type { ReconcileReads } from './context.ts';
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
  const inputs = securityInputs(ctx.config.security, ctx.reads.serviceAccountIssuer(), ctx.reads.userJwksUri());
  const security = renderSecurityChildren(parentIdentity(run.kind, run.parent.metadata), rendered.service !== undefined, inputs);
  const desired = desiredChildren(run.kind, rendered, security);
  const policy = security.securityPolicy;
  // A policy whose user provider cannot name its keys yet is not written (one from before stays).
  const undiscovered = inputs.user !== undefined && inputs.user.jwksUri === undefined;
  const applied = await applyChildren(run, desired, { served: (api) => apiServed(ctx.reads, api), held: policy !== undefined && undiscovered ? [policy] : [] });
  // Fail closed (docs/api.md): the condition says whether the route is guarded, while there is a policy to guard it.
  const refusal = policy === undefined ? undefined : applied.refused.get(policy);
  const gateway = policy === undefined ? [] : !ctx.reads.securityPoliciesServed() ? [securityPolicyCrdMissing()]
    : undiscovered ? [securityPolicyUserIssuerUndiscovered(inputs.user?.issuer ?? '')]
    : refusal === undefined ? [securityPolicyApplied(policy.metadata.name)]
    : [securityPolicyApplyFailed(policy.metadata.name, refusal)];
  await settleStatus(run, {
    ...deploymentProgress(applied.objects.get(rendered.deployment) ?? {}),
    ...scaledToZero(run.kind, run.parent.spec),
    ...scaleStatus(run.kind, run.key.name, run.parent.spec, applied.objects.get(rendered.deployment)),
    ...(rendered.endpoint === undefined ? {} : { endpoint: rendered.endpoint }),
    ...extra,
    extraConditions: [...(extra.extraConditions ?? []), ...gateway],
  });
  return applied.refused.size === 0 ? undefined : { requeue: true };
}

/** Whether the cluster serves an optional API now: what a child type's `requires` asks (the kind table). */
const API_SERVED: Readonly<Record<OptionalAPI, (reads: ReconcileReads) => boolean>> = {
  gatewayAPI: (reads) => reads.httpRoutesServed(),
  envoyGateway: (reads) => reads.securityPoliciesServed(),
};

function apiServed(reads: ReconcileReads, api: OptionalAPI): boolean {
  return API_SERVED[api](reads);
}

/**
 * The children render desires for a parent of `kind`, with the security plane's (its NetworkPolicy,
 * the route's SecurityPolicy), in the kind table's apply order: config and storage first, the
 * NetworkPolicy before the pods, the SecurityPolicy before the route it guards.
 */
export function desiredChildren(kind: KaosKind, rendered: Rendered, security: { networkPolicy?: Child | undefined; securityPolicy?: Child | undefined } = {}): Child[] {
  const extra = [security.networkPolicy, security.securityPolicy].filter((c): c is Child => c !== undefined);
  return inApplyOrder(kind, [...childrenOf(rendered), ...extra]);
}

/** What applyChildren did: each applied child's object as it now is, and the gates the API server refused, with why. */
export interface Applied {
  readonly objects: ReadonlyMap<Child, ObjectLike>;
  readonly refused: ReadonlyMap<Child, string>;
}

/**
 * Applies `desired` in order, then prunes, following the kind table: a child whose type needs an
 * API the cluster does not serve (`requires`) is not applied, and one gated on a desired sibling
 * (`gatedOn`) only once that sibling was applied in this pass; `held` children are not applied
 * now. What is not applied is pruned if it exists, except a gate the API server refused and a held
 * child, which are kept if they were there (an older policy still guards better than none). Each
 * applied child's object (the apply's answer, or the cached one when nothing changed: what the
 * status reads) is returned.
 */
export async function applyChildren(
  run: Run,
  desired: readonly Child[],
  { served = () => true, held = [] }: { served?: (api: OptionalAPI) => boolean; held?: readonly Child[] } = {},
): Promise<Applied> {
  const { signal } = run;
  const applyReplicas = appliesReplicas(run.kind, run.parent.spec);
  const gateOf = (child: Child): Child | undefined => {
    const gate = childEntry(run.kind, child.kind, KIND_TABLE)?.gatedOn;
    return gate === undefined ? undefined : desired.find((c) => c.kind === gate);
  };
  const gates = new Set(desired.map(gateOf).filter((c): c is Child => c !== undefined));
  const objects = new Map<Child, ObjectLike>();
  const refused = new Map<Child, string>();
  const written: Written = { Created: [], Updated: [] };
  try {
    for (const child of desired) {
      const requires = KIND_TABLE.owned[child.kind as ChildKind]?.requires;
      if ((requires !== undefined && !served(requires)) || held.includes(child)) continue;
      const gate = gateOf(child);
      if (gate !== undefined && !objects.has(gate)) continue;
      try {
        objects.set(child, await applyOne(run, child, written, applyReplicas));
      } catch (err) {
        // A refused gate is the parent's status (GatewayAuthorization), not a failed reconcile.
        if (!gates.has(child) || signal.aborted || isConflict(err)) throw err;
        refused.set(child, errorMessage(err));
      }
    }
  } finally {
    tellWritten(run, written);
  }

  run.applied = true;
  const keep = [...objects.keys(), ...refused.keys(), ...held];
  await pruneExcept(run, keep);
  return { objects, refused };
}

/** Deletes the owned children not in `keep`, told in one Normal Event. */
async function pruneExcept(run: Run, keep: readonly Child[]): Promise<void> {
  const { ctx, signal } = run;
  const existing = ownedChildren(run);
  if (existing.length === 0) return;
  const pruned = await ctx.writes.pruneChildren(existing, run.uid, keep, signal);
  const deleted = pruned.deleted.map((child) => `${child.kind ?? ''} ${child.metadata?.name ?? ''}`);
  for (const child of pruned.deleted) run.changes.push(`deleted ${child.kind ?? ''}/${child.metadata?.name ?? ''}`);
  if (deleted.length > 0) {
    ctx.events.record({ regarding: regarding(run), type: 'Normal', reason: 'Deleted', action: 'Prune', note: `Deleted ${deleted.join(', ')}: no longer desired` });
  }
}

/**
 * While the parent's dependencies do not resolve: applies those of `candidates` the kind table
 * marks `beforeDependencies` (render needs only the parent for them), pruning nothing, so that
 * they never wait on what the parent names. Told like any apply; a conflict or refusal throws.
 */
export async function applyBeforeDependencies(run: Run, candidates: readonly Child[]): Promise<void> {
  const early = inApplyOrder(run.kind, candidates.filter((c) => childEntry(run.kind, c.kind, KIND_TABLE)?.beforeDependencies === true));
  const written: Written = { Created: [], Updated: [] };
  try {
    for (const child of early) await applyOne(run, child, written, appliesReplicas(run.kind, run.parent.spec));
  } finally {
    tellWritten(run, written);
  }
}

/** The children a pass created and updated, for its Events. */
type Written = Record<'Created' | 'Updated', string[]>;

/** Applies one child (skipped when the cached one already holds it) and notes a write; the object as it now is. */
async function applyOne(run: Run, child: Child, written: Written, applyReplicas: boolean): Promise<ObjectLike> {
  const { ctx, key, signal } = run;
  const name = child.metadata.name;
  // One just deleted as an earlier object's leftover (frame.ts) is created afresh.
  const live = run.cleared.has(`${child.kind}/${name}`) ? undefined : ctx.reads.child(child.kind, key.namespace, name);
  const result = await ctx.writes.ensureChild(child, live, signal, { applyReplicas });
  if (result.action !== 'unchanged') {
    run.changes.push(`${result.action} ${child.kind}/${name}`);
    written[result.action === 'created' ? 'Created' : 'Updated'].push(`${child.kind} ${name}`);
  }
  return result.object;
}

/**
 * One Event per kind of change, naming every child (a new Agent: one Event, not one per child),
 * told even when a later apply failed.
 */
function tellWritten(run: Run, written: Written): void {
  for (const reason of ['Created', 'Updated'] as const) {
    if (written[reason].length > 0) {
      run.ctx.events.record({ regarding: regarding(run), type: 'Normal', reason, action: 'Apply', note: `${reason} ${written[reason].join(', ')}` });
    }
  }
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
