import t from 'tap';
import type { KubeObject } from '../../../src/api/lookup.ts';
import type { KaosKind } from '../../../src/api/kinds.ts';
import { DependencyIndex } from '../../../src/cluster/dependency-index.ts';
import { KIND_TABLE, dependenciesOf } from '../../../src/cluster/kind-table.ts';
import { refKey } from '../../../src/cluster/object-ref.ts';

/** An Agent's references as the kind table states them: its ModelAPI, MCPServers and peers. */
const agentReferences = (agent: KubeObject) => dependenciesOf('Agent', agent, KIND_TABLE).map(({ kind, name }) => ({ kind, name }));

/** The index over objects it can read back, as the cache holds them: what referencedBy reads. */
class Indexed {
  readonly index = new DependencyIndex();
  readonly #objects = new Map<string, KubeObject>();

  upsert(kind: KaosKind, object: KubeObject): void {
    this.#objects.set(refKey(kind, object.metadata?.namespace ?? '', object.metadata?.name ?? ''), object);
    this.index.upsert(kind, object);
  }

  remove(kind: KaosKind, object: KubeObject): void {
    this.#objects.delete(refKey(kind, object.metadata?.namespace ?? '', object.metadata?.name ?? ''));
    this.index.remove(kind, object);
  }

  referencedBy(kind: KaosKind, namespace: string, name: string) {
    return this.index.referencedBy(kind, namespace, name, (k, ns, n) => this.#objects.get(refKey(k, ns, n)));
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

  const read = new Map<string, KubeObject>();
  t.same(idx.index.referencedBy('ModelAPI', 'ns', 'chat', (k, ns, n) => read.get(refKey(k, ns, n))), [], 'an object the reader no longer holds is left out');
});
