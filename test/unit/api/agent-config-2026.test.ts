// The Agent `config` fields KAOS added in 2026 (docs/api.md, "Agent `config` from KAOS 2026") and the KAOS
// features this operator refuses by name (docs/api.md, "KAOS features not supported"), one test per rule:
// the shape they give an Agent, their ranges, the blank goal, toolCallMode's default per shape,
// and the security posture env (no longer refused). (The harness, once refused too: harness.test.ts.)
import { readFile } from 'node:fs/promises';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { defaultObject } from '../../../src/api/defaulting/default-object.ts';
import { DEFAULTED_ANNOTATION, WORKLOAD_KINDS, isKaosKind } from '../../../src/api/kinds.ts';
import { runtimesYaml } from '../../../src/api/mcp-runtime-defaults.ts';
import { parseRuntimes } from '../../../src/api/mcp-runtimes.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { SPEC_SCHEMAS } from '../../../src/api/schema/index.ts';
import { mixedShapeErrors, NEWER_AGENT_CONFIG, shapeOf } from '../../../src/api/shapes.ts';
import { UNSUPPORTED_FIELDS, unsupportedFeatureErrors } from '../../../src/api/unsupported-features.ts';
import { validateObject } from '../../../src/api/validation/validate-object.ts';
import { agent, CONFIG, deepFreeze, hosted, referencesIn } from './objects.ts';

const WORLD = [hosted('m', 'smollm2:135m')];
const errorsOf = (spec: unknown, existing: readonly KubeObject[] = WORLD): string[] => {
  const object = agent('a', spec);
  return validateObject('Agent', object, { referencePolicy: 'Enforce', references: referencesIn(existing, spec) }).errors.map((e) => e.errorString());
};
const run = (object: KubeObject, oldObject?: KubeObject) =>
  defaultObject('Agent', deepFreeze(object), { config: CONFIG, modelAPI: WORLD[0], ...(oldObject === undefined ? {} : { oldObject }) });
const configOf = (o: KubeObject): Record<string, unknown> | undefined => (o.spec as { config?: Record<string, unknown> }).config;
const annotation = (o: KubeObject): string | undefined => o.metadata?.annotations?.[DEFAULTED_ANNOTATION];

t.test('each of the 2026 config fields makes an Agent newer-shape, and none clashes with an original field', async (t) => {
  const values: Record<(typeof NEWER_AGENT_CONFIG)[number], unknown> = {
    systemPrompt: 'Be careful.',
    toolCallMode: 'native',
    autonomous: { goal: 'g' },
    taskConfig: {},
  };
  for (const field of NEWER_AGENT_CONFIG) {
    const spec = { modelAPI: 'm', config: { [field]: values[field], env: [{ name: 'MODEL_NAME', value: 'x' }, { name: 'A', value: '1' }], memory: {} } };
    t.equal(shapeOf('Agent', spec), 'new', field);
    t.same(mixedShapeErrors('Agent', spec), [], `${field} beside config.env and the original memory fields`);
  }
  t.equal(shapeOf('Agent', { modelAPI: 'm', config: { description: 'd', instructions: 'i', reasoningLoopMaxSteps: 3 } }), 'original');
});

t.test('ranges and the enum are the schema\'s, in the API server\'s words; the bounds themselves are accepted', async (t) => {
  t.same(
    errorsOf({
      modelAPI: 'm',
      model: 'smollm2:135m',
      config: {
        toolCallMode: 'fast',
        autonomous: { goal: 'g', intervalSeconds: 3601, maxIterRuntimeSeconds: -1 },
        taskConfig: { maxIterations: 1001, maxRuntimeSeconds: 86401, maxToolCalls: -1 },
      },
    }),
    [
      'spec.config.toolCallMode: Unsupported value: "fast": supported values: "auto", "native", "string"',
      'spec.config.autonomous.intervalSeconds: Invalid value: 3601: spec.config.autonomous.intervalSeconds in body should be less than or equal to 3600',
      'spec.config.autonomous.maxIterRuntimeSeconds: Invalid value: -1: spec.config.autonomous.maxIterRuntimeSeconds in body should be greater than or equal to 0',
      'spec.config.taskConfig.maxIterations: Invalid value: 1001: spec.config.taskConfig.maxIterations in body should be less than or equal to 1000',
      'spec.config.taskConfig.maxRuntimeSeconds: Invalid value: 86401: spec.config.taskConfig.maxRuntimeSeconds in body should be less than or equal to 86400',
      'spec.config.taskConfig.maxToolCalls: Invalid value: -1: spec.config.taskConfig.maxToolCalls in body should be greater than or equal to 0',
    ],
  );
  const bounds = (n: 'min' | 'max') => ({
    modelAPI: 'm',
    model: 'smollm2:135m',
    config: {
      autonomous: { goal: 'g', intervalSeconds: n === 'min' ? 0 : 3600, maxIterRuntimeSeconds: n === 'min' ? 0 : 86400 },
      taskConfig: n === 'min' ? { maxIterations: 0, maxRuntimeSeconds: 0, maxToolCalls: 0 } : { maxIterations: 1000, maxRuntimeSeconds: 86400, maxToolCalls: 10000 },
    },
  });
  t.same(errorsOf(bounds('min')), [], '0 everywhere (unlimited)');
  t.same(errorsOf(bounds('max')), [], 'every maximum');
});

t.test('a goal that is blank is refused without echoing it; a real goal, or none, is fine', async (t) => {
  for (const goal of ['', '   ', '\n\t \n']) {
    t.same(errorsOf({ modelAPI: 'm', model: 'smollm2:135m', config: { autonomous: { goal } } }), ['spec.config.autonomous.goal: Invalid value: the goal is blank'], JSON.stringify(goal));
  }
  t.same(errorsOf({ modelAPI: 'm', model: 'smollm2:135m', config: { autonomous: { goal: '  Report.  ' } } }), [], 'surrounding whitespace is fine');
  t.same(errorsOf({ modelAPI: 'm', model: 'smollm2:135m', config: { autonomous: { intervalSeconds: 5 } } }), [], 'settings without a goal: not autonomous, not an error');
});

t.test('an autonomous Agent that is not exposed and has no MCPServers is admitted without a warning', async (t) => {
  const spec = { modelAPI: 'm', model: 'smollm2:135m', agentNetwork: { expose: false }, config: { autonomous: { goal: 'Summarise.' } } };
  const result = validateObject('Agent', agent('a', spec), { referencePolicy: 'Enforce', references: referencesIn(WORLD, spec) });
  t.same({ errors: result.errors, warnings: result.warnings }, { errors: [], warnings: [] });
});

t.test('every unsupported field is declared in its kind\'s schema, so that it reaches the webhook', async (t) => {
  for (const kind of WORKLOAD_KINDS) {
    for (const field of UNSUPPORTED_FIELDS[kind]) {
      const [top, ...rest] = field.keys;
      t.equal(rest.length, 0, 'a field directly under spec');
      const properties = SPEC_SCHEMAS[kind].properties as Record<string, Record<string, unknown>>;
      t.equal(properties[top ?? '']?.['x-kubernetes-preserve-unknown-fields'], true, `${kind} spec.${field.keys.join('.')} keeps any value`);
    }
  }
});

t.test('the security posture env is the user\'s own env now that the operator renders it: no longer refused', async (t) => {
  t.same(errorsOf({ modelAPI: 'm', config: { env: [{ name: 'MODEL_NAME', value: 'x' }, { name: 'AGENT_AUTH_ISSUER', value: 'https://idp' }] } }), []);
  t.same(errorsOf({ modelAPI: 'm', model: 'smollm2:135m', container: { env: [{ name: 'MEMORY_REQUIRE_PRINCIPAL', value: 'true' }] } }), []);
  t.same(unsupportedFeatureErrors('MemoryStore', { container: { env: [{ name: 'MEMORY_REQUIRE_AGENT_IDENTITY', value: 'true' }] } }), []);
});

t.test('toolCallMode defaults to auto inside the config of a newer-shape Agent only, recorded', async (t) => {
  const created = run(agent('a', { modelAPI: 'm', model: 'smollm2:135m', config: { description: 'd' } }));
  t.equal(configOf(created.object)?.toolCallMode, 'auto');
  t.equal(annotation(created.object), 'spec.config.toolCallMode,spec.container.image');

  const noConfig = run(agent('a', { modelAPI: 'm', model: 'smollm2:135m' }));
  t.equal(configOf(noConfig.object), undefined, 'no config block is created for it (as KAOS\'s CRD default)');

  const byPrompt = run(agent('a', { modelAPI: 'm', config: { systemPrompt: 'p' } }));
  t.equal(configOf(byPrompt.object)?.toolCallMode, 'auto', 'a 2026 field makes the config newer-shape too');

  const original = run(agent('a', { modelAPI: 'm', config: { description: 'd' } }));
  t.equal(configOf(original.object)?.toolCallMode, undefined, 'original shape: none');
  t.equal(annotation(original.object), 'spec.config.env[MODEL_NAME],spec.container.image');
});

t.test("a toolCallMode the user wrote is theirs: kept, never recorded, even when it is 'auto'", async (t) => {
  for (const mode of ['native', 'auto']) {
    const out = run(agent('a', { modelAPI: 'm', model: 'smollm2:135m', config: { toolCallMode: mode } }));
    t.equal(configOf(out.object)?.toolCallMode, mode);
    t.equal(annotation(out.object), 'spec.container.image', mode);
  }
  const alone = run(agent('a', { modelAPI: 'm', config: { toolCallMode: 'string' } }));
  t.equal(configOf(alone.object)?.toolCallMode, 'string', 'it alone makes the Agent newer-shape, and stays');
  t.equal(shapeOf('Agent', alone.object.spec), 'new');
});

t.test('idempotent, also on an UPDATE of an object stored before the default existed', async (t) => {
  const stored = agent('a', { modelAPI: 'm', model: 'smollm2:135m', config: { description: 'd' } });
  const first = run(stored, stored);
  const second = run(first.object, stored);
  t.same(second.object, first.object);
  const third = run(first.object, first.object);
  t.same(third.object, first.object);
});

t.test('the default goes again when the Agent returns to the original shape; a user-written one does not', async (t) => {
  const stored = run(agent('a', { modelAPI: 'm', model: 'smollm2:135m', config: { description: 'd' } })).object;
  const { model: _model, ...rest } = stored.spec as Record<string, unknown>;
  const back = run({ ...stored, spec: rest }, stored);
  t.equal(configOf(back.object)?.toolCallMode, undefined, 'no toolCallMode in the original shape');
  t.equal(shapeOf('Agent', back.object.spec), 'original');
  t.notOk(annotation(back.object)?.includes('toolCallMode'));

  const mine = run(agent('a', { modelAPI: 'm', model: 'smollm2:135m', config: { toolCallMode: 'native' } })).object;
  const { model: _m, ...mineRest } = mine.spec as Record<string, unknown>;
  t.equal(configOf(run({ ...mine, spec: mineRest }, mine).object)?.toolCallMode, 'native');
});

t.test('server-side apply drops the default with the annotation when the manifest omits them: it comes back', async (t) => {
  const stored = run(agent('a', { modelAPI: 'm', model: 'smollm2:135m', config: { description: 'd' } })).object;
  const reapplied = agent('a', { modelAPI: 'm', model: 'smollm2:135m', config: { description: 'd' } });
  const out = run(reapplied, stored);
  t.equal(configOf(out.object)?.toolCallMode, 'auto');
  t.equal(annotation(out.object), 'spec.config.toolCallMode,spec.container.image');
});

t.test('the autonomous-agents fixture is valid as written and once defaulted', async (t) => {
  const text = await readFile(new URL('../../fixtures/kaos-2026/autonomous-agents.yaml', import.meta.url), 'utf8');
  const objects = parseAllDocuments(text).map((d) => d.toJS() as KubeObject).filter((o) => isKaosKind(o.kind));
  t.equal(objects.filter((o) => o.kind === 'Agent').length, 2);
  for (const object of objects) {
    if (!isKaosKind(object.kind)) continue;
    const references = object.kind === 'Agent' ? referencesIn(objects, object.spec) : undefined;
    const ctx = { referencePolicy: 'Enforce' as const, references, mcpRuntimes: parseRuntimes(runtimesYaml()) };
    t.same(validateObject(object.kind, object, ctx), { errors: [], warnings: [] }, `${object.kind} ${object.metadata?.name} as written`);
    const defaulted = defaultObject(object.kind, object, { config: CONFIG, modelAPI: WORLD[0] }).object;
    t.same(validateObject(object.kind, defaulted, ctx), { errors: [], warnings: [] }, `${object.kind} ${object.metadata?.name} defaulted`);
  }
});
