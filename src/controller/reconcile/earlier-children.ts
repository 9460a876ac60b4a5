// Children left by an earlier object of the parent's kind and name: deleted, then created again.
// Kubernetes' garbage collector deletes them itself, but misses it when the owner was deleted and
// created again while its watch was broken (a kube-apiserver restart): its relist matches objects
// by namespace and name, so it sees one object changed, not one deleted, keeps the old uid as a
// live owner, and the children stay for good, running the old spec.
//
// The cache cannot tell such a leftover from the child of a later object it has not seen yet, so
// the API server is asked, once, and only when the cache holds a child controlled by a same-named
// object with another uid: never on the normal path. Uids are never reused, so an owner uid that is
// not the one the API server now has under that name is gone for good.
//
// When the later object is deleted too before it was reconciled, no object of that name is left
// to delete them: the reconcile of the absent parent then does, once the garbage collector has had
// ORPHAN_GRACE_MS to do it (frame.ts, deleteOrphanedChildren), so that the normal path, where the
// collector deletes a deleted owner's children within seconds, writes nothing.
import { GROUP, type WorkloadKind } from '../../api/kinds.ts';
import { KIND_TABLE, possibleChildren } from '../../cluster/kind-table.ts';
import type { ObjectLike } from '../../kube/apply.ts';
import type { ReconcileReads } from './context.ts';

/** How long the children of an owner that no longer exists are left to the garbage collector. */
export const ORPHAN_GRACE_MS = 60_000;

/** A child at one of the parent's names controlled by another object of its kind and name. */
export interface EarlierChild {
  readonly child: ObjectLike;
  readonly ownerUid: string;
}

/**
 * Pure over the cache: the children at the names `kind/name` could own (the kind table's
 * possibleChildren; looked up by name, never by scanning) whose controller ownerReference is a
 * kaos.tools `kind` named `name` with a uid other than `uid`. Those already being deleted are left
 * out: there is nothing more to do for them, and they must not cost a request per reconcile.
 */
export function earlierChildren(reads: Pick<ReconcileReads, 'child'>, kind: WorkloadKind, namespace: string, name: string, uid: string): EarlierChild[] {
  const out: EarlierChild[] = [];
  for (const possible of possibleChildren(kind, name, KIND_TABLE)) {
    const child = reads.child(possible.kind, namespace, possible.name);
    if (child === undefined || child.metadata?.deletionTimestamp !== undefined) continue;
    const owner = child.metadata?.ownerReferences?.find((r) => r.controller === true);
    if (owner?.uid === undefined || owner.uid === '' || owner.uid === uid) continue;
    if (owner.kind !== kind || owner.name !== name || owner.apiVersion?.split('/')[0] !== GROUP) continue;
    out.push({ child, ownerUid: owner.uid });
  }
  return out;
}

/**
 * Pure: of `earlier`, the children whose owner no longer exists, by owner uid, given the uid the
 * API server has under the parent's name now (`liveUid`, undefined when it has none). A child of
 * `liveUid` itself belongs to a later object the cache has not seen yet and is left alone.
 */
export function orphanedBy(earlier: readonly EarlierChild[], liveUid: string | undefined): Map<string, ObjectLike[]> {
  const out = new Map<string, ObjectLike[]>();
  for (const { child, ownerUid } of earlier) {
    if (ownerUid === liveUid) continue;
    out.set(ownerUid, [...(out.get(ownerUid) ?? []), child]);
  }
  return out;
}
