// Content hashes for pod template annotations (docs/api.md, "Common behaviour"). A hash must change exactly when
// the content changes: canonical JSON (keys sorted at every level) makes it independent of the
// key order in which the spec happened to be written or rendered.
import { createHash } from 'node:crypto';

export const POD_SPEC_HASH_ANNOTATION = 'kaos.tools/pod-spec-hash';
export const CONFIG_HASH_ANNOTATION = 'kaos.tools/config-hash';

/**
 * JSON with object keys sorted recursively. Array order is kept (it is meaningful: env order,
 * container order). Like JSON.stringify, undefined-valued keys are dropped, so `{a: undefined}`
 * and `{}` hash alike, as they serialise alike on the wire.
 */
export function canonicalJSON(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

/**
 * `value` with the keys of every object sorted: the very value where they already are (an env
 * entry's name before its value), a sorted copy of each object where they are not, and new
 * arrays and objects only on the way to those. A pod spec of megabytes is mostly objects in
 * order already; copying all of it doubled what its hash costs.
 */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const sorted = sortKeys(item);
      if (sorted !== item) out ??= value.slice(0, i);
      out?.push(sorted);
    }
    return out ?? value;
  }
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    let inOrder = true;
    for (let i = 0; i < keys.length && inOrder; i++) {
      const key = keys[i] as string;
      // "__proto__" is copied as the copy always treated it (an assignment: the key is dropped).
      inOrder = key !== '__proto__' && (i === 0 || (keys[i - 1] as string) < key);
    }
    const children = keys.map((key) => sortKeys(record[key]));
    if (inOrder && children.every((child, i) => child === record[keys[i] as string])) return value;
    const out: Record<string, unknown> = {};
    const order = keys.map((key, i) => [key, children[i]] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [key, child] of order) out[key] = child;
    return out;
  }
  return value;
}

/** First 16 hex characters of SHA-256. */
export function shortHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}

/** `kaos.tools/pod-spec-hash` of a final (merged) pod spec. */
export function podSpecHash(podSpec: unknown): string {
  return shortHash(canonicalJSON(podSpec));
}

/**
 * `kaos.tools/config-hash` of what identifies a config file: a ConfigMap's content, or
 * configSourceOfSecret for a Secret (whose content the operator never reads).
 */
export function configHash(source: string): string {
  return shortHash(source);
}

/**
 * `secret/<name>@<resourceVersion>/<key>`: the Secret key feeding a config file, as of one
 * version of the Secret. Any write to the Secret changes its resourceVersion, so the hash
 * changes whenever the key's content can have changed (and also on edits of other keys or of
 * its metadata: a spare rollout, never a missed one).
 */
export function configSourceOfSecret(name: string, resourceVersion: string, key: string): string {
  return `secret/${name}@${resourceVersion}/${key}`;
}

/** `configmap/<name>@<resourceVersion>/<key>`: as configSourceOfSecret, for a ConfigMap the operator does not own. */
export function configSourceOfConfigMap(name: string, resourceVersion: string, key: string): string {
  return `configmap/${name}@${resourceVersion}/${key}`;
}
