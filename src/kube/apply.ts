// Server-side apply of an operator's children, the decision whether an apply would change
// anything (so an idle controller sends no write at all), and pruning of owned children that are
// no longer desired. Generic: which kinds are children and the field manager come in an
// ApplyScheme (the KAOS one is cluster/child-apply.ts).
//
// holdsAppliedFields is the heart of "zero idle writes". Applying `desired` with force changes
// nothing when (a) every field of `desired` already has that value in the live object, and (b)
// our field manager owns no field that `desired` leaves out (server-side apply would remove it).
// (a) is "desired ⊆ live" with the API server's list semantics; (b) reads metadata.managedFields.
import type { KubeClient } from './client.ts';
import { isConflict, isNotFound } from './errors.ts';
import { descend, droppedEntries, keyValue, releaseShares } from './fields-v1.ts';
import { isStoredFieldSet, readFieldSet } from './slim.ts';
import { isRecord } from './json.ts';
import { resourcePath, type ResourceType } from './paths.ts';
import { sameQuantity } from './quantity.ts';

/** What an operator applies: the types of its children (by kind) and its field manager. */
export interface ApplyScheme {
  readonly types: Readonly<Record<string, ResourceType>>;
  readonly fieldManager: string;
}

/** What this module reads of any object (children from render, the cache or the API server). */
export interface ObjectLike {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    resourceVersion?: string;
    labels?: Readonly<Record<string, string>>;
    annotations?: Readonly<Record<string, string>>;
    ownerReferences?: readonly OwnerRefLike[];
    managedFields?: readonly ManagedFieldsEntry[];
  };
  spec?: unknown;
  data?: unknown;
  status?: unknown;
}

export interface OwnerRefLike {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
}

/** The URL of a child from its kind (one of `types`), namespace and name; a clear error for anything else. */
export function childPathIn(types: ApplyScheme['types'], object: ObjectLike): string {
  const type = object.kind === undefined ? undefined : types[object.kind];
  if (type === undefined) throw new Error(`not a child kind the operator owns: ${String(object.kind)}`);
  const name = object.metadata?.name;
  const namespace = object.metadata?.namespace;
  if (name === undefined || name === '' || namespace === undefined || namespace === '') {
    throw new Error(`${type.kind} without metadata.name and metadata.namespace`);
  }
  return resourcePath(type, { namespace, name });
}

// ---------------------------------------------------------------------------------------------
// What to apply

/**
 * The object to apply given whether the child already exists: a Deployment's `spec.replicas` is
 * set at creation only (docs/api.md, "Common behaviour"), so `kubectl scale` and HPAs own it afterwards — unless
 * `applyReplicas` says its owner applies it on every change. A PersistentVolumeClaim that `live`
 * shows not yet bound keeps the size it has: the API server refuses any change to an unbound
 * claim's spec, and the refusal would hold back the rest of the apply — the Deployment whose pod
 * the claim waits for, among it; the claim's binding wakes its owner, and the next apply grows
 * it. Everything else is applied as rendered. Returns a new object; `desired` is not modified.
 */
export function applyIntent<T extends ObjectLike>(desired: T, exists: boolean, applyReplicas = false, live?: ObjectLike): T {
  if (!exists) return desired;
  if (desired.kind === 'PersistentVolumeClaim') return unboundClaimIntent(desired, live);
  if (applyReplicas || desired.kind !== 'Deployment') return desired;
  const spec = desired.spec;
  if (!isRecord(spec) || !('replicas' in spec)) return desired;
  const { replicas: _omitted, ...rest } = spec;
  return { ...desired, spec: rest };
}

function unboundClaimIntent<T extends ObjectLike>(desired: T, live: ObjectLike | undefined): T {
  const phase = isRecord(live?.status) ? live.status.phase : undefined;
  const size = requestedStorage(live);
  if (live === undefined || phase === 'Bound' || size === undefined || !isRecord(desired.spec)) return desired;
  const resources = isRecord(desired.spec.resources) ? desired.spec.resources : {};
  const requests = isRecord(resources.requests) ? resources.requests : {};
  return { ...desired, spec: { ...desired.spec, resources: { ...resources, requests: { ...requests, storage: size } } } };
}

function requestedStorage(claim: ObjectLike | undefined): unknown {
  const spec = claim?.spec;
  const resources = isRecord(spec) ? spec.resources : undefined;
  const requests = isRecord(resources) ? resources.requests : undefined;
  return isRecord(requests) ? requests.storage : undefined;
}

/** A JSON patch operation (RFC 6902), as this module writes them. */
export interface PatchOperation {
  readonly op: 'test' | 'replace';
  readonly path: string;
  readonly value?: unknown;
}

/**
 * Pure: what must go from `live` before `intent` can be applied — defaults the API server filled in
 * that nobody owns, so no apply can take them away, and that `intent` makes invalid. The one known:
 * a RollingUpdate Deployment's `strategy.rollingUpdate`, which a Recreate strategy may not carry
 * (the apply is refused for good: "may not be specified when strategy `type` is 'Recreate'").
 * The patch sets the strategy to the intent's, guarded by the type it replaces; the template is
 * not touched, so no rollout comes of it.
 */
export function defaultsInTheWay(live: ObjectLike, intent: ObjectLike): PatchOperation[] {
  if (intent.kind !== 'Deployment' || !isRecord(intent.spec) || !isRecord(live.spec)) return [];
  const wanted = intent.spec.strategy;
  const current = live.spec.strategy;
  if (!isRecord(wanted) || wanted.type !== 'Recreate' || !isRecord(current) || current.rollingUpdate === undefined) return [];
  return [
    { op: 'test', path: '/spec/strategy/type', value: current.type },
    { op: 'replace', path: '/spec/strategy', value: { type: 'Recreate' } },
  ];
}

// ---------------------------------------------------------------------------------------------
// Would an apply change anything?

/**
 * True when applying `desired` with our field manager (and force) would leave `live` as it is,
 * so the write can be skipped. `desired` is exactly what would be sent (see applyIntent).
 *
 * - Every field of `desired` must be in `live` with the same value. Fields the API server adds
 *   (defaults, status, other managers' fields) do not matter. A zero value ("", 0, false, {},
 *   []) also matches an absent field, since the API server omits those it does not keep.
 * - Lists the API server merges by key (containers and env by name, container ports by
 *   containerPort+protocol, volumeMounts by mountPath, …) match element by key, and the desired
 *   elements must appear in the same relative order (an apply would reorder them); a missing
 *   `protocol` in a port key is TCP, as the API server defaults it. Other lists are atomic:
 *   same length, element by element.
 * - Resource quantities compare by value ("500m" = "0.5", "1Gi" = "1024Mi").
 * - If `live` carries managedFields, our manager must have an Apply entry (else the first apply
 *   takes ownership) and own nothing outside `desired` (else apply would remove it). Without
 *   managedFields (a cache that strips them) only the values are compared.
 * - A desired field that already has its value but is not (or no longer) ours is no reason to
 *   write: an apply would only add us as a co-owner. Should anyone change its value, the first
 *   rule sees it and the next apply (with force) takes it back.
 */
export function holdsAppliedFields(live: ObjectLike | undefined, desired: ObjectLike, manager: string): boolean {
  if (live === undefined) return false;
  if (!holds(live, desired, '')) return false;
  if (live.metadata?.managedFields === undefined) return true;
  const fields = ownFields(live, manager);
  if (fields === undefined) return false;
  return ownedWithin(fields, desired, live.kind === 'Deployment' ? DEPLOYMENT_IGNORED_OWNED : []);
}

/** Whether a managedFields entry is `manager`'s apply of the object itself (not a subresource). */
function isOwnApply(entry: ManagedFieldsEntry, manager: string): boolean {
  return entry.manager === manager && entry.operation === 'Apply' && (entry.subresource ?? '') === '';
}

/** The field set of `manager`'s apply in `object`'s managedFields, if it has one. */
function ownFields(object: ObjectLike, manager: string): unknown {
  const ours = object.metadata?.managedFields?.find((e) => isOwnApply(e, manager));
  // The cache keeps the field set as pieces of its JSON text (kube/slim.ts's StoredFieldSet).
  return ours === undefined ? undefined : isStoredFieldSet(ours.fieldsV1) ? readFieldSet(ours.fieldsV1, object.metadata) : ours.fieldsV1;
}

/**
 * `spec.replicas` is applied at creation and then left out (applyIntent). Our ownership of it
 * from that first apply is harmless — whoever scales takes it over — so it must not count as
 * "owned but no longer applied", which would cost one write after every creation.
 */
const DEPLOYMENT_IGNORED_OWNED: readonly string[] = ['f:spec/f:replicas'];

/** Names of lists the API server merges by key, and how to compute an element's key. */
type KeyFn = (element: Record<string, unknown>) => string;

const byFields = (...fields: string[]): KeyFn => (e) => JSON.stringify(fields.map((f) => keyValue(f, e[f])));

const portKey: KeyFn = (e) => ('containerPort' in e ? byFields('containerPort', 'protocol')(e) : byFields('port', 'protocol')(e));

/**
 * From the Kubernetes OpenAPI (x-kubernetes-list-map-keys) for the fields a child can carry.
 * Custom resources (HTTPRoute) have no such lists in what render emits; theirs are atomic.
 */
const MAP_LISTS: Readonly<Record<string, KeyFn>> = {
  containers: byFields('name'),
  initContainers: byFields('name'),
  ephemeralContainers: byFields('name'),
  env: byFields('name'),
  volumes: byFields('name'),
  imagePullSecrets: byFields('name'),
  resourceClaims: byFields('name'),
  schedulingGates: byFields('name'),
  volumeMounts: byFields('mountPath'),
  volumeDevices: byFields('devicePath'),
  ports: portKey,
  hostAliases: byFields('ip'),
  topologySpreadConstraints: byFields('topologyKey', 'whenUnsatisfiable'),
  ownerReferences: byFields('uid'),
};

/** Fields whose values are resource.Quantity: the API server stores them canonicalized. */
const QUANTITY_PARENTS = new Set(['limits', 'requests', 'overhead']);

function holds(live: unknown, desired: unknown, field: string, parentField = ''): boolean {
  if (desired === undefined) return true;
  if (desired === null) return live === undefined || live === null;
  if (live === undefined || live === null) return isZero(desired);
  if (Array.isArray(desired)) {
    if (!Array.isArray(live)) return false;
    const keyOf = MAP_LISTS[field];
    return keyOf === undefined ? holdsAtomicList(live, desired, field) : holdsMapList(live, desired, field, keyOf);
  }
  if (isRecord(desired)) {
    if (!isRecord(live)) return false;
    for (const [k, v] of Object.entries(desired)) {
      if (!holds(live[k], v, k, field)) return false;
    }
    return true;
  }
  if (live === desired) return true;
  const quantity = QUANTITY_PARENTS.has(parentField) || (field === 'sizeLimit' && parentField === 'emptyDir');
  if (quantity) return sameQuantity(live, desired);
  return false;
}

function holdsAtomicList(live: unknown[], desired: unknown[], field: string): boolean {
  if (live.length !== desired.length) return false;
  return desired.every((d, i) => holds(live[i], d, `${field}[]`));
}

function holdsMapList(live: unknown[], desired: unknown[], field: string, keyOf: KeyFn): boolean {
  const index = new Map<string, number>();
  live.forEach((e, i) => {
    if (isRecord(e)) index.set(keyOf(e), i);
  });
  let last = -1;
  for (const d of desired) {
    if (!isRecord(d)) return false;
    const at = index.get(keyOf(d));
    if (at === undefined || at <= last) return false;
    if (!holds(live[at], d, `${field}[]`)) return false;
    last = at;
  }
  return true;
}

function isZero(value: unknown): boolean {
  if (value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isRecord(value)) return Object.values(value).every((v) => v === undefined || isZero(v));
  return false;
}

// ---------------------------------------------------------------------------------------------
// Ownership: fieldsV1 (structured-merge-diff's field set) against the desired object

/**
 * True when every field in the set `fieldsV1` is present in `desired`. Keys are `f:<field>`,
 * `k:<json of the list key>` (map-list element), `v:<json>` (set element), `i:<index>`, and
 * `.` (the node itself).
 */
function ownedWithin(fieldsV1: unknown, desired: unknown, ignored: readonly string[], path = ''): boolean {
  if (!isRecord(fieldsV1)) return true;
  for (const [key, child] of Object.entries(fieldsV1)) {
    if (key === '.') continue;
    const childPath = path === '' ? key : `${path}/${key}`;
    if (ignored.includes(childPath)) continue;
    const value = descend(desired, key);
    if (value === undefined) return false;
    if (!ownedWithin(child, value, ignored, childPath)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// I/O

/** An apply, and the read and patch that release other managers' shares first (releaseDropped). */
export type ApplyClient = Pick<KubeClient, 'apply' | 'get' | 'patch'>;

export interface ApplyChildOptions {
  signal?: AbortSignal;
  dryRun?: boolean;
  /** A Deployment's `spec.replicas` is applied whenever it changes, not only at creation (applyIntent). */
  applyReplicas?: boolean;
}

/** Server-side apply of one child with the scheme's field manager and force (a controller's apply). */
export async function applyChild<T extends ObjectLike>(scheme: ApplyScheme, client: ApplyClient, object: ObjectLike, options: ApplyChildOptions = {}): Promise<T> {
  return client.apply<T>(childPathIn(scheme.types, object), object, {
    fieldManager: scheme.fieldManager,
    force: true,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.dryRun === undefined ? {} : { dryRun: options.dryRun }),
  });
}

export type EnsureResult<T> =
  | { action: 'unchanged'; object: ObjectLike }
  | { action: 'created' | 'updated'; object: T };

/**
 * Applies `desired` unless `live` (the cached child, or undefined when there is none) already
 * holds it. `created` means there was no cached child, so a lagging cache may call an update a
 * creation; it never causes a write that was not needed.
 */
export async function ensureChild<T extends ObjectLike>(
  scheme: ApplyScheme,
  client: ApplyClient,
  desired: ObjectLike,
  live: ObjectLike | undefined,
  options: ApplyChildOptions = {},
): Promise<EnsureResult<T>> {
  const intent = applyIntent(desired, live !== undefined, options.applyReplicas === true, live);
  if (live !== undefined && holdsAppliedFields(live, intent, scheme.fieldManager)) return { action: 'unchanged', object: live };
  if (live !== undefined && options.dryRun !== true) {
    // What an apply cannot mend on its own, each its own JSON patch (none in the common case).
    await patchChild(scheme, client, intent, await releaseDropped(scheme, client, intent, live, options.signal), options.signal);
    await patchChild(scheme, client, intent, defaultsInTheWay(live, intent), options.signal);
  }
  const object = await applyChild<T>(scheme, client, intent, options);
  return { action: live === undefined ? 'created' : 'updated', object };
}

/**
 * Before an apply that drops elements of keyed lists we hold: the patch that releases the shares
 * other managers hold in them (kube/fields-v1.ts says why), so that the apply removes them whole.
 * The cache keeps only our own field set, so the others' are read fresh, and the patch is of
 * metadata.managedFields alone, guarded by the resourceVersion read (a 409 or 422 if the child
 * changed meanwhile: the queue retries). None, and no request, when the apply drops nothing, the
 * common case; none when no other manager holds a share of what it drops.
 */
async function releaseDropped(scheme: ApplyScheme, client: ApplyClient, intent: ObjectLike, live: ObjectLike, signal: AbortSignal | undefined): Promise<PatchOperation[]> {
  const dropped = droppedEntries(ownFields(live, scheme.fieldManager), intent);
  if (dropped.length === 0) return [];
  let fresh: ObjectLike;
  try {
    fresh = await client.get<ObjectLike>(childPathIn(scheme.types, intent), signal === undefined ? {} : { signal });
  } catch (err) {
    if (isNotFound(err)) return []; // gone: the apply creates it afresh
    throw err;
  }
  const released = releaseShares(fresh.metadata?.managedFields ?? [], dropped, (e) => isOwnApply(e, scheme.fieldManager));
  if (released === undefined) return [];
  return [
    { op: 'test', path: '/metadata/resourceVersion', value: fresh.metadata?.resourceVersion },
    { op: 'replace', path: '/metadata/managedFields', value: released },
  ];
}

/** A JSON patch of the child `intent` names, by our field manager; nothing when `operations` is empty. */
async function patchChild(scheme: ApplyScheme, client: ApplyClient, intent: ObjectLike, operations: readonly PatchOperation[], signal: AbortSignal | undefined): Promise<void> {
  if (operations.length === 0) return;
  await client.patch(childPathIn(scheme.types, intent), operations, 'json', { fieldManager: scheme.fieldManager, ...(signal === undefined ? {} : { signal }) });
}

/** The owner's uid in `object`'s controller ownerReference, if any. */
export function controllerUid(object: ObjectLike): string | undefined {
  return object.metadata?.ownerReferences?.find((r) => r.controller === true)?.uid;
}

/** `Kind/name`: how a desired child is named for pruning. */
export function childId(object: ObjectLike): string {
  return `${object.kind ?? ''}/${object.metadata?.name ?? ''}`;
}

/**
 * Pure: the children of `existing` controlled by `ownerUid` that `desired` no longer contains,
 * skipping those already being deleted (deleting them again would be a write for nothing).
 */
export function staleChildren<T extends ObjectLike>(existing: Iterable<T>, ownerUid: string, desired: Iterable<ObjectLike>): T[] {
  if (ownerUid === '') return [];
  const wanted = new Set<string>();
  for (const d of desired) wanted.add(childId(d));
  const out: T[] = [];
  for (const child of existing) {
    if (controllerUid(child) !== ownerUid) continue;
    if (child.metadata?.deletionTimestamp !== undefined) continue;
    if (wanted.has(childId(child))) continue;
    out.push(child);
  }
  return out;
}

export type DeleteClient = Pick<KubeClient, 'delete'>;

export interface PruneResult<T> {
  /** Deleted by this call. */
  deleted: T[];
  /** Already gone, or replaced by a same-named object with another uid (left alone). */
  skipped: T[];
}

/**
 * Deletes the owned children that are no longer desired (see staleChildren). Each delete carries
 * a uid precondition, so a same-named replacement created since the cache saw the old child is
 * never deleted; a 404 or a failed precondition (409) means there is nothing to do. Other errors
 * are thrown (the reconcile retries).
 */
export async function pruneOwned<T extends ObjectLike>(
  scheme: Pick<ApplyScheme, 'types'>,
  client: DeleteClient,
  existing: Iterable<T>,
  ownerUid: string,
  desired: Iterable<ObjectLike>,
  options: { signal?: AbortSignal } = {},
): Promise<PruneResult<T>> {
  const result: PruneResult<T> = { deleted: [], skipped: [] };
  for (const child of staleChildren(existing, ownerUid, desired)) {
    const uid = child.metadata?.uid;
    if (uid === undefined || uid === '') throw new Error(`${childId(child)}: no metadata.uid to guard its deletion`);
    try {
      await client.delete(childPathIn(scheme.types, child), {
        preconditions: { uid },
        propagationPolicy: 'Background',
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      result.deleted.push(child);
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) result.skipped.push(child);
      else throw err;
    }
  }
  return result;
}
