import jsonPatch from 'fast-json-patch';
import { readFile, readdir } from 'node:fs/promises';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { createMutatingHandler } from '../../../src/admission/mutate.ts';
import type { AdmissionDecision } from '../../../src/admission/types.ts';
import { DEFAULTED_ANNOTATION, type KaosKind } from '../../../src/api/kinds.ts';
import { isKubeObject } from '../../../src/api/kube-object.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { MemoryLookup } from '../../support/memory-lookup.ts';
import { agent, CONFIG, hosted, modelAPI } from '../api/objects.ts';
import { admissionRequest } from '../../support/admission-request.ts';


const patched = (object: KubeObject, decision: AdmissionDecision): KubeObject =>
  jsonPatch.applyPatch(structuredClone(object), decision.patch ?? [], true, false).newDocument;

t.test('guards: the wrong kind is a bug in the caller', async (t) => {
  const handler = createMutatingHandler('Agent', { lookup: new MemoryLookup(), config: CONFIG });
  await t.rejects(handler(admissionRequest('ModelAPI', modelAPI('m', {}))), /Agent mutating handler received a ModelAPI request/);
  await t.rejects(handler(admissionRequest('Agent', undefined, { object: 'x' })), /request.object must be an object, got an? (array|string)/);
  await t.rejects(handler(admissionRequest('Agent', agent('a', {}), { operation: 'UPDATE' })), /request.oldObject must be an object, got nothing/);
  t.same(await handler(admissionRequest('Agent', undefined, { operation: 'DELETE', oldObject: agent('a', {}) })), { allowed: true });
});

t.test('CREATE: a JSON Patch to the defaulted object, MODEL_NAME from the known ModelAPI', async (t) => {
  const lookup = new MemoryLookup().add(hosted('m', 'llama3:8b'));
  const handler = createMutatingHandler('Agent', { lookup, config: CONFIG });
  const input = agent('a1', { modelAPI: 'm' });
  const decision = await handler(admissionRequest('Agent', input));
  t.equal(decision.allowed, true);
  t.notOk('warnings' in decision);
  const result = patched(input, decision);
  t.same(result.spec, {
    modelAPI: 'm',
    config: { env: [{ name: 'MODEL_NAME', value: 'llama3:8b' }], reasoningLoopMaxSteps: 5 },
    container: { image: CONFIG.images.agent },
    agentNetwork: { expose: true },
    waitForDependencies: true,
  });
  t.same(result.metadata?.annotations, { [DEFAULTED_ANNOTATION]: 'spec.config.env[MODEL_NAME],spec.container.image' });
  t.ok(decision.patch?.some((op) => op.op === 'add' && op.path === '/metadata/annotations'), 'the annotations map is created by the patch');
  t.same(lookup.calls, ['get ModelAPI ns/m'], 'one lookup: the ModelAPI');

  const again = await handler(admissionRequest('Agent', result));
  t.same(again, { allowed: true }, 'a second pass over its own output: no patch');
});

t.test('an object without metadata (only a direct caller sends one): the patch adds /metadata whole and applies', async (t) => {
  const handler = createMutatingHandler('Agent', { lookup: new MemoryLookup(), config: CONFIG });
  const { metadata: _none, ...input } = agent('a1', { modelAPI: 'm' });
  const decision = await handler(admissionRequest('Agent', input));
  t.ok(decision.patch?.some((op) => op.op === 'add' && op.path === '/metadata'), 'one add of /metadata');
  const result = patched(input, decision);
  t.same(result.metadata?.annotations, { [DEFAULTED_ANNOTATION]: 'spec.config.env[MODEL_NAME],spec.container.image' });
});

t.test('existing annotations get one added key, escaped in the patch path', async (t) => {
  const handler = createMutatingHandler('ModelAPI', { lookup: new MemoryLookup(), config: CONFIG });
  const input = modelAPI('m', { mode: 'Hosted', hostedConfig: { model: 'x' } }, { metadata: { annotations: { a: 'b' } } });
  const decision = await handler(admissionRequest('ModelAPI', input));
  t.same(decision.patch, [
    { op: 'add', path: '/spec/container', value: { image: CONFIG.images.ollama } },
    { op: 'add', path: '/metadata/annotations/kaos.tools~1defaulted', value: 'spec.container.image' },
  ]);
});

t.test('UPDATE: a defaulted image follows a mode change', async (t) => {
  const handler = createMutatingHandler('ModelAPI', { lookup: new MemoryLookup(), config: CONFIG });
  const created = modelAPI('m', { mode: 'Proxy', proxyConfig: { model: 'x' } });
  const stored = patched(created, await handler(admissionRequest('ModelAPI', created)));
  const changed = structuredClone(stored);
  changed.spec = { ...(stored.spec as object), mode: 'Hosted', hostedConfig: { model: 'x' }, proxyConfig: undefined };
  delete (changed.spec as { proxyConfig?: unknown }).proxyConfig;
  const decision = await handler(admissionRequest('ModelAPI', changed, { operation: 'UPDATE', oldObject: stored }));
  t.same(decision.patch, [{ op: 'replace', path: '/spec/container/image', value: CONFIG.images.ollama }]);
});

t.test('warnings from defaulting reach the decision; status is never patched; dry-run is the same', async (t) => {
  const lookup = new MemoryLookup().add(modelAPI('w', { mode: 'Proxy', proxyConfig: { apiBase: 'http://x' } }));
  const handler = createMutatingHandler('Agent', { lookup, config: CONFIG });
  const input = agent('a1', { modelAPI: 'w' }, { status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } });
  const decision = await handler(admissionRequest('Agent', input));
  t.same(decision.warnings, ['spec.config.env[MODEL_NAME] defaulted to "smollm2:135m": ModelAPI "w" names no model']);
  t.notOk(decision.patch?.some((op) => op.path.startsWith('/status')));
  t.same(await handler(admissionRequest('Agent', input, { dryRun: true })), decision);
});

t.test('every shared sample: patched once, then stable', async (t) => {
  const dir = new URL('../../fixtures/samples/', import.meta.url);
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.yaml'))) {
    const objects = parseAllDocuments(await readFile(new URL(file, dir), 'utf8'))
      .flatMap((d) => (Array.isArray(d) ? [] : [d.toJS()]))
      .filter((o): o is KubeObject => isKubeObject(o) && o.kind !== 'Namespace');
    const lookup = new MemoryLookup().add(...objects);
    for (const object of objects) {
      const kind = object.kind as KaosKind;
      const handler = createMutatingHandler(kind, { lookup, config: CONFIG });
      const decision = await handler(admissionRequest(kind, object));
      // The samples give MODEL_NAME and reasoningLoopMaxSteps: what is left is the image and,
      // for Agents, the two constant defaults kube-apiserver would have applied already.
      const expected = ['/metadata/annotations', '/spec/container'];
      if (kind === 'Agent') expected.push('/spec/agentNetwork/expose', '/spec/waitForDependencies');
      t.same(decision.patch?.map((op) => op.path).sort(), expected.sort(), `${file} ${object.metadata?.name}`);
      t.same(await handler(admissionRequest(kind, patched(object, decision))), { allowed: true }, `${file} ${kind}: idempotent`);
    }
  }
});

t.test('an Agent with spec.model: no MODEL_NAME, so no ModelAPI lookup', async (t) => {
  const lookup = new MemoryLookup().add(hosted('m'));
  const decision = await createMutatingHandler('Agent', { lookup, config: CONFIG })(admissionRequest('Agent', agent('a1', { modelAPI: 'm', model: 'llama3:8b' })));
  t.same(lookup.calls, [], 'nothing looked up');
  t.notOk(JSON.stringify(decision.patch ?? []).includes('MODEL_NAME'), 'no MODEL_NAME added');
});
