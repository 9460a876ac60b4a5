// The admission thread's view of the cache (cluster/cache-view.ts), fed by cluster/cache-feed.ts
// from a real KaosCache over the fake API server: it answers every lookup as the cache itself
// does, a relist reaches it as one batch, and a batch is applied whole.
import t from 'tap';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { KaosCache } from '../../../src/cluster/cache.ts';
import { CacheLookup } from '../../../src/cluster/cache-lookup.ts';
import { feedCache, viewChange } from '../../../src/cluster/cache-feed.ts';
import { CacheView, type CacheBatch, type CacheChange } from '../../../src/cluster/cache-view.ts';
import { LookupBudget, LookupNotMade } from '../../../src/api/lookup-budget.ts';
import { KAOS_TYPES } from '../../../src/cluster/kaos-resources.ts';
import { KubeClient } from '../../../src/kube/client.ts';
import { NAMESPACE } from '../../../src/kube/paths.ts';
import { harnessRuntimesConfigMap } from '../../../src/api/harness-runtime-defaults.ts';
import { harnessRegistryFromConfigMap } from '../../../src/api/harness-runtimes.ts';
import { runtimesConfigMap } from '../../../src/api/mcp-runtime-defaults.ts';
import { registryFromConfigMap } from '../../../src/api/mcp-runtimes.ts';
import { silentLogger } from '../../../src/leaves/logger.ts';
import { FakeApiServer, status } from '../../support/fake-apiserver.ts';
import { eventually } from '../../support/poll.ts';

const { Agent: AGENT, ModelAPI: MODEL_API, MCPServer: MCP_SERVER, MemoryStore: MEMORY_STORE, AccessGrant: ACCESS_GRANT } = KAOS_TYPES;

function obj(kind: string, name: string, namespace: string, spec: unknown = {}): KubeObject {
  return { apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name, namespace }, spec };
}

interface Fixture {
  fake: FakeApiServer;
  cache: KaosCache;
  view: CacheView;
  lookup: CacheLookup;
  batches: CacheBatch[];
  feed: ReturnType<typeof feedCache>;
}

async function setup(t: { teardown(fn: () => unknown): void }, prepare: (fake: FakeApiServer) => void = () => {}): Promise<Fixture> {
  const fake = await new FakeApiServer().listen();
  for (const type of [AGENT, MODEL_API, MCP_SERVER, MEMORY_STORE, ACCESS_GRANT, NAMESPACE]) fake.serve(type);
  prepare(fake);
  const client = new KubeClient({ server: fake.url });
  const cache = new KaosCache({ client, reflector: { backoff: { initialMs: 10, maxMs: 50 } } });
  const view = new CacheView();
  const batches: CacheBatch[] = [];
  // What crosses a thread is a structured clone: the view never shares an object with the cache.
  const feed = feedCache(cache, (batch) => {
    batches.push(batch);
    view.apply(structuredClone(batch));
  });
  const lookup = new CacheLookup(view, { client, logger: silentLogger });
  t.teardown(async () => { feed.stop(); await cache.stop(); client.close(); await fake.close(); });
  return { fake, cache, view, lookup, batches, feed };
}

const world = (fake: FakeApiServer): void => {
  fake.put(NAMESPACE, { metadata: { name: 'ns', labels: { 'kaos.tools/reference-policy': 'Warn' } } });
  fake.put(MODEL_API, obj('ModelAPI', 'gpt', 'ns'));
  fake.put(MCP_SERVER, obj('MCPServer', 'echo', 'ns'));
  fake.put(MEMORY_STORE, obj('MemoryStore', 'mem', 'ns', { storage: { type: 'local' }, models: { summarization: { modelAPI: 'gpt', model: 'm' }, embedding: { modelAPI: 'gpt', model: 'e' } } }));
  fake.put(AGENT, obj('Agent', 'a', 'ns', { modelAPI: 'gpt', mcpServers: ['echo'] }));
  fake.put(AGENT, obj('Agent', 'b', 'ns', { modelAPI: 'gpt', agentNetwork: { access: ['a'] } }));
};

t.test('the view answers every lookup as the cache does, hits from memory and misses live', async (t) => {
  const { fake, cache, view, lookup } = await setup(t, world);
  cache.start();
  await cache.waitForSync();
  await eventually('the view synced', () => view.names('Agent').isSynced() && view.namespaceStore.isSynced());
  const before = fake.requests.length;
  for (const [kind, name] of [['ModelAPI', 'gpt'], ['MCPServer', 'echo'], ['MemoryStore', 'mem']] as const) {
    t.same(await lookup.get(kind, 'ns', name), await cache.get(kind, 'ns', name), `${kind} ${name}`);
    t.equal(await lookup.exists(kind, 'ns', name), true);
  }
  for (const name of ['a', 'b']) t.equal(await lookup.exists('Agent', 'ns', name), true, `Agent ${name}`);
  t.same(lookup.referencedBy('ModelAPI', 'ns', 'gpt'), cache.referencedBy('ModelAPI', 'ns', 'gpt'));
  t.same(lookup.referencedBy('ModelAPI', 'ns', 'gpt').map((r) => `${r.kind}/${r.name}`).sort(), ['Agent/a', 'Agent/b', 'MemoryStore/mem', 'MemoryStore/mem'], 'both Agents, and the store in each of its two roles');
  t.same(lookup.referencedBy('Agent', 'ns', 'a').map((r) => r.name), ['b']);
  t.same(await lookup.namespaceLabels('ns'), await cache.namespaceLabels('ns'));
  t.same(lookup.mcpRuntimes(), cache.mcpRuntimes(), 'no registry watched: the same problem');
  t.equal(fake.requests.length, before, 'hits make no request');

  t.equal(await lookup.get('ModelAPI', 'ns', 'nope'), undefined, 'a miss: 404 → absent');
  t.equal(lookup.liveReads, 1, 'one live read, as the cache makes');
  t.throws(() => { (view.kaos('ModelAPI').getByName('ns', 'gpt') as { spec: Record<string, unknown> }).spec.mode = 'x'; }, TypeError, 'objects are frozen');
  t.equal(await lookup.exists('Agent', 'ns', 'c', new LookupBudget({ maxLiveLookups: 0 })).catch((err: unknown) => err instanceof LookupNotMade), true, 'an Agent the view does not name is a miss');
});

t.test('of an Agent the view is sent its name and what it names, never its text; a status write sends nothing', async (t) => {
  const { fake, cache, view, lookup, batches } = await setup(t, world);
  cache.start();
  await cache.waitForSync();
  await eventually('the view synced', () => view.names('Agent').isSynced());
  const agentChanges = (): CacheChange[] => batches.flatMap((b) => b.changes.filter((c) => c.kind === 'Agent'));
  t.same(agentChanges().map((c) => Object.keys(c).sort()), [['kind', 'name', 'namespace', 'op', 'records'], ['kind', 'name', 'namespace', 'op', 'records']], 'no text');
  const seen = agentChanges().length;
  fake.put(AGENT, { ...obj('Agent', 'a', 'ns', { modelAPI: 'gpt', mcpServers: ['echo'] }), status: { phase: 'Ready' } });
  fake.put(AGENT, { ...obj('Agent', 'a', 'ns', { modelAPI: 'gpt', mcpServers: ['echo'] }), metadata: { name: 'a', namespace: 'ns', labels: { team: 'x' } } });
  fake.put(MODEL_API, obj('ModelAPI', 'gpt', 'ns', { mode: 'Proxy' }));
  await eventually('the ModelAPI reached the view', () => (view.kaos('ModelAPI').getByName('ns', 'gpt')?.spec as { mode?: string } | undefined)?.mode === 'Proxy');
  t.equal(agentChanges().length, seen, 'a status and a label: nothing the view keeps');
  fake.put(AGENT, obj('Agent', 'a', 'ns', { modelAPI: 'gpt' }));
  await eventually('the new record reached the view', () => lookup.referencedBy('MCPServer', 'ns', 'echo').length === 0);
  t.equal(agentChanges().length, seen + 1, 'what it names changed: one change');
  t.same(view.sizes(), { Agent: 2, ModelAPI: 1, MCPServer: 1, MemoryStore: 1, AccessGrant: 0, Namespace: 1 });
});

t.test('changes follow: create, update, delete, and the index with them', async (t) => {
  const { fake, cache, view, lookup } = await setup(t, world);
  cache.start();
  await cache.waitForSync();
  fake.put(AGENT, obj('Agent', 'c', 'ns', { modelAPI: 'other' }));
  fake.put(AGENT, obj('Agent', 'a', 'ns', { modelAPI: 'other' }));
  fake.remove(AGENT, 'ns', 'b');
  await eventually('the view caught up', () => !view.names('Agent').has('ns', 'b') && view.names('Agent').has('ns', 'c'));
  t.same(lookup.referencedBy('ModelAPI', 'ns', 'other').map((r) => r.name), ['a', 'c']);
  t.same(lookup.referencedBy('ModelAPI', 'ns', 'gpt').map((r) => r.kind), ['MemoryStore', 'MemoryStore'], 'only the store is left on gpt');
  t.same(lookup.referencedBy('Agent', 'ns', 'a'), [], "b's reference went with it");
  t.same(view.sizes(), { Agent: 2, ModelAPI: 1, MCPServer: 1, MemoryStore: 1, AccessGrant: 0, Namespace: 1 });
});

t.test('a relist reaches the view as one batch, applied whole', async (t) => {
  const { fake, cache, view, batches } = await setup(t, world);
  const first = fake.nextWatch();
  cache.start();
  await cache.waitForSync();
  await eventually('the view synced', () => view.names('Agent').isSynced());
  // Only the Agents' watch is the one under test: the first watch opened may be another kind's.
  let watch = await first;
  while (!watch.collection.endsWith('/agents')) watch = await fake.nextWatch();
  fake.manualWatches = true;
  for (let i = 0; i < 50; i++) fake.put(AGENT, obj('Agent', `new-${i}`, 'ns', { modelAPI: 'gpt' }));
  fake.remove(AGENT, 'ns', 'a');
  fake.compact(AGENT);
  fake.manualWatches = false;
  const seen = batches.length;
  watch.send('ERROR', status(410, 'Expired', 'too old resource version'));
  await eventually('relisted', () => view.names('Agent').has('ns', 'new-49'));
  const relist = batches.slice(seen).filter((b) => b.changes.some((c) => c.kind === 'Agent'));
  t.equal(relist.length, 1, 'one batch');
  t.equal(relist[0]?.changes.length, 51, '50 adds and 1 delete');
  t.equal(view.names('Agent').has('ns', 'a'), false);
});

t.test('an update replaces what readers get, though an older version was read and kept', async (t) => {
  const view = new CacheView();
  const put = (model: string): void => view.apply({ changes: [viewChange('ModelAPI', obj('ModelAPI', 'm', 'ns', { mode: 'Proxy', proxyConfig: { model } }))] });
  put('a');
  t.same((view.kaos('ModelAPI').getByName('ns', 'm')?.spec as Record<string, unknown>).proxyConfig, { model: 'a' });
  put('b');
  t.same((view.kaos('ModelAPI').getByName('ns', 'm')?.spec as Record<string, unknown>).proxyConfig, { model: 'b' });
  // More objects read than the parsed ones it keeps: every one still answers right.
  for (let i = 0; i < 600; i++) view.apply({ changes: [viewChange('MCPServer', obj('MCPServer', `s${i}`, 'ns', { type: 'python-runtime' }))] });
  for (let i = 0; i < 600; i++) t.equal(view.kaos('MCPServer').getByName('ns', `s${i}`)?.metadata?.name, `s${i}`);
  for (let i = 0; i < 600; i++) view.apply({ changes: [viewChange('Agent', obj('Agent', `a${i}`, 'ns', { modelAPI: 'm' }))] });
  t.equal(view.referencedBy('ModelAPI', 'ns', 'm').length, 600);
});

t.test('referencedBy parses no object: what each dependent asks was indexed when its batch was applied', async (t) => {
  const view = new CacheView();
  const changes = Array.from({ length: 600 }, (_, i) => viewChange('Agent', obj('Agent', `a${String(i).padStart(3, '0')}`, 'ns', { modelAPI: 'm', model: 'gpt-4o' })));
  view.apply({ changes });
  const parse = JSON.parse;
  let parses = 0;
  JSON.parse = ((...args: Parameters<typeof parse>) => {
    parses++;
    return parse(...args);
  }) as typeof JSON.parse;
  let referrers;
  try {
    referrers = view.referencedBy('ModelAPI', 'ns', 'm');
  } finally {
    JSON.parse = parse;
  }
  t.equal(parses, 0, 'no dependent read, though there are more than the parsed objects the view keeps');
  t.equal(referrers.length, 600);
  t.same(referrers[0], { kind: 'Agent', name: 'a000', role: 'modelAPI', asks: 'gpt-4o' });
  t.equal(referrers[599]?.name, 'a599', 'sorted by name');
});

t.test('a batch is applied whole, and sync flags and the registries travel with batches', async (t) => {
  const view = new CacheView();
  t.notOk(view.names('Agent').isSynced());
  view.apply({
    changes: [
      viewChange('ModelAPI', obj('ModelAPI', 'm', 'ns')),
      viewChange('Agent', obj('Agent', 'x', 'ns', { modelAPI: 'm' })),
      viewChange('Agent', obj('Agent', 'x', 'ns', { modelAPI: 'n' })),
    ],
    synced: ['Agent'],
    registries: { mcp: { problem: 'absent' } },
  });
  t.ok(view.names('Agent').isSynced());
  t.notOk(view.kaos('ModelAPI').isSynced(), 'only the stores named');
  t.same(view.referencedBy('ModelAPI', 'ns', 'm'), [], 'the later change of x wins');
  t.same(view.referencedBy('ModelAPI', 'ns', 'n').map((r) => r.name), ['x']);
  t.same(view.registry('mcp'), { problem: 'absent' });
  t.equal(view.registry('harness'), undefined, 'a registry no batch brought is not known');
  t.equal(view.kaos('ModelAPI').getByName('ns', 'm'), view.kaos('ModelAPI').getByName('ns', 'm'), 'one parse, shared by its readers');
  view.apply({ changes: [{ kind: 'Agent', op: 'delete', namespace: 'ns', name: 'x' }, { kind: 'ModelAPI', op: 'delete', namespace: 'ns', name: 'm' }] });
  t.equal(view.names('Agent').has('ns', 'x'), false, 'gone');
  t.equal(view.kaos('ModelAPI').getByName('ns', 'm'), undefined, 'gone, the parsed copy too');
  t.same(view.referencedBy('ModelAPI', 'ns', 'n'), []);
  t.same(view.registry('mcp'), { problem: 'absent' }, 'kept until a batch brings another');
  view.apply({ changes: [], registries: { harness: { problem: 'runtimes.yaml key not found in ConfigMap' } } });
  t.same(view.registry('harness'), { problem: 'runtimes.yaml key not found in ConfigMap' }, 'each registry travels on its own');
  t.same(view.registry('mcp'), { problem: 'absent' }, 'and leaves the others as they were');
});

t.test('both runtime registries reach the view as the cache reads them, and an edit of one travels alone', async (t) => {
  // The registries as controller/runtime-registry.ts attaches them (their reflectors against a real
  // API server: the e2e tests), and main.ts's flush on each change.
  const { cache, lookup, batches, feed } = await setup(t, world);
  let harness = harnessRegistryFromConfigMap(harnessRuntimesConfigMap('kaos'));
  const mcp = registryFromConfigMap(runtimesConfigMap('ops'), 'ops/kaos-mcp-runtimes');
  cache.attachRegistry('harness', () => harness);
  cache.attachRegistry('mcp', () => mcp);
  cache.start();
  await cache.waitForSync();
  feed.flush();
  t.same(lookup.harnessRuntimes(), harness, 'the harness registry, as the cache parsed it');
  t.same(lookup.mcpRuntimes(), mcp, 'the MCP registry');

  const sent = batches.length;
  harness = harnessRegistryFromConfigMap({ data: {} });
  feed.flush();
  t.same(lookup.harnessRuntimes(), { problem: 'runtimes.yaml key not found in ConfigMap' });
  t.same(batches.slice(sent).map((b) => Object.keys(b.registries ?? {})), [['harness']], 'one batch, with the harness registry alone');
  t.same(lookup.mcpRuntimes(), mcp, 'the MCP registry as it was');
  feed.flush();
  t.equal(batches.length, sent + 1, 'nothing new: no batch');
});
