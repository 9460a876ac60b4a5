// Reading JSON of unknown shape. Admission sees objects before (mutating) or regardless of
// (validating) schema validation, so nothing may assume the schema holds: every read is checked.
import { goJSON } from './go-format.ts';

export type JsonRecord = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonRecord {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export const asRecord = (value: unknown): JsonRecord | undefined => (isRecord(value) ? value : undefined);
export const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
export const asArray = (value: unknown): readonly unknown[] | undefined => (Array.isArray(value) ? value : undefined);

/** The value at `path` below `root`, or undefined when any step is missing or not an object. */
export function getIn(root: unknown, ...path: readonly string[]): unknown {
  let node = root;
  for (const step of path) {
    if (!isRecord(node)) return undefined;
    node = node[step];
  }
  return node;
}

/**
 * A deep copy of a JSON value (what JSON.parse produces). On the webhook's hot path: several times
 * faster than structuredClone, which must handle every type the structured-clone algorithm knows.
 */
export function cloneJson<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  const out: JsonRecord = {};
  for (const key of Object.keys(value)) {
    const copy = cloneJson((value as JsonRecord)[key]);
    // JSON.parse makes "__proto__" an own key; plain assignment would set the prototype instead.
    if (key === '__proto__') Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
    else out[key] = copy;
  }
  return out as T;
}

/** A field counts as set when it holds something: absent, null and "" all mean "not given". */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/** Structural equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return a === b || goJSON(a) === goJSON(b);
}
