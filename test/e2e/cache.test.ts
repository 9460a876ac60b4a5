// The cache against a real kube-apiserver: it follows creates, updates and deletes, keeps its
// reference index right, survives the server's watch timeouts, dropped connections and an
// apiserver restart (resuming or relisting), and a miss costs exactly one live read; it holds
// objects without managedFields or the last-applied annotation.
// Never skipped: if the control plane cannot start, this fails with the reason.
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { eventually } from '../support/poll.ts';
import type { KubeObject, Referrer } from '../../src/api/lookup.ts';
import { KaosCache, type CacheClient } from '../../src/cluster/cache.ts';
import { KubeClient, type CallOptions, type KubeList, type ListOptions, type WatchEvent, type WatchOptions } from '../../src/kube/client.ts';
import { silentLogger, type Logger } from '../../src/leaves/logger.ts';
import { CONFIG_MAP, NAMESPACE, resourcePath } from '../../src/kube/paths.ts';
import { kaosPath } from '../../src/cluster/kaos-resources.ts';
import type { ReflectorEvent } from '../../src/kube/reflector.ts';
import { startControlPlane } from '../cluster/control-plane.ts';

/** The names of the objects that name one, as the deletion warning lists them. */
const names = (referrers: readonly Referrer[]): string[] => referrers.map((r) => r.name);

const NS = 'e2e-cache';
const CRDS = fileURLToPath(new URL('../../crds/', import.meta.url));

/**
 * The real client, with a gate in front of new watches: while closed, reflectors wait there
 * instead of reconnecting, so the test can change the world behind their back.
 */
class GatedClient implements CacheClient {
  readonly inner: KubeClient;
  #open = true;
  #waiters: Array<() => void> = [];
  constructor(inner: KubeClient) {
    this.inner = inner;
  }
  close(): void {
    this.#open = false;
  }
  open(): void {
    this.#open = true;
    for (const w of this.#waiters.splice(0)) w();
  }
  get<T>(path: string, options?: CallOptions): Promise<T> {
    return this.inner.get<T>(path, options);
  }
  list<T>(path: string, options?: ListOptions): Promise<KubeList<T>> {
    return this.inner.list<T>(path, options);
  }
  async watch<T>(path: string, options: WatchOptions, onEvent: (event: WatchEvent<T>) => void, signal?: AbortSignal): Promise<void> {
    while (!this.#open) {
      await new Promise<void>((resolve, reject) => {
        this.#waiters.push(resolve);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    return this.inner.watch<T>(path, options, onEvent, signal);
  }
}

const logLines: string[] = [];
const record = (level: string) => (obj: Record<string, unknown>, msg: string): void => {
  logLines.push(`${level} ${msg} ${JSON.stringify(obj)}`);
};
const logger: Logger = { ...silentLogger, info: record('info'), warn: record('warn'), error: record('error') };

const plane = await startControlPlane({ log: (line) => t.comment(line) });
let cache: KaosCache | undefined;
let client: KubeClient | undefined;
// One teardown, in order: the cache, its connections, then the control plane. (Should the setup
// below throw, the launcher's exit handler and reaper still stop the control plane.)
t.teardown(async () => {
  await cache?.stop();
  client?.close();
  await plane.stop();
});
client = await KubeClient.fromKubeConfig(plane.kubeconfigPath);

const crds = await plane.kubectl(['apply', '-f', CRDS]);
if (crds.code !== 0) throw new Error(`installing ${CRDS} failed: ${crds.stderr}`);
const established = await plane.kubectl(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
if (established.code !== 0) throw new Error(`CRDs not established: ${established.stderr}`);
await client.create(resourcePath(NAMESPACE), { metadata: { name: NS } });

const gate = new GatedClient(client);
cache = new KaosCache({
  client: gate,
  logger,
  // Short server-side watch timeouts so that the test sees several clean reconnects.
  reflector: { watchTimeoutSeconds: 4, backoff: { initialMs: 100, maxMs: 2000 } },
});
const agentEvents: Array<ReflectorEvent<KubeObject>> = [];
cache.agents.on((e) => agentEvents.push(e));
cache.start();
await cache.waitForSync(AbortSignal.timeout(60_000));
t.teardown(() => { if (t.passing() === false) for (const line of logLines) t.comment(line); });

const modelAPI = (name: string): KubeObject => ({ apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name, namespace: NS }, spec: { mode: 'Proxy', proxyConfig: { model: 'ollama/smollm2:135m' } } });
const mcpServer = (name: string): KubeObject => ({ apiVersion: 'kaos.tools/v1alpha1', kind: 'MCPServer', metadata: { name, namespace: NS }, spec: { type: 'python-runtime', config: { tools: { fromPackage: 'mcp-server-calculator' } } } });
const agent = (name: string, spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name, namespace: NS }, spec });

t.test('synced at start with the namespaces', async (t) => {
  t.ok(cache.isSynced());
  t.ok(cache.namespaces.getByName(undefined, 'kube-system'), 'namespaces listed');
  t.ok(cache.namespaces.getByName(undefined, NS));
});

t.test('follows create, update (patch and server-side apply) and delete; the index follows', async (t) => {
  await client.create(kaosPath('ModelAPI', { namespace: NS }), modelAPI('gpt'));
  await client.create(kaosPath('MCPServer', { namespace: NS }), mcpServer('calc'));
  const created = await client.create<KubeObject>(kaosPath('Agent', { namespace: NS }), agent('a1', { modelAPI: 'gpt' }));
  await eventually('a1 in the cache', () => cache.agents.getByName(NS, 'a1'), { timeoutMs: 30_000, intervalMs: 50 });
  t.equal(cache.agents.getByName(NS, 'a1')?.metadata?.resourceVersion, created.metadata?.resourceVersion);
  t.ok(await eventually('gpt', () => cache.modelAPIs.getByName(NS, 'gpt'), { timeoutMs: 30_000, intervalMs: 50 }));
  t.same(names(cache.referencedBy('ModelAPI', NS, 'gpt')), ['a1']);

  const path = kaosPath('Agent', { namespace: NS, name: 'a1' });
  await client.patch(path, { spec: { modelAPI: 'other', mcpServers: ['calc'] } }, 'merge');
  await eventually('index moved to calc', () => names(cache.referencedBy('MCPServer', NS, 'calc')).length === 1, { timeoutMs: 30_000, intervalMs: 50 });
  t.same(names(cache.referencedBy('ModelAPI', NS, 'gpt')), []);
  t.same(names(cache.referencedBy('ModelAPI', NS, 'other')), ['a1']);
  const update = agentEvents.find((e) => e.type === 'update');
  t.equal(update?.type === 'update' ? (update.old.spec as { modelAPI: string }).modelAPI : '', 'gpt', 'update carries the old object');

  const applied = await client.apply<KubeObject>(path, { apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name: 'a1', namespace: NS, labels: { team: 'x' } } }, { fieldManager: 'e2e-test', force: true });
  await eventually('applied label', () => cache.agents.getByName(NS, 'a1')?.metadata?.labels?.team === 'x', { timeoutMs: 30_000, intervalMs: 50 });
  t.equal(cache.agents.getByName(NS, 'a1')?.metadata?.resourceVersion, applied.metadata?.resourceVersion);

  await client.delete(path);
  await eventually('a1 gone', () => cache.agents.getByName(NS, 'a1') === undefined, { timeoutMs: 30_000, intervalMs: 50 });
  t.same(names(cache.referencedBy('MCPServer', NS, 'calc')), []);
  t.equal(agentEvents.at(-1)?.type, 'delete');
});

t.test('dry-run writes reach the server but never the cache', async (t) => {
  const dry = await client.create<KubeObject>(kaosPath('ModelAPI', { namespace: NS }), modelAPI('dry'), { dryRun: true });
  t.equal(dry.metadata?.name, 'dry');
  // A watch delivers in order: once a real create made after the dry run has arrived, the dry
  // run would have arrived before it, had it reached the watch at all.
  const marker = kaosPath('ModelAPI', { namespace: NS, name: 'after-dry' });
  await client.create(kaosPath('ModelAPI', { namespace: NS }), modelAPI('after-dry'));
  await eventually('a create made after the dry run to reach the cache', () => cache.modelAPIs.getByName(NS, 'after-dry'), { timeoutMs: 30_000, intervalMs: 50 });
  t.equal(cache.modelAPIs.getByName(NS, 'dry'), undefined);
  t.equal(await cache.get('ModelAPI', NS, 'dry'), undefined, 'and a live read agrees');
  await client.delete(marker);
  await eventually('the marker gone from the cache', () => cache.modelAPIs.getByName(NS, 'after-dry') === undefined, { timeoutMs: 30_000, intervalMs: 50 });
});

t.test('namespace labels come from the cache', async (t) => {
  const labelled = await plane.kubectl(['label', 'ns', NS, 'kaos.tools/reference-policy=Warn']);
  t.equal(labelled.code, 0, labelled.stderr);
  await eventually('label in the cache', () => cache.namespaces.getByName(undefined, NS)?.metadata?.labels?.['kaos.tools/reference-policy'], { timeoutMs: 30_000, intervalMs: 50 });
  const reads = cache.liveReads;
  t.equal((await cache.namespaceLabels(NS))?.['kaos.tools/reference-policy'], 'Warn');
  t.equal(cache.liveReads, reads, 'no live read');
});

t.test('server-side watch timeouts are normal: watches reconnect from the last resourceVersion', async (t) => {
  const before = cache.agents.stats;
  await eventually('two more watches', () => cache.agents.stats.watches >= before.watches + 2, { timeoutMs: 30_000, intervalMs: 50 });
  const after = cache.agents.stats;
  t.equal(after.lists, before.lists, 'no relist');
  t.equal(after.errors, before.errors, 'no error');
  await client.create(kaosPath('Agent', { namespace: NS }), agent('a2', { modelAPI: 'gpt' }));
  await eventually('a2 after reconnects', () => cache.agents.getByName(NS, 'a2'), { timeoutMs: 30_000, intervalMs: 50 });
  t.same(names(cache.referencedBy('ModelAPI', NS, 'gpt')), ['a2']);
});

t.test('a dropped connection: back off, resume, nothing missed', async (t) => {
  const before = cache.modelAPIs.stats;
  gate.close();
  t.ok(client.dropWatchConnections() >= 4, 'every reflector had a watch open');
  // Changes while no watch is open must arrive after the reconnect.
  await client.create(kaosPath('ModelAPI', { namespace: NS }), modelAPI('while-down'));
  await client.delete(kaosPath('ModelAPI', { namespace: NS, name: 'other' })).catch(() => undefined);
  await client.delete(kaosPath('ModelAPI', { namespace: NS, name: 'gpt' }));
  await new Promise((r) => setTimeout(r, 300));
  t.ok(cache.modelAPIs.getByName(NS, 'gpt'), 'still the old view while disconnected');

  // A miss while the watch lags: exactly one live read, which sees the truth.
  const reads = cache.liveReads;
  t.equal((await cache.get('ModelAPI', NS, 'while-down'))?.metadata?.name, 'while-down');
  t.equal(cache.liveReads, reads + 1, 'one live read for the miss');
  t.equal(await cache.get('ModelAPI', NS, 'never-existed'), undefined, '404 → absent');
  t.equal(cache.liveReads, reads + 2);

  gate.open();
  await eventually('caught up', () => cache.modelAPIs.getByName(NS, 'while-down') && cache.modelAPIs.getByName(NS, 'gpt') === undefined, { timeoutMs: 30_000, intervalMs: 50 });
  const after = cache.modelAPIs.stats;
  t.ok(after.errors >= before.errors + 1, 'the drop was an error');
  t.equal(after.lists, before.lists, 'resumed from the resourceVersion, no relist');
});

t.test('an apiserver restart: reflectors back off while it is down and catch up after', async (t) => {
  const before = { ...cache.modelAPIs.stats };
  const started = Date.now();
  await plane.restartApiServer();
  t.comment(`apiserver restarted in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await client.create(kaosPath('ModelAPI', { namespace: NS }), modelAPI('after-restart'));
  await eventually('after-restart in the cache', () => cache.modelAPIs.getByName(NS, 'after-restart'), { timeoutMs: 60_000, intervalMs: 50 });
  const after = cache.modelAPIs.stats;
  t.comment(`modelapis reflector: ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
  t.ok(after.errors + after.relists > before.errors + before.relists, 'the restart was noticed');
  t.ok(cache.isSynced());
});

t.test('a resourceVersion the restarted server no longer has: 410, relist, differences emitted', async (t) => {
  const before = { ...cache.agents.stats };
  const seen: string[] = [];
  const off = cache.agents.on((e) => seen.push(`${e.type} ${e.object.metadata?.name}`));
  t.teardown(off);
  gate.close();
  client.dropWatchConnections();
  // Behind the reflector's back: the server restarts (its watch cache starts over from now) and
  // the world changes; the reflector then asks to resume from a resourceVersion that is gone.
  await plane.restartApiServer();
  await client.delete(kaosPath('Agent', { namespace: NS, name: 'a2' }));
  await client.create(kaosPath('Agent', { namespace: NS }), agent('a3', { modelAPI: 'while-down' }));
  await client.create(resourcePath(CONFIG_MAP, { namespace: NS }), { metadata: { name: 'bump' } });
  gate.open();
  await eventually('agents caught up', () => cache.agents.getByName(NS, 'a3') && cache.agents.getByName(NS, 'a2') === undefined, { timeoutMs: 60_000, intervalMs: 50 });
  const after = cache.agents.stats;
  t.comment(`agents reflector: ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
  t.ok(after.relists >= before.relists + 1, '410 Gone led to a relist');
  t.same(seen.sort(), ['add a3', 'delete a2'], 'the relist emitted exactly the differences');
  t.same(names(cache.referencedBy('ModelAPI', NS, 'while-down')), ['a3']);
  t.same(names(cache.referencedBy('ModelAPI', NS, 'gpt')), []);
});

t.test('objects are held slim: no managedFields, no last-applied-configuration, though the server has both', async (t) => {
  // `kubectl apply` (client-side) writes the last-applied annotation; every write records managedFields.
  const manifest = { ...modelAPI('slim'), metadata: { name: 'slim', namespace: NS, annotations: { team: 'x' } } };
  const applied = await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(manifest) });
  t.equal(applied.code, 0, applied.stderr);
  const stored = await client.get<KubeObject>(kaosPath('ModelAPI', { namespace: NS, name: 'slim' }));
  t.ok(Array.isArray(stored.metadata?.managedFields) && stored.metadata.managedFields.length > 0, 'the server keeps managedFields');
  t.ok(stored.metadata?.annotations?.['kubectl.kubernetes.io/last-applied-configuration'], 'and the last-applied annotation');
  const held = await eventually('slim in the cache', () => cache.modelAPIs.getByName(NS, 'slim'), { timeoutMs: 30_000, intervalMs: 50 });
  t.equal(held.metadata?.managedFields, undefined, 'the cache holds no managedFields');
  t.same(held.metadata?.annotations, { team: 'x' }, 'nor the last-applied annotation; other annotations stay');
  t.same(held.spec, stored.spec, 'the spec is whole');
  t.equal(held.metadata?.resourceVersion, stored.metadata?.resourceVersion);
  await client.delete(kaosPath('ModelAPI', { namespace: NS, name: 'slim' }));
});
