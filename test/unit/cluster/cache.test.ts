import t from 'tap';
import type { KubeObject, Referrer } from '../../../src/api/lookup.ts';
import { KaosCache } from '../../../src/cluster/cache.ts';
import { KubeClient } from '../../../src/kube/client.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import { DEPLOYMENT, NAMESPACE } from '../../../src/kube/paths.ts';
import { KAOS_TYPES } from '../../../src/cluster/kaos-resources.ts';
import { FakeApiServer, status } from '../../support/fake-apiserver.ts';
import { eventually } from '../../support/poll.ts';
import { admissionRequest } from '../../support/admission-request.ts';
import { LookupBudget, LookupNotMade } from '../../../src/api/lookup-budget.ts';
import { createValidatingHandler } from '../../../src/admission/validate.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { freePorts } from '../../cluster/control-plane.ts';

/** The names of the objects that name one, as the deletion warning lists them. */
const names = (referrers: readonly Referrer[]): string[] => referrers.map((r) => r.name);

const { Agent: AGENT, ModelAPI: MODEL_API, MCPServer: MCP_SERVER, MemoryStore: MEMORY_STORE } = KAOS_TYPES;

function obj(kind: string, name: string, namespace: string, spec: unknown = {}): KubeObject {
  return { apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name, namespace }, spec };
}

async function setup(t: { teardown(fn: () => unknown): void }, prepare: (fake: FakeApiServer) => void = () => {}): Promise<{ fake: FakeApiServer; cache: KaosCache }> {
  const fake = await new FakeApiServer().listen();
  for (const type of [...Object.values(KAOS_TYPES), NAMESPACE, DEPLOYMENT]) fake.serve(type);
  prepare(fake);
  const client = new KubeClient({ server: fake.url });
  const cache = new KaosCache({ client, reflector: { backoff: { initialMs: 10, maxMs: 50 } } });
  t.teardown(async () => { await cache.stop(); client.close(); await fake.close(); });
  return { fake, cache };
}

t.test('synced cache answers from memory; a miss makes exactly one live read', async (t) => {
  const { fake, cache } = await setup(t, (fake) => {
    fake.put(NAMESPACE, { metadata: { name: 'ns', labels: { 'kaos.tools/reference-policy': 'Warn' } } });
    fake.put(MODEL_API, obj('ModelAPI', 'gpt', 'ns'));
  });
  cache.start();
  await cache.waitForSync();
  t.ok(cache.isSynced());
  const before = fake.requests.length;
  t.equal((await cache.get('ModelAPI', 'ns', 'gpt'))?.metadata?.name, 'gpt');
  t.equal(await cache.exists('ModelAPI', 'ns', 'gpt'), true);
  t.same(await cache.namespaceLabels('ns'), { 'kaos.tools/reference-policy': 'Warn' });
  t.equal(fake.requests.length, before, 'hits make no request');
  t.equal(cache.liveReads, 0);

  t.equal(await cache.get('ModelAPI', 'ns', 'nope'), undefined, '404 → undefined');
  t.equal(cache.liveReads, 1);
  t.same(fake.requests.filter((r) => r.path.endsWith('/nope')).map((r) => r.path), ['/apis/kaos.tools/v1alpha1/namespaces/ns/modelapis/nope']);
  t.equal(await cache.namespaceLabels('ghost'), undefined);
  t.equal(cache.liveReads, 2);
});

t.test('a miss finds an object the watch has not delivered yet', async (t) => {
  const { fake, cache } = await setup(t);
  cache.start();
  await cache.waitForSync();
  fake.manualWatches = true; // the watch stays silent
  fake.put(MCP_SERVER, obj('MCPServer', 'echo', 'ns'));
  t.equal((await cache.get('MCPServer', 'ns', 'echo'))?.metadata?.name, 'echo');
  t.equal(cache.liveReads, 1);
});

t.test('before sync every lookup is one live read; errors other than 404 propagate', async (t) => {
  const { fake, cache } = await setup(t, (fake) => {
    fake.put(AGENT, obj('Agent', 'a', 'ns'));
    fake.put(MODEL_API, obj('ModelAPI', 'm', 'ns'));
    fake.put(NAMESPACE, { metadata: { name: 'ns' } });
  });
  // Not started: nothing is synced.
  t.notOk(cache.isSynced());
  t.equal((await cache.get('ModelAPI', 'ns', 'm'))?.metadata?.name, 'm');
  t.equal(await cache.exists('Agent', 'ns', 'a'), true);
  t.equal(await cache.exists('Agent', 'ns', 'b'), false, '404: absent');
  t.same(await cache.namespaceLabels('ns'), {}, 'a namespace without labels');
  t.equal(cache.liveReads, 4);
  fake.failNext(() => true, 500, status(500, 'InternalError', 'etcd is sad'));
  await t.rejects(cache.exists('Agent', 'ns', 'a'), ApiError);
  t.equal(await cache.get('ModelAPI', '', 'm'), undefined, 'no namespace: nothing to read');
  t.equal(await cache.exists('Agent', '', 'a'), false);
});

t.test('an admission lookup the API server does not answer is unknown, not an error; a refusal stays one', async (t) => {
  const { fake, cache } = await setup(t);
  // Not started: every lookup is a live read.
  fake.failNext(() => true, 503, status(503, 'ServiceUnavailable', 'apiserver is shutting down'));
  await t.rejects(cache.get('ModelAPI', 'ns', 'm', new LookupBudget()), new LookupNotMade('unavailable', new LookupBudget(), '503 ServiceUnavailable'));
  fake.failNext(() => true, 403, status(403, 'Forbidden', 'no'));
  await t.rejects(cache.get('ModelAPI', 'ns', 'm', new LookupBudget()), { name: 'ApiError', code: 403 }, 'the operator\'s own misconfiguration: an error');
  fake.failNext(() => true, 503, status(503, 'ServiceUnavailable', 'apiserver is shutting down'));
  await t.rejects(cache.get('ModelAPI', 'ns', 'm'), { name: 'ApiError', code: 503 }, 'without a budget (not admission) the error is the caller\'s');

  // Nothing listening at all: a network error.
  const [port] = await freePorts(1);
  const client = new KubeClient({ server: `http://127.0.0.1:${port ?? 1}` });
  const down = new KaosCache({ client });
  t.teardown(() => client.close());
  await t.rejects(down.get('MCPServer', 'ns', 's', new LookupBudget()), { name: 'LookupNotMade', reason: 'unavailable', message: 'not checked: the API server did not answer its lookup (ECONNREFUSED)' });
});

t.test('through the validating webhook: a dependency whose lookup finds the API server away is a documented denial, not a 500', async (t) => {
  const [port] = await freePorts(1);
  const client = new KubeClient({ server: `http://127.0.0.1:${port ?? 1}` });
  t.teardown(() => client.close());
  const handler = createValidatingHandler('Agent', { lookup: new KaosCache({ client }), config: loadConfig({}) });
  const decision = await handler(admissionRequest('Agent', obj('Agent', 'a', 'ns', { modelAPI: 'm' })));
  t.equal(decision.allowed, false);
  t.equal(decision.status?.code, 422, 'Invalid, as for a dependency the budget did not allow');
  t.same(decision.status?.details?.causes, [{ reason: 'FieldValueNotFound', field: 'spec.modelAPI', message: 'Not found: "m": not checked: the API server did not answer its lookup (ECONNREFUSED)' }]);
  const warned = await createValidatingHandler('Agent', { lookup: new KaosCache({ client }), config: loadConfig({ REFERENCE_POLICY: 'Warn' }) })(admissionRequest('Agent', obj('Agent', 'a', 'ns', { modelAPI: 'm' })));
  t.equal(warned.allowed, true, 'under the reference policy Warn, admitted');
  t.match(warned.warnings, [/spec\.modelAPI: Not found: "m": not checked: the API server did not answer its lookup/]);
});

t.test('referencedBy follows Agent events incrementally', async (t) => {
  const { fake, cache } = await setup(t, (fake) => {
    fake.put(AGENT, obj('Agent', 'a', 'ns', { modelAPI: 'gpt', mcpServers: ['echo'] }));
  });
  cache.start();
  await cache.waitForSync();
  t.same(names(cache.referencedBy('ModelAPI', 'ns', 'gpt')), ['a']);
  fake.put(AGENT, obj('Agent', 'b', 'ns', { modelAPI: 'gpt', agentNetwork: { access: ['a'] } }));
  await eventually('two Agents referencing ModelAPI gpt', () => names(cache.referencedBy('ModelAPI', 'ns', 'gpt')).length === 2);
  t.same(names(cache.referencedBy('Agent', 'ns', 'a')), ['b']);
  fake.put(AGENT, obj('Agent', 'a', 'ns', { modelAPI: 'other' }));
  await eventually('no Agent referencing MCPServer echo', () => names(cache.referencedBy('MCPServer', 'ns', 'echo')).length === 0);
  t.same(names(cache.referencedBy('ModelAPI', 'ns', 'gpt')), ['b']);
  t.same(names(cache.referencedBy('ModelAPI', 'ns', 'other')), ['a']);
  fake.remove(AGENT, 'ns', 'b');
  await eventually('no Agent referencing ModelAPI gpt', () => names(cache.referencedBy('ModelAPI', 'ns', 'gpt')).length === 0);
  t.same(names(cache.referencedBy('Agent', 'ns', 'a')), []);
});

t.test('referencedBy names the MemoryStores that bind a ModelAPI beside its Agents, with the models they ask for', async (t) => {
  const models = (summarization: string, embedding: string) => ({ summarization: { modelAPI: 'chat', model: summarization }, embedding: { modelAPI: 'chat', model: embedding } });
  const { fake, cache } = await setup(t, (fake) => {
    fake.put(AGENT, obj('Agent', 'a', 'ns', { modelAPI: 'chat', model: 'gpt-4o' }));
    fake.put(MEMORY_STORE, obj('MemoryStore', 'notes', 'ns', { storage: { type: 'local' }, models: models('gpt-4o-mini', 'text-embedding-3-small') }));
  });
  cache.start();
  await cache.waitForSync();
  t.same(cache.referencedBy('ModelAPI', 'ns', 'chat'), [
    { kind: 'Agent', name: 'a', role: 'modelAPI', asks: 'gpt-4o' },
    { kind: 'MemoryStore', name: 'notes', role: 'summarizationModelAPI', asks: 'gpt-4o-mini' },
    { kind: 'MemoryStore', name: 'notes', role: 'embeddingModelAPI', asks: 'text-embedding-3-small' },
  ]);
  fake.put(MEMORY_STORE, obj('MemoryStore', 'notes', 'ns', { storage: { type: 'local' }, models: models('gpt-4o-mini', 'nomic-embed-text') }));
  await eventually('the store\'s new embedding model', () => cache.referencedBy('ModelAPI', 'ns', 'chat').some((r) => r.asks === 'nomic-embed-text'));
  fake.remove(MEMORY_STORE, 'ns', 'notes');
  await eventually('the store gone from the index', () => names(cache.referencedBy('ModelAPI', 'ns', 'chat')).join() === 'a');
});

t.test('the index stays right across a relist (deletes missed while the watch was down)', async (t) => {
  const { fake, cache } = await setup(t, (fake) => {
    fake.put(AGENT, obj('Agent', 'a', 'ns', { modelAPI: 'gpt' }));
  });
  cache.start();
  await cache.waitForSync();
  await eventually('agents watch', () => fake.watches.some((w) => w.collection.endsWith('/agents')));
  const agentWatch = fake.watches.find((w) => w.collection.endsWith('/agents'));
  fake.manualWatches = true;
  fake.remove(AGENT, 'ns', 'a');
  fake.put(AGENT, obj('Agent', 'c', 'ns', { modelAPI: 'gpt' }));
  fake.compact(AGENT);
  fake.manualWatches = false;
  agentWatch?.send('ERROR', status(410, 'Expired', 'too old'));
  await eventually('index after relist', () => names(cache.referencedBy('ModelAPI', 'ns', 'gpt')).join() === 'c');
  t.equal(cache.agents.stats.relists, 1);
});

t.test('register() adds a child type: part of sync, started if the cache runs', async (t) => {
  const { fake, cache } = await setup(t, (fake) => {
    fake.put(DEPLOYMENT, { metadata: { name: 'agent-a', namespace: 'ns', labels: { 'app.kubernetes.io/managed-by': 'kaos-operator' } } });
  });
  cache.start();
  await cache.waitForSync();
  const deployments = cache.register(DEPLOYMENT, { labelSelector: 'app.kubernetes.io/managed-by=kaos-operator' });
  t.notOk(cache.isSynced(), 'a new reflector must sync first');
  await cache.waitForSync();
  t.equal(deployments.getByName('ns', 'agent-a')?.kind, 'Deployment');
  t.equal(fake.listRequests(DEPLOYMENT)[0]?.query.get('labelSelector'), 'app.kubernetes.io/managed-by=kaos-operator');
});

t.test('waitForSync rejects when the signal aborts first', async (t) => {
  const { fake, cache } = await setup(t);
  for (let i = 0; i < 1000; i++) fake.failNext((r) => r.path.endsWith('/agents'), 403, status(403, 'Forbidden', 'no RBAC'));
  cache.start();
  await t.rejects(cache.waitForSync(AbortSignal.timeout(100)));
  t.notOk(cache.isSynced());
});

t.test('waitForSync waits for a reflector registered while it waits, as an optional API\'s is once its CRD is seen', async (t) => {
  const { fake, cache } = await setup(t, (fake) => { fake.put(AGENT, obj('Agent', 'a', 'ns')); });
  // The late reflector's first list fails: it syncs only after its backoff.
  fake.failNext((req) => req.path.startsWith('/apis/apps/v1/deployments'), 500, status(500, 'InternalError', 'not yet'));
  let late: { isSynced(): boolean } | undefined;
  cache.agents.on(() => { late ??= cache.register(DEPLOYMENT); });
  cache.start();
  await cache.waitForSync();
  t.ok(late, 'registered while the cache synced');
  t.equal(late?.isSynced(), true, 'synced by the time waitForSync resolves');
  t.ok(cache.isSynced());
});
