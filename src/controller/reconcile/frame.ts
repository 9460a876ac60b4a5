// What every kind's reconcile does around its own logic: read the parent from the cache, let an
// object being deleted go (legacy finalizer), turn a thrown error into one Warning Event before
// the queue retries it, write the status only when it changed, and log one line when something
// was written. The per-kind modules (agent.ts, modelapi.ts, mcpserver.ts) only say what is
// desired and what the outcome is.
import { API_VERSION, GROUP, type WorkloadKind } from '../../api/kinds.ts';
import { KIND_TABLE, possibleChildren } from '../../cluster/kind-table.ts';
import type { ObjectLike } from '../../kube/apply.ts';
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
  /** Set once the children were applied (children.ts): the frame then leaves them alone. */
  applied: boolean;
}

/** The object an Event about the parent is about. */
export function regarding(run: Pick<Run, 'kind' | 'key' | 'uid'>): EventRegarding {
  return { apiVersion: API_VERSION, kind: run.kind, name: run.key.name, namespace: run.key.namespace, uid: run.uid };
}

/**
 * A KindReconciler from the per-kind logic `body`, which runs only for a parent that exists and
 * is not being deleted.
 * - Absent from the cache: nothing to do (the garbage collector removes its children).
 * - Being deleted: only the kind's KAOS finalizers are removed, if present (other finalizers are
 *   someone else's); no apply, no status write.
 * - `body` meets a 409 (the cache is behind a write): back soon, quietly — no Event, no error.
 * - `body` throws anything else: one Warning `ReconcileFailed` Event (the recorder counts repeats instead of
 *   writing one per retry), then the error goes to the queue, which retries with backoff. An
 *   aborted reconcile (lost lease, shutdown) records nothing.
 */
export function reconciler<K extends WorkloadKind>(kind: K, body: (run: Run<K>) => Promise<ReconcileResult>): KindReconciler {
  return async (ctx, key, signal) => {
    const parent = ctx.reads.kaos(kind, key.namespace, key.name);
    if (parent === undefined) return;
    const started = performance.now();
    const run: Run<K> = { ctx, kind, key: { kind, namespace: key.namespace, name: key.name }, parent, uid: parent.metadata?.uid ?? '', signal, changes: [], applied: false };
    let failure: Record<string, unknown> | undefined;
    try {
      if (parent.metadata?.deletionTimestamp !== undefined) {
        await releaseLegacyFinalizer(run);
        return;
      }
      if (run.uid === '') throw new Error(`${kind} ${key.namespace}/${key.name} has no metadata.uid: its children could not be owned`);
      const result = await body(run);
      // Failed or waiting, nothing was applied: an earlier object's children go all the same.
      if (!run.applied) await deleteEarlierChildren(run, []);
      return result;
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
 * Deletes the children at this parent's names (the kind table's possibleChildren) whose
 * controller is an earlier object of the same kind and name — deleted, then created again — except
 * those at `keep` (just applied: taken over). Kubernetes' garbage collector deletes them itself,
 * but misses it when the owner was deleted and created again while its watch was broken (a
 * kube-apiserver restart: its relist sees one object changed, not one deleted), and then they stay
 * for good, running the old spec. Only a child created before this parent counts: a cache that
 * still holds an earlier parent must not take a later one's child for a leftover. Each delete is
 * guarded by the child's uid.
 */
export async function deleteEarlierChildren(run: Run, keep: readonly { kind?: string; metadata: { name: string } }[]): Promise<void> {
  const earlier = new Map<string, ObjectLike[]>();
  for (const { kind, name } of possibleChildren(run.kind, run.key.name, KIND_TABLE)) {
    if (keep.some((k) => k.kind === kind && k.metadata.name === name)) continue;
    const child = run.ctx.reads.child(kind, run.key.namespace, name);
    const owner = child?.metadata?.ownerReferences?.find((r) => r.controller === true);
    if (child === undefined || owner?.uid === undefined || owner.uid === run.uid) continue;
    if (owner.kind !== run.kind || owner.name !== run.key.name || owner.apiVersion?.split('/')[0] !== GROUP) continue;
    if (!createdBefore(child, run.parent)) continue;
    earlier.set(owner.uid, [...(earlier.get(owner.uid) ?? []), child]);
  }
  const deleted: string[] = [];
  for (const [uid, children] of earlier) {
    const pruned = await run.ctx.writes.pruneChildren(children, uid, [], run.signal);
    for (const child of pruned.deleted) {
      run.changes.push(`deleted ${child.kind ?? ''}/${child.metadata?.name ?? ''}`);
      deleted.push(`${child.kind ?? ''} ${child.metadata?.name ?? ''}`);
    }
  }
  if (deleted.length > 0) {
    run.ctx.events.record({ regarding: regarding(run), type: 'Normal', reason: 'Deleted', action: 'Prune', note: `Deleted ${deleted.join(', ')}: left by an earlier ${run.kind} ${run.key.name}` });
  }
}

/** Whether `a` was created strictly before `b` (by creationTimestamp; false when either lacks one). */
function createdBefore(a: ObjectLike, b: ObjectLike): boolean {
  return Date.parse(a.metadata?.creationTimestamp ?? '') < Date.parse(b.metadata?.creationTimestamp ?? '');
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
