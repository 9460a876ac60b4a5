// What one field manager applied to an object, read back from the object as stored: the part of
// it that the manager's Apply entry in metadata.managedFields covers (client-go's Extract<Kind>
// does the same for typed objects). Applied again with that manager, it gives the manager the
// same field set, so a copy of an operator's children made this way is what that operator left
// in the cluster, whatever the API server defaulted around it (test/e2e/support/upgrade.ts).
import { descend } from '../../src/kube/fields-v1.ts';
import { isRecord } from '../../src/kube/json.ts';

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsV1?: unknown;
}

/** The fields `manager`'s apply of the object itself (not a subresource) holds, or undefined when it applied none. */
export function appliedFieldSet(object: unknown, manager: string): Record<string, unknown> | undefined {
  const entries = (isRecord(object) && isRecord(object['metadata']) ? object['metadata']['managedFields'] : undefined) as ManagedFieldsEntry[] | undefined;
  const entry = entries?.find((e) => e.manager === manager && e.operation === 'Apply' && (e.subresource ?? '') === '');
  return entry !== undefined && isRecord(entry.fieldsV1) ? entry.fieldsV1 : undefined;
}

/**
 * The part of `value` a fieldsV1 node names: a leaf (`{}`) is the value whole; a map's `f:` keys
 * are its fields; a list's `k:`, `v:` and `i:` keys are its elements, kept in the list's own
 * order. A field the set names that the object no longer has is left out.
 */
export function extractFields(value: unknown, fields: Record<string, unknown>): unknown {
  const keys = Object.keys(fields).filter((k) => k !== '.');
  if (keys.length === 0) return value;
  if (Array.isArray(value)) {
    const picked = new Map<unknown, unknown>();
    for (const key of keys) {
      const element = key.startsWith('v:') ? value.find((e) => JSON.stringify(e) === key.slice(2)) : descend(value, key);
      if (element === undefined) continue;
      const sub = fields[key];
      picked.set(element, isRecord(sub) && !key.startsWith('v:') ? extractFields(element, sub) : element);
    }
    return value.filter((e) => picked.has(e)).map((e) => picked.get(e));
  }
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    if (!key.startsWith('f:')) continue;
    const name = key.slice(2);
    const sub = fields[key];
    if (value[name] === undefined || value[name] === null) continue;
    out[name] = isRecord(sub) ? extractFields(value[name], sub) : value[name];
  }
  return out;
}

/** `object` as `manager` applied it: its apiVersion, kind, name and namespace, and the fields of the manager's Apply entry. */
export function extractApplied(object: Record<string, unknown>, manager: string): Record<string, unknown> | undefined {
  const fields = appliedFieldSet(object, manager);
  if (fields === undefined) return undefined;
  const extracted = extractFields(object, fields) as Record<string, unknown>;
  const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
  const own = isRecord(extracted['metadata']) ? extracted['metadata'] : {};
  return {
    apiVersion: object['apiVersion'],
    kind: object['kind'],
    ...extracted,
    metadata: { name: metadata['name'], ...(metadata['namespace'] === undefined ? {} : { namespace: metadata['namespace'] }), ...own },
  };
}
