// The controller's wiring with a real cache over the fake API server (a unit: the e2e
// controller-smoke test proves it against kube-apiserver): cache events → keys → queues →
// reconcilers, the first list enqueued, Secret events through the Secret index, stop.
import t from 'tap';
import type { KubeObject } from '../../../src/api/lookup.ts';
import type { KaosKind } from '../../../src/api/kinds.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { Controller, resyncDelay } from '../../../src/controller/controller.ts';
import type { KindReconciler } from '../../../src/controller/reconcile/context.ts';
import { registerControllerWatches } from '../../../src/controller/watches.ts';
import { KaosCache } from '../../../src/cluster/cache.ts';
import { KubeClient, METADATA_LIST_ACCEPT, METADATA_WATCH_ACCEPT } from '../../../src/kube/client.ts';
import { CONFIG_MAP, CUSTOM_RESOURCE_DEFINITION, DEPLOYMENT, NAMESPACE, SECRET } from '../../../src/kube/paths.ts';
import { KAOS_TYPES } from '../../../src/cluster/kaos-resources.ts';
import { CHILD_TYPES } from '../../../src/cluster/child-apply.ts';
import { createRegistry } from '../../../src/leaves/prometheus.ts';
import { silentLogger } from '../../../src/leaves/logger.ts';
import { FakeApiServer } from '../../support/fake-apiserver.ts';
import { eventually } from '../../support/poll.ts';

const kaos = (kind: string, name: string, spec: unknown): KubeObject => ({ apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name, namespace: 'ns', uid: `uid-${name}` }, spec });

t.test('cache events wake the right keys; the first list enqueues everything; stop ends reconciling', async (t) => {
  const fake = await new FakeApiServer().listen();
  for (const type of [...Object.values(KAOS_TYPES), NAMESPACE, ...Object.values(CHILD_TYPES), SECRET, CUSTOM_RESOURCE_DEFINITION]) fake.serve(type);
  fake.put(KAOS_TYPES.ModelAPI, kaos('ModelAPI', 'm', { mode: 'Proxy', proxyConfig: { configYaml: { fromSecretKeyRef: { name: 's', key: 'k' } }, apiKey: { valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } } } }));
  // Not owned (no managed-by label): only the metadata-only dependency reflector sees it.
  fake.put(CONFIG_MAP, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"k":"key"}}' } }, data: { k: 'key' } });
  fake.put(KAOS_TYPES.MCPServer, kaos('MCPServer', 'x', { type: 'python-runtime', config: { tools: { fromString: 'def f(): pass' } } }));
  fake.put(KAOS_TYPES.Agent, kaos('Agent', 'a', { modelAPI: 'm', mcpServers: ['x'] }));
  fake.put(SECRET, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"k":"c2VjcmV0"}}' } }, data: { k: 'c2VjcmV0' } });
  const owned = (name: string, owner: string, kind = 'Agent') => ({
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name, namespace: 'ns', labels: { 'app.kubernetes.io/managed-by': 'kaos-operator' }, ownerReferences: [{ apiVersion: 'kaos.tools/v1alpha1', kind, name: owner, uid: `uid-${owner}`, controller: true }] },
    spec: { replicas: 1 },
  });
  fake.put(DEPLOYMENT, owned('agent-a', 'a'));

  const client = new KubeClient({ server: fake.url });
  const cache = new KaosCache({ client, reflector: { backoff: { initialMs: 10, maxMs: 50 } } });
  const watches = registerControllerWatches(cache, { httpRoutes: false });
  const reconciled: string[] = [];
  const record: KindReconciler = async (_ctx, key) => { reconciled.push(`${key.kind}/${key.name}`); };
  const reconcilers: Record<KaosKind, KindReconciler> = { Agent: record, ModelAPI: record, MCPServer: record, MemoryStore: record, AccessGrant: record };
  const registry = createRegistry({ defaultMetrics: false });
  const controller = new Controller({ cache, watches, client, config: loadConfig({ LEADER_ELECT: 'false' }), registry, logger: silentLogger, reconcilers });
  t.teardown(async () => { await controller.stop(); await cache.stop(); client.close(); await fake.close(); });

  cache.start();
  controller.start();
  await eventually('the first list reconciled', () => reconciled.length >= 3, { timeoutMs: 5000 });
  t.same([...reconciled].sort(), ['Agent/a', 'MCPServer/x', 'ModelAPI/m'], 'every object once, after the first list');
  t.ok(controller.isLeading(), 'without leader election it reconciles at once');

  // The Secret watch is metadata-only, and what is kept is its identity and resourceVersion.
  t.ok(fake.listRequests(SECRET).every((r) => r.headers.accept === METADATA_LIST_ACCEPT), 'Secrets listed as PartialObjectMetadataList');
  t.ok(fake.watchRequests(SECRET).every((r) => r.headers.accept === METADATA_WATCH_ACCEPT), 'and watched as PartialObjectMetadata');
  t.ok(fake.listRequests(DEPLOYMENT).every((r) => r.query.get('labelSelector') === 'app.kubernetes.io/managed-by=kaos-operator'), 'children selected by the managed-by label');
  const cachedSecret = watches.dependencies.Secret.getByName('ns', 's');
  t.same(Object.keys(cachedSecret ?? {}).sort(), ['apiVersion', 'kind', 'metadata'], 'no data kept');
  t.same(Object.keys(cachedSecret?.metadata ?? {}).sort(), ['name', 'namespace', 'resourceVersion'], 'no annotations (they can carry the data)');
  // ConfigMaps: two reflectors, the owned ones by label (whole), every one as metadata only.
  const configMapLists = fake.listRequests(CONFIG_MAP);
  t.ok(configMapLists.some((r) => r.query.get('labelSelector') === 'app.kubernetes.io/managed-by=kaos-operator' && r.headers.accept !== METADATA_LIST_ACCEPT), 'owned ConfigMaps listed whole, by label');
  t.ok(configMapLists.some((r) => r.query.get('labelSelector') === null && r.headers.accept === METADATA_LIST_ACCEPT), 'every ConfigMap listed as PartialObjectMetadataList');
  const cachedConfigMap = watches.dependencies.ConfigMap.getByName('ns', 'cm');
  t.same(Object.keys(cachedConfigMap ?? {}).sort(), ['apiVersion', 'kind', 'metadata'], 'no ConfigMap data kept');
  t.same(Object.keys(cachedConfigMap?.metadata ?? {}).sort(), ['name', 'namespace', 'resourceVersion'], 'nor its annotations');

  const next = async (what: string, change: () => void, expected: string[]): Promise<void> => {
    reconciled.length = 0;
    change();
    await eventually(what, () => reconciled.length >= expected.length, { timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 100)); // nothing more arrives
    t.same([...reconciled].sort(), expected, what);
  };
  await next('a Secret change wakes the ModelAPI that reads it', () => fake.put(SECRET, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' }, data: { k: 'bmV3' } }), ['ModelAPI/m']);
  await next('a ConfigMap change wakes the ModelAPI whose API key it holds', () => fake.put(CONFIG_MAP, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns' }, data: { k: 'new' } }), ['ModelAPI/m']);
  await next('an owned child wakes its controller owner', () => fake.put(DEPLOYMENT, { ...owned('agent-a', 'a'), spec: { replicas: 2 } }), ['Agent/a']);
  await next('a dependency wakes itself and the Agents using it', () => fake.put(KAOS_TYPES.MCPServer, kaos('MCPServer', 'x', { type: 'python-runtime', config: { tools: { fromString: 'changed' } } })), ['Agent/a', 'MCPServer/x']);
  await next('a ModelAPI that no longer reads the Secret is not woken by it', () => {
    fake.put(KAOS_TYPES.ModelAPI, kaos('ModelAPI', 'm', { mode: 'Hosted', hostedConfig: { model: 'x' } }));
  }, ['Agent/a', 'ModelAPI/m']);
  await next('(the Secret and the ConfigMap then wake no one)', () => {
    fake.put(SECRET, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' } });
    fake.put(CONFIG_MAP, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns' } });
    fake.put(KAOS_TYPES.MCPServer, kaos('MCPServer', 'x', { type: 'python-runtime', config: { tools: { fromString: 'again' } } }));
  }, ['Agent/a', 'MCPServer/x']);

  const metrics = await registry.metrics();
  t.match(metrics, /controller_runtime_reconcile_total\{controller="agent",result="success"\} [1-9]/, 'controller-runtime metrics on the process registry');
  t.notMatch(metrics, /leader_election_master_status/, 'no Lease metric without leader election');

  await controller.stop();
  t.notOk(controller.isLeading());
  reconciled.length = 0;
  fake.put(KAOS_TYPES.Agent, kaos('Agent', 'a', { modelAPI: 'm' }));
  await new Promise((r) => setTimeout(r, 200));
  t.same(reconciled, [], 'nothing is reconciled after stop');
});

t.test('WATCH_NAMESPACES: one reflector per namespace and type; lookups elsewhere are misses read live', async (t) => {
  const fake = await new FakeApiServer().listen();
  for (const type of [...Object.values(KAOS_TYPES), NAMESPACE]) fake.serve(type);
  fake.put(KAOS_TYPES.ModelAPI, { ...kaos('ModelAPI', 'gpt', {}), metadata: { name: 'gpt', namespace: 'elsewhere' } });
  const client = new KubeClient({ server: fake.url });
  const cache = new KaosCache({ client, namespaces: ['a', 'b'], reflector: { backoff: { initialMs: 50, maxMs: 100 } } });
  const watches = registerControllerWatches(cache, { httpRoutes: false });
  t.teardown(async () => { await cache.stop(); client.close(); await fake.close(); });
  cache.start();
  await eventually('lists', () => fake.requests.some((r) => r.path === '/api/v1/namespaces/b/secrets'), { timeoutMs: 5000 });
  const listed = new Set(fake.requests.filter((r) => r.query.get('watch') === null).map((r) => r.path));
  for (const ns of ['a', 'b']) {
    for (const path of [`/apis/kaos.tools/v1alpha1/namespaces/${ns}/agents`, `/apis/apps/v1/namespaces/${ns}/deployments`, `/api/v1/namespaces/${ns}/secrets`]) {
      t.ok(listed.has(path), `lists ${path}`);
    }
  }
  t.notOk(listed.has('/apis/kaos.tools/v1alpha1/agents'), 'never all namespaces');
  t.ok(listed.has('/api/v1/namespaces'), 'Namespaces are watched whole');
  t.equal(watches.dependencies.Secret.covers('c'), false);
  t.equal((await cache.get('ModelAPI', 'elsewhere', 'gpt'))?.metadata?.name, 'gpt', 'an unwatched namespace: read live');
  t.equal(cache.liveReads, 1);
});

t.test('the periodic resync: every cached object is reconciled again each RESYNC_PERIOD_SECONDS ± 10 %', async (t) => {
  t.same([0, 0.5, 0.999999].map((r) => resyncDelay(36_000_000, r)), [32_400_000, 36_000_000, 39_599_993], '10 h ± 10 %');
  t.equal(loadConfig({}).controller.resyncPeriodSeconds, 36_000, 'default 10 h');

  const fake = await new FakeApiServer().listen();
  for (const type of [...Object.values(KAOS_TYPES), NAMESPACE, ...Object.values(CHILD_TYPES), SECRET, CUSTOM_RESOURCE_DEFINITION]) fake.serve(type);
  fake.put(KAOS_TYPES.ModelAPI, kaos('ModelAPI', 'm', { mode: 'Hosted', hostedConfig: { model: 'x' } }));
  fake.put(KAOS_TYPES.Agent, kaos('Agent', 'a', { modelAPI: 'm' }));
  const client = new KubeClient({ server: fake.url });
  const cache = new KaosCache({ client, reflector: { backoff: { initialMs: 10, maxMs: 50 } } });
  const watches = registerControllerWatches(cache, { httpRoutes: false });
  const runs = new Map<string, number>();
  const record: KindReconciler = async (_ctx, key) => { runs.set(`${key.kind}/${key.name}`, (runs.get(`${key.kind}/${key.name}`) ?? 0) + 1); };
  const reconcilers: Record<KaosKind, KindReconciler> = { Agent: record, ModelAPI: record, MCPServer: record, MemoryStore: record, AccessGrant: record };
  const config = loadConfig({ LEADER_ELECT: 'false', RESYNC_PERIOD_SECONDS: '1' });
  const controller = new Controller({ cache, watches, client, config, registry: createRegistry({ defaultMetrics: false }), logger: silentLogger, reconcilers });
  t.teardown(async () => { await controller.stop(); await cache.stop(); client.close(); await fake.close(); });
  cache.start();
  controller.start();
  await eventually('every object reconciled three times (the first list, then two resyncs) with no event', () => (runs.get('Agent/a') ?? 0) >= 3 && (runs.get('ModelAPI/m') ?? 0) >= 3, { timeoutMs: 15_000 });
  t.same([...runs.keys()].sort(), ['Agent/a', 'ModelAPI/m'], 'only cached objects');
  await controller.stop();
  const after = new Map(runs);
  await new Promise((r) => setTimeout(r, 1500)); // longer than a period: a stopped controller resyncs nothing
  t.same(runs, after, 'no resync after stop');
});
