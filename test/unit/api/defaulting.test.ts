import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import t from 'tap';
import { isRecord } from '../../../src/api/json.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../../src/admission/json-depth.ts';
import { objectMutation, render, SEEDS, type Doc } from '../../support/arbitraries.ts';
import { defaultObject, type DefaultingContext } from '../../../src/api/defaulting/default-object.ts';
import { AGENT_DEFAULTS } from '../../../src/api/defaults.ts';
import { DEFAULTED_ANNOTATION, type KaosKind } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { agent, CONFIG, deepFreeze, hosted, mcpServer, modelAPI } from './objects.ts';

const ctx = (extra: Partial<DefaultingContext> = {}): DefaultingContext => ({ config: CONFIG, ...extra });
const run = (kind: KaosKind, object: KubeObject, extra?: Partial<DefaultingContext>) => defaultObject(kind, deepFreeze(object), ctx(extra));
const spec = (o: KubeObject): Record<string, unknown> => o.spec as Record<string, unknown>;
const annotation = (o: KubeObject): string | undefined => o.metadata?.annotations?.[DEFAULTED_ANNOTATION];

const IMAGES = CONFIG.images;

t.test('an Agent with nothing but its ModelAPI gets every default', async (t) => {
  const { object, defaulted, warnings } = run('Agent', agent('a1', { modelAPI: 'm' }));
  t.same(object.spec, {
    modelAPI: 'm',
    agentNetwork: { expose: true },
    waitForDependencies: true,
    container: { image: 'axsauze/kaos-agent:0.1.3' },
    config: { env: [{ name: 'MODEL_NAME', value: 'smollm2:135m' }], reasoningLoopMaxSteps: 5 },
  });
  t.same(defaulted, ['spec.config.env[MODEL_NAME]', 'spec.container.image']);
  t.equal(annotation(object), 'spec.config.env[MODEL_NAME],spec.container.image');
  t.same(warnings, [], 'an unknown ModelAPI is the validating webhook’s to report');
});

t.test('defaults inside present objects only: config, memory, agentNetwork', async (t) => {
  const { object } = run('Agent', agent('a1', { modelAPI: 'm', config: { memory: {} }, agentNetwork: { access: [] } }));
  t.same(spec(object).config, {
    memory: { enabled: true, type: 'local', contextLimit: 6, maxSessions: 1000, maxSessionEvents: 500 },
    env: [{ name: 'MODEL_NAME', value: 'smollm2:135m' }],
    reasoningLoopMaxSteps: 5,
  });
  t.same(spec(object).agentNetwork, { access: [], expose: true });
  t.match(AGENT_DEFAULTS.memory, { enabled: true, type: 'local', contextLimit: 6, maxSessions: 1000, maxSessionEvents: 500 });
  t.equal(
    annotation(object),
    'spec.config.env[MODEL_NAME],spec.config.memory.contextLimit,spec.config.memory.maxSessionEvents,spec.config.memory.maxSessions,spec.config.memory.type,spec.container.image',
    "the memory block's type and the original shape's defaults depend on its shape: recorded",
  );

  const given = run('Agent', agent('a1', {
    modelAPI: 'm',
    waitForDependencies: false,
    agentNetwork: { expose: false },
    config: { reasoningLoopMaxSteps: 9, memory: { enabled: false, contextLimit: 2, maxSessions: 3, maxSessionEvents: 4 }, env: [{ name: 'MODEL_NAME', value: 'mine' }] },
  })).object;
  t.match(spec(given), {
    waitForDependencies: false,
    agentNetwork: { expose: false },
    config: { reasoningLoopMaxSteps: 9, memory: { enabled: false, type: 'local', contextLimit: 2, maxSessions: 3, maxSessionEvents: 4 } },
  }, 'values the user wrote stay');
});

t.test('null is defaulted like an absent field, as kube-apiserver does for non-nullable fields', async (t) => {
  const { object } = run('Agent', agent('a1', { modelAPI: 'm', waitForDependencies: null, config: { reasoningLoopMaxSteps: null } }));
  t.equal(spec(object).waitForDependencies, true);
  t.match(spec(object).config, { reasoningLoopMaxSteps: 5 });
});

t.test('MODEL_NAME comes from the referenced ModelAPI when it is known', async (t) => {
  const fromHosted = run('Agent', agent('a1', { modelAPI: 'm' }), { modelAPI: hosted('m', 'llama3:8b') }).object;
  t.same(spec(fromHosted).config, { env: [{ name: 'MODEL_NAME', value: 'llama3:8b' }], reasoningLoopMaxSteps: 5 });

  const proxy = modelAPI('m', { mode: 'Proxy', proxyConfig: { model: 'ollama/smollm2:135m', apiBase: 'http://x' } });
  t.match(spec(run('Agent', agent('a1', { modelAPI: 'm' }), { modelAPI: proxy }).object).config, {
    env: [{ name: 'MODEL_NAME', value: 'ollama/smollm2:135m' }],
  });

  const wildcard = modelAPI('m', { mode: 'Proxy', proxyConfig: { apiBase: 'http://x' } });
  const fallback = run('Agent', agent('a1', { modelAPI: 'm' }), { modelAPI: wildcard });
  t.match(spec(fallback.object).config, { env: [{ name: 'MODEL_NAME', value: 'smollm2:135m' }] }, 'a Proxy without model falls back');
  t.same(fallback.warnings, ['spec.config.env[MODEL_NAME] defaulted to "smollm2:135m": ModelAPI "m" names no model']);

  const withEnv = run('Agent', agent('a1', { modelAPI: 'm', config: { env: [{ name: 'A', value: '1' }] } }), { modelAPI: hosted('m', 'x') }).object;
  t.same(spec(withEnv).config, { env: [{ name: 'A', value: '1' }, { name: 'MODEL_NAME', value: 'x' }], reasoningLoopMaxSteps: 5 }, 'appended');
});

t.test('a MODEL_NAME the user gave is theirs, value or valueFrom', async (t) => {
  for (const entry of [{ name: 'MODEL_NAME', value: 'mine' }, { name: 'MODEL_NAME', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } }]) {
    const { object, defaulted } = run('Agent', agent('a1', { modelAPI: 'm', config: { env: [entry] } }), { modelAPI: hosted('m', 'other') });
    t.same(spec(object).config, { env: [entry], reasoningLoopMaxSteps: 5 });
    t.same(defaulted, ['spec.container.image']);
  }
});

t.test('images per kind, mode, runtime and tools source', async (t) => {
  const image = (kind: KaosKind, s: unknown) => (spec(run(kind, { kind, metadata: { name: 'x' }, spec: s }).object).container as { image?: string } | undefined)?.image;
  t.equal(image('Agent', { modelAPI: 'm' }), IMAGES.agent);
  t.equal(image('ModelAPI', { mode: 'Proxy', proxyConfig: { model: 'x' } }), IMAGES.litellm);
  t.equal(image('ModelAPI', { mode: 'Hosted', hostedConfig: { model: 'x' } }), IMAGES.ollama);
  t.equal(image('ModelAPI', { mode: 'Other' }), undefined, 'no image for an invalid mode');
  t.equal(image('MCPServer', { type: 'python-runtime', config: { tools: { fromString: 'def f(): ...' } } }), IMAGES.mcpServer);
  t.equal(image('MCPServer', { type: 'python-runtime', config: { tools: { fromSecretKeyRef: { name: 's', key: 'k' } } } }), IMAGES.mcpServer);
  t.equal(image('MCPServer', { type: 'python-runtime', config: { tools: { fromPackage: 'p' } } }), IMAGES.mcpPython);
  t.equal(image('MCPServer', { type: 'node-runtime', config: { tools: { fromPackage: 'p' } } }), IMAGES.mcpNode);
  t.equal(image('MCPServer', { type: 'node-runtime', config: { tools: {} } }), undefined, 'no source, no image');
  t.equal(image('MCPServer', { type: 'node-runtime', config: { tools: { fromPackage: 'p', fromString: 'x' } } }), undefined, 'two sources, no image');

  const custom = { ...CONFIG, images: { ...IMAGES, agent: 'registry.local/agent:1' } };
  t.match(defaultObject('Agent', agent('a', { modelAPI: 'm' }), { config: custom }).object.spec, { container: { image: 'registry.local/agent:1' } });

  const mine = run('ModelAPI', modelAPI('m', { mode: 'Hosted', hostedConfig: { model: 'x' }, container: { image: 'my/ollama:1', args: ['a'] } }));
  t.same(spec(mine.object).container, { image: 'my/ollama:1', args: ['a'] }, 'an image the user wrote stays');
  t.same(mine.defaulted, []);
  t.equal(annotation(mine.object), undefined, 'no annotation when nothing was chosen');
});

t.test('idempotent: defaulting its own output changes nothing', async (t) => {
  const cases: Array<[KaosKind, KubeObject, Partial<DefaultingContext>]> = [
    ['Agent', agent('a', { modelAPI: 'm' }), {}],
    ['Agent', agent('a', { modelAPI: 'm', config: { memory: {} } }), { modelAPI: hosted('m') }],
    ['Agent', agent('a', { modelAPI: 'm' }), { modelAPI: modelAPI('m', { mode: 'Proxy', proxyConfig: { apiBase: 'http://x' } }) }],
    ['ModelAPI', modelAPI('m', { mode: 'Proxy', proxyConfig: { model: 'x' } }), {}],
    ['MCPServer', mcpServer('s', { type: 'node-runtime', config: { tools: { fromPackage: 'p' } } }), {}],
  ];
  for (const [kind, input, extra] of cases) {
    const once = run(kind, input, extra).object;
    t.same(run(kind, once, extra).object, once, `${kind} ${JSON.stringify(input.spec)}`);
    t.same(run(kind, once, { ...extra, oldObject: once }).object, once, 'also as an UPDATE of itself');
  }
});

t.test('a defaulted image follows a mode change; a user-written one does not', async (t) => {
  const created = run('ModelAPI', modelAPI('m', { mode: 'Proxy', proxyConfig: { model: 'x' } })).object;
  t.equal(annotation(created), 'spec.container.image');
  // kubectl apply of the changed manifest keeps the live image and annotation (not in the manifest).
  const changed = structuredClone(created);
  Object.assign(spec(changed), { mode: 'Hosted', hostedConfig: { model: 'x' } });
  delete spec(changed).proxyConfig;
  const updated = run('ModelAPI', changed, { oldObject: created }).object;
  t.same(spec(updated).container, { image: IMAGES.ollama });
  t.equal(annotation(updated), 'spec.container.image');

  const userSet = structuredClone(changed);
  spec(userSet).container = { image: 'my/ollama:2' };
  const kept = run('ModelAPI', userSet, { oldObject: created }).object;
  t.same(spec(kept).container, { image: 'my/ollama:2' }, 'changed in the same request: the user’s');
  t.equal(annotation(kept), undefined, 'and no longer recorded');
  t.same(kept.metadata?.annotations, {}, 'only our key is removed');

  const later = structuredClone(kept);
  Object.assign(spec(later), { mode: 'Proxy', proxyConfig: { model: 'x' } });
  t.same(spec(run('ModelAPI', later, { oldObject: kept }).object).container, { image: 'my/ollama:2' }, 'and stays theirs afterwards');
});

t.test('a defaulted image follows an MCPServer tools-source change', async (t) => {
  const created = run('MCPServer', mcpServer('s', { type: 'python-runtime', config: { tools: { fromString: 'x' } } })).object;
  t.match(spec(created), { container: { image: IMAGES.mcpServer } });
  const changed = structuredClone(created);
  (spec(changed).config as { tools: unknown }).tools = { fromPackage: 'pkg' };
  t.match(spec(run('MCPServer', changed, { oldObject: created }).object), { container: { image: IMAGES.mcpPython } });
  const toNode = structuredClone(changed);
  spec(toNode).type = 'node-runtime';
  t.match(spec(run('MCPServer', toNode, { oldObject: created }).object), { container: { image: IMAGES.mcpNode } });
});

t.test('a defaulted MODEL_NAME follows a new modelAPI, or a new model', async (t) => {
  const created = run('Agent', agent('a1', { modelAPI: 'm1' }), { modelAPI: hosted('m1', 'model-1') }).object;
  const moved = structuredClone(created);
  spec(moved).modelAPI = 'm2';
  const updated = run('Agent', moved, { oldObject: created, modelAPI: hosted('m2', 'model-2') }).object;
  t.same((spec(updated).config as { env: unknown }).env, [{ name: 'MODEL_NAME', value: 'model-2' }]);
  t.equal(annotation(updated), 'spec.config.env[MODEL_NAME],spec.container.image');

  const relabelled = structuredClone(created);
  relabelled.metadata = { ...relabelled.metadata, labels: { team: 'x' } };
  const newModel = run('Agent', relabelled, { oldObject: created, modelAPI: hosted('m1', 'model-1b') }).object;
  t.same((spec(newModel).config as { env: unknown }).env, [{ name: 'MODEL_NAME', value: 'model-1b' }], 'the ModelAPI changed its model');

  const gone = run('Agent', relabelled, { oldObject: created }).object;
  t.same((spec(gone).config as { env: unknown }).env, [{ name: 'MODEL_NAME', value: 'model-1' }], 'ModelAPI out of sight, same reference: kept');

  const applied = structuredClone(relabelled);
  delete (spec(applied).config as { env?: unknown }).env;
  t.same((spec(run('Agent', applied, { oldObject: created }).object).config as { env: unknown }).env, [{ name: 'MODEL_NAME', value: 'model-1' }],
    'dropped by a server-side apply while the ModelAPI is out of sight: restored, not guessed');
  t.same((spec(run('Agent', applied, { oldObject: created, modelAPI: hosted('m1', 'model-1c') }).object).config as { env: unknown }).env,
    [{ name: 'MODEL_NAME', value: 'model-1c' }], 'dropped with the ModelAPI in sight: derived afresh');

  const movedToUnknown = run('Agent', moved, { oldObject: created }).object;
  t.same((spec(movedToUnknown).config as { env: unknown }).env, [{ name: 'MODEL_NAME', value: 'smollm2:135m' }], 'new, unknown ModelAPI: the default');
});

t.test('a MODEL_NAME the user changed is theirs from then on', async (t) => {
  const created = run('Agent', agent('a1', { modelAPI: 'm1' }), { modelAPI: hosted('m1', 'model-1') }).object;
  const edited = structuredClone(created);
  (spec(edited).config as { env: unknown }).env = [{ name: 'MODEL_NAME', value: 'mine' }];
  spec(edited).modelAPI = 'm2';
  const updated = run('Agent', edited, { oldObject: created, modelAPI: hosted('m2', 'model-2') }).object;
  t.same((spec(updated).config as { env: unknown }).env, [{ name: 'MODEL_NAME', value: 'mine' }]);
  t.equal(annotation(updated), 'spec.container.image');

  const sameAsDerived = structuredClone(created);
  (spec(sameAsDerived).container as { image: string }).image = IMAGES.agent;
  t.equal(annotation(run('Agent', sameAsDerived, { oldObject: created, modelAPI: hosted('m1', 'model-1') }).object),
    'spec.config.env[MODEL_NAME],spec.container.image', 'writing the very value we chose keeps it ours');
});

t.test('a recorded field that disappeared is defaulted again; unknown annotation entries are dropped', async (t) => {
  const input = agent('a1', { modelAPI: 'm' }, { metadata: { annotations: { [DEFAULTED_ANNOTATION]: 'spec.container.image, spec.bogus', other: 'x' } } });
  const { object } = run('Agent', input);
  t.same(object.metadata?.annotations, { [DEFAULTED_ANNOTATION]: 'spec.config.env[MODEL_NAME],spec.container.image', other: 'x' });
});

t.test('pure: the input is untouched, status is never touched', async (t) => {
  const input = agent('a1', { modelAPI: 'm' }, { status: { ready: false, conditions: [] } });
  const before = structuredClone(input);
  const { object } = defaultObject('Agent', deepFreeze(input), ctx());
  t.same(input, before);
  t.same(object.status, { ready: false, conditions: [] });
  t.not(object, input);
  t.equal(run('Agent', agent('a', { modelAPI: 'm' })).object.status, undefined, 'no status is invented');
});

t.test('malformed specs are left for validation to report', async (t) => {
  t.same(run('Agent', agent('a', 'nonsense')).object.spec, 'nonsense');
  t.same(run('Agent', { kind: 'Agent', metadata: { name: 'a' } }).object, { kind: 'Agent', metadata: { name: 'a' } });
  const weird = run('Agent', agent('a', { modelAPI: 'm', container: 'x', config: { env: 'y' } })).object;
  t.same(spec(weird), { modelAPI: 'm', container: 'x', config: { env: 'y', reasoningLoopMaxSteps: 5 }, agentNetwork: { expose: true }, waitForDependencies: true });
  t.equal(annotation(weird), undefined);
  const proto = JSON.parse('{"modelAPI":"m","__proto__":{"waitForDependencies":false}}') as Record<string, unknown>;
  const defaultedProto = run('Agent', agent('a', proto)).object;
  t.equal(spec(defaultedProto).waitForDependencies, true, 'a "__proto__" key is plain data');
  t.equal(({} as Record<string, unknown>).waitForDependencies, undefined, 'and pollutes nothing');
});

t.test('defaulting copies what it writes into and shares the rest: never a write into the input, whatever the object', async (t) => {
  // The input frozen: a write into a part defaulting shares with it instead of copying throws.
  // The result must also equal defaulting an unshared copy, and share the parts no default reaches.
  const kinds = fc.constantFrom(...SEEDS);
  let checked = 0;
  fc.assert(
    fc.property(kinds, objectMutation, fc.option(objectMutation, { nil: undefined }), (seed, mutation, oldMutation) => {
      const object = mutation.apply(structuredClone(seed.object) as unknown as Doc) as unknown as KubeObject;
      const oldObject = oldMutation?.apply(structuredClone(seed.object) as unknown as Doc) as unknown as KubeObject | undefined;
      if (!isRecord(object) || !isRecord(object.metadata ?? {}) || (oldObject !== undefined && (!isRecord(oldObject) || !isRecord(oldObject.metadata ?? {})))) return;
      const parsed = (o: KubeObject | undefined) => (o === undefined ? undefined : (JSON.parse(render(o as unknown as Doc)) as KubeObject));
      // What the webhook refuses before it defaults (json-depth.ts) is not defaulted; huge values
      // are where small ones are, and only slow the run.
      if ([mutation, oldMutation].some((m) => m?.family.startsWith('huge-'))) return;
      if ([object, oldObject].some((o) => o !== undefined && nestsDeeperThan(Buffer.from(render(o as unknown as Doc)), MAX_JSON_DEPTH - 2))) return;
      const input = parsed(object) as KubeObject;
      const before = structuredClone(input);
      const context = ctx(oldObject === undefined ? {} : { oldObject: deepFreeze(parsed(oldObject) as KubeObject) });
      const shared = defaultObject(seed.kind, deepFreeze(input), context);
      if (!isDeepStrictEqual(input, before)) throw new Error('the input changed');
      if (!isDeepStrictEqual(shared.object, defaultObject(seed.kind, parsed(object) as KubeObject, context).object)) throw new Error('differs from defaulting a copy');
      checked++;
    }),
    { numRuns: 2_000, seed: 0x6b616f73 },
  );
  t.ok(checked > 1_000, `${checked} objects defaulted, none of them changed`);
  const podSpec = { containers: [{ name: 'agent', env: [{ name: 'A', value: '1' }] }] };
  const { object } = run('Agent', agent('a1', { modelAPI: 'm', podSpec, mcpServers: ['x'] }));
  t.equal(spec(object).podSpec, podSpec, 'an opaque podSpec is shared, not copied');
});
