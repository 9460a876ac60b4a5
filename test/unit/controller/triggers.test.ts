import t from 'tap';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { parseRefKey as parseKey, refKey as makeKey } from '../../../src/cluster/object-ref.ts';
import { DependencyIndex } from '../../../src/cluster/dependency-index.ts';
import { controllerOwnerKey, keysForChildEvent, keysForKaosEvent, type DependentsLookup } from '../../../src/controller/triggers.ts';

const agent = (name: string, spec: Record<string, unknown>, namespace = 'ns'): KubeObject => ({ kind: 'Agent', metadata: { name, namespace }, spec });
const obj = (kind: string, name: string, extra: Partial<KubeObject> = {}, namespace = 'ns'): KubeObject => ({ kind, metadata: { name, namespace }, ...extra });

function index(...agents: KubeObject[]): DependencyIndex {
  const i = new DependencyIndex();
  for (const a of agents) i.upsert('Agent', a);
  return i;
}

t.test('keys: make and parse', async (t) => {
  t.equal(makeKey('Agent', 'ns', 'a'), 'Agent/ns/a');
  t.same(parseKey('MCPServer/team-a/echo'), { kind: 'MCPServer', namespace: 'team-a', name: 'echo' });
  t.same(parseKey(makeKey('ModelAPI', 'n', 'm.1')), { kind: 'ModelAPI', namespace: 'n', name: 'm.1' });
  for (const bad of ['', 'Agent/ns', 'Agent/ns/a/b', 'Pod/ns/a', 'Agent//a', 'Agent/ns/', 'agent/ns/a']) {
    t.throws(() => parseKey(bad), { message: `invalid queue key ${JSON.stringify(bad)}: expected "<Agent|ModelAPI|MCPServer|MemoryStore|AccessGrant>/<namespace>/<name>"` });
  }
});

t.test('a ModelAPI wakes itself and the Agents of its namespace that use it', async (t) => {
  const refs = index(
    agent('b', { modelAPI: 'gpt' }),
    agent('a', { modelAPI: 'gpt' }),
    agent('c', { modelAPI: 'other' }),
    agent('a', { modelAPI: 'gpt' }, 'elsewhere'),
  );
  t.same(keysForKaosEvent('ModelAPI', { type: 'add', object: obj('ModelAPI', 'gpt') }, refs), ['ModelAPI/ns/gpt', 'Agent/ns/a', 'Agent/ns/b']);
  t.same(keysForKaosEvent('ModelAPI', { type: 'delete', object: obj('ModelAPI', 'gpt') }, refs), ['ModelAPI/ns/gpt', 'Agent/ns/a', 'Agent/ns/b'], 'deleted: they must report it');
  t.same(keysForKaosEvent('ModelAPI', { type: 'add', object: obj('ModelAPI', 'unused') }, refs), ['ModelAPI/ns/unused']);
});

t.test('an MCPServer wakes the Agents listing it; an Agent wakes the Agents whose access lists it', async (t) => {
  const refs = index(
    agent('coordinator', { modelAPI: 'm', mcpServers: ['echo'], agentNetwork: { access: ['worker'] } }),
    agent('other', { modelAPI: 'm', agentNetwork: { access: ['worker', 'coordinator'] } }),
  );
  t.same(keysForKaosEvent('MCPServer', { type: 'add', object: obj('MCPServer', 'echo') }, refs), ['MCPServer/ns/echo', 'Agent/ns/coordinator']);
  t.same(keysForKaosEvent('Agent', { type: 'add', object: agent('worker', { modelAPI: 'm' }) }, refs), ['Agent/ns/worker', 'Agent/ns/coordinator', 'Agent/ns/other'], 'a new peer is wired in');
  t.same(keysForKaosEvent('Agent', { type: 'add', object: agent('coordinator', {}) }, refs), ['Agent/ns/coordinator', 'Agent/ns/other']);
});

t.test('a MemoryStore wakes exactly the Agents bound to it; a ModelAPI wakes the MemoryStores it serves', async (t) => {
  const refs = index(
    agent('bound', { modelAPI: 'm', config: { memory: { memoryStore: 'shared' } } }),
    agent('other', { modelAPI: 'm', config: { memory: { memoryStore: 'private' } } }),
    agent('local', { modelAPI: 'm', config: { memory: { contextLimit: 6 } } }),
  );
  const status = (ready: boolean): Partial<KubeObject> => ({ spec: {}, status: { ready } });
  t.same(
    keysForKaosEvent('MemoryStore', { type: 'update', old: obj('MemoryStore', 'shared', status(true)), object: obj('MemoryStore', 'shared', status(false)) }, refs),
    ['MemoryStore/ns/shared', 'Agent/ns/bound'],
    'its readiness (MemoryDegraded) and its spec (the ceiling) are what they read',
  );
  refs.upsert('MemoryStore', obj('MemoryStore', 'shared', { spec: { models: { summarization: { modelAPI: 'chat' }, embedding: { modelAPI: 'embed' } } } }));
  t.same(keysForKaosEvent('ModelAPI', { type: 'add', object: obj('ModelAPI', 'embed') }, refs), ['ModelAPI/ns/embed', 'MemoryStore/ns/shared']);
  const serving = (models: string[]): Partial<KubeObject> => ({ spec: { mode: 'Proxy', proxyConfig: { models } } });
  t.same(
    keysForKaosEvent('ModelAPI', { type: 'update', old: obj('ModelAPI', 'embed', serving(['e', 'f'])), object: obj('ModelAPI', 'embed', serving(['f'])) }, refs),
    ['ModelAPI/ns/embed', 'MemoryStore/ns/shared'],
    'a change of the models it serves: the store judges its model again',
  );
});

t.test('the index is asked, never scanned, and only for the changed object', async (t) => {
  const asked: string[] = [];
  const refs: DependentsLookup = { dependents: (kind, ns, name) => (asked.push(`${kind}/${ns}/${name}`), ['Agent/ns/x']) };
  keysForKaosEvent('ModelAPI', { type: 'add', object: obj('ModelAPI', 'gpt') }, refs);
  t.same(asked, ['ModelAPI/ns/gpt']);
  t.same(keysForKaosEvent('Agent', { type: 'add', object: obj('Agent', 'x') }, refs), ['Agent/ns/x'], 'an Agent listing itself is woken once');
});

t.test('dependents wake on spec, status or deletion changes, not on metadata noise', async (t) => {
  const refs = index(agent('a', { modelAPI: 'gpt' }));
  const base = obj('ModelAPI', 'gpt', { spec: { mode: 'Proxy' }, status: { phase: 'Pending' } });
  const update = (changes: Partial<KubeObject>) =>
    keysForKaosEvent('ModelAPI', { type: 'update', old: base, object: { ...base, ...changes } }, refs);
  const both = ['ModelAPI/ns/gpt', 'Agent/ns/a'];
  t.same(update({ status: { phase: 'Ready', endpoint: 'http://x' } }), both, 'became ready');
  t.same(update({ spec: { mode: 'Hosted' } }), both, 'spec changed');
  t.same(update({ metadata: { ...base.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }), both, 'being deleted');
  t.same(update({ metadata: { ...base.metadata, labels: { x: 'y' }, resourceVersion: '9' } }), ['ModelAPI/ns/gpt'], 'labels only: itself, not its dependents');
  t.same(update({ spec: { mode: 'Proxy' }, status: { phase: 'Pending' } }), ['ModelAPI/ns/gpt'], 'equal content (a relist): itself only');
});

t.test('a peer Agent wakes the Agents listing it on spec or deletion changes, not on its status', async (t) => {
  const refs = index(agent('coordinator', { modelAPI: 'm', agentNetwork: { access: ['worker'] } }));
  const base = agent('worker', { modelAPI: 'm' });
  const update = (changes: Partial<KubeObject>) => keysForKaosEvent('Agent', { type: 'update', old: base, object: { ...base, ...changes } }, refs);
  t.same(update({ status: { phase: 'Ready', endpoint: 'http://x' } }), ['Agent/ns/worker'], 'status only: its endpoint comes from its spec');
  t.same(update({ spec: { modelAPI: 'm', agentNetwork: { expose: false } } }), ['Agent/ns/worker', 'Agent/ns/coordinator'], 'no longer exposed');
  t.same(update({ metadata: { ...base.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }), ['Agent/ns/worker', 'Agent/ns/coordinator'], 'being deleted');
});

t.test('objects without a name or namespace wake nothing', async (t) => {
  const refs = index();
  t.same(keysForKaosEvent('Agent', { type: 'add', object: { metadata: { namespace: 'ns' } } }, refs), []);
  t.same(keysForKaosEvent('Agent', { type: 'add', object: { metadata: { name: 'a' } } }, refs), []);
});

t.test('a child wakes its controller owner of a kaos.tools kind', async (t) => {
  const owned = (refs: unknown[], namespace = 'ns'): KubeObject => ({ kind: 'Deployment', metadata: { name: 'agent-a', namespace, ownerReferences: refs } });
  const ref = (kind: string, name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'kaos.tools/v1alpha1', kind, name, uid: 'u', controller: true, blockOwnerDeletion: true, ...extra });
  t.equal(controllerOwnerKey(owned([ref('Agent', 'a')])), 'Agent/ns/a');
  t.equal(controllerOwnerKey(owned([ref('ModelAPI', 'm', { apiVersion: 'kaos.tools/v1beta1' })])), 'ModelAPI/ns/m', 'any version of the group');
  t.equal(controllerOwnerKey(owned([ref('Agent', 'a', { controller: false }), ref('MCPServer', 's')])), 'MCPServer/ns/s', 'the controller one only');
  t.equal(controllerOwnerKey(owned([ref('Agent', 'a', { apiVersion: 'apps/v1' })])), undefined, 'another group');
  t.equal(controllerOwnerKey(owned([ref('Widget', 'a')])), undefined, 'another kind of the group');
  t.equal(controllerOwnerKey(owned([null, 'junk', ref('Agent', '')])), undefined, 'malformed references are ignored');
  t.equal(controllerOwnerKey({ metadata: { name: 'x', namespace: 'ns' } }), undefined, 'no owner');
  t.equal(controllerOwnerKey(owned([ref('Agent', 'a')], '')), undefined, 'no namespace');

  t.same(keysForChildEvent({ type: 'delete', object: owned([ref('Agent', 'a')]) }), ['Agent/ns/a'], 'a deleted child wakes its parent, which recreates it');
  t.same(keysForChildEvent({ type: 'update', old: owned([ref('Agent', 'a')]), object: owned([ref('Agent', 'a')]) }), ['Agent/ns/a'], 'once');
  t.same(keysForChildEvent({ type: 'update', old: owned([ref('Agent', 'old')]), object: owned([ref('Agent', 'new')]) }), ['Agent/ns/new', 'Agent/ns/old'], 'both owners when it moved');
  t.same(keysForChildEvent({ type: 'add', object: owned([]) }), []);
});
