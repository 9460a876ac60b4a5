// Uniqueness of `x-kubernetes-list-type: map` lists, which kube-apiserver checks next to the
// OpenAPI validation (apiextensions-apiserver schema/listtype): like it, only the first repeat of
// each key is reported, as `Duplicate value: {"name":"X"}`.
import { duplicate, index, invalid, child, type FieldError } from '../field-error.ts';
import { isRecord, type JsonRecord } from '../json.ts';

export function validateListMaps(schema: unknown, data: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  walk(schema, data, path, errors);
  return errors;
}

/**
 * Whether a schema node has a list-type map anywhere below it. Memoised per node (the schemas are
 * module constants), so a request walks only the few branches that can hold one (the env lists)
 * instead of every field of the object.
 */
const holdsListMap = new WeakMap<JsonRecord, boolean>();
function hasListMap(schema: unknown): boolean {
  if (!isRecord(schema)) return false;
  let known = holdsListMap.get(schema);
  if (known === undefined) {
    holdsListMap.set(schema, false); // a recursive schema terminates here
    known =
      schema['x-kubernetes-list-type'] === 'map' ||
      hasListMap(schema.items) ||
      (isRecord(schema.properties) && Object.values(schema.properties).some(hasListMap));
    holdsListMap.set(schema, known);
  }
  return known;
}

function walk(schema: unknown, data: unknown, path: string, errors: FieldError[]): void {
  if (!isRecord(schema) || !hasListMap(schema)) return;
  if (Array.isArray(data)) {
    if (schema['x-kubernetes-list-type'] === 'map' && Array.isArray(schema['x-kubernetes-list-map-keys'])) {
      errors.push(...duplicateKeys(data, schema['x-kubernetes-list-map-keys'].map(String), path));
    }
    if (hasListMap(schema.items)) data.forEach((item, i) => walk(schema.items, item, index(path, i), errors));
  } else if (isRecord(data) && isRecord(schema.properties)) {
    const properties = schema.properties;
    for (const name of Object.keys(data)) {
      if (Object.hasOwn(properties, name) && hasListMap(properties[name])) walk(properties[name], data[name], child(path, name), errors);
    }
  }
}

function duplicateKeys(list: readonly unknown[], keyFields: readonly string[], path: string): FieldError[] {
  const notObject = list.findIndex((x) => x !== null && !isRecord(x));
  if (notObject >= 0) return [invalid(index(path, notObject), list[notObject], 'must be an object for an array of list-type map')];
  const keys = list.map((x): JsonRecord => {
    const item = isRecord(x) ? x : {};
    return Object.fromEntries(keyFields.filter((k) => Object.hasOwn(item, k)).map((k) => [k, item[k]]));
  });
  const errors: FieldError[] = [];
  const seen = new Map<string, number>();
  keys.forEach((key, i) => {
    // Map keys are scalars (the API server refuses other key types), so this identifies a key
    // cheaply; an absent key field and a null one stay distinct, as in kube-apiserver.
    const canonical = JSON.stringify(keyFields.map((k) => (Object.hasOwn(key, k) ? [key[k]] : [])));
    const earlier = seen.get(canonical) ?? 0;
    seen.set(canonical, earlier + 1);
    if (earlier === 1) errors.push(duplicate(index(path, i), key));
  });
  return errors;
}
