// What every kind's reconcile does around its own logic: read the parent from the cache, let an
// object being deleted go (legacy finalizer), turn a thrown error into one Warning Event before
// the queue retries it, write the status only when it changed, and log one line when something
// was written. The per-kind modules (agent.ts, modelapi.ts, mcpserver.ts) only say what is
// desired and what the outcome is.
import { API_VERSION, type WorkloadKind } from '../../api/kinds.ts';
import { childId } from '../../kube/apply.ts';
import type { KaosObjects } from '../../api/schema/index.ts';
import { isConflict } from '../../kube/errors.ts';
import type { EventRegarding } from '../../kube/events.ts';
import { errorFields } from '../../leaves/logger.ts';
import type { ReconcileResult } from '../queue.ts';
import { GATEWAY_AUTHORIZATION, nextStatus, statusChanged, type ExtraCondition, type Outcome, type Verdict } from '../status.ts';
import { securityEnabled } from '../../config/security.ts';
import { asArray, asRecord, asString } from '../../api/json.ts';
import type { ObjectRef } from '../../cluster/object-ref.ts';
import { LEGACY_FINALIZERS, type KindReconciler, type ReconcileContext } from './context.ts';
import { earlierChildren, ORPHAN_GRACE_MS, orphanedBy } from './earlier-children.ts';

/** One reconcile of one live parent: what the per-kind logic works with. */
export interface Run<K extends WorkloadKind = WorkloadKind> {
  readonly ctx: ReconcileContext;
  readonly kind: K;
  readonly key: ObjectRef<K>;
  /** The parent as the cache holds it, as its kind's schema type (frozen or not: never modified). */
  readonly parent: KaosObjects[K];
  /** metadata.uid: every child's controller ownerReference carries it. */
  readonly uid: string;
  readonly signal: AbortSignal;
  /** What this reconcile wrote, e.g. `created Deployment/agent-x`, `status`: the log line's list. */
  readonly changes: string[];
  /** Set once the children were applied (children.ts). */
  applied: boolean;
  /**
   * `Kind/name` of the children this reconcile deleted as an earlier object's leftovers: the cache
   * still shows them, but children.ts must create the parent's own afresh, not update those.
   */
  readonly cleared: Set<string>;
}

/** The object an Event about the parent is about. */
export function regarding(run: Pick<Run, 'kind' | 'key' | 'uid'>): EventRegarding {
  return { apiVersion: API_VERSION, kind: run.kind, name: run.key.name, namespace: run.key.namespace, uid: run.uid };
}

/**
 * A KindReconciler from the per-kind logic `body`, which runs only for a parent that exists and
 * is not being deleted.
 * - Absent from the cache: the garbage collector removes its children; should any be left at its
 *   names after ORPHAN_GRACE_MS, they are deleted (deleteOrphanedChildren).
 * - Being deleted: only the kind's KAOS finalizers are removed, if present (other finalizers are
 *   someone else's); no apply, no status write.
 * - Children at its names left by an earlier object of its kind and name are deleted first
 *   (deleteEarlierChildren); should the API server say the parent itself is gone, nothing else is
 *   done and the key is retried once the cache has caught up.
 * - `body` meets a 409 (the cache is behind a write): back soon, quietly — no Event, no error.
 * - `body` throws anything else: one Warning `ReconcileFailed` Event (the recorder counts repeats instead of
 *   writing one per retry), then the error goes to the queue, which retries with backoff. An
 *   aborted reconcile (lost lease, shutdown) records nothing.
 */
export function reconciler<K extends WorkloadKind>(kind: K, body: (run: Run<K>) => Promise<ReconcileResult>): KindReconciler {
  return async (ctx, key, signal) => {
    const parent = ctx.reads.kaos(kind, key.namespace, key.name);
    if (parent === undefined) return deleteOrphanedChildren(ctx, kind, key, signal);
    const started = performance.now();
    const run: Run<K> = { ctx, kind, key: { kind, namespace: key.namespace, name: key.name }, parent, uid: parent.metadata?.uid ?? '', signal, changes: [], applied: false, cleared: new Set() };
    let failure: Record<string, unknown> | undefined;
    try {
      if (parent.metadata?.deletionTimestamp !== undefined) {
        await releaseLegacyFinalizer(run);
        return;
      }
      if (run.uid === '') throw new Error(`${kind} ${key.namespace}/${key.name} has no metadata.uid: its children could not be owned`);
      // Before the body, so that it goes even while the parent fails or waits.
      if (!(await deleteEarlierChildren(run))) {
        ctx.logger.debug({ kind, namespace: key.namespace, name: key.name }, 'the API server no longer has this object: retrying on a fresher cache');
        return { requeue: true };
      }
      return await body(run);
    } catch (err) {
      // A 409 means the cache was behind our own last write (usually this reconcile's previous
      // status write): nothing is wrong, so no Warning for the user; back with a fresher cache.
      if (isConflict(err)) {
        ctx.logger.debug({ kind, namespace: key.namespace, name: key.name }, 'conflict: retrying on a fresher cache');
        return { requeue: true };
      }
      failure = errorFields(err);
      if (!signal.aborted) {
        ctx.events.record({ regarding: regarding(run), type: 'Warning', reason: 'ReconcileFailed', action: 'Reconcile', note: errorText(err) });
      }
      throw err;
    } finally {
      // A no-op says nothing at info level; writes made before a failure are still told.
      if (run.changes.length > 0) logChanges(run, started, failure);
    }
  };
}

/**
 * Deletes the children at this parent's names left by an earlier object of its kind and name
 * (earlier-children.ts says why the garbage collector can miss them), before anything is applied:
 * children.ts then creates the parent's own afresh, as if the garbage collector had done its job.
 * Returns false when the API server no longer has this parent (the cache is behind a deletion or
 * a re-creation): the rest of the reconcile must not apply children for an object that is gone.
 * Costs nothing unless the cache holds such a child; then one GET of the parent, which also keeps
 * a later object's children safe from a cache that has not seen that object yet. Each delete is
 * guarded by the child's uid.
 */
export async function deleteEarlierChildren(run: Run): Promise<boolean> {
  const earlier = earlierChildren(run.ctx.reads, run.kind, run.key.namespace, run.key.name, run.uid);
  if (earlier.length === 0) return true;
  const liveUid = await run.ctx.writes.liveUid(run.kind, run.key.namespace, run.key.name, run.signal);
  const deleted: string[] = [];
  const gone: string[] = [];
  for (const [uid, children] of orphanedBy(earlier, liveUid)) {
    const pruned = await run.ctx.writes.pruneChildren(children, uid, [], run.signal);
    gone.push(uid);
    for (const child of pruned.deleted) {
      run.cleared.add(childId(child));
      run.changes.push(`deleted ${child.kind ?? ''}/${child.metadata?.name ?? ''}`);
      deleted.push(`${child.kind ?? ''} ${child.metadata?.name ?? ''}`);
    }
  }
  if (deleted.length > 0) {
    run.ctx.events.record({
      regarding: regarding(run),
      type: 'Normal',
      reason: 'Deleted',
      action: 'Prune',
      note: `Deleted ${deleted.join(', ')}: left by an earlier ${run.kind} ${run.key.name} (uid ${gone.join(', ')}) that no longer exists`,
    });
  }
  return liveUid === run.uid;
}

/** Per context (a controller's term, a test's): when each absent parent was first seen with children left. */
const orphansSeenAt = new WeakMap<ReconcileContext, Map<string, number>>();

/**
 * For a parent absent from the cache: the children at its names still controlled by an object of
 * its kind and name (earlier-children.ts). None, the normal case: nothing, no request. Some: they
 * are left to the garbage collector for ORPHAN_GRACE_MS from the first reconcile that saw them
 * (the key comes back then); still there after it, one GET of the parent decides, as for a live
 * parent, and those of an owner the API server no longer has are deleted, each guarded by its uid.
 */
export async function deleteOrphanedChildren(ctx: ReconcileContext, kind: WorkloadKind, key: { namespace: string; name: string }, signal: AbortSignal): Promise<ReconcileResult> {
  const earlier = earlierChildren(ctx.reads, kind, key.namespace, key.name, '');
  let seen = orphansSeenAt.get(ctx);
  const id = `${kind}/${key.namespace}/${key.name}`;
  if (earlier.length === 0) {
    seen?.delete(id);
    return;
  }
  if (seen === undefined) orphansSeenAt.set(ctx, (seen = new Map()));
  const now = ctx.now().getTime();
  const since = seen.get(id);
  if (since === undefined) seen.set(id, now);
  const waited = since === undefined ? 0 : now - since;
  if (waited < ORPHAN_GRACE_MS) return { requeueAfter: ORPHAN_GRACE_MS - waited };
  seen.delete(id);
  const liveUid = await ctx.writes.liveUid(kind, key.namespace, key.name, signal);
  for (const [uid, children] of orphanedBy(earlier, liveUid)) {
    const pruned = await ctx.writes.pruneChildren(children, uid, [], signal);
    if (pruned.deleted.length === 0) continue;
    const deleted = pruned.deleted.map((c) => `${c.kind ?? ''} ${c.metadata?.name ?? ''}`);
    ctx.events.record({
      regarding: { apiVersion: API_VERSION, kind, name: key.name, namespace: key.namespace, uid },
      type: 'Normal',
      reason: 'Deleted',
      action: 'Prune',
      note: `Deleted ${deleted.join(', ')}: left by ${kind} ${key.name} (uid ${uid}), which no longer exists and whose children the garbage collector did not delete`,
    });
    ctx.logger.info({ kind, namespace: key.namespace, name: key.name, ownerUid: uid, deleted }, 'deleted children of an owner that no longer exists');
  }
  return;
}

async function releaseLegacyFinalizer(run: Run): Promise<void> {
  const finalizers = run.parent.metadata?.finalizers;
  if (!Array.isArray(finalizers)) return;
  const legacy = LEGACY_FINALIZERS[run.kind].filter((f) => finalizers.includes(f));
  if (legacy.length === 0) return;
  await run.ctx.writes.removeFinalizers(run.kind, run.parent, legacy, run.signal);
  for (const finalizer of legacy) run.changes.push(`removed finalizer ${finalizer}`);
}

/**
 * Writes the status `outcome` describes through the status subresource, only when it differs
 * from the cached one: a converged object costs no write.
 */
export async function settleStatus(run: Run, outcome: Outcome): Promise<void> {
  const prev = run.parent.status;
  const next = nextStatus(prev, run.parent.metadata?.generation, withGatewayAuthorization(run, outcome), run.ctx.now());
  if (!statusChanged(prev, next)) return;
  await run.ctx.writes.writeStatus(run.kind, run.parent, next, run.signal);
  run.changes.push('status');
}

/**
 * The outcome with the GatewayAuthorization condition (docs/api.md, "Per-route SecurityPolicy and
 * NetworkPolicy"): a reconcile that applied the children states it (or its absence); one held back
 * by a dependency applied nothing, so the condition it had still holds, with security enabled.
 */
function withGatewayAuthorization(run: Run, outcome: Outcome): Outcome {
  if (run.applied || !securityEnabled(run.ctx.config.security)) return outcome;
  if ((outcome.extraConditions ?? []).some((c) => c.type === GATEWAY_AUTHORIZATION)) return outcome;
  const held = (asArray(asRecord(run.parent.status)?.conditions) ?? []).map(asRecord).find((c) => c?.type === GATEWAY_AUTHORIZATION);
  if (held === undefined || (held.status !== 'True' && held.status !== 'False')) return outcome;
  const carried: ExtraCondition = { type: GATEWAY_AUTHORIZATION, status: held.status, reason: String(held.reason ?? ''), message: String(held.message ?? '') };
  return { ...outcome, extraConditions: [...(outcome.extraConditions ?? []), carried] };
}

/**
 * One Event when the object starts waiting on a dependency, or on another one (so `kubectl describe`
 * says why it waits): only when the status' message changes, never for a retry of the same wait.
 * Missing is a Warning for an Agent (Failed: the user may have to act), Normal otherwise (it will pass).
 */
export function recordDependencyEvent(run: Run, verdict: Verdict): void {
  if (asString(asRecord(run.parent.status)?.message) === verdict.message) return;
  run.ctx.events.record({
    regarding: regarding(run),
    type: verdict.phase === 'Failed' ? 'Warning' : 'Normal',
    reason: verdict.reason,
    action: 'ResolveDependencies',
    note: verdict.message,
  });
}

function logChanges(run: Run, started: number, error?: Record<string, unknown>): void {
  const fields: Record<string, unknown> = {
    kind: run.kind,
    namespace: run.key.namespace,
    name: run.key.name,
    changes: run.changes,
    durationMs: Math.round((performance.now() - started) * 10) / 10,
    ...error,
  };
  run.ctx.logger.info(fields, error === undefined ? 'reconciled' : 'reconcile failed after writes');
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
