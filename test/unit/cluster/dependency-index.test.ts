import t from 'tap';
import type { KubeObject } from '../../../src/api/lookup.ts';
import type { KaosKind } from '../../../src/api/kinds.ts';
import { DependencyIndex } from '../../../src/cluster/dependency-index.ts';
import { KIND_TABLE, dependenciesOf } from '../../../src/cluster/kind-table.ts';

/** An Agent's references as the kind table states them: its ModelAPI, MCPServers and peers. */
const agentReferences = (agent: KubeObject) => dependenciesOf('Agent', agent, KIND_TABLE).map(({ kind, name }) => ({ kind, name }));

/** The index, with the names a deletion warning lists. */
class Indexed {
  readonly index = new DependencyIndex();

  upsert(kind: KaosKind, object: KubeObject): void {
    this.index.upsert(kind, object);
  }

  remove(kind: KaosKind, object: KubeObject): void {
    this.index.remove(kind, object);
  }

  referencedBy(kind: KaosKind, namespace: string, name: string) {
    return this.index.referencedBy(kind, namespace, name);
  }

  /** The names of the objects that name it, as the deletion warning lists them. */
  names(kind: KaosKind, namespace: string, name: string): string[] {
    return [...new Set(this.referencedBy(kind, namespace, name).map((r) => r.name))];
  }

  get size(): number {
    return this.index.size;
  }
}

function agent(name: string, spec: unknown, namespace = 'ns'): KubeObject {
  return { apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name, namespace }, spec };
}

t.test('agentReferences reads modelAPI, mcpServers and agentNetwork.access', async (t) => {
  t.same(agentReferences(agent('a', { modelAPI: 'm', mcpServers: ['x', 'y', 'x'], agentNetwork: { access: ['b'] } })), [
    { kind: 'ModelAPI', name: 'm' },
    { kind: 'MCPServer', name: 'x' },
    { kind: 'MCPServer', name: 'y' },
    { kind: 'Agent', name: 'b' },
  ]);
});

t.test('agentReferences tolerates malformed specs', async (t) => {
  t.same(agentReferences(agent('a', undefined)), []);
  t.same(agentReferences(agent('a', 'nope')), []);
  t.same(agentReferences(agent('a', { modelAPI: 3, mcpServers: 'x', agentNetwork: { access: [null, '', 'ok', 7] } })), [{ kind: 'Agent', name: 'ok' }]);
});

t.test('index answers who references X, per namespace, sorted', async (t) => {
  const idx = new Indexed();
  idx.upsert('Agent', agent('b', { modelAPI: 'gpt', mcpServers: ['echo'] }));
  idx.upsert('Agent', agent('a', { modelAPI: 'gpt', agentNetwork: { access: ['b'] } }));
  idx.upsert('Agent', agent('c', { modelAPI: 'gpt' }, 'other'));
  t.same(idx.names('ModelAPI', 'ns', 'gpt'), ['a', 'b']);
  t.same(idx.names('ModelAPI', 'other', 'gpt'), ['c']);
  t.same(idx.names('MCPServer', 'ns', 'echo'), ['b']);
  t.same(idx.names('Agent', 'ns', 'b'), ['a']);
  t.same(idx.names('Agent', 'ns', 'a'), []);
  t.same(idx.names('MCPServer', 'ns', 'gpt'), [], 'kinds do not mix');
});

t.test('an update moves references; a delete removes them; empty entries are dropped', async (t) => {
  const idx = new Indexed();
  idx.upsert('Agent', agent('a', { modelAPI: 'm1', mcpServers: ['s1'] }));
  idx.upsert('Agent', agent('b', { modelAPI: 'm1' }));
  idx.upsert('Agent', agent('a', { modelAPI: 'm2', mcpServers: ['s1', 's2'] }));
  t.same(idx.names('ModelAPI', 'ns', 'm1'), ['b']);
  t.same(idx.names('ModelAPI', 'ns', 'm2'), ['a']);
  t.same(idx.names('MCPServer', 'ns', 's2'), ['a']);
  idx.remove('Agent', agent('a', undefined));
  t.same(idx.names('ModelAPI', 'ns', 'm2'), []);
  t.same(idx.names('MCPServer', 'ns', 's1'), []);
  t.equal(idx.size, 1, 'only m1 (b) left');
  idx.remove('Agent', agent('b', undefined));
  idx.remove('Agent', agent('b', undefined)); // idempotent
  t.equal(idx.size, 0);
});

t.test('an agent whose spec lost every reference leaves no trace', async (t) => {
  const idx = new Indexed();
  idx.upsert('Agent', agent('a', { modelAPI: 'm' }));
  idx.upsert('Agent', agent('a', {}));
  t.equal(idx.size, 0);
  t.same(idx.names('ModelAPI', 'ns', 'm'), []);
});

t.test("a Proxy's config Secret and API key Secret both wake it (the kind table's configSecret and apiKeySecret)", async (t) => {
  const proxy = (proxyConfig: unknown): KubeObject => ({ metadata: { name: 'm', namespace: 'ns' }, spec: { mode: 'Proxy', proxyConfig } });
  const secrets = (object: KubeObject) => dependenciesOf('ModelAPI', object, KIND_TABLE).map(({ role, name }) => `${role}:${name}`);
  const both = proxy({ configYaml: { fromSecretKeyRef: { name: 'cfg', key: 'k' } }, apiKey: { valueFrom: { secretKeyRef: { name: 'key', key: 'k' } } } });
  t.same(secrets(both), ['configSecret:cfg', 'apiKeySecret:key']);
  t.same(secrets(proxy({ models: ['x'], apiKey: { value: 'inline' } })), []);
  t.same(secrets(proxy({ models: ['x'], apiKey: { valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } } })), ['apiKeyConfigMap:cm'], 'a ConfigMap key: the apiKeyConfigMap role');
  t.same(secrets({ metadata: { name: 'm', namespace: 'ns' }, spec: { mode: 'Hosted', proxyConfig: { apiKey: { valueFrom: { secretKeyRef: { name: 'key', key: 'k' } } } } } }), [], 'Proxy only');
  const index = new DependencyIndex();
  index.upsert('ModelAPI', both);
  t.same(index.dependents('Secret', 'ns', 'cfg'), ['ModelAPI/ns/m']);
  t.same(index.dependents('Secret', 'ns', 'key'), ['ModelAPI/ns/m']);
  index.upsert('ModelAPI', proxy({ models: ['x'], apiKey: { valueFrom: { secretKeyRef: { name: 'other', key: 'k' } } } }));
  t.same(index.dependents('Secret', 'ns', 'cfg'), [], 'forgotten on change');
  t.same(index.dependents('Secret', 'ns', 'other'), ['ModelAPI/ns/m']);
  index.remove('ModelAPI', proxy({}));
  t.same(index.dependents('Secret', 'ns', 'other'), []);
});

t.test("a Proxy's API key ConfigMap wakes exactly the ModelAPIs naming it (the kind table's apiKeyConfigMap)", async (t) => {
  const proxy = (name: string, apiKey: unknown, mode = 'Proxy'): KubeObject => ({ metadata: { name, namespace: 'ns' }, spec: { mode, proxyConfig: { models: ['x'], apiKey } } });
  const index = new DependencyIndex();
  index.upsert('ModelAPI', proxy('a', { valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } }));
  index.upsert('ModelAPI', proxy('b', { valueFrom: { configMapKeyRef: { name: 'cm', key: 'other' } } }));
  index.upsert('ModelAPI', proxy('c', { valueFrom: { configMapKeyRef: { name: 'cm2', key: 'k' } } }));
  index.upsert('ModelAPI', proxy('d', { valueFrom: { secretKeyRef: { name: 'cm', key: 'k' } } }));
  index.upsert('ModelAPI', proxy('e', { valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } }, 'Hosted'));
  t.same(index.dependents('ConfigMap', 'ns', 'cm'), ['ModelAPI/ns/a', 'ModelAPI/ns/b'], 'Proxy ModelAPIs naming that ConfigMap, not a Secret of the same name');
  t.same(index.dependents('Secret', 'ns', 'cm'), ['ModelAPI/ns/d']);
  t.same(index.dependents('ConfigMap', 'other', 'cm'), [], 'in their own namespace only');
  index.upsert('ModelAPI', proxy('a', { value: 'inline' }));
  t.same(index.dependents('ConfigMap', 'ns', 'cm'), ['ModelAPI/ns/b'], 'forgotten on change');
});

t.test('referencedBy: every kind that names the object, one entry per role, with what it asks of it (the kind table\'s asks)', async (t) => {
  const idx = new Indexed();
  const store = (name: string, models: unknown, namespace = 'ns'): KubeObject => ({ metadata: { name, namespace }, spec: { storage: { type: 'local' }, models } });
  idx.upsert('MemoryStore', store('notes', { summarization: { modelAPI: 'chat', model: 'gpt-4o-mini' }, embedding: { modelAPI: 'chat', model: 'text-embedding-3-small' } }));
  idx.upsert('MemoryStore', store('facts', { summarization: { modelAPI: 'chat', model: 'gpt-4o-mini' }, embedding: { modelAPI: 'embed', model: 'nomic' } }));
  idx.upsert('MemoryStore', store('elsewhere', { summarization: { modelAPI: 'chat', model: 'x' }, embedding: { modelAPI: 'chat', model: 'y' } }, 'other'));
  idx.upsert('Agent', agent('b', { modelAPI: 'chat', model: 'claude', config: { memory: { memoryStore: 'notes', maxReadScope: 'session' } } }));
  idx.upsert('Agent', agent('a', { modelAPI: 'chat' }));
  t.same(idx.referencedBy('ModelAPI', 'ns', 'chat'), [
    { kind: 'Agent', name: 'a', role: 'modelAPI' },
    { kind: 'Agent', name: 'b', role: 'modelAPI', asks: 'claude' },
    { kind: 'MemoryStore', name: 'facts', role: 'summarizationModelAPI', asks: 'gpt-4o-mini' },
    { kind: 'MemoryStore', name: 'notes', role: 'summarizationModelAPI', asks: 'gpt-4o-mini' },
    { kind: 'MemoryStore', name: 'notes', role: 'embeddingModelAPI', asks: 'text-embedding-3-small' },
  ], 'Agents then MemoryStores, by name; an Agent without spec.model asks nothing');
  t.same(idx.referencedBy('ModelAPI', 'ns', 'embed'), [{ kind: 'MemoryStore', name: 'facts', role: 'embeddingModelAPI', asks: 'nomic' }]);
  t.same(idx.referencedBy('MemoryStore', 'ns', 'notes'), [{ kind: 'Agent', name: 'b', role: 'memoryStore', asks: 'session' }], "an Agent asks its store for its maxReadScope");
  t.same(idx.names('ModelAPI', 'other', 'chat'), ['elsewhere'], 'per namespace');

  idx.upsert('MemoryStore', store('notes', { summarization: { modelAPI: 'chat', model: 'gpt-4o-mini' }, embedding: { modelAPI: 'embed', model: 'nomic' } }));
  t.same(idx.referencedBy('ModelAPI', 'ns', 'chat').filter((r) => r.name === 'notes'), [{ kind: 'MemoryStore', name: 'notes', role: 'summarizationModelAPI', asks: 'gpt-4o-mini' }], 'a moved binding moves');
  t.same(idx.names('ModelAPI', 'ns', 'embed'), ['facts', 'notes']);

});

t.test('referencedBy answers from what was indexed: it reads no object', async (t) => {
  const index = new DependencyIndex();
  const a = agent('a', { modelAPI: 'chat', model: 'gpt-4o' });
  index.upsert('Agent', a);
  // The object changed without an event, as a reader's copy might: the index still says what it was given.
  (a.spec as Record<string, unknown>).model = 'claude';
  t.same(index.referencedBy('ModelAPI', 'ns', 'chat'), [{ kind: 'Agent', name: 'a', role: 'modelAPI', asks: 'gpt-4o' }]);
  t.same(index.dependents('ModelAPI', 'ns', 'chat'), ['Agent/ns/a']);
});

t.test('a re-upsert replaces the bindings it recorded: another model, another role', async (t) => {
  const index = new DependencyIndex();
  const store = (models: unknown): KubeObject => ({ metadata: { name: 'notes', namespace: 'ns' }, spec: { storage: { type: 'local' }, models } });
  index.upsert('Agent', agent('a', { modelAPI: 'chat', model: 'gpt-4o' }));
  index.upsert('Agent', agent('a', { modelAPI: 'chat', model: 'claude' }));
  t.same(index.referencedBy('ModelAPI', 'ns', 'chat'), [{ kind: 'Agent', name: 'a', role: 'modelAPI', asks: 'claude' }], 'the new model, the old one gone');
  index.upsert('Agent', agent('a', { modelAPI: 'chat' }));
  t.same(index.referencedBy('ModelAPI', 'ns', 'chat'), [{ kind: 'Agent', name: 'a', role: 'modelAPI' }], 'no model: asks nothing');

  index.upsert('MemoryStore', store({ summarization: { modelAPI: 'chat', model: 's' }, embedding: { modelAPI: 'embed', model: 'e' } }));
  t.same(index.referencedBy('ModelAPI', 'ns', 'chat').filter((r) => r.kind === 'MemoryStore'), [{ kind: 'MemoryStore', name: 'notes', role: 'summarizationModelAPI', asks: 's' }]);
  index.upsert('MemoryStore', store({ summarization: { modelAPI: 'embed', model: 's' }, embedding: { modelAPI: 'chat', model: 'e2' } }));
  t.same(index.referencedBy('ModelAPI', 'ns', 'chat').filter((r) => r.kind === 'MemoryStore'), [{ kind: 'MemoryStore', name: 'notes', role: 'embeddingModelAPI', asks: 'e2' }], 'the role moved');
  t.same(index.referencedBy('ModelAPI', 'ns', 'embed'), [{ kind: 'MemoryStore', name: 'notes', role: 'summarizationModelAPI', asks: 's' }]);
  t.equal(index.distinctBindings, 3, "only what is asked now is kept: a's, and the store's two");
  const before = index.referencedBy('ModelAPI', 'ns', 'embed');
  index.upsert('MemoryStore', store({ summarization: { modelAPI: 'embed', model: 's' }, embedding: { modelAPI: 'chat', model: 'e2' } }));
  t.same(index.referencedBy('ModelAPI', 'ns', 'embed'), before, 'the same object again (a relist): the same answer');
  t.equal(index.distinctBindings, 3, 'and the same records, counted once each');
  index.remove('MemoryStore', store(undefined));
  t.equal(index.distinctBindings, 1, "a's alone");
});

t.test('dependents asking the same share one record; remove() forgets a dependent\'s, and the last user takes it along', async (t) => {
  const index = new DependencyIndex();
  for (const name of ['a', 'b', 'c']) index.upsert('Agent', agent(name, { modelAPI: 'chat', model: 'gpt-4o', mcpServers: ['echo'] }));
  index.upsert('Agent', agent('d', { modelAPI: 'chat', model: 'claude' }));
  t.equal(index.distinctBindings, 3, 'gpt-4o, claude, and the MCPServer role');
  const [a, b] = index.referencedBy('ModelAPI', 'ns', 'chat');
  t.same([a, b], [{ kind: 'Agent', name: 'a', role: 'modelAPI', asks: 'gpt-4o' }, { kind: 'Agent', name: 'b', role: 'modelAPI', asks: 'gpt-4o' }]);
  index.remove('Agent', agent('d', undefined));
  t.same(index.referencedBy('ModelAPI', 'ns', 'chat').map((r) => r.name), ['a', 'b', 'c']);
  t.equal(index.distinctBindings, 2, "d's model went with it");
  for (const name of ['a', 'b', 'c']) index.remove('Agent', agent(name, undefined));
  t.same(index.referencedBy('ModelAPI', 'ns', 'chat'), []);
  t.same(index.referencedBy('MCPServer', 'ns', 'echo'), []);
  t.equal(index.distinctBindings, 0);
  t.equal(index.size, 0);
  index.upsert('Agent', agent('a', { modelAPI: 'chat' }));
  t.same(index.referencedBy('ModelAPI', 'ns', 'chat'), [{ kind: 'Agent', name: 'a', role: 'modelAPI' }], 'an Agent of the same name again asks only what it asks now');
});
