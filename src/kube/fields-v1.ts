// structured-merge-diff's field sets (metadata.managedFields[].fieldsV1), read against objects:
// which part of an object a key of the set names (descend), and what an apply that drops an
// element of a keyed list leaves behind when another field manager holds a share of it.
//
// Keys are `f:<field>`, `k:<json of the list key>` (an element of a list the API server merges
// by key), `v:<json>` (a set element), `i:<index>`, and `.` (the node itself).
//
// Why the release exists: server-side apply removes an element our apply no longer carries only
// when no other manager owns a field of it. Another manager that applied (or edited) the same
// element — even one whose values we took back with force — keeps a share of its key fields, so
// the element stays as a fragment: a Service port without its name (beside the new port, an
// invalid Service: every apply refused with 422, for good), an env var without its value. The
// operator's children are its own, so before such an apply it releases the other managers'
// shares in exactly the elements it drops (ensureChild, kube/apply.ts): the apply then removes
// them whole. Nothing but the field sets changes: no rollout, no content written twice.
import { isRecord, jsonEqual } from './json.ts';

/** The keys from the root of a field set down to one node, e.g. `f:spec`, `f:ports`, `k:{"port":80,"protocol":"TCP"}`. */
export type FieldsPath = readonly string[];

/** The defaults the API server fills into list keys before merging. */
export function keyValue(field: string, value: unknown): unknown {
  if (field === 'protocol' && (value === undefined || value === '')) return 'TCP';
  return value ?? null;
}

/** The part of `desired` a fieldsV1 key names, or undefined when desired has no such part. */
export function descend(desired: unknown, key: string): unknown {
  const sep = key.indexOf(':');
  const kind = key.slice(0, sep);
  const rest = key.slice(sep + 1);
  switch (kind) {
    case 'f':
      return isRecord(desired) && desired[rest] !== undefined && desired[rest] !== null ? desired[rest] : undefined;
    case 'k': {
      if (!Array.isArray(desired)) return undefined;
      const want = parseJsonObject(rest);
      if (want === undefined) return undefined;
      return desired.find((e) => isRecord(e) && Object.entries(want).every(([f, v]) => sameScalar(keyValue(f, e[f]), v)));
    }
    case 'v': {
      if (!Array.isArray(desired)) return undefined;
      let want: unknown;
      try {
        want = JSON.parse(rest);
      } catch {
        return undefined;
      }
      return desired.some((e) => jsonEqual(e, want)) ? want : undefined;
    }
    case 'i': {
      if (!Array.isArray(desired)) return undefined;
      return desired[Number(rest)];
    }
    default:
      return undefined;
  }
}

function sameScalar(a: unknown, b: unknown): boolean {
  return a === b || (typeof a !== 'object' && typeof b !== 'object' && String(a) === String(b));
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Pure: the elements of keyed lists that `owned` (our field set, from the object as it is) holds
 * and that `desired` (what we are about to apply) no longer has: an apply drops them. Only the
 * outermost: an element dropped whole is not searched for dropped elements within it.
 */
export function droppedEntries(owned: unknown, desired: unknown, path: FieldsPath = []): FieldsPath[] {
  if (!isRecord(owned)) return [];
  const out: FieldsPath[] = [];
  for (const [key, child] of Object.entries(owned)) {
    if (key === '.') continue;
    const value = descend(desired, key);
    if (key.startsWith('k:') && value === undefined) out.push([...path, key]);
    else out.push(...droppedEntries(child, value, [...path, key]));
  }
  return out;
}

/** What releaseShares reads of a managedFields entry. */
export interface ManagedEntry {
  readonly manager?: string;
  readonly operation?: string;
  readonly subresource?: string;
  readonly fieldsV1?: unknown;
}

/**
 * Pure: `managed` without any share of the `dropped` elements, but in `keep` (our own Apply
 * entry); an entry left owning nothing goes. Undefined when no other entry held a share of
 * them, so that nothing needs writing.
 */
export function releaseShares<T extends ManagedEntry>(managed: readonly T[], dropped: readonly FieldsPath[], keep: (entry: T) => boolean): T[] | undefined {
  let changed = false;
  const out: T[] = [];
  for (const entry of managed) {
    const fields: unknown = typeof entry.fieldsV1 === 'string' ? JSON.parse(entry.fieldsV1) : entry.fieldsV1;
    if (keep(entry) || !isRecord(fields)) {
      out.push(entry);
      continue;
    }
    let pruned: Record<string, unknown> | undefined = fields;
    for (const path of dropped) pruned = pruned === undefined ? undefined : without(pruned, path);
    if (pruned === fields) {
      out.push(entry);
      continue;
    }
    changed = true;
    if (pruned !== undefined) out.push({ ...entry, fieldsV1: pruned });
  }
  return changed ? out : undefined;
}

/**
 * `fields` without the node at `path` (the same object when it has none), and without the
 * parents that node's going leaves empty; undefined when nothing is left.
 */
function without(fields: Record<string, unknown>, path: FieldsPath): Record<string, unknown> | undefined {
  const [key, ...rest] = path;
  if (key === undefined || !(key in fields)) return fields;
  const child = fields[key];
  let next: Record<string, unknown> | undefined;
  if (rest.length === 0) next = undefined;
  else if (!isRecord(child)) return fields;
  else {
    next = without(child, rest);
    if (next === child) return fields;
  }
  const { [key]: _gone, ...others } = fields;
  const out = next === undefined ? others : { ...others, [key]: next };
  return Object.keys(out).length === 0 ? undefined : out;
}
