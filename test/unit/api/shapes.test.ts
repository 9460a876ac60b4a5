// The rules for the newer KAOS shapes (docs/api.md, "Newer KAOS shapes"), one test per rule: patterns, mixed shapes,
// the API key's source, configYaml coverage, the model served (both reference policies),
// stranded Agents, telemetry warnings, and defaulting per shape.
import t from 'tap';
import { defaultObject } from '../../../src/api/defaulting/default-object.ts';
import { DEFAULTED_ANNOTATION, type KaosKind, type WorkloadKind } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import {
  isModelServed,
  notServedMessage,
  patternMatches,
  servedPatterns,
  strandedBindings,
} from '../../../src/api/model-patterns.ts';
import { mixedShapeErrors, shapeOf } from '../../../src/api/shapes.ts';
import { apiKeyErrors, configYamlCoverageErrors, deprecationWarnings, telemetryWarnings } from '../../../src/api/validation/new-shapes.ts';
import { validateObject, type ValidationContext } from '../../../src/api/validation/validate-object.ts';
import { agent, CONFIG, deepFreeze, hosted, modelAPI, referencesIn } from './objects.ts';

const proxy = (name: string, proxyConfig: unknown): KubeObject => modelAPI(name, { mode: 'Proxy', proxyConfig });
const errorsOf = (kind: WorkloadKind, spec: unknown): string[] => mixedShapeErrors(kind, spec).map((e) => e.errorString());

function check(object: KubeObject, existing: KubeObject[], extra: Partial<ValidationContext> = {}) {
  const kind = object.kind as KaosKind;
  const references = kind === 'Agent' ? referencesIn(existing, object.spec) : undefined;
  const result = validateObject(kind, object, { referencePolicy: 'Enforce', references, ...extra });
  return { errors: result.errors.map((e) => e.errorString()), warnings: result.warnings };
}

t.test('served patterns come from either ModelAPI shape', async (t) => {
  t.same(servedPatterns({ mode: 'Proxy', proxyConfig: { models: ['gpt-4o', 'openai/*'] } }), ['gpt-4o', 'openai/*'], 'new shape: models');
  t.same(servedPatterns({ mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }), ['smollm2:135m'], 'Hosted: its model');
  t.same(servedPatterns({ mode: 'Proxy', proxyConfig: { model: 'ollama/x', apiBase: 'http://h' } }), ['ollama/x'], 'original: model');
  t.same(servedPatterns({ mode: 'Proxy', proxyConfig: { apiBase: 'http://h' } }), ['*'], 'original: apiBase alone is a wildcard');
  const yaml = 'model_list:\n  - model_name: a\n  - model_name: b\n';
  t.same(servedPatterns({ mode: 'Proxy', proxyConfig: { configYaml: { fromString: yaml } } }), ['a', 'b'], 'original: configYaml names');
  t.equal(servedPatterns({ mode: 'Proxy', proxyConfig: { configYaml: { fromSecretKeyRef: { name: 's', key: 'k' } } } }), undefined, 'a Secret: unknown');
  t.equal(servedPatterns({ mode: 'Other' }), undefined);
});

t.test('a pattern matches "*", the exact model, or a "<prefix>/*"', async (t) => {
  t.ok(patternMatches('*', 'anything/at:all'));
  t.ok(patternMatches('gpt-4o', 'gpt-4o'));
  t.notOk(patternMatches('gpt-4o', 'gpt-4o-mini'));
  t.ok(patternMatches('openai/*', 'openai/gpt-4o'));
  t.notOk(patternMatches('openai/*', 'openaix/gpt-4o'), 'the prefix includes the slash');
  t.notOk(patternMatches('openai/*', 'gpt-4o'));
  t.notOk(patternMatches('gpt-*', 'gpt-4o'), 'only "/*" is a wildcard suffix');
  t.ok(isModelServed(['x', 'nebius/*'], 'nebius/llama'));
  t.equal(
    notServedMessage('gpt-4', 'm', ['a', 'openai/*']),
    'model "gpt-4" not supported by ModelAPI "m" (supported: [a openai/*])',
    "KAOS's message, patterns as Go's %v prints a []string",
  );
});

t.test('which shape an object is in', async (t) => {
  t.equal(shapeOf('Agent', { modelAPI: 'm' }), 'original');
  t.equal(shapeOf('Agent', { modelAPI: 'm', container: { env: [{ name: 'A', value: '1' }] } }), 'original', 'container.env alone decides nothing');
  t.equal(shapeOf('Agent', { modelAPI: 'm', model: 'x' }), 'new');
  t.equal(shapeOf('Agent', { modelAPI: 'm', config: { telemetry: { enabled: false } } }), 'new');
  t.equal(shapeOf('ModelAPI', { mode: 'Proxy', proxyConfig: { model: 'x' } }), 'original');
  t.equal(shapeOf('ModelAPI', { mode: 'Proxy', proxyConfig: { models: ['x'] } }), 'new');
  t.equal(shapeOf('ModelAPI', { mode: 'Hosted', hostedConfig: { model: 'x' }, telemetry: {} }), 'new');
  t.equal(shapeOf('MCPServer', { type: 'python-runtime' }), 'original');
});

t.test('mixed shapes: each minority field is refused, naming the other shape', async (t) => {
  t.same(errorsOf('ModelAPI', { mode: 'Proxy', proxyConfig: { model: 'a', models: ['a'] } }), [
    'spec.proxyConfig.models: Forbidden: may not be set together with spec.proxyConfig.model',
  ]);
  t.same(errorsOf('ModelAPI', { mode: 'Proxy', proxyConfig: { model: 'a', models: ['a'], provider: 'openai' } }), [
    'spec.proxyConfig.model: Forbidden: may not be set together with spec.proxyConfig.models, spec.proxyConfig.provider',
  ], 'the original field is the minority here');
  t.same(errorsOf('Agent', { modelAPI: 'm', model: 'x', config: { env: [{ name: 'A' }, { name: 'MODEL_NAME', value: 'y' }] } }), [
    'spec.model: Forbidden: may not be set together with spec.config.env[MODEL_NAME]',
  ]);
  t.same(errorsOf('Agent', { modelAPI: 'm', model: 'x', config: { env: [{ name: 'A' }] }, container: { env: [{ name: 'B' }] } }), [
    'spec.config.env: Forbidden: may not be set together with spec.container.env',
  ], 'a new-shape Agent keeps its env in one list');
  t.same(
    errorsOf('ModelAPI', { mode: 'Proxy', proxyConfig: { models: ['*'], env: [{ name: 'A' }] }, container: { env: [{ name: 'B' }] } }),
    ['spec.proxyConfig.env: Forbidden: may not be set together with spec.container.env'],
  );
  t.same(
    errorsOf('MCPServer', { type: 'python-runtime', telemetry: { enabled: true }, config: { env: [{ name: 'A' }] }, container: { env: [{ name: 'B' }] } }),
    ['spec.config.env: Forbidden: may not be set together with spec.container.env'],
  );
  t.same(errorsOf('Agent', { modelAPI: 'm', config: { env: [{ name: 'MODEL_NAME', value: 'y' }] }, container: { env: [{ name: 'B' }] } }), [],
    'an original-shape Agent: container.env is the common override (docs/api.md, "Common behaviour"), as before');
  t.same(errorsOf('Agent', { modelAPI: 'm', model: 'x', config: { env: [] }, container: { env: [{ name: 'B' }] } }), [], 'an empty list is not set');
  t.same(
    errorsOf('Agent', { modelAPI: 'm', config: { telemetry: { enabled: true }, env: [{ name: 'MODEL_NAME', value: 'x' }] }, container: { env: [{ name: 'B' }] } }),
    [],
    'a MODEL_NAME the webhook chose (no spec.model) is the model part, not a second env list',
  );
});

t.test('apiKey: exactly one source', async (t) => {
  const errs = (apiKey: unknown) => apiKeyErrors({ apiKey }).map((e) => e.errorString());
  t.same(errs({ value: 'k' }), []);
  t.same(errs({ valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }), []);
  t.same(errs({ valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } }), []);
  t.same(errs({}), ['spec.proxyConfig.apiKey: Required value: must specify exactly one of value, valueFrom']);
  t.same(errs({ value: 'k', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }), [
    'spec.proxyConfig.apiKey.valueFrom: Forbidden: may not be set when value is set',
  ]);
  t.same(errs({ valueFrom: {} }), ['spec.proxyConfig.apiKey.valueFrom: Required value: must specify exactly one of secretKeyRef, configMapKeyRef']);
  t.same(errs({ valueFrom: { secretKeyRef: { name: 's', key: 'k' }, configMapKeyRef: { name: 'c', key: 'k' } } }), [
    'spec.proxyConfig.apiKey.valueFrom.configMapKeyRef: Forbidden: may not be set when secretKeyRef is set',
  ]);
  t.same(errs({ valueFrom: { secretKeyRef: { key: 'k' } } }), ['spec.proxyConfig.apiKey.valueFrom.secretKeyRef.name: Required value']);
});

t.test("a configYaml's model_names must be covered by models", async (t) => {
  const yaml = 'model_list:\n  - model_name: gpt-4o\n  - model_name: claude\n';
  const errs = (models: unknown) => configYamlCoverageErrors({ models, configYaml: { fromString: yaml } }).map((e) => e.errorString());
  t.same(errs(['gpt-4o', 'claude']), []);
  t.same(errs(['*']), []);
  t.same(errs(['gpt-4o']), ['spec.proxyConfig.configYaml.fromString: Invalid value: model_name "claude" in configYaml not found in models list [gpt-4o]']);
  t.same(errs(undefined), [], 'original shape: nothing to cover');
  t.same(check(proxy('m', { models: ['gpt-4o'], configYaml: { fromString: yaml } }), []).errors, [
    'spec.proxyConfig.configYaml.fromString: Invalid value: model_name "claude" in configYaml not found in models list [gpt-4o]',
  ], 'refused at admission');
});

t.test('the model an Agent names must be served by its ModelAPI (a reference error)', async (t) => {
  const world = [hosted('local', 'smollm2:135m'), proxy('cloud', { models: ['openai/*', 'claude'], provider: 'x' })];
  t.same(check(agent('a', { modelAPI: 'local', model: 'smollm2:135m' }), world), { errors: [], warnings: [] });
  t.same(check(agent('a', { modelAPI: 'cloud', model: 'openai/gpt-4o' }), world), { errors: [], warnings: [] });
  t.same(check(agent('a', { modelAPI: 'cloud', model: 'gpt-4o' }), world).errors, [
    'spec.model: Not found: "gpt-4o": not supported by ModelAPI "cloud" (supported: [openai/* claude])',
  ], 'Enforce: refused');
  const warn = check(agent('a', { modelAPI: 'local', model: 'llama3' }, { metadata: { name: 'a', annotations: { 'kaos.tools/reference-policy': 'Warn' } } }), world);
  t.same(warn.errors, [], 'Warn: admitted');
  t.match(warn.warnings, [/^spec\.model: Not found: "llama3": not supported by ModelAPI "local"/]);
  t.same(check(agent('a', { modelAPI: 'gone', model: 'x' }), world).errors, ['spec.modelAPI: Not found: "gone"'], 'a missing ModelAPI is reported once');
  t.same(check(agent('a', { modelAPI: 'local' }), world).errors, [], 'an original-shape Agent names no model to judge');
  const stored = agent('a', { modelAPI: 'local', model: 'llama3' });
  t.same(check(agent('a', { modelAPI: 'local', model: 'llama3' }, { metadata: { name: 'a', labels: { x: 'y' } } }), world, { oldObject: stored }).errors, [],
    'an unchanged pair is not judged again (a stranded Agent can be relabelled)');
  t.same(check(agent('a', { modelAPI: 'local', model: 'other' }), world, { oldObject: stored }).errors.length, 1, 'a changed model is');
});

t.test('a ModelAPI update that strands Agents and MemoryStores is warned about', async (t) => {
  const agentAsking = (name: string, model: string) => ({ kind: 'Agent' as const, name, model });
  const names = (bindings: readonly { name: string }[]) => bindings.map((b) => b.name);
  t.same(names(strandedBindings(['*'], ['gpt-4o'], [agentAsking('b', 'claude'), agentAsking('a', 'x'), agentAsking('c', 'gpt-4o')])), ['b', 'a'], 'in their order');
  t.same(strandedBindings(['gpt-4o'], ['gpt-4o'], [agentAsking('a', 'x')]), [], 'patterns unchanged: nothing new');
  t.same(strandedBindings(['a'], ['b'], [agentAsking('x', 'c')]), [], 'not served before either: not stranded by this change');
  t.same(strandedBindings(['a'], undefined, [agentAsking('x', 'a')]), [], 'new patterns unknown: not judged');
  const before = proxy('m', { models: ['*'] });
  const after = proxy('m', { models: ['gpt-4o'] });
  const dependents = Array.from({ length: 40 }, (_, i) => agentAsking(`agent-with-a-long-name-${String(i).padStart(2, '0')}`, 'claude'));
  const { errors, warnings } = check(after, [], { oldObject: before, modelAPIDependents: dependents });
  t.same(errors, []);
  t.equal(warnings.length, 1);
  t.match(warnings[0], /^ModelAPI "m" no longer serves the model of Agents: agent-with-a-long-name-00, .* and \d+ more$/, 'names a few, counts the rest');
  t.ok([...(warnings[0] ?? '')].length <= 120);

  // A store asks for two models, each a binding of its own; it is named once, after the Agents.
  const storeAsking = (name: string, model: string) => ({ kind: 'MemoryStore' as const, name, model });
  const bindings = [agentAsking('a', 'gpt-4o'), agentAsking('b', 'claude'), storeAsking('notes', 'gpt-4o'), storeAsking('notes', 'text-embedding-3-small'), storeAsking('facts', 'claude'), storeAsking('facts', 'text-embedding-3-small')];
  t.same(check(after, [], { oldObject: before, modelAPIDependents: bindings }).warnings, [
    'ModelAPI "m" no longer serves the model of Agents: b',
    'ModelAPI "m" no longer serves a model of MemoryStores: facts, notes',
  ]);
  t.same(check(proxy('m', { models: ['gpt-4o', 'claude'] }), [], { oldObject: before, modelAPIDependents: bindings }).warnings, [
    'ModelAPI "m" no longer serves a model of MemoryStores: facts, notes',
  ], 'only the embedding model of each store stranded: the stores alone');
  t.same(check(proxy('m', { models: ['*'], apiBase: 'http://x' }), [], { oldObject: before, modelAPIDependents: bindings }).warnings, [], 'still served: nothing');
});

t.test('telemetry enabled with nowhere to send is warned about', async (t) => {
  t.same(telemetryWarnings('Agent', { config: { telemetry: { enabled: true } } }, ''), [
    'spec.config.telemetry.endpoint: telemetry enabled, but no endpoint here nor in DEFAULT_TELEMETRY_ENDPOINT',
  ]);
  t.same(telemetryWarnings('Agent', { config: { telemetry: { enabled: true } } }, 'http://otel:4317'), [], 'the operator default serves');
  t.same(telemetryWarnings('MCPServer', { telemetry: { enabled: true, endpoint: 'http://otel:4317' } }, ''), []);
  t.same(telemetryWarnings('MCPServer', { telemetry: { enabled: false } }, ''), []);
  t.same(telemetryWarnings('ModelAPI', { mode: 'Hosted', telemetry: { enabled: true, endpoint: 'http://o' } }, ''), [
    'spec.telemetry: Hosted mode (Ollama) has no OpenTelemetry; telemetry is ignored',
  ]);
  t.same(check(modelAPI('m', { mode: 'Proxy', proxyConfig: { models: ['*'] }, telemetry: { enabled: true } }), []).warnings.length, 1, 'through validateObject');
});

t.test('defaulting per shape: spec.model turns MODEL_NAME defaulting off, and never moves a value', async (t) => {
  const run = (object: KubeObject, oldObject?: KubeObject) =>
    defaultObject('Agent', deepFreeze(object), { config: CONFIG, modelAPI: hosted('m', 'smollm2:135m'), ...(oldObject ? { oldObject } : {}) });
  const created = run(agent('a', { modelAPI: 'm', model: 'smollm2:135m' }));
  t.same(created.defaulted, ['spec.container.image'], 'no MODEL_NAME is chosen');
  t.equal((created.object.spec as { config?: unknown }).config, undefined, 'no config block is created for it');
  t.equal((created.object.spec as { model?: string }).model, 'smollm2:135m', 'spec.model is left as written');

  // A stored original-shape Agent whose MODEL_NAME the webhook chose, updated to the new shape.
  const stored = run(agent('a', { modelAPI: 'm' })).object;
  const updated = run({ ...stored, spec: { ...(stored.spec as object), model: 'smollm2:135m' } }, stored);
  t.same((updated.object.spec as { config?: { env?: unknown } }).config?.env, undefined, 'the MODEL_NAME we chose goes with it');
  t.equal(
    updated.object.metadata?.annotations?.[DEFAULTED_ANNOTATION],
    'spec.config.toolCallMode,spec.container.image',
    'the config block it leaves is newer-shape now, and gets toolCallMode',
  );

  const written = agent('a', { modelAPI: 'm', model: 'x', config: { env: [{ name: 'MODEL_NAME', value: 'mine' }] } });
  const kept = run(written);
  t.same((kept.object.spec as { config: { env: unknown } }).config.env, [{ name: 'MODEL_NAME', value: 'mine' }], "the user's own entry is never touched");

  const original = run(agent('a', { modelAPI: 'm' }));
  t.same((original.object.spec as { config: { env: unknown } }).config.env, [{ name: 'MODEL_NAME', value: 'smollm2:135m' }], 'original shape: as before');
});

t.test('deprecation warnings for original-shape fields: only when switched on', async (t) => {
  const original = agent('a', { modelAPI: 'm', config: { env: [{ name: 'MODEL_NAME', value: 'llama3:8b' }, { name: 'X', value: '1' }] } });
  t.same(deprecationWarnings('Agent', original.spec), [
    'spec.config.env[MODEL_NAME] is the original KAOS shape; newer KAOS releases use spec.model',
    'spec.config.env is the original KAOS shape; newer KAOS releases use spec.container.env',
  ]);
  t.same(deprecationWarnings('Agent', { modelAPI: 'm', config: { env: [{ name: 'MODEL_NAME', value: 'x' }] } }), [
    'spec.config.env[MODEL_NAME] is the original KAOS shape; newer KAOS releases use spec.model',
  ], 'the defaulted MODEL_NAME alone is no reason to move the list');
  t.same(deprecationWarnings('Agent', { modelAPI: 'm', model: 'x' }), []);
  t.same(deprecationWarnings('ModelAPI', { mode: 'Proxy', proxyConfig: { model: 'x' } }), [
    'spec.proxyConfig.model is the original KAOS shape; newer KAOS releases use spec.proxyConfig.models',
  ]);
  t.same(deprecationWarnings('ModelAPI', { mode: 'Hosted', hostedConfig: { model: 'x', env: [{ name: 'A' }] } }), [
    'spec.hostedConfig.env is the original KAOS shape; newer KAOS releases use spec.container.env',
  ]);
  const world = [hosted('m', 'llama3:8b')];
  t.same(check(original, world).warnings, [], 'off by default');
  t.equal(check(original, world, { deprecationWarnings: true }).warnings.length, 2, 'on: through validateObject');
});
