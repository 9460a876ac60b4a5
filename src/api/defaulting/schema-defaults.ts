// Kubernetes' structural-schema defaulting (apiextensions-apiserver schema/defaulting.Default), run
// over our own schemas: for every object node, each missing (or non-nullable null) property that
// has a `default` gets a copy of it, then defaulting recurses into the properties and list items.
// Running the very algorithm kube-apiserver runs keeps the webhook and the API server in agreement.
import { cloneJson, isRecord, type JsonRecord } from '../json.ts';

/** Applies the schema's defaults to `value` in place: the caller passes a copy it owns. */
export function applySchemaDefaults(schema: unknown, value: unknown): void {
  if (!isRecord(schema)) return;
  if (isRecord(value)) {
    const properties = isRecord(schema.properties) ? schema.properties : {};
    for (const [name, propSchema] of Object.entries(properties)) {
      if (!isRecord(propSchema) || !('default' in propSchema)) continue;
      if (!(name in value) || isNonNullableNull(value[name], propSchema)) value[name] = cloneJson(propSchema.default);
    }
    for (const [name, child] of Object.entries(value)) {
      const propSchema = Object.hasOwn(properties, name)
        ? properties[name]
        : isRecord(schema.additionalProperties)
          ? schema.additionalProperties
          : undefined;
      applySchemaDefaults(propSchema, child);
    }
  } else if (Array.isArray(value) && isRecord(schema.items)) {
    const items = schema.items;
    value.forEach((item, i) => {
      if (isNonNullableNull(item, items) && 'default' in items) value[i] = cloneJson(items.default);
      applySchemaDefaults(items, value[i]);
    });
  }
}

function isNonNullableNull(value: unknown, schema: JsonRecord): boolean {
  return value === null && schema.nullable !== true;
}
