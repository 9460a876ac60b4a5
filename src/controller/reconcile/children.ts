// The children half of a reconcile: apply what render desires (each apply skipped when the
// cached child already holds it), then delete the owned children that are no longer desired.
// Each write becomes a Normal Event on the parent and an entry of the reconcile's log line.
import { KIND_TABLE, possibleChildren, type ChildKind } from '../../cluster/kind-table.ts';
import { controllerUid, type ObjectLike } from '../../kube/apply.ts';
import { childrenOf, workloadName, type Child, type Rendered } from '../../render/index.ts';
import { deploymentProgress, mirrorDeployment, type ExtraCondition, type Outcome } from '../status.ts';
import { deleteEarlierChildren, regarding, settleStatus, type Run } from './frame.ts';

/**
 * The common tail once the parent is rendered: apply its children, prune the rest, and report
 * the Deployment's progress (Pending / Ready) with render's endpoint (none when there is no
 * Service, which clears a previous one) plus `extra` (an Agent's linkedResources).
 */
export async function converge(
  run: Run,
  rendered: Rendered,
  extra: { linkedResources?: Record<string, string>; extraConditions?: readonly ExtraCondition[] } = {},
): Promise<void> {
  const deployment = await applyChildren(run, desiredChildren(rendered, run.ctx.reads.httpRoutesServed()));
  await settleStatus(run, {
    ...deploymentProgress(deployment ?? {}),
    ...(rendered.endpoint === undefined ? {} : { endpoint: rendered.endpoint }),
    ...extra,
  });
}

/**
 * The children to apply: render's, without those whose type needs the Gateway API when
 * HTTPRoutes cannot be written (gateway off, or its CRD not served: the kind table's `requires`).
 * An HTTPRoute left over from before is then pruned if the cache holds it.
 */
export function desiredChildren(rendered: Rendered, httpRoutesServed: boolean): Child[] {
  const children = childrenOf(rendered);
  return httpRoutesServed ? children : children.filter((c) => KIND_TABLE.owned[c.kind].requires !== 'gatewayAPI');
}

/**
 * Applies `desired` in order (config first), then prunes. Returns the Deployment as it now is:
 * the apply's answer when one was made, else the cached one (what the status reads).
 */
export async function applyChildren(run: Run, desired: readonly Child[]): Promise<ObjectLike | undefined> {
  const { ctx, key, signal } = run;
  const applyReplicas = KIND_TABLE.kinds[run.kind].replicas === 'spec';
  let deployment: ObjectLike | undefined;
  const written: Record<'Created' | 'Updated', string[]> = { Created: [], Updated: [] };
  try {
    for (const child of desired) {
      const name = child.metadata.name;
      const live = ctx.reads.child(child.kind, key.namespace, name);
      const result = await ctx.writes.ensureChild(child, live, signal, { applyReplicas });
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
  const existing = ownedChildren(run);
  if (existing.length > 0) {
    const pruned = await ctx.writes.pruneChildren(existing, run.uid, desired, signal);
    const deleted = pruned.deleted.map((child) => `${child.kind ?? ''} ${child.metadata?.name ?? ''}`);
    for (const child of pruned.deleted) run.changes.push(`deleted ${child.kind ?? ''}/${child.metadata?.name ?? ''}`);
    if (deleted.length > 0) {
      ctx.events.record({ regarding: regarding(run), type: 'Normal', reason: 'Deleted', action: 'Prune', note: `Deleted ${deleted.join(', ')}: no longer desired` });
    }
  }
  // An earlier object's children at the names just applied are this one's now; the rest go.
  await deleteEarlierChildren(run, desired);
  return deployment;
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
 * back: the owned Deployment's mirror, and `endpoint` while the owned Service exists.
 */
export function existingChildren(run: Pick<Run, 'ctx' | 'kind' | 'key' | 'uid'>, endpoint: string): Pick<Outcome, 'deployment' | 'endpoint'> {
  const name = workloadName(run.kind, run.key.name);
  const deployment = ownedChild(run, 'Deployment', name);
  const service = ownedChild(run, 'Service', name);
  return {
    ...(deployment === undefined ? {} : { deployment: mirrorDeployment(deployment) }),
    ...(service === undefined ? {} : { endpoint }),
  };
}

/** A cached child of `kind` at `name` controlled by this parent, if any. */
export function ownedChild(run: Pick<Run, 'ctx' | 'key' | 'uid'>, kind: ChildKind, name: string): ObjectLike | undefined {
  const child = run.ctx.reads.child(kind, run.key.namespace, name);
  return child !== undefined && controllerUid(child) === run.uid ? child : undefined;
}
