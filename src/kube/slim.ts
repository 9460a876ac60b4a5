// Pure: what the cache keeps of an object as it arrives (the reflectors' transform, like
// client-go's SetTransform), so that memory pays only for what the controller and the webhooks
// read. Dropped:
// - metadata.managedFields: nobody reads them, except kube/apply.ts's holdsAppliedFields, which
//   reads the Apply entry of OUR field manager on a child to decide whether an apply would change
//   anything — that one entry is kept on children (`keepManager`), its field set as a JSON string
//   cut into interned pieces that children share (StoredFieldSet below); every other entry goes
//   (the status writers', the creator's: on a Deployment most of its bytes);
// - the `kubectl.kubernetes.io/last-applied-configuration` annotation: a second copy of the whole
//   object that `kubectl apply` (and GitOps tools driving it) writes and nobody here reads. A
//   status write PUTs the cached object, but the status subresource takes only `status` from the
//   body, so the annotation stays on the stored object;
// - of a Deployment's status, everything but what the status mirror reads
//   (controller/status.ts's deploymentProgress: observedGeneration, to tell a rollout in flight, the
//   four replica counts and the conditions).
// Everything else stays: specs are compared field by field with what render desires, KAOS
// statuses with what the controller would write. What stays is stored with its strings shared
// (internStrings below): the same label, image, env name or condition message is one string for
// the whole cache, where JSON.parse gives every object its own copy.
import { isRecord } from './json.ts';
import type { KubeObject } from './meta.ts';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** The fields of a Deployment status the status mirror reads. */
const DEPLOYMENT_STATUS_READ = ['observedGeneration', 'replicas', 'readyReplicas', 'availableReplicas', 'updatedReplicas', 'conditions'] as const;

/**
 * The object without managedFields (all of them, or all but `keepManager`'s Apply entry of the
 * main resource) and without the last-applied annotation. Modifies and returns `object`, which
 * the reflector hands over fresh and unshared.
 */
export function slimObject<T extends KubeObject>(object: T, keepManager?: string): T {
  const metadata = object.metadata;
  if (metadata === undefined) return object;
  const managed = metadata.managedFields;
  const ours = keepManager === undefined || !Array.isArray(managed) ? [] : managed.filter((e: unknown) => isOwnApply(e, keepManager));
  const owners = ours.length === 0 ? [] : ownerUids(metadata);
  const kept = ours.map((e) => compactEntry(e, owners));
  if (kept.length > 0) metadata.managedFields = kept;
  else if (managed !== undefined) delete metadata.managedFields;
  const annotations = metadata.annotations;
  if (annotations !== undefined && LAST_APPLIED_ANNOTATION in annotations) {
    const { [LAST_APPLIED_ANNOTATION]: _dropped, ...rest } = annotations;
    if (Object.keys(rest).length > 0) metadata.annotations = rest;
    else delete metadata.annotations;
  }
  // compactEntry has shared the kept entries' strings already.
  internStrings(object, kept);
  return object;
}

/** A child of the operator: slimObject keeping our Apply entry. */
export function slimChild<T extends KubeObject>(object: T, fieldManager: string): T {
  return slimObject(object, fieldManager);
}

/**
 * A Deployment of the operator: slimChild, and its status trimmed to what the mirror reads.
 * (Told apart by its reflector, not by `kind`: items of a list come without it.)
 */
export function slimDeployment<T extends KubeObject>(object: T, fieldManager: string): T {
  slimObject(object, fieldManager);
  if (isRecord(object.status)) {
    const status: Record<string, unknown> = {};
    for (const field of DEPLOYMENT_STATUS_READ) if (object.status[field] !== undefined) status[field] = object.status[field];
    object.status = status;
  }
  return object;
}

/**
 * The entry with its field set as JSON text rather than a tree of objects: a third of the heap,
 * and a fraction of that once cut into shared pieces (apply.ts parses it when it needs it, once
 * per check of a child, by readFieldSet).
 */
function compactEntry(entry: Record<string, unknown>, owners: readonly string[]): Record<string, unknown> {
  const { time: _time, fieldsV1, ...rest } = entry;
  internStrings(rest);
  if (typeof fieldsV1 === 'object' && fieldsV1 !== null) rest.fieldsV1 = storedFieldSet(JSON.stringify(fieldsV1), owners);
  else if (fieldsV1 !== undefined) rest.fieldsV1 = fieldsV1;
  return rest;
}

/** The uids of an object's ownerReferences, in order. */
function ownerUids(metadata: NonNullable<KubeObject['metadata']>): string[] {
  const refs: unknown = metadata.ownerReferences;
  return Array.isArray(refs) ? refs.map((r: unknown) => (isRecord(r) && typeof r.uid === 'string' ? r.uid : '')) : [];
}

/**
 * How the cache keeps our field set: its JSON text cut at every comma into pieces, each V8's one
 * shared copy (as intern gives it), with the uid of the object's own Nth ownerReference written
 * as `@N`. Children differ in a few keys (their owner's uid, an env name of a peer or an
 * MCPServer): as one string each Deployment of an Agent held its own 2.2 KB copy, 2.2 MiB at
 * 1,000 Agents; as pieces, the pieces they have in common are one string for the whole cache, and
 * each child holds an array of pointers to them. Children entirely alike (an Agent's Service)
 * hold equal arrays of the same strings.
 */
export type StoredFieldSet = readonly string[];

/** A field set's key for the ownerReference of uid `uid`, as it reads in the set's JSON text. */
const ownerKey = (uid: string): string => `"k:{\\"uid\\":\\"${uid}\\"}"`;
const placeholder = (index: number): string => `@${index}`;

/** `text` (a field set's JSON) as the cache keeps it for an object with ownerReferences of uids `owners`. */
export function storedFieldSet(text: string, owners: readonly string[]): StoredFieldSet {
  let stored = text;
  owners.forEach((uid, index) => {
    if (uid !== '') stored = stored.replaceAll(ownerKey(uid), ownerKey(placeholder(index)));
  });
  // Every piece from the table, the short ones too: split() makes each a string of its own.
  return stored.split(',').map(tableCopy);
}

/** Whether a managedFields entry's fieldsV1 is as the cache keeps it (a field set itself is an object). */
export function isStoredFieldSet(fieldsV1: unknown): fieldsV1 is StoredFieldSet {
  return Array.isArray(fieldsV1);
}

/** The field set storedFieldSet stored, parsed, for the object whose ownerReferences are `metadata`'s. */
export function readFieldSet(stored: StoredFieldSet, metadata: KubeObject['metadata']): unknown {
  let text = stored.join(',');
  if (metadata !== undefined && text.includes('\\"uid\\":\\"@')) {
    ownerUids(metadata).forEach((uid, index) => {
      text = text.replaceAll(ownerKey(placeholder(index)), ownerKey(uid));
    });
  }
  return JSON.parse(text) as unknown;
}

function isOwnApply(entry: unknown, manager: string): entry is Record<string, unknown> {
  return isRecord(entry) && entry.manager === manager && entry.operation === 'Apply' && (entry.subresource ?? '') === '';
}

/**
 * V8's copy of `text` shared by the whole process. V8 keeps one copy of every property name (its
 * string table, whose entries go when nothing uses them), but JSON.parse makes a fresh string for
 * every value longer than 10 characters: at 1,000 Agents the cache held about 60,000 copies of
 * strings such as "kaos.tools/v1alpha1", "MinimumReplicasAvailable" or an image, 3.9 MiB of heap
 * (docs/benchmarks.md, "Memory"). Made a property name of `names`, `text` is looked up in that
 * table, and the key read back is the table's copy.
 */
export function intern(text: string): string {
  return text.length <= INTERNED_BY_JSON_PARSE ? text : tableCopy(text);
}

/** V8's string-table copy of `text`, whatever its length (see intern). */
function tableCopy(text: string): string {
  names[text] = true;
  let shared = text;
  for (const name in names) shared = name;
  delete names[text];
  return shared;
}

/** V8 internalizes the JSON string values up to this length itself. */
const INTERNED_BY_JSON_PARSE = 10;

/**
 * Always empty between two intern() calls. A delete puts an object in dictionary mode, where a new
 * name is a hash-table entry; an object literal per call ({[text]: true}) would instead make V8
 * create a hidden class for every distinct string, kept until a GC (a call measured 0.3-1.0 µs
 * against 0.5-2.6 µs, the first sight of a string being the dearest).
 */
const names: Record<string, true> = Object.create(null) as Record<string, true>;
names.dictionaryMode = true;
delete names.dictionaryMode;

/** Replaces every string value inside `value` (arrays and records, in place) by intern(value), but inside `done`. */
export function internStrings(value: unknown, done?: unknown): void {
  if (value === done) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'string') value[i] = intern(item);
      else if (typeof item === 'object' && item !== null) internStrings(item, done);
    }
    return;
  }
  if (!isRecord(value)) return;
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (typeof item === 'string') value[key] = intern(item);
    else if (typeof item === 'object' && item !== null) internStrings(item, done);
  }
}
