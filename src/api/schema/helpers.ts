// TypeBox builders for the shapes a *structural* CRD schema allows. TypeBox's own Union/Literal,
// Record and Any produce anyOf/const, patternProperties or untyped nodes, which apiextensions.k8s.io/v1
// rejects; these helpers emit the Kubernetes forms while keeping the inferred TypeScript types.
import {
  Type,
  type IntegerOptions,
  type SchemaOptions,
  type TArray,
  type TInteger,
  type TSchema,
  type TUnsafe,
} from '@sinclair/typebox';

/** `{type: string, enum: [...]}`, typed as the union of its values. */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

/** An object whose content Kubernetes keeps as given (core/v1 types we do not model field by field). */
export function OpaqueObject(options: SchemaOptions = {}): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({ ...options, type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
}

/**
 * Any value at all, kept as given: for a field declared only so that it reaches the webhooks (the
 * API server prunes or refuses a field its CRD does not declare before any webhook sees it).
 */
export function AnyValue(options: SchemaOptions = {}): TUnsafe<unknown> {
  return Type.Unsafe<unknown>({ ...options, 'x-kubernetes-preserve-unknown-fields': true });
}

/** A string-to-string map (`additionalProperties`, the structural way to say "any key"). */
export function StringMap(options: SchemaOptions = {}): TUnsafe<Record<string, string>> {
  return Type.Unsafe<Record<string, string>>({ ...options, type: 'object', additionalProperties: { type: 'string' } });
}

/**
 * A list that server-side apply merges entry by entry, keyed by `keys` (like core/v1 env lists).
 * The key fields must be required in the item schema: the API server refuses the CRD otherwise.
 */
export function MapList<T extends TSchema>(item: T, keys: readonly string[], options: SchemaOptions = {}): TArray<T> {
  return Type.Array(item, { ...options, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': [...keys] });
}

export function Int32(options: IntegerOptions = {}): TInteger {
  return Type.Integer({ ...options, format: 'int32' });
}

export function Int64(options: IntegerOptions = {}): TInteger {
  return Type.Integer({ ...options, format: 'int64' });
}

/**
 * resource.Quantity as a string (e.g. `5Gi`), with the pattern Kubernetes' own CRDs carry for it,
 * so the API server refuses a malformed size before any webhook runs.
 */
export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
