// Kubernetes' structural-schema defaulting (apiextensions-apiserver schema/defaulting.Default), run
// over our own schemas: for every object node, each missing (or non-nullable null) property that
// has a `default` gets a copy of it, then defaulting recurses into the properties and list items.
// Running the very algorithm kube-apiserver runs keeps the webhook and the API server in agreement.
import { cloneJson, isRecord, type JsonRecord } from '../json.ts';

/** Applies the schema's defaults to `value` in place: the caller passes a copy it owns. */
export function applySchemaDefaults(schema: unknown, value: unknown): void {
  if (!isRecord(schema)) return;
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
