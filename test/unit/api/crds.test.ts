import { readFile } from 'node:fs/promises';
import t from 'tap';
import { crdFiles, buildCrds, type JsonSchemaProps } from '../../../src/api/schema/crds.ts';
import { createAjv } from '../../../src/api/validation/schema-validation.ts';
import { INITIAL_GRANT_STATUS, INITIAL_STATUS } from '../../../src/api/schema/index.ts';
import { isRecord } from '../../../src/api/json.ts';

const crdDir = new URL('../../../crds/', import.meta.url);

t.test('the committed CRDs are exactly what the schemas generate (run npm run gen:crds)', async (t) => {
  for (const { file, content } of crdFiles()) {
    const committed = await readFile(new URL(file, crdDir), 'utf8').catch(() => '<missing>');
    t.equal(committed, content, `crds/${file}`);
  }
  t.equal(crdFiles().map((f) => f.content).join(), crdFiles().map((f) => f.content).join(), 'generation is deterministic');
});

t.test('names, scope, version, subresource and printer columns', async (t) => {
  const [agent, modelAPI, mcp, store] = buildCrds();
  t.match(agent, {
    metadata: { name: 'agents.kaos.tools' },
    spec: {
      group: 'kaos.tools',
      scope: 'Namespaced',
      names: { kind: 'Agent', plural: 'agents', singular: 'agent', shortNames: ['agent', 'agents'] },
    },
  });
  t.same(modelAPI?.spec.names.shortNames, ['api', 'apis']);
  t.same(mcp?.spec.names.shortNames, ['mcp', 'mcps']);
  t.match(store, { metadata: { name: 'memorystores.kaos.tools' }, spec: { names: { kind: 'MemoryStore', plural: 'memorystores', singular: 'memorystore', shortNames: ['memstore', 'memstores'] } } });
  for (const crd of buildCrds()) {
    t.equal(crd.spec.versions.length, 1);
    t.match(crd.spec.versions[0], { name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
  }
  const columns = (i: number) => buildCrds()[i]?.spec.versions[0]?.additionalPrinterColumns.map((c) => [c.name, c.type, c.jsonPath]);
  const common = [
    ['Ready', 'boolean', '.status.ready'],
    ['Phase', 'string', '.status.phase'],
    ['Age', 'date', '.metadata.creationTimestamp'],
  ];
  t.same(columns(0), [['ModelAPI', 'string', '.spec.modelAPI'], ['Model', 'string', '.spec.model'], ['Replicas', 'integer', '.status.replicas'], ...common]);
  // docs/api.md, "Agent replicas": the Replicas column only with -o wide; the scale subresource.
  t.equal(agent?.spec.versions[0]?.additionalPrinterColumns.find((c) => c.name === 'Replicas')?.priority, 1);
  t.same(agent?.spec.versions[0]?.subresources, {
    status: {},
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
  });
  for (const other of [modelAPI, mcp, store]) t.same(other?.spec.versions[0]?.subresources, { status: {} }, `${other?.spec.names.kind}: no scale subresource`);
  t.same(columns(1), [['Mode', 'string', '.spec.mode'], ...common]);
  t.same(columns(2), [['Type', 'string', '.spec.type'], ['Runtime', 'string', '.spec.runtime'], ...common]);
  t.same(columns(3), [['Engine', 'string', '.spec.engine'], ['Storage', 'string', '.spec.storage.type'], ...common]);
});

/** Every schema node with the path to it, walking properties, items and additionalProperties. */
function* nodes(schema: JsonSchemaProps, path: string): Generator<[string, JsonSchemaProps]> {
  yield [path, schema];
  if (isRecord(schema.properties)) {
    for (const [name, child] of Object.entries(schema.properties)) if (isRecord(child)) yield* nodes(child, `${path}.${name}`);
  }
  if (isRecord(schema.items)) yield* nodes(schema.items, `${path}[]`);
  if (isRecord(schema.additionalProperties)) yield* nodes(schema.additionalProperties, `${path}{}`);
}

const FORBIDDEN = ['const', '$ref', 'anyOf', 'oneOf', 'allOf', 'not', 'patternProperties', 'definitions', '$defs', '$id'];

t.test('every schema is structural (apiextensions.k8s.io/v1)', async (t) => {
  for (const crd of buildCrds()) {
    const root = crd.spec.versions[0]?.schema.openAPIV3Schema ?? {};
    for (const [path, node] of nodes(root, crd.spec.names.kind)) {
      // apiextensions.k8s.io/v1 lets only a node that keeps unknown fields (any value) go without a type.
      const anyValue = node['x-kubernetes-preserve-unknown-fields'] === true;
      t.ok(anyValue || (typeof node.type === 'string' && node.type !== ''), `${path} has a type`);
      for (const keyword of FORBIDDEN) t.notOk(keyword in node, `${path} has no ${keyword}`);
      if (isRecord(node.properties)) t.notOk('additionalProperties' in node, `${path}: properties and additionalProperties exclude each other`);
      if (node['x-kubernetes-list-type'] === 'map') {
        const keys = node['x-kubernetes-list-map-keys'];
        const items = isRecord(node.items) ? node.items : {};
        t.ok(Array.isArray(keys) && keys.length > 0, `${path} names its map keys`);
        for (const key of Array.isArray(keys) ? keys : []) {
          t.ok(Array.isArray(items.required) && items.required.includes(key), `${path}: map key ${String(key)} is required`);
        }
      }
    }
    t.same(Object.keys(isRecord(root.properties) ? root.properties : {}).sort(), ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    t.same(isRecord(root.properties) && root.properties.metadata, { type: 'object' }, 'metadata is only typed');
  }
});

t.test('every EnvVar list is a map list keyed by name, podSpec and opaque types preserve unknown fields', async (t) => {
  let envLists = 0;
  for (const crd of buildCrds()) {
    for (const [path, node] of nodes(crd.spec.versions[0]?.schema.openAPIV3Schema ?? {}, crd.spec.names.kind)) {
      if (/\.env$/.test(path)) {
        envLists++;
        t.equal(node['x-kubernetes-list-type'], 'map', path);
        t.same(node['x-kubernetes-list-map-keys'], ['name'], path);
      }
      // An EnvVar's valueFrom is opaque; apiKey.valueFrom is modelled (secretKeyRef or configMapKeyRef).
      // An AccessGrant's spec.resources is its list of grant targets, not ResourceRequirements.
      if (/\.(podSpec|valueFrom|resources)$/.test(path) && !path.endsWith('.apiKey.valueFrom') && path !== 'AccessGrant.spec.resources') {
        t.equal(node['x-kubernetes-preserve-unknown-fields'], true, path);
      }
    }
  }
  t.equal(envLists, 8, 'Agent: config, container; ModelAPI: proxyConfig, hostedConfig, container; MCPServer: config, container; MemoryStore: container');
});

t.test('the status default is valid against the status schema, as kube-apiserver requires', async (t) => {
  const ajv = createAjv();
  for (const crd of buildCrds()) {
    const root = crd.spec.versions[0]?.schema.openAPIV3Schema ?? {};
    const status = isRecord(root.properties) && isRecord(root.properties.status) ? root.properties.status : {};
    // A workload's Ready, an AccessGrant's Enforced: Unknown until the controller first writes it.
    t.same(status.default, crd.spec.names.kind === 'AccessGrant' ? INITIAL_GRANT_STATUS : INITIAL_STATUS);
    const validate = ajv.compile(status);
    t.ok(validate(status.default), `${crd.spec.names.kind}: ${JSON.stringify(validate.errors)}`);
    t.notOk(validate({ conditions: [{ ...INITIAL_STATUS.conditions[0], lastTransitionTime: 'yesterday' }] }), 'the date-time format is checked');
  }
});

t.test('reasoningLoopMaxSteps is bounded 1-20 in the CRD itself', async (t) => {
  const agent = buildCrds()[0]?.spec.versions[0]?.schema.openAPIV3Schema;
  const steps = (agent as { properties: { spec: { properties: { config: { properties: Record<string, unknown> } } } } })
    .properties.spec.properties.config.properties.reasoningLoopMaxSteps;
  t.match(steps, { type: 'integer', minimum: 1, maximum: 20, default: 5 });
});
