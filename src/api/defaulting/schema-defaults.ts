// Kubernetes' structural-schema defaulting (apiextensions-apiserver schema/defaulting.Default), run
// over our own schemas: for every object node, each missing (or non-nullable null) property that
// has a `default` gets a copy of it, then defaulting recurses into the properties and list items.
// Running the very algorithm kube-apiserver runs keeps the webhook and the API server in agreement.
import { cloneJson, isRecord, type JsonRecord } from '../json.ts';

/**
 * Applies the schema's defaults to `value` in place: the caller passes a copy it owns, at least
 * wherever a default can land (copyForDefaults). A part whose schema holds no default is not
 * walked: an opaque podSpec, or a list of names, costs nothing however large.
 */
export function applySchemaDefaults(schema: unknown, value: unknown): void {
  if (!isRecord(schema) || !writesDefaults(schema)) return;
  if (isRecord(value)) {
    const plan = planOf(schema);
    for (const [name, propSchema] of plan.defaulted) {
      if (!(name in value) || isNonNullableNull(value[name], propSchema)) value[name] = cloneJson(propSchema.default);
    }
    for (const name of Object.keys(value)) {
      applySchemaDefaults(Object.hasOwn(plan.properties, name) ? plan.properties[name] : plan.additional, value[name]);
    }
  } else if (Array.isArray(value) && isRecord(schema.items)) {
    const items = schema.items;
    value.forEach((item, i) => {
      if (isNonNullableNull(item, items) && 'default' in items) value[i] = cloneJson(items.default);
      applySchemaDefaults(items, value[i]);
    });
  }
}

/**
 * `value` copied wherever applySchemaDefaults(schema, ·) can write, along the same walk, and
 * shared with `value` everywhere else: what it returns may be defaulted in place, and `value`
 * stays as it was.
 */
export function copyForDefaults(schema: unknown, value: unknown): unknown {
  if (!isRecord(schema) || !writesDefaults(schema)) return value;
  if (isRecord(value)) {
    const plan = planOf(schema);
    const out: JsonRecord = {};
    for (const name of Object.keys(value)) {
      const copy = copyForDefaults(Object.hasOwn(plan.properties, name) ? plan.properties[name] : plan.additional, value[name]);
      // JSON.parse makes "__proto__" an own key; plain assignment would set the prototype instead.
      if (name === '__proto__') Object.defineProperty(out, name, { value: copy, enumerable: true, writable: true, configurable: true });
      else out[name] = copy;
    }
    return out;
  }
  if (Array.isArray(value) && isRecord(schema.items)) {
    const items = schema.items;
    return value.map((item) => copyForDefaults(items, item));
  }
  return value;
}

const writes = new WeakMap<JsonRecord, boolean>();

/**
 * Whether applying `schema`'s defaults can change a value of it: some property or list item at
 * or below it has a default. Found once per schema node.
 */
export function writesDefaults(schema: JsonRecord): boolean {
  let found = writes.get(schema);
  if (found === undefined) {
    // A schema that refers to itself (none does today) would end here as "writes": never wrong.
    writes.set(schema, true);
    const plan = planOf(schema);
    const below = (child: unknown, itsDefault: boolean): boolean => isRecord(child) && ((itsDefault && 'default' in child) || writesDefaults(child));
    found =
      Object.values(plan.properties).some((property) => below(property, true)) ||
      below(plan.additional, false) ||
      below(schema.items, true);
    writes.set(schema, found);
  }
  return found;
}

/** What defaulting reads of an object schema, found once per schema node (the schemas are module constants). */
interface ObjectPlan {
  /** The properties that have a default, in the schema's order. */
  defaulted: readonly (readonly [string, JsonRecord])[];
  properties: JsonRecord;
  /** The schema of properties not listed, when additionalProperties is a schema. */
  additional: JsonRecord | undefined;
}

const plans = new WeakMap<JsonRecord, ObjectPlan>();

function planOf(schema: JsonRecord): ObjectPlan {
  let plan = plans.get(schema);
  if (plan === undefined) {
    const properties = isRecord(schema.properties) ? schema.properties : {};
    const defaulted: [string, JsonRecord][] = [];
    for (const [name, propSchema] of Object.entries(properties)) {
      if (isRecord(propSchema) && 'default' in propSchema) defaulted.push([name, propSchema]);
    }
    plan = { defaulted, properties, additional: isRecord(schema.additionalProperties) ? schema.additionalProperties : undefined };
    plans.set(schema, plan);
  }
  return plan;
}

function isNonNullableNull(value: unknown, schema: JsonRecord): boolean {
  return value === null && schema.nullable !== true;
}
