// The KAOS operator's server-side apply (kube/apply.ts) bound to its children — the types of
// the kind table — and its one field manager.
import type { ResourceType } from '../kube/paths.ts';
import {
  applyChild as applyChildIn,
  childPathIn,
  ensureChild as ensureChildIn,
  holdsAppliedFields as holdsFieldsOf,
  pruneOwned as pruneOwnedIn,
  type ApplyChildOptions,
  type ApplyClient,
  type ApplyScheme,
  type DeleteClient,
  type EnsureResult,
  type ObjectLike,
  type PruneResult,
} from '../kube/apply.ts';
import { KIND_TABLE, childTypes } from './kind-table.ts';

/** The one field manager of every write the controller makes. */
export const FIELD_MANAGER = 'kaos-operator';

/** The child kinds the operator owns, by kind (the kind table's `owned`). */
export const CHILD_TYPES: Readonly<Record<string, ResourceType>> = childTypes(KIND_TABLE);

export const KAOS_APPLY: ApplyScheme = { types: CHILD_TYPES, fieldManager: FIELD_MANAGER };

/** The URL of a child from its kind, namespace and name; a clear error for anything else. */
export function childPath(object: ObjectLike): string {
  return childPathIn(CHILD_TYPES, object);
}

/** True when applying `desired` as kaos-operator would leave `live` as it is (kube/apply.ts). */
export function holdsAppliedFields(live: ObjectLike | undefined, desired: ObjectLike): boolean {
  return holdsFieldsOf(live, desired, FIELD_MANAGER);
}

export function applyChild<T extends ObjectLike>(client: ApplyClient, object: ObjectLike, options: ApplyChildOptions = {}): Promise<T> {
  return applyChildIn<T>(KAOS_APPLY, client, object, options);
}

export function ensureChild<T extends ObjectLike>(client: ApplyClient, desired: ObjectLike, live: ObjectLike | undefined, options: ApplyChildOptions = {}): Promise<EnsureResult<T>> {
  return ensureChildIn<T>(KAOS_APPLY, client, desired, live, options);
}

export function pruneOwned<T extends ObjectLike>(
  client: DeleteClient,
  existing: Iterable<T>,
  ownerUid: string,
  desired: Iterable<ObjectLike>,
  options: { signal?: AbortSignal } = {},
): Promise<PruneResult<T>> {
  return pruneOwnedIn(KAOS_APPLY, client, existing, ownerUid, desired, options);
}
