// Builds the five CustomResourceDefinitions from the schemas (pure; crds/generate.ts writes them).
import type { TSchema } from '@sinclair/typebox';
import { Document, Scalar, visit } from 'yaml';
import { GROUP, KIND_NAMES, KINDS, SCALE_SUBRESOURCES, VERSION, WORKLOAD_KINDS, type KaosKind, type ScaleSubresource, type WorkloadKind } from '../kinds.ts';
import { OBJECT_SCHEMAS } from './index.ts';

export type JsonSchemaProps = { [key: string]: unknown };

export interface PrinterColumn {
  name: string;
  type: 'string' | 'boolean' | 'integer' | 'number' | 'date';
  jsonPath: string;
  description?: string;
  /** 1: shown by `kubectl get -o wide` only. */
  priority?: number;
}



export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames: string[] };
    scope: 'Namespaced';
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      subresources: { status: Record<string, never>; scale?: ScaleSubresource };
      additionalPrinterColumns: PrinterColumn[];
      schema: { openAPIV3Schema: JsonSchemaProps };
    }>;
  };
}

const SPEC_COLUMNS: Readonly<Record<KaosKind, readonly PrinterColumn[]>> = {
  Agent: [
    { name: 'ModelAPI', type: 'string', jsonPath: '.spec.modelAPI' },
    // Empty for original-shape Agents (MODEL_NAME in config.env).
    { name: 'Model', type: 'string', jsonPath: '.spec.model' },
  ],
  ModelAPI: [{ name: 'Mode', type: 'string', jsonPath: '.spec.mode' }],
  MCPServer: [{ name: 'Type', type: 'string', jsonPath: '.spec.type' }],
  MemoryStore: [
    { name: 'Engine', type: 'string', jsonPath: '.spec.engine' },
    { name: 'Storage', type: 'string', jsonPath: '.spec.storage.type' },
  ],
  AccessGrant: [],
};

/** Columns of the newer shapes (docs/api.md, "Newer KAOS shapes"), beside the original ones, which stay. */
const SHAPE_COLUMNS: Readonly<Partial<Record<KaosKind, readonly PrinterColumn[]>>> = {
  MCPServer: [{ name: 'Runtime', type: 'string', jsonPath: '.spec.runtime' }],
};

/** The Replicas column of a kind with a scale subresource: `kubectl get -o wide` only. */
const replicasColumn = (scale: ScaleSubresource): PrinterColumn => ({ name: 'Replicas', type: 'integer', jsonPath: scale.statusReplicasPath, priority: 1 });

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

/** A workload's Ready and Phase; an AccessGrant's Enforced condition, its status and reason. */
const STATUS_COLUMNS: Readonly<Record<KaosKind, readonly PrinterColumn[]>> = {
  ...(Object.fromEntries(
    WORKLOAD_KINDS.map((kind) => [
      kind,
      [
        { name: 'Ready', type: 'boolean', jsonPath: '.status.ready' },
        { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
        AGE,
      ],
    ]),
  ) as unknown as Record<WorkloadKind, readonly PrinterColumn[]>),
  AccessGrant: [
    { name: 'Enforced', type: 'string', jsonPath: '.status.conditions[?(@.type=="Enforced")].status' },
    { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Enforced")].reason' },
    AGE,
  ],
};

/** Keywords whose value is a schema, or a map of schemas; everything else is data. */
const SCHEMA_VALUED = new Set(['items', 'additionalProperties']);

const byKey = ([a]: [string, unknown], [b]: [string, unknown]): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Plain JSON of a TypeBox schema (its Symbol-keyed metadata dropped), keys sorted at every schema
 * node so the output never depends on declaration order: that is also the order kube-apiserver
 * serves a CRD in. Data (defaults, enums, required lists) is copied as is.
 */
export function toSchemaProps(schema: TSchema | JsonSchemaProps): JsonSchemaProps {
  const plain: JsonSchemaProps = JSON.parse(JSON.stringify(schema));
  const walk = (node: JsonSchemaProps): JsonSchemaProps =>
    Object.fromEntries(
      Object.entries(node)
        .sort(byKey)
        .map(([k, v]): [string, unknown] => {
          if (k === 'properties' && isObject(v)) {
            return [k, Object.fromEntries(Object.entries(v).sort(byKey).map(([p, s]) => [p, isObject(s) ? walk(s) : s]))];
          }
          if (SCHEMA_VALUED.has(k) && isObject(v)) return [k, walk(v)];
          return [k, v];
        }),
    );
  return walk(plain);
}

function isObject(v: unknown): v is JsonSchemaProps {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function crdFor(kind: KaosKind): CustomResourceDefinition {
  const names = KIND_NAMES[kind];
  const scale = SCALE_SUBRESOURCES[kind];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${names.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind,
        listKind: `${kind}List`,
        plural: names.plural,
        singular: names.singular,
        shortNames: [...names.shortNames],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: scale === undefined ? { status: {} } : { status: {}, scale },
          additionalPrinterColumns: [
            ...SPEC_COLUMNS[kind],
            ...(SHAPE_COLUMNS[kind] ?? []),
            ...(scale === undefined ? [] : [replicasColumn(scale)]),
            ...STATUS_COLUMNS[kind],
          ],
          schema: { openAPIV3Schema: toSchemaProps(OBJECT_SCHEMAS[kind]) },
        },
      ],
    },
  };
}

export function buildCrds(): CustomResourceDefinition[] {
  return KINDS.map(crdFor);
}

const HEADER = [
  ' Generated by `npm run gen:crds` (crds/generate.ts) from the schemas in src/api/schema.',
  ' DO NOT EDIT: change the schemas and regenerate; test/unit/api/crds.test.ts fails on drift.',
].join('\n');

/**
 * Plain scalars a YAML 1.1 parser (kubectl's) would not read as strings: booleans such as yes/on,
 * timestamps, and 1.1-only number forms. The YAML 1.2 core schema we write with does not know
 * them, so such strings are quoted explicitly rather than by relying on a schema's tag list.
 */
const YAML_11_NON_STRING = /^(?:y|n|yes|no|on|off|true|false|null|~|[-+]?(?:\.inf|\.nan)|[-+]?[0-9][0-9_:.eE+-]*|0b[01_]+|0x[0-9a-f_]+|\d{4}-\d\d?-\d\d?(?:[Tt ].*)?)$/i;

export function renderCrd(crd: CustomResourceDefinition): string {
  const doc = new Document(crd);
  visit(doc, {
    Scalar(_, node) {
      if (typeof node.value === 'string' && YAML_11_NON_STRING.test(node.value)) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  doc.commentBefore = HEADER;
  // lineWidth 0: never fold long descriptions or patterns, so diffs stay one line per change.
  return doc.toString({ lineWidth: 0 });
}

/** Each CRD file, named `<plural>.<group>.yaml`, relative to the crds/ directory. */
export function crdFiles(): Array<{ file: string; content: string }> {
  return buildCrds().map((crd) => ({ file: `${crd.metadata.name}.yaml`, content: renderCrd(crd) }));
}
