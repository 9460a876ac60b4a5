import t from 'tap';
import { fieldPathOf } from '../../../src/api/validation/ajv-field-errors.ts';
import { conformsToSchema, validateSchema } from '../../../src/api/validation/schema-validation.ts';
import type { KaosKind } from '../../../src/api/kinds.ts';

const texts = (kind: KaosKind, spec: unknown): string[] => validateSchema(kind, { spec }).map((e) => e.errorString());

t.test('ajv instance paths become Kubernetes field paths', async (t) => {
  const data = { config: { env: [{ name: 'a' }, { 'x/y~z': 1 }] } };
  t.same(fieldPathOf('spec', '/config/env/1/x~1y~0z', data), { path: 'spec.config.env[1].x/y~z', value: 1 });
  t.same(fieldPathOf('spec', '', data), { path: 'spec', value: data });
});

t.test('ranges, in kube-openapi words', async (t) => {
  t.same(texts('Agent', { modelAPI: 'm', config: { reasoningLoopMaxSteps: 50 } }), [
    'spec.config.reasoningLoopMaxSteps: Invalid value: 50: spec.config.reasoningLoopMaxSteps in body should be less than or equal to 20',
  ]);
  t.same(texts('Agent', { modelAPI: 'm', config: { reasoningLoopMaxSteps: 0 } }), [
    'spec.config.reasoningLoopMaxSteps: Invalid value: 0: spec.config.reasoningLoopMaxSteps in body should be greater than or equal to 1',
  ]);
  t.same(
    texts('Agent', { modelAPI: 'm', config: { memory: { contextLimit: 101, maxSessions: 100001, maxSessionEvents: 10001 } } }),
    [
      'spec.config.memory.contextLimit: Invalid value: 101: spec.config.memory.contextLimit in body should be less than or equal to 100',
      'spec.config.memory.maxSessions: Invalid value: 100001: spec.config.memory.maxSessions in body should be less than or equal to 100000',
      'spec.config.memory.maxSessionEvents: Invalid value: 10001: spec.config.memory.maxSessionEvents in body should be less than or equal to 10000',
    ],
  );
  t.same(
    texts('Agent', { modelAPI: 'm', config: { memory: { contextLimit: 0, maxSessions: 0, maxSessionEvents: 0 } } }).length,
    3,
  );
  t.same(texts('Agent', { modelAPI: 'm', config: { reasoningLoopMaxSteps: 20, memory: { contextLimit: 1 } } }), [], 'bounds are inclusive');
});

t.test('required fields', async (t) => {
  t.same(texts('Agent', {}), ['spec.modelAPI: Required value']);
  t.same(texts('ModelAPI', {}), ['spec.mode: Required value']);
  // Neither spec.type nor spec.runtime is required by the schema (two shapes): admission asks for one.
  t.same(texts('MCPServer', {}), []);
  t.same(texts('ModelAPI', { mode: 'Hosted', hostedConfig: {} }), ['spec.hostedConfig.model: Required value']);
  t.same(texts('Agent', { modelAPI: 'm', config: { env: [{ value: 'x' }] } }), ['spec.config.env[0].name: Required value']);
  t.same(texts('ModelAPI', { mode: 'Proxy', proxyConfig: { configYaml: { fromSecretKeyRef: { name: 's' } } } }), [
    'spec.proxyConfig.configYaml.fromSecretKeyRef.key: Required value',
  ]);
  t.same(validateSchema('Agent', { metadata: { name: 'a' } }).map(String), ['spec: Required value']);
});

t.test('enums', async (t) => {
  t.same(texts('ModelAPI', { mode: 'x' }), ['spec.mode: Unsupported value: "x": supported values: "Hosted", "Proxy"']);
  t.same(texts('MCPServer', { type: 'go-runtime' }), [
    'spec.type: Unsupported value: "go-runtime": supported values: "node-runtime", "python-runtime"',
  ]);
  t.same(texts('Agent', { modelAPI: 'm', config: { memory: { type: 'redis' } } }), [
    'spec.config.memory.type: Unsupported value: "redis": supported values: "local", "remote"',
  ]);
});

t.test('patterns and minimum lengths', async (t) => {
  t.same(texts('Agent', { modelAPI: 'm', gatewayRoute: { timeout: '30 s' } }), [
    `spec.gatewayRoute.timeout: Invalid value: "30 s": spec.gatewayRoute.timeout in body should match '^([0-9]+(h|m|s|ms)){1,4}$'`,
  ]);
  for (const ok of ['0s', '30s', '2m', '1h30m', '500ms', '1h2m3s4ms']) {
    t.same(texts('ModelAPI', { mode: 'Proxy', gatewayRoute: { timeout: ok } }), [], ok);
  }
  t.same(texts('ModelAPI', { mode: 'Hosted', hostedConfig: { model: '' } }), [
    'spec.hostedConfig.model: Invalid value: "": spec.hostedConfig.model in body should be at least 1 chars long',
  ]);
});

t.test('types, as kube-openapi names them', async (t) => {
  t.same(texts('Agent', { modelAPI: 5 }), ['spec.modelAPI: Invalid value: "integer": spec.modelAPI in body must be of type string: "integer"']);
  t.same(texts('Agent', { modelAPI: 'm', config: { reasoningLoopMaxSteps: 2.5 } }), [
    'spec.config.reasoningLoopMaxSteps: Invalid value: "number": spec.config.reasoningLoopMaxSteps in body must be of type integer: "number"',
  ]);
  t.same(texts('Agent', { modelAPI: 'm', mcpServers: 'x' }), ['spec.mcpServers: Invalid value: "string": spec.mcpServers in body must be of type array: "string"']);
  t.same(texts('Agent', { modelAPI: 'm', waitForDependencies: 'yes' }), [
    'spec.waitForDependencies: Invalid value: "string": spec.waitForDependencies in body must be of type boolean: "string"',
  ]);
  t.same(texts('Agent', { modelAPI: 'm', podSpec: [] }), ['spec.podSpec: Invalid value: "array": spec.podSpec in body must be of type object: "array"']);
  t.same(texts('ModelAPI', { mode: 5 }), [
    'spec.mode: Invalid value: "integer": spec.mode in body must be of type string: "integer"',
    'spec.mode: Unsupported value: 5: supported values: "Hosted", "Proxy"',
  ], 'like kube-openapi, a wrongly typed enum gets both errors');
});

t.test('list-type map uniqueness, as kube-apiserver reports it (first repeat only)', async (t) => {
  t.same(texts('Agent', { modelAPI: 'm', config: { env: [{ name: 'A' }, { name: 'B' }, { name: 'A' }, { name: 'A' }] } }), [
    'spec.config.env[2]: Duplicate value: {"name":"A"}',
  ]);
  t.same(texts('MCPServer', { type: 'node-runtime', container: { env: [{ name: 'X', value: '1' }, { name: 'X', value: '2' }] } }), [
    'spec.container.env[1]: Duplicate value: {"name":"X"}',
  ]);
  t.same(texts('ModelAPI', { mode: 'Hosted', hostedConfig: { model: 'm', env: ['x'] } }), [
    'spec.hostedConfig.env[0]: Invalid value: "string": spec.hostedConfig.env[0] in body must be of type object: "string"',
    'spec.hostedConfig.env[0]: Invalid value: "x": must be an object for an array of list-type map',
  ]);
});

t.test('opaque fields take anything; several errors at once', async (t) => {
  t.same(texts('Agent', { modelAPI: 'm', podSpec: { containers: [{ name: 'agent', anything: { goes: 1 } }] }, container: { resources: { limits: { cpu: '1' } } } }), []);
  t.same(texts('Agent', { modelAPI: 'm', config: { env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] } }), []);
  t.equal(texts('Agent', { config: { reasoningLoopMaxSteps: 50 }, gatewayRoute: { timeout: 'x' } }).length, 3);
});

t.test('conformsToSchema agrees with validateSchema', async (t) => {
  t.ok(conformsToSchema('Agent', { spec: { modelAPI: 'm' } }));
  t.notOk(conformsToSchema('Agent', { spec: { modelAPI: 'm', config: { reasoningLoopMaxSteps: 50 } } }));
  t.notOk(conformsToSchema('Agent', { spec: { modelAPI: 'm', config: { env: [{ name: 'A' }, { name: 'A' }] } } }));
});
