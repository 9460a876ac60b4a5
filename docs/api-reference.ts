// The generated parts of docs/api.md, as pure functions of the schemas in src/api/schema (the same
// TypeBox schemas the CRDs are generated from): per kind a resource summary and the field tables
// of spec and status, plus the shared types. docs/api.md keeps its hand-written prose around
// marker pairs (`<!-- BEGIN GENERATED x -->` … `<!-- END GENERATED x -->`); fillGenerated()
// replaces what lies between each pair and leaves everything else as written.
// `npm run gen:docs` (docs/generate.ts) writes the result; test/unit/docs/api-reference.test.ts
// fails when the committed page differs from it.
import type { TSchema } from '@sinclair/typebox';
import { API_VERSION, KINDS, KIND_NAMES, type KaosKind } from '../src/api/kinds.ts';
import { crdFor, toSchemaProps, type JsonSchemaProps } from '../src/api/schema/crds.ts';
import {
  Condition,
  ContainerOverride,
  DeploymentStatus,
  EnvVar,
  GatewayRoute,
  OBJECT_SCHEMAS,
  SecretKeySelector,
} from '../src/api/schema/index.ts';

/**
 * Types documented once, in "Shared types", and linked from every field that has exactly their
 * schema (descriptions aside), instead of being expanded under each kind.
 */
export const SHARED_TYPES: ReadonlyArray<{ name: string; schema: TSchema }> = [
  { name: 'ContainerOverride', schema: ContainerOverride },
  { name: 'EnvVar', schema: EnvVar },
  { name: 'SecretKeySelector', schema: SecretKeySelector },
  { name: 'GatewayRoute', schema: GatewayRoute },
  { name: 'DeploymentStatus', schema: DeploymentStatus },
  { name: 'Condition', schema: Condition },
];

/** The ids of every generated block docs/api.md must hold, in page order. */
export function generatedIds(): string[] {
  return [...KINDS.flatMap((kind) => [`${kind}.resource`, `${kind}.spec`, `${kind}.status`]), 'shared-types'];
}

/** The content of one generated block. */
export function generatedBlock(id: string): string {
  if (id === 'shared-types') return sharedTypes();
  const [kind, part] = id.split('.');
  const found = KINDS.find((k) => k === kind);
  if (found === undefined) throw new Error(`docs/api.md: unknown generated block "${id}"`);
  if (part === 'resource') return resourceSummary(found);
  if (part === 'spec' || part === 'status') return fieldTable(fieldRows(objectSchema(found), part));
  throw new Error(`docs/api.md: unknown generated block "${id}"`);
}

const MARKER = /<!-- BEGIN GENERATED (\S+) -->\n[\s\S]*?<!-- END GENERATED \1 -->/g;

/**
 * The page with every marker pair's content regenerated. Throws when a block is missing, repeated
 * or unknown, so the page cannot silently lose a kind's table.
 */
export function fillGenerated(page: string): string {
  const seen: string[] = [];
  const out = page.replace(MARKER, (_match, id: string) => {
    seen.push(id);
    return `<!-- BEGIN GENERATED ${id} -->\n${generatedBlock(id)}<!-- END GENERATED ${id} -->`;
  });
  const expected = generatedIds();
  const missing = expected.filter((id) => !seen.includes(id));
  const repeated = seen.filter((id, i) => seen.indexOf(id) !== i);
  if (missing.length > 0 || repeated.length > 0) {
    throw new Error(`docs/api.md: generated blocks missing [${missing.join(', ')}], repeated [${repeated.join(', ')}]`);
  }
  return out;
}

// ---- the schema as plain JSON ------------------------------------------------------------------

/** Plain JSON of a schema in declaration order (the order a reader expects: required fields first). */
function plain(schema: TSchema): JsonSchemaProps {
  return JSON.parse(JSON.stringify(schema)) as JsonSchemaProps;
}

function objectSchema(kind: KaosKind): JsonSchemaProps {
  return plain(OBJECT_SCHEMAS[kind]);
}

function isObject(value: unknown): value is JsonSchemaProps {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A schema's identity for matching shared types: sorted JSON without its own description. */
function fingerprint(schema: JsonSchemaProps): string {
  const { description: _description, default: _default, ...rest } = schema;
  return JSON.stringify(toSchemaProps(rest));
}

const SHARED_BY_FINGERPRINT: ReadonlyMap<string, string> = new Map(SHARED_TYPES.map(({ name, schema }) => [fingerprint(plain(schema)), name]));

function sharedName(schema: JsonSchemaProps): string | undefined {
  return SHARED_BY_FINGERPRINT.get(fingerprint(schema));
}

/** GitHub's anchor of a heading made of one word. */
function anchor(name: string): string {
  return `#${name.toLowerCase()}`;
}

// ---- rows ----------------------------------------------------------------------------------------

export interface FieldRow {
  path: string;
  type: string;
  defaultValue: string;
  validation: string;
  description: string;
}

/** The rows of `root.properties[part]` and everything under it, shared types linked, not expanded. */
export function fieldRows(root: JsonSchemaProps, part: string): FieldRow[] {
  const properties = isObject(root.properties) ? root.properties : {};
  const node = properties[part];
  if (!isObject(node)) return [];
  const rows: FieldRow[] = [];
  walk(node, part, Array.isArray(root.required) && root.required.includes(part), rows, true);
  return rows;
}

function walk(node: JsonSchemaProps, path: string, required: boolean, rows: FieldRow[], top = false): void {
  const shared = top ? undefined : sharedName(node);
  rows.push(row(node, path, required, shared));
  if (shared !== undefined) return;
  const children = childrenOf(node);
  if (children === undefined) return;
  const { properties, required: requiredNames, prefix } = children;
  for (const [name, child] of Object.entries(properties)) {
    if (isObject(child)) walk(child, `${path}${prefix}.${name}`, requiredNames.includes(name), rows);
  }
}

/** The properties documented under a node: its own, or those of its array items (path `x[]`). */
function childrenOf(node: JsonSchemaProps): { properties: JsonSchemaProps; required: unknown[]; prefix: string } | undefined {
  if (isObject(node.properties)) {
    return { properties: node.properties, required: Array.isArray(node.required) ? node.required : [], prefix: '' };
  }
  const items = node.items;
  if (isObject(items) && isObject(items.properties) && sharedName(items) === undefined) {
    return { properties: items.properties, required: Array.isArray(items.required) ? items.required : [], prefix: '[]' };
  }
  return undefined;
}

function row(node: JsonSchemaProps, path: string, required: boolean, shared: string | undefined): FieldRow {
  return {
    path,
    type: shared !== undefined ? `[${shared}](${anchor(shared)})` : typeOf(node),
    defaultValue: node.default === undefined ? '' : code(typeof node.default === 'string' ? node.default : JSON.stringify(node.default)),
    validation: validationOf(node, required),
    description: typeof node.description === 'string' ? node.description : '',
  };
}

function typeOf(node: JsonSchemaProps): string {
  if (node.type === 'array') {
    const items = isObject(node.items) ? node.items : {};
    const shared = sharedName(items);
    return `${shared !== undefined ? `[${shared}](${anchor(shared)})` : typeOf(items)}[]`;
  }
  if (node.type === 'integer') return node.format === 'int32' || node.format === 'int64' ? node.format : 'integer';
  if (node.type === 'object') {
    if (isObject(node.additionalProperties)) return `map[string]${typeOf(node.additionalProperties)}`;
    return 'object';
  }
  return typeof node.type === 'string' ? node.type : 'any';
}

const number = (n: unknown): string => (typeof n === 'number' ? n.toLocaleString('en-US') : String(n));

function range(min: unknown, max: unknown, unit: string): string | undefined {
  const u = unit === '' ? '' : ` ${unit}`;
  if (min !== undefined && max !== undefined) return `${number(min)}–${number(max)}${u}`;
  if (min !== undefined) return `≥ ${number(min)}${u}`;
  if (max !== undefined) return `≤ ${number(max)}${u}`;
  return undefined;
}

function validationOf(node: JsonSchemaProps, required: boolean): string {
  const parts: string[] = [];
  if (required) parts.push('**required**');
  if (Array.isArray(node.enum)) parts.push(`one of ${node.enum.map((v) => code(String(v))).join(', ')}`);
  const values = range(node.minimum, node.maximum, '');
  if (values !== undefined) parts.push(values);
  const length = range(node.minLength, node.maxLength, 'characters');
  if (length !== undefined) parts.push(length);
  const items = range(node.minItems, node.maxItems, 'items');
  if (items !== undefined) parts.push(items);
  const entries = range(node.minProperties, node.maxProperties, 'entries');
  if (entries !== undefined) parts.push(entries);
  const value = node.additionalProperties;
  if (isObject(value)) {
    const each = validationOf(value, false);
    if (each !== '') parts.push(`each value ${each}`);
  }
  if (typeof node.pattern === 'string') parts.push(`pattern ${code(node.pattern)}`);
  if (typeof node.format === 'string' && node.type !== 'integer') parts.push(`format ${code(node.format)}`);
  const keys = node['x-kubernetes-list-map-keys'];
  if (node['x-kubernetes-list-type'] === 'map' && Array.isArray(keys)) parts.push(`entries keyed by ${keys.map((k) => code(String(k))).join(', ')}`);
  if (node['x-kubernetes-map-type'] === 'atomic') parts.push('atomic (server-side apply replaces it whole)');
  if (node['x-kubernetes-preserve-unknown-fields'] === true) parts.push('any fields, kept as given');
  const item = node.items;
  if (isObject(item) && !isObject(item.properties)) {
    const each = validationOf(item, false);
    if (each !== '') parts.push(`each ${each}`);
  }
  return parts.join('; ');
}

// ---- Markdown ----------------------------------------------------------------------------------

/** Inline code that survives a table cell: a `|` is escaped (GitHub splits cells on it even in code). */
function code(text: string): string {
  const fence = text.includes('`') ? '``' : '`';
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

function cell(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
}

export function fieldTable(rows: readonly FieldRow[]): string {
  const lines = ['| field | type | default | validation | description |', '|---|---|---|---|---|'];
  for (const r of rows) {
    lines.push(`| ${[code(r.path), r.type, r.defaultValue, r.validation, r.description].map(cell).join(' | ')} |`);
  }
  return `${lines.join('\n')}\n`;
}

function resourceSummary(kind: KaosKind): string {
  const names = KIND_NAMES[kind];
  const version = crdFor(kind).spec.versions[0];
  const columns = (version?.additionalPrinterColumns ?? []).map((c) => `${c.name} (${code(c.jsonPath)}${c.priority === undefined ? '' : ', with `-o wide`'})`).join(', ');
  const scale = version?.subresources.scale;
  const subresources = scale === undefined
    ? 'a `status` subresource'
    : `\`status\` and \`scale\` subresources (replicas ${code(scale.specReplicasPath)} and ${code(scale.statusReplicasPath)}, selector ${code(scale.labelSelectorPath)})`;
  const lines = [
    '| | |',
    '|---|---|',
    `| API version, kind | ${code(API_VERSION)}, ${code(kind)} |`,
    `| resource | ${code(names.plural)} (singular ${code(names.singular)}; short names ${names.shortNames.map(code).join(', ')}) |`,
    `| scope | namespaced, with ${subresources} |`,
    `| \`kubectl get\` columns | ${columns} |`,
  ];
  return `${lines.join('\n')}\n`;
}

function sharedTypes(): string {
  const parts: string[] = [];
  for (const { name, schema } of SHARED_TYPES) {
    const node = plain(schema);
    const description = typeof node.description === 'string' ? `${node.description}\n\n` : '';
    const rows: FieldRow[] = [];
    const properties = isObject(node.properties) ? node.properties : {};
    const required = Array.isArray(node.required) ? node.required : [];
    for (const [field, child] of Object.entries(properties)) {
      if (isObject(child)) walk(child, field, required.includes(field), rows);
    }
    const extra = validationOf({ ...node, description: undefined }, false);
    parts.push(`### ${name}\n\n${description}${extra === '' ? '' : `The object as a whole: ${extra}.\n\n`}${fieldTable(rows)}`);
  }
  return parts.join('\n');
}
