// Uniqueness of `x-kubernetes-list-type: map` lists, which kube-apiserver checks next to the
// OpenAPI validation (apiextensions-apiserver schema/listtype): like it, only the first repeat of
// each key is reported, as `Duplicate value: {"name":"X"}`.
import { duplicate, index, invalid, child, type FieldError } from '../field-error.ts';
import { isRecord, type JsonRecord } from '../json.ts';

export function validateListMaps(schema: unknown, data: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const plan = planOf(schema);
  if (plan !== undefined) walk(plan, data, path, errors);
  return errors;
}

/**
 * The branches of a schema that can hold a list-type map, and nothing else: a request walks only
 * those (the env lists) instead of every field of the object. Made once per schema node (the
 * schemas are module constants); undefined where no list map lies below.
 */
interface Plan {
  /** x-kubernetes-list-map-keys, when this node is a list-type map. */
  mapKeys: readonly string[] | undefined;
  items: Plan | undefined;
  properties: ReadonlyMap<string, Plan>;
}

const plans = new WeakMap<JsonRecord, Plan | null>();
function planOf(schema: unknown): Plan | undefined {
  if (!isRecord(schema)) return undefined;
  const known = plans.get(schema);
  if (known !== undefined) return known ?? undefined;
  plans.set(schema, null); // a recursive schema terminates here
  const isMap = schema['x-kubernetes-list-type'] === 'map';
  const items = planOf(schema.items);
  const properties = new Map<string, Plan>();
  if (isRecord(schema.properties)) {
    for (const [name, sub] of Object.entries(schema.properties)) {
      const p = planOf(sub);
      if (p !== undefined) properties.set(name, p);
    }
  }
  const listKeys = schema['x-kubernetes-list-map-keys'];
  const plan: Plan | undefined =
    isMap || items !== undefined || properties.size > 0
      ? { mapKeys: isMap && Array.isArray(listKeys) ? listKeys.map(String) : undefined, items, properties }
      : undefined;
  plans.set(schema, plan ?? null);
  return plan;
}

function walk(plan: Plan, data: unknown, path: string, errors: FieldError[]): void {
  if (Array.isArray(data)) {
    if (plan.mapKeys !== undefined) errors.push(...duplicateKeys(data, plan.mapKeys, path));
    const items = plan.items;
    if (items !== undefined) data.forEach((item, i) => walk(items, item, index(path, i), errors));
  } else if (isRecord(data) && plan.properties.size > 0) {
    for (const name of Object.keys(data)) {
      const sub = plan.properties.get(name);
      if (sub !== undefined) walk(sub, data[name], child(path, name), errors);
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
