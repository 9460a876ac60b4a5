// The validating webhook's rules for MemoryStores and an Agent's remote memory (docs/api.md,
// "MemoryStore" and "Agent remote memory"), each in the words the user sees.
import { readFile } from 'node:fs/promises';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { defaultObject } from '../../../src/api/defaulting/default-object.ts';
import { isKaosKind } from '../../../src/api/kinds.ts';
import { deletionWarnings, validateObject, type ValidationContext } from '../../../src/api/validation/validate-object.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { agent, chatAPI, CONFIG, hosted, localStoreSpec, memoryStore, referencesIn, store } from './objects.ts';

const EXISTING = [hosted('m'), chatAPI(), store('shared'), store('narrow', { maxReadScope: 'session' })];
const COMPACTION = 'short-term compaction marks must satisfy 0 < compactionTarget < compactionTrigger <= tokenBudget (0 or absent marks derive from the token budget)';

function checkStore(object: KubeObject, extra: Partial<ValidationContext> & { existing?: KubeObject[] } = {}) {
  const existing = extra.existing ?? EXISTING;
  const modelAPIs = new Map(['chat', 'embed', 'gone'].map((n) => [n, existing.find((o) => o.kind === 'ModelAPI' && o.metadata?.name === n)]));
  const result = validateObject('MemoryStore', object, { referencePolicy: 'Enforce', memoryStoreReferences: { modelAPIs }, ...extra });
  return { errors: result.errors.map((e) => e.errorString()), warnings: result.warnings };
}

function checkAgent(object: KubeObject, extra: Partial<ValidationContext> & { existing?: KubeObject[] } = {}) {
  const result = validateObject('Agent', object, { referencePolicy: 'Enforce', references: referencesIn(extra.existing ?? EXISTING, object.spec), ...extra });
  return { errors: result.errors.map((e) => e.errorString()), warnings: result.warnings };
}

const remote = (memory: Record<string, unknown>, extra: Record<string, unknown> = {}) => agent('a', { modelAPI: 'm', model: 'llama3:8b', config: { memory }, ...extra });

t.test('a valid MemoryStore in either mode', async (t) => {
  t.same(checkStore(memoryStore('s', localStoreSpec())), { errors: [], warnings: [] });
  const external = localStoreSpec({ storage: { type: 'external', external: { connectionSecretRef: { name: 'pg', key: 'dsn' } } }, replicas: 3 });
  t.same(checkStore(memoryStore('s', external)), { errors: [], warnings: [] });
});

t.test("KAOS's rules in its words: external mode needs its block, local mode one replica, compaction marks that work", async (t) => {
  t.same(checkStore(memoryStore('s', localStoreSpec({ storage: { type: 'external' } }))).errors, [
    'spec.storage.external: Required value: storage.external is required when storage.type is external',
  ]);
  t.same(checkStore(memoryStore('s', localStoreSpec({ replicas: 2 }))).errors, ['spec.replicas: Invalid value: 2: replicas must be 1 in local storage mode']);
  t.same(checkStore(memoryStore('s', localStoreSpec({ mediumTerm: { compactionTrigger: 100, compactionTarget: 100 } }))).errors, [
    `spec.mediumTerm: Invalid value: ${COMPACTION}`,
  ]);
  t.same(checkStore(memoryStore('s', localStoreSpec({ shortTerm: { tokenBudget: 1 } }))).errors, [
    `spec.shortTerm.tokenBudget: Invalid value: ${COMPACTION}`,
  ], 'a budget of 1 leaves no room between target and trigger');
  t.same(checkStore(memoryStore('s', localStoreSpec({ shortTerm: { tokenBudget: 64 }, mediumTerm: { compactionTrigger: 0, compactionTarget: 0 } }))).errors, [], '0 marks derive from the budget');
  t.same(checkStore(memoryStore('s', localStoreSpec({ shortTerm: { tokenBudget: 64 }, mediumTerm: { compactionTrigger: 65 } }))).errors.length, 1, 'a trigger above the budget');
  t.same(checkStore(memoryStore('s', localStoreSpec({ shortTerm: { tokenBudget: 100 }, mediumTerm: { compactionTarget: 100 } }))).errors.length, 1, 'a target at the (derived) trigger');
  t.same(checkStore(memoryStore('s', localStoreSpec({ mediumTerm: { compactionTarget: 2048 } }))).errors, [], 'below the service default budget of 4096');
});

t.test('the user read scope: refused on an Agent without a user identity (KAOS\'s message), a warning on a store', async (t) => {
  const USER = 'config.memory.maxReadScope references user scope, but cluster security posture has no user identity';
  const none = { userIdentity: false, serviceAccountIdentity: false };
  const enforced = { userIdentity: true, serviceAccountIdentity: false };
  t.same(checkStore(memoryStore('s', localStoreSpec({ maxReadScope: 'user' })), { posture: none }), {
    errors: [],
    warnings: ['spec.maxReadScope: no Agent reads at "user" scope without a user identity (security and the user plane on)'],
  }, 'a store\'s user ceiling is accepted, with a warning');
  t.same(checkStore(memoryStore('s', localStoreSpec({ maxReadScope: 'user' })), { posture: enforced }), { errors: [], warnings: [] }, 'no warning with a user identity');
  t.same(checkAgent(remote({ memoryStore: 'shared', maxReadScope: 'user' }), { posture: none }).errors, [
    `spec.config.memory.maxReadScope: Forbidden: ${USER}`,
  ], 'refused once, not also as above the ceiling');
  t.same(checkAgent(remote({ maxReadScope: 'user' })).errors, [`spec.config.memory.maxReadScope: Forbidden: ${USER}`], 'no posture given: none; unbound too');
  t.same(checkAgent(remote({ memoryStore: 'shared', maxReadScope: 'user' }), { posture: enforced }).errors, [
    'spec.config.memory.maxReadScope: Invalid value: config.memory.maxReadScope "user" exceeds MemoryStore "shared" maxReadScope "agent"',
  ], 'with a user identity: judged against the store\'s ceiling like any scope');
  const userStore = memoryStore('people', localStoreSpec({ maxReadScope: 'user' }));
  t.same(checkAgent(remote({ memoryStore: 'people', maxReadScope: 'user' }), { posture: enforced, existing: [...EXISTING, userStore] }).errors, [], 'within a user ceiling');
  t.same(checkAgent(remote({ memoryStore: 'people' }), { posture: none, existing: [...EXISTING, userStore] }).errors, [], 'a scope inherited from the store is not judged');
});

t.test('a PersistentVolumeClaim grows, never shrinks; a size is more than zero', async (t) => {
  const sized = (size: string) => memoryStore('s', localStoreSpec({ storage: { type: 'local', local: { persistentVolume: { size } } } }));
  t.same(checkStore(sized('10Gi'), { oldObject: sized('5Gi') }).errors, []);
  t.same(checkStore(sized('4Gi'), { oldObject: memoryStore('s', localStoreSpec()) }).errors, [
    'spec.storage.local.persistentVolume.size: Forbidden: a PersistentVolumeClaim cannot shrink',
  ], 'against the default 5Gi the old object had');
  t.same(checkStore(sized('5120Mi'), { oldObject: sized('5Gi') }).errors, [], 'the same size spelled otherwise');
  t.same(checkStore(sized('0'), {}).errors, ['spec.storage.local.persistentVolume.size: Invalid value: "0": must be greater than zero']);
  const external = memoryStore('s', localStoreSpec({ storage: { type: 'external', external: { connectionSecretRef: { name: 'pg', key: 'dsn' } } } }));
  t.same(checkStore(sized('1Gi'), { oldObject: external }).errors, [], 'no claim before: nothing to shrink');
  t.same(checkStore(external, { oldObject: sized('1Gi') }).warnings, [
    'spec.storage.type: leaving local mode deletes the PersistentVolumeClaim of this MemoryStore, and its memories',
  ]);
});

t.test('both model bindings are references: the ModelAPI exists and serves the model, under the reference policy', async (t) => {
  const spec = localStoreSpec({
    models: { summarization: { modelAPI: 'gone', model: 'x' }, embedding: { modelAPI: 'chat', model: 'text-embedding-3-small' } },
  });
  t.same(checkStore(memoryStore('s', spec)).errors, [
    'spec.models.summarization.modelAPI: Not found: "gone"',
    'spec.models.embedding.model: Not found: "text-embedding-3-small": not supported by ModelAPI "chat" (supported: [openai/*])',
  ]);
  const warned = checkStore(memoryStore('s', spec, { metadata: { annotations: { 'kaos.tools/reference-policy': 'Warn' } } }));
  t.same(warned.errors, []);
  t.same(warned.warnings[0], 'spec.models.summarization.modelAPI: Not found: "gone" (allowed: reference policy Warn)');
  t.match(warned.warnings[1], /^spec\.models\.embedding\.model: Not found: "text-embedding-3-small": not supported by ModelAPI "chat" .*\.\.\.$/, 'cut to 120 characters');
  t.same(checkStore(memoryStore('s', spec, { metadata: { labels: { x: 'y' } } }), { oldObject: memoryStore('s', spec) }).errors, [], 'unchanged bindings are not judged again');
  t.same(checkStore(memoryStore('s', localStoreSpec({ models: { summarization: { modelAPI: 'Chat', model: 'x' }, embedding: { modelAPI: 'chat', model: 'openai/e' } } }))).errors.length, 1, 'a name that is no name');
});

t.test("an Agent's memory: KAOS's binding rules in its words", async (t) => {
  t.same(checkAgent(remote({ type: 'remote' })).errors, ["spec.config.memory.memoryStore: Required value: type 'remote' requires memoryStore to be set"]);
  t.same(checkAgent(remote({ type: 'local', memoryStore: 'shared' })).errors, ["spec.config.memory.memoryStore: Forbidden: type 'local' must not set memoryStore"]);
  t.same(checkAgent(remote({ tools: 'read' })).errors, ['spec.config.memory.memoryStore: Required value: tools requires memoryStore to be set']);
  t.same(checkAgent(remote({ memoryStore: 'shared', tools: 'all', failureMode: 'strict', clientParams: { tokenBudget: 64, rollingSummary: true } })).errors, []);
});

t.test("KAOS's two earlier read-scope forms are refused, naming maxReadScope", async (t) => {
  t.same(checkAgent(remote({ memoryStore: 'shared', scope: 'user', defaultReadScope: 'user', readScopes: ['session', 'agent'] })).errors, [
    'spec.config.memory.scope: Forbidden: an earlier KAOS form of the read scope: use spec.config.memory.maxReadScope',
    'spec.config.memory.defaultReadScope: Forbidden: an earlier KAOS form of the read scope: use spec.config.memory.maxReadScope',
    'spec.config.memory.readScopes: Forbidden: an earlier KAOS form of the read scope: use spec.config.memory.maxReadScope',
  ]);
});

t.test('one shape per memory block: the original fields beside a binding are a mix', async (t) => {
  t.same(checkAgent(remote({ memoryStore: 'shared', contextLimit: 6 })).errors, [
    'spec.config.memory.memoryStore: Forbidden: may not be set together with spec.config.memory.contextLimit',
  ]);
  t.same(checkAgent(remote({ type: 'remote', memoryStore: 'shared', maxReadScope: 'agent', tools: 'read', contextLimit: 6, maxSessions: 9 })).errors, [
    'spec.config.memory.contextLimit: Forbidden: may not be set together with spec.config.memory.memoryStore, spec.config.memory.maxReadScope, spec.config.memory.tools',
    'spec.config.memory.maxSessions: Forbidden: may not be set together with spec.config.memory.memoryStore, spec.config.memory.maxReadScope, spec.config.memory.tools',
  ], "the shape with fewer fields set is the one refused; type, both shapes' field, counts for neither");
});

t.test('the MemoryStore is a reference: it exists, and its ceiling holds', async (t) => {
  t.same(checkAgent(remote({ memoryStore: 'nope' })).errors, ['spec.config.memory.memoryStore: Not found: "nope"']);
  t.same(checkAgent(remote({ memoryStore: 'nope' }), { referencePolicy: 'Warn' }).warnings, ['spec.config.memory.memoryStore: Not found: "nope" (allowed: reference policy Warn)']);
  t.same(checkAgent(remote({ memoryStore: 'narrow', maxReadScope: 'agent' })).errors, [
    'spec.config.memory.maxReadScope: Invalid value: config.memory.maxReadScope "agent" exceeds MemoryStore "narrow" maxReadScope "session"',
  ]);
  t.same(checkAgent(remote({ memoryStore: 'shared', maxReadScope: 'agent' })).errors, [], 'an unset ceiling is agent');
  t.same(checkAgent(remote({ memoryStore: 'narrow' })).errors, [], 'without a scope of its own the Agent reads at the store\'s');
  const stored = remote({ memoryStore: 'narrow', maxReadScope: 'agent' });
  t.same(checkAgent(remote({ memoryStore: 'narrow', maxReadScope: 'agent' }, { waitForDependencies: true }), { oldObject: stored }).errors, [], 'a binding and scope already stored are not judged again');
  t.same(checkAgent(remote({ memoryStore: 'shared' }, { waitForDependencies: false }), { existing: [hosted('m'), store('shared', {}, false)] }).warnings, [
    'MemoryStore "shared" is not ready; the Agent starts with short-term memory only',
  ]);
});

t.test('a lowered ceiling that strands bound Agents is warned about, naming them', async (t) => {
  const before = store('shared');
  const after = store('shared', { maxReadScope: 'session' });
  t.same(
    checkStore(after, { oldObject: before, memoryStoreDependents: [{ name: 'b', maxReadScope: 'agent' }, { name: 'a', maxReadScope: 'agent' }, { name: 'c', maxReadScope: 'session' }] }).warnings,
    ['MemoryStore "shared" maxReadScope "session" is below the maxReadScope of Agents: a, b'],
  );
});

t.test('deleting a bound MemoryStore warns, naming its Agents and what goes with a local one', async (t) => {
  const agents = (...names: string[]) => names.map((name) => ({ kind: 'Agent' as const, name }));
  t.same(deletionWarnings('MemoryStore', 'shared', agents('a1', 'a2'), store('shared')), [
    'MemoryStore "shared" is still bound by Agents: a1, a2',
    'MemoryStore "shared": its PersistentVolumeClaim, and the memories on it, are deleted with it',
  ]);
  const external = memoryStore('pg', localStoreSpec({ storage: { type: 'external', external: { connectionSecretRef: { name: 'pg', key: 'dsn' } } } }));
  t.same(deletionWarnings('MemoryStore', 'pg', agents('a1'), external), ['MemoryStore "pg" is still bound by Agents: a1']);
  t.same(deletionWarnings('MemoryStore', 'shared', [], store('shared')), [], 'nothing bound: nothing to say');
});

t.test('the memory-agents fixture is valid as written and once defaulted', async (t) => {
  const text = await readFile(new URL('../../fixtures/kaos-2026/memory-agents.yaml', import.meta.url), 'utf8');
  const objects = parseAllDocuments(text).map((d) => d.toJS() as KubeObject).filter((o) => isKaosKind(o.kind));
  t.same(objects.map((o) => o.kind), ['ModelAPI', 'MemoryStore', 'Agent', 'Agent']);
  const modelAPIs = new Map(objects.filter((o) => o.kind === 'ModelAPI').map((o) => [o.metadata?.name ?? '', o]));
  for (const object of objects) {
    if (!isKaosKind(object.kind)) continue;
    const ctx: ValidationContext = {
      referencePolicy: 'Enforce',
      ...(object.kind === 'Agent' ? { references: referencesIn(objects, object.spec) } : {}),
      ...(object.kind === 'MemoryStore' ? { memoryStoreReferences: { modelAPIs } } : {}),
    };
    t.same(validateObject(object.kind, object, ctx), { errors: [], warnings: [] }, `${object.kind} ${object.metadata?.name} as written`);
    const defaulted = defaultObject(object.kind, object, { config: CONFIG }).object;
    t.same(validateObject(object.kind, defaulted, ctx), { errors: [], warnings: [] }, `${object.kind} ${object.metadata?.name} defaulted`);
  }
});
