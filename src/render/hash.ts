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

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      out[key] = sortKeys((value as Record<string, unknown>)[key]);
    }
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
