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

/** A field counts as set when it holds something: absent, null and "" all mean "not given". */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/** Structural equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return a === b || goJSON(a) === goJSON(b);
}
