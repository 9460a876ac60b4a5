// Writes src/cli/pod-spec.schema.json: core/v1 PodSpec and everything it references, cut from the
// Kubernetes OpenAPI v3 document that ships in the k8s.io/kubernetes module test/cluster builds
// the control plane from (`npm run gen:podspec`; `--check` writes nothing and exits 1 on drift).
// `kaos-operator lint` validates the merged pod against it offline, where there is no API server
// to dry-run against. Only the structure survives the trim: types, required fields, nesting;
// descriptions, defaults and the x-kubernetes-* annotations go (they say nothing about validity).
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const POD_SPEC = 'io.k8s.api.core.v1.PodSpec';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const REF_PREFIX = '#/components/schemas/';
/** Keywords that constrain a value; every other one (description, default, x-kubernetes-*) is dropped. */
const KEPT = new Set(['type', 'properties', 'items', 'required', 'additionalProperties', 'allOf', 'oneOf', 'anyOf', 'enum', '$ref', 'format']);
/**
 * A Quantity string as apimachinery's ParseQuantity accepts it (number, then a binary or decimal
 * SI suffix or an exponent). The OpenAPI document says only "string or number"; the API server
 * answers 400 for a string it cannot parse, so the structural check refuses it too.
 */
export const QUANTITY_PATTERN = '^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$';
const INT32 = { minimum: -2147483648, maximum: 2147483647 };

type Schema = Record<string, unknown>;

/** The module's directory, from test/cluster/go.mod (downloaded into the Go module cache when absent). */
export function kubernetesModuleDir(): { dir: string; version: string } {
  const clusterDir = fileURLToPath(new URL('../test/cluster/', import.meta.url));
  const out = execFileSync('go', ['mod', 'download', '-json', 'k8s.io/kubernetes'], {
    cwd: clusterDir,
    env: { ...process.env, GOFLAGS: '-mod=mod' },
    encoding: 'utf8',
  });
  const info = JSON.parse(out) as { Dir?: string; Version?: string; Error?: string };
  if (info.Dir === undefined || info.Version === undefined) throw new Error(`go mod download k8s.io/kubernetes: ${info.Error ?? out}`);
  return { dir: info.Dir, version: info.Version };
}

/** The OpenAPI v3 document of the core group in that module. */
export function openApiPath(moduleDir: string): string {
  return join(moduleDir, 'api', 'openapi-spec', 'v3', 'api__v1_openapi.json');
}

/** PodSpec and its references as one JSON Schema (draft-07, definitions under `definitions`). */
export function trimPodSpecSchema(document: unknown, version: string): Schema {
  const all = (document as { components?: { schemas?: Record<string, Schema> } }).components?.schemas;
  if (all?.[POD_SPEC] === undefined) throw new Error(`the OpenAPI document has no ${POD_SPEC}`);
  const definitions: Record<string, Schema> = {};
  const pending = [POD_SPEC];
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (definitions[name] !== undefined) continue;
    const source = all[name];
    if (source === undefined) throw new Error(`the OpenAPI document has no ${name}`);
    definitions[name] = trim(source, (ref) => {
      pending.push(ref);
      return `#/definitions/${ref}`;
    });
  }
  const quantity = definitions[QUANTITY];
  if (quantity !== undefined) definitions[QUANTITY] = { oneOf: [{ type: 'string', pattern: QUANTITY_PATTERN }, { type: 'number' }] };
  const sorted = Object.fromEntries(Object.keys(definitions).sort().map((k) => [k, definitions[k]]));
  return {
    $comment: `core/v1 PodSpec from k8s.io/kubernetes ${version} api/openapi-spec/v3/api__v1_openapi.json, trimmed by scripts/gen-pod-spec-schema.ts: do not edit`,
    $ref: `#/definitions/${POD_SPEC}`,
    definitions: sorted,
  };
}

function trim(node: unknown, ref: (name: string) => string): Schema {
  const source = node as Schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(source)) {
    if (!KEPT.has(key)) continue;
    if (key === '$ref') {
      out.$ref = ref(String(value).slice(REF_PREFIX.length));
    } else if (key === 'properties') {
      out.properties = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([p, s]) => [p, trim(s, ref)]));
    } else if (key === 'items' || (key === 'additionalProperties' && typeof value === 'object')) {
      out[key] = trim(value, ref);
    } else if (key === 'allOf' || key === 'oneOf' || key === 'anyOf') {
      out[key] = (value as unknown[]).map((s) => trim(s, ref));
    } else if (key === 'format') {
      // int32 is a range the Go decoder enforces; other formats (int64, byte, date-time,
      // int-or-string) are either unchecked by the API server or already expressed by the type.
      if (value === 'int32') Object.assign(out, INT32);
    } else {
      out[key] = value;
    }
  }
  // allOf with a single $ref (how the document wraps references) is the reference itself.
  const allOf = out.allOf as Schema[] | undefined;
  if (allOf?.length === 1 && Object.keys(out).length === 1) return allOf[0] as Schema;
  return out;
}

export function renderSchemaFile(schema: Schema): string {
  return `${JSON.stringify(schema, null, 1)}\n`;
}

export const TARGET = new URL('../src/cli/pod-spec.schema.json', import.meta.url);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { dir, version } = kubernetesModuleDir();
  const content = renderSchemaFile(trimPodSpecSchema(JSON.parse(await readFile(openApiPath(dir), 'utf8')), version));
  const current = await readFile(TARGET, 'utf8').catch(() => undefined);
  if (current === content) {
    console.log('src/cli/pod-spec.schema.json is up to date');
  } else if (process.argv.includes('--check')) {
    console.error('src/cli/pod-spec.schema.json is out of date: run npm run gen:podspec');
    process.exitCode = 1;
  } else {
    await writeFile(TARGET, content);
    console.log(`wrote src/cli/pod-spec.schema.json from k8s.io/kubernetes ${version}`);
  }
}
