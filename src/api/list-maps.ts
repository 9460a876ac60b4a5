// Uniqueness of `x-kubernetes-list-type: map` lists, which kube-apiserver checks next to the
// OpenAPI validation (apiextensions-apiserver schema/listtype): like it, only the first repeat of
// each key is reported, as `Duplicate value: {"name":"X"}`.
import { duplicate, index, invalid, child, type FieldError } from './field-error.ts';
import { isRecord, type JsonRecord } from './json.ts';

export function validateListMaps(schema: unknown, data: unknown, path: string): FieldError[] {
  if (!isRecord(schema)) return [];
  const errors: FieldError[] = [];
  if (Array.isArray(data)) {
    if (schema['x-kubernetes-list-type'] === 'map' && Array.isArray(schema['x-kubernetes-list-map-keys'])) {
      errors.push(...duplicateKeys(data, schema['x-kubernetes-list-map-keys'].map(String), path));
    }
    data.forEach((item, i) => errors.push(...validateListMaps(schema.items, item, index(path, i))));
  } else if (isRecord(data) && isRecord(schema.properties)) {
    const properties = schema.properties;
    for (const [name, value] of Object.entries(data)) {
      if (Object.hasOwn(properties, name)) errors.push(...validateListMaps(properties[name], value, child(path, name)));
    }
  }
  return errors;
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
