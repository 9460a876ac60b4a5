// The MemoryStore reconciler (docs/api.md, "MemoryStore") and what it means for the Agents bound to
// it (docs/api.md, "Agent remote memory"), against the in-memory context: waits on its ModelAPIs
// without creating anything, children per storage mode and replicas, replicas and size changes
// applied, KAOS's messages; an Agent waits for its store only at first creation, degrades and
// recovers without a new pod spec, and fails on a read scope above the ceiling.
import t from 'tap';
import type { KubeObject } from '../../../src/api/meta.ts';
import type { ObjectLike } from '../../../src/kube/apply.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { MemoryReconcileContext } from '../../support/memory-reconcile-context.ts';
import { deploymentStatus, podSpecOf, reconcile, statusOf, type StoredObject } from './reconcile-helpers.ts';

const NS = 'team';

const kaos = (kind: string, name: string, spec: unknown): StoredObject => ({ apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name, namespace: NS }, spec } as StoredObject);
const chat = kaos('ModelAPI', 'chat', { mode: 'Proxy', proxyConfig: { models: ['*'], apiBase: 'http://litellm.example:4000' } });
const storeSpec = (extra: Record<string, unknown> = {}) => ({
  engine: 'mem0',
  storage: { type: 'local' },
  replicas: 1,
  defaultFailureMode: 'soft',
  models: { summarization: { modelAPI: 'chat', model: 'gpt-4o-mini' }, embedding: { modelAPI: 'chat', model: 'text-embedding-3-small' } },
  ...extra,
});
const conditions = (status: Record<string, unknown>) =>
  ((status.conditions ?? []) as { type: string; status: string; reason: string; message: string }[]).map((c) => `${c.type}=${c.status}/${c.reason}`);

/** A ModelAPI reconciled and its Deployment made ready, so the ModelAPI reports Ready. */
async function readyModelAPI(ctx: MemoryReconcileContext, object: StoredObject): Promise<void> {
  ctx.putKaos(object);
  await reconcile(ctx, 'ModelAPI', NS, object.metadata.name);
  ctx.setDeploymentStatus(NS, `modelapi-${object.metadata.name}`, deploymentStatus(1));
  await reconcile(ctx, 'ModelAPI', NS, object.metadata.name);
}

async function readyStore(ctx: MemoryReconcileContext, name: string, extra: Record<string, unknown> = {}): Promise<void> {
  ctx.putKaos(kaos('MemoryStore', name, storeSpec(extra)));
  await reconcile(ctx, 'MemoryStore', NS, name);
  ctx.setDeploymentStatus(NS, `memorystore-${name}`, deploymentStatus(1));
  await reconcile(ctx, 'MemoryStore', NS, name);
}

t.test('a store waits for its ModelAPIs (Pending, KAOS\'s messages, nothing created), then converges', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos(kaos('MemoryStore', 'shared', storeSpec()));
  t.equal(await reconcile(ctx, 'MemoryStore', NS, 'shared'), undefined, 'no requeue: the ModelAPI\'s creation wakes it');
  t.match(statusOf(ctx, 'MemoryStore', NS, 'shared'), { phase: 'Pending', ready: false, message: 'summarization ModelAPI "chat" not found' });
  t.same(conditions(statusOf(ctx, 'MemoryStore', NS, 'shared')), ['Ready=False/ModelAPINotFound', 'Reconciling=True/ModelAPINotFound', 'Stalled=False/ModelAPINotFound']);
  t.same(ctx.childKeys(), []);
  t.same(ctx.recorded.map((e) => `${e.type} ${e.reason}: ${e.note}`), ['Normal ModelAPINotFound: summarization ModelAPI "chat" not found'], 'one Event says why it waits');

  ctx.putKaos(chat);
  await reconcile(ctx, 'ModelAPI', NS, 'chat');
  await reconcile(ctx, 'MemoryStore', NS, 'shared');
  t.match(statusOf(ctx, 'MemoryStore', NS, 'shared'), { phase: 'Pending', message: 'summarization ModelAPI "chat" is not ready' });
  t.same(ctx.childKeys().filter((k) => k.includes('memorystore')), [], 'still nothing created');

  ctx.setDeploymentStatus(NS, 'modelapi-chat', deploymentStatus(1));
  await reconcile(ctx, 'ModelAPI', NS, 'chat');
  ctx.clearRecords();
  await reconcile(ctx, 'MemoryStore', NS, 'shared');
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [
    `apply PersistentVolumeClaim/${NS}/memorystore-shared-data`,
    `apply Deployment/${NS}/memorystore-shared`,
    `apply Service/${NS}/memorystore-shared`,
    `status MemoryStore/${NS}/shared`,
  ]);
  t.match(statusOf(ctx, 'MemoryStore', NS, 'shared'), { phase: 'Pending', endpoint: `http://memorystore-shared.${NS}.svc.cluster.local:8080` });
  ctx.setDeploymentStatus(NS, 'memorystore-shared', deploymentStatus(1));
  await reconcile(ctx, 'MemoryStore', NS, 'shared');
  t.match(statusOf(ctx, 'MemoryStore', NS, 'shared'), { phase: 'Ready', ready: true, message: 'Deployment ready replicas: 1/1' });
  ctx.clearRecords();
  await reconcile(ctx, 'MemoryStore', NS, 'shared');
  t.same(ctx.requests, [], 'converged: zero writes');
  const env = podSpecOf(ctx.child('Deployment', NS, 'memorystore-shared')).containers[0]?.env ?? [];
  t.same(env.find((e) => e.name === 'KAOS_MEMORY_MODEL_BASE_URL'), { name: 'KAOS_MEMORY_MODEL_BASE_URL', value: `http://modelapi-chat.${NS}.svc.cluster.local:8000/v1` });
});

t.test('the embedding role is judged too; a model its ModelAPI does not serve is terminal', async (t) => {
  const ctx = new MemoryReconcileContext();
  await readyModelAPI(ctx, chat);
  ctx.putKaos(kaos('MemoryStore', 's', storeSpec({ models: { summarization: { modelAPI: 'chat', model: 'x' }, embedding: { modelAPI: 'embed', model: 'e' } } })));
  await reconcile(ctx, 'MemoryStore', NS, 's');
  t.match(statusOf(ctx, 'MemoryStore', NS, 's'), { message: 'embedding ModelAPI "embed" not found' });
  await readyModelAPI(ctx, kaos('ModelAPI', 'embed', { mode: 'Hosted', hostedConfig: { model: 'nomic-embed-text' } }));
  await reconcile(ctx, 'MemoryStore', NS, 's');
  t.match(statusOf(ctx, 'MemoryStore', NS, 's'), { phase: 'Failed', message: 'embedding model "e" not supported by ModelAPI "embed" (supported: [nomic-embed-text])' });
  t.same(conditions(statusOf(ctx, 'MemoryStore', NS, 's')).at(-1), 'Stalled=True/ModelNotSupported');
});

t.test('a running store whose ModelAPI stops serving its model: Failed in the Agent\'s words, children kept, Ready again once served', async (t) => {
  const ctx = new MemoryReconcileContext();
  const serving = (models: string[]) => kaos('ModelAPI', 'chat', { mode: 'Proxy', proxyConfig: { models, apiBase: 'http://litellm.example:4000' } });
  await readyModelAPI(ctx, serving(['gpt-4o-mini', 'text-embedding-3-small']));
  await readyStore(ctx, 'shared');
  ctx.putKaos(boundAgent('helper'));
  await reconcile(ctx, 'Agent', NS, 'helper');
  ctx.setDeploymentStatus(NS, 'agent-helper', deploymentStatus(1));
  await reconcile(ctx, 'Agent', NS, 'helper');
  t.match(statusOf(ctx, 'MemoryStore', NS, 'shared'), { phase: 'Ready' });
  const children = ctx.childKeys().filter((k) => k.includes('memorystore'));
  const deployment = JSON.stringify(ctx.child('Deployment', NS, 'memorystore-shared')?.spec);

  // The ModelAPI drops the embedding model (the webhook warns, naming the store; it does not refuse).
  await readyModelAPI(ctx, serving(['gpt-4o-mini']));
  ctx.clearRecords();
  t.equal(await reconcile(ctx, 'MemoryStore', NS, 'shared'), undefined, 'no retry: a change of the store or its ModelAPI wakes it');
  t.match(statusOf(ctx, 'MemoryStore', NS, 'shared'), {
    phase: 'Failed',
    ready: false,
    message: 'embedding model "text-embedding-3-small" not supported by ModelAPI "chat" (supported: [gpt-4o-mini])',
  });
  t.same(conditions(statusOf(ctx, 'MemoryStore', NS, 'shared')), ['Ready=False/ModelNotSupported', 'Reconciling=False/ModelNotSupported', 'Stalled=True/ModelNotSupported']);
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [`status MemoryStore/${NS}/shared`], 'the status only: its children are left running, as a stranded Agent\'s are');
  t.same(ctx.childKeys().filter((k) => k.includes('memorystore')), children);
  t.same(ctx.recorded.map((e) => `${e.type} ${e.reason}: ${e.note}`), [
    'Warning ModelNotSupported: embedding model "text-embedding-3-small" not supported by ModelAPI "chat" (supported: [gpt-4o-mini])',
  ]);
  ctx.clearRecords();
  await reconcile(ctx, 'MemoryStore', NS, 'shared');
  t.same([ctx.requests, ctx.recorded], [[], []], 'reconciled again: no write, no second Event');
  await reconcile(ctx, 'Agent', NS, 'helper');
  t.match(statusOf(ctx, 'Agent', NS, 'helper'), { phase: 'Ready' }, 'its model is still served: the Agent keeps serving');
  t.match(memoryDegraded(ctx, 'helper'), { status: 'True', reason: 'MemoryStoreNotReady', message: 'MemoryStore shared is not ready' });

  await readyModelAPI(ctx, serving(['gpt-4o-mini', 'text-embedding-3-small']));
  await reconcile(ctx, 'MemoryStore', NS, 'shared');
  t.match(statusOf(ctx, 'MemoryStore', NS, 'shared'), { phase: 'Ready', message: 'Deployment ready replicas: 1/1' });
  t.same(conditions(statusOf(ctx, 'MemoryStore', NS, 'shared')), ['Ready=True/DeploymentReady', 'Reconciling=False/DeploymentReady', 'Stalled=False/DeploymentReady'], 'no longer Stalled');
  t.equal(JSON.stringify(ctx.child('Deployment', NS, 'memorystore-shared')?.spec), deployment, 'the same Deployment throughout: no rollout');
  await reconcile(ctx, 'Agent', NS, 'helper');
  t.match(memoryDegraded(ctx, 'helper'), { status: 'False', reason: 'MemoryHealthy' });
});

t.test('external mode: the DSN Secret is a dependency; replicas 2 brings the PodDisruptionBudget, 1 removes it', async (t) => {
  const ctx = new MemoryReconcileContext();
  await readyModelAPI(ctx, chat);
  const external = (replicas: number) => storeSpec({ storage: { type: 'external', external: { connectionSecretRef: { name: 'pg', key: 'dsn' }, embeddingDims: 1536 } }, replicas });
  ctx.putKaos(kaos('MemoryStore', 'pg', external(2)));
  await reconcile(ctx, 'MemoryStore', NS, 'pg');
  t.match(statusOf(ctx, 'MemoryStore', NS, 'pg'), { phase: 'Failed', message: 'Failed to resolve Secret pg: secrets "pg" not found' });
  t.same(ctx.childKeys().filter((k) => k.includes('memorystore')), []);

  ctx.setSecret(NS, 'pg', '7');
  await reconcile(ctx, 'MemoryStore', NS, 'pg');
  t.same(ctx.childKeys().filter((k) => k.includes('memorystore')), [
    `Deployment/${NS}/memorystore-pg`,
    `PodDisruptionBudget/${NS}/memorystore-pg`,
    `Service/${NS}/memorystore-pg`,
  ]);
  t.equal((ctx.child('Deployment', NS, 'memorystore-pg')?.spec as { replicas: number }).replicas, 2);

  ctx.updateKaos('MemoryStore', NS, 'pg', (o) => Object.assign(o, { spec: external(1) }));
  ctx.clearRecords();
  await reconcile(ctx, 'MemoryStore', NS, 'pg');
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`).slice(0, 2), [`apply Deployment/${NS}/memorystore-pg`, `delete PodDisruptionBudget/${NS}/memorystore-pg`]);
  t.equal((ctx.child('Deployment', NS, 'memorystore-pg')?.spec as { replicas: number }).replicas, 1, 'a change of replicas is applied, not only at creation');
  t.same(ctx.recorded.map((e) => e.note), ['Updated Deployment memorystore-pg', 'Deleted PodDisruptionBudget memorystore-pg: no longer desired']);
});

t.test('local mode: a larger size is applied to the claim once it is bound; leaving local mode deletes it', async (t) => {
  const ctx = new MemoryReconcileContext();
  await readyModelAPI(ctx, chat);
  await readyStore(ctx, 'shared');
  const claimName = 'memorystore-shared-data';
  t.same((ctx.child('PersistentVolumeClaim', NS, claimName)?.spec as { resources: unknown }).resources, { requests: { storage: '5Gi' } });
  ctx.updateKaos('MemoryStore', NS, 'shared', (o) => Object.assign(o, { spec: storeSpec({ storage: { type: 'local', local: { persistentVolume: { size: '10Gi' } } } }) }));
  // Not bound yet: the API server would refuse any change of its spec, and hold back the rest.
  ctx.clearRecords();
  await reconcile(ctx, 'MemoryStore', NS, 'shared');
  t.notOk(ctx.requests.some((r) => r.target.startsWith('PersistentVolumeClaim/')), 'an unbound claim is left at its size');
  t.same((ctx.child('PersistentVolumeClaim', NS, claimName)?.spec as { resources: unknown }).resources, { requests: { storage: '5Gi' } });
  const claim = ctx.child('PersistentVolumeClaim', NS, claimName);
  if (claim === undefined) throw new Error('no claim');
  ctx.putChild({ ...(claim as ObjectLike & { kind: 'PersistentVolumeClaim'; metadata: { name: string; namespace: string } }), status: { phase: 'Bound' } });
  ctx.clearRecords();
  await reconcile(ctx, 'MemoryStore', NS, 'shared');
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`)[0], `apply PersistentVolumeClaim/${NS}/${claimName}`, 'bound: grown');
  t.same((ctx.child('PersistentVolumeClaim', NS, claimName)?.spec as { resources: unknown }).resources, { requests: { storage: '10Gi' } });

  ctx.setSecret(NS, 'pg', '1');
  ctx.updateKaos('MemoryStore', NS, 'shared', (o) => Object.assign(o, { spec: storeSpec({ storage: { type: 'external', external: { connectionSecretRef: { name: 'pg', key: 'dsn' } } } }) }));
  await reconcile(ctx, 'MemoryStore', NS, 'shared');
  t.equal(ctx.child('PersistentVolumeClaim', NS, 'memorystore-shared-data'), undefined, 'no longer desired: deleted');
});

// ---- Agents bound to a store ---------------------------------------------------------------

const boundAgent = (name: string, memory: Record<string, unknown> = { type: 'remote', memoryStore: 'shared' }, extra: Record<string, unknown> = {}) =>
  kaos('Agent', name, { modelAPI: 'chat', model: 'gpt-4o-mini', waitForDependencies: true, config: { memory: { enabled: true, ...memory } }, ...extra });
const agentEnv = (ctx: MemoryReconcileContext, name: string) => podSpecOf(ctx.child('Deployment', NS, `agent-${name}`)).containers[0]?.env ?? [];
const memoryDegraded = (ctx: MemoryReconcileContext, name: string) =>
  ((statusOf(ctx, 'Agent', NS, name).conditions ?? []) as KubeObject[]).map((c) => c as unknown as Record<string, string>).find((c) => c.type === 'MemoryDegraded');

t.test('an Agent created before its store waits for it (first creation only), then runs bound to it', async (t) => {
  const ctx = new MemoryReconcileContext();
  await readyModelAPI(ctx, chat);
  ctx.putKaos(boundAgent('helper'));
  t.equal(await reconcile(ctx, 'Agent', NS, 'helper'), undefined, 'Waiting: the store\'s creation wakes it');
  t.match(statusOf(ctx, 'Agent', NS, 'helper'), { phase: 'Waiting', message: 'MemoryStore shared not found', linkedResources: { modelapi: 'chat', memorystore: 'shared' } });
  t.match(memoryDegraded(ctx, 'helper'), { status: 'True', reason: 'MemoryStoreNotReady', message: 'MemoryStore shared not found' });
  t.equal(ctx.child('Deployment', NS, 'agent-helper'), undefined);

  ctx.putKaos(kaos('MemoryStore', 'shared', storeSpec()));
  await reconcile(ctx, 'MemoryStore', NS, 'shared');
  await reconcile(ctx, 'Agent', NS, 'helper');
  t.match(statusOf(ctx, 'Agent', NS, 'helper'), { phase: 'Waiting', message: 'MemoryStore shared is not ready' });

  ctx.setDeploymentStatus(NS, 'memorystore-shared', deploymentStatus(1));
  await reconcile(ctx, 'MemoryStore', NS, 'shared');
  await reconcile(ctx, 'Agent', NS, 'helper');
  t.match(memoryDegraded(ctx, 'helper'), { status: 'False', reason: 'MemoryHealthy', message: 'MemoryStore shared is ready' });
  t.same(agentEnv(ctx, 'helper').filter((e) => e.name.startsWith('MEMORY_') || e.name === 'AGENT_IDENTITY'), [
    { name: 'MEMORY_ENABLED', value: 'true' },
    { name: 'MEMORY_TYPE', value: 'remote' },
    { name: 'MEMORY_STORE_ENDPOINT', value: `http://memorystore-shared.${NS}.svc.cluster.local:8080` },
    { name: 'MEMORY_MAX_READ_SCOPE', value: 'agent' },
    { name: 'AGENT_IDENTITY', value: `kaos://agent/${NS}/helper` },
  ]);
  t.same(ctx.recorded.filter((e) => e.reason === 'MemoryDegraded' || e.reason === 'MemoryRecovered'), [], 'its creation is told by the dependency Events, not as degraded memory');
  t.same(ctx.recorded.filter((e) => e.reason.startsWith('MemoryStore')).map((e) => e.note), ['MemoryStore shared not found', 'MemoryStore shared is not ready']);
});

t.test('a running Agent is never blocked: degraded and recovered with no new pod spec', async (t) => {
  const ctx = new MemoryReconcileContext();
  await readyModelAPI(ctx, chat);
  // The store calls a ModelAPI of its own, so that taking it away touches the store only.
  const mem = kaos('ModelAPI', 'mem', chat.spec);
  await readyModelAPI(ctx, mem);
  const models = { summarization: { modelAPI: 'mem', model: 'gpt-4o-mini' }, embedding: { modelAPI: 'mem', model: 'text-embedding-3-small' } };
  await readyStore(ctx, 'shared', { models });
  ctx.putKaos(boundAgent('helper'));
  await reconcile(ctx, 'Agent', NS, 'helper');
  ctx.setDeploymentStatus(NS, 'agent-helper', deploymentStatus(1));
  await reconcile(ctx, 'Agent', NS, 'helper');
  t.match(statusOf(ctx, 'Agent', NS, 'helper'), { phase: 'Ready' });
  const podSpec = JSON.stringify(ctx.child('Deployment', NS, 'agent-helper')?.spec);

  // The store's ModelAPI goes: the store turns Pending, the Agent degrades.
  ctx.deleteKaos('ModelAPI', NS, 'mem');
  await reconcile(ctx, 'MemoryStore', NS, 'shared');
  t.match(statusOf(ctx, 'MemoryStore', NS, 'shared'), { phase: 'Pending', ready: false, message: 'summarization ModelAPI "mem" not found' });
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, 'helper');
  t.match(statusOf(ctx, 'Agent', NS, 'helper'), { phase: 'Ready' }, 'still serving');
  t.match(memoryDegraded(ctx, 'helper'), { status: 'True', reason: 'MemoryStoreNotReady', message: 'MemoryStore shared is not ready' });
  t.same(ctx.requests.map((r) => r.verb), ['status'], 'only the status: no apply, no rollout');
  t.same(ctx.recorded.map((e) => `${e.type} ${e.reason}: ${e.note}`), ['Warning MemoryDegraded: MemoryStore shared is not ready: serving with short-term memory only']);

  await readyModelAPI(ctx, mem);
  await reconcile(ctx, 'MemoryStore', NS, 'shared');
  t.match(statusOf(ctx, 'MemoryStore', NS, 'shared'), { phase: 'Ready' });
  ctx.clearRecords();
  await reconcile(ctx, 'Agent', NS, 'helper');
  t.match(memoryDegraded(ctx, 'helper'), { status: 'False', reason: 'MemoryHealthy' });
  t.same(ctx.requests.map((r) => r.verb), ['status']);
  t.equal(JSON.stringify(ctx.child('Deployment', NS, 'agent-helper')?.spec), podSpec, 'the same pod spec throughout');
});

t.test('a read scope above the ceiling: Failed, InvalidMemoryReadScope, nothing applied', async (t) => {
  const ctx = new MemoryReconcileContext();
  await readyModelAPI(ctx, chat);
  await readyStore(ctx, 'narrow', { maxReadScope: 'session' });
  ctx.putKaos(boundAgent('reader', { memoryStore: 'narrow', maxReadScope: 'agent' }));
  t.equal(await reconcile(ctx, 'Agent', NS, 'reader'), undefined, 'terminal: a change of the Agent or its store wakes it');
  t.match(statusOf(ctx, 'Agent', NS, 'reader'), { phase: 'Failed', message: 'config.memory.maxReadScope "agent" exceeds MemoryStore "narrow" maxReadScope "session"' });
  t.same(conditions(statusOf(ctx, 'Agent', NS, 'reader')).slice(0, 3), ['Ready=False/InvalidMemoryReadScope', 'Reconciling=False/InvalidMemoryReadScope', 'Stalled=True/InvalidMemoryReadScope']);
  t.equal(ctx.child('Deployment', NS, 'agent-reader'), undefined);
});

t.test('with waitForDependencies false an Agent starts without its store, degraded', async (t) => {
  const ctx = new MemoryReconcileContext();
  await readyModelAPI(ctx, chat);
  ctx.putKaos(boundAgent('eager', { memoryStore: 'later' }, { waitForDependencies: false }));
  await reconcile(ctx, 'Agent', NS, 'eager');
  t.ok(ctx.child('Deployment', NS, 'agent-eager'));
  t.notOk(agentEnv(ctx, 'eager').some((e) => e.name === 'MEMORY_STORE_ENDPOINT'), 'no store, no endpoint');
  t.match(memoryDegraded(ctx, 'eager'), { status: 'True', message: 'MemoryStore later not found' });
});

t.test('Agents without remote memory get no MemoryDegraded condition; one that drops its store loses it', async (t) => {
  const ctx = new MemoryReconcileContext();
  await readyModelAPI(ctx, chat);
  await readyStore(ctx, 'shared');
  ctx.putKaos(kaos('Agent', 'plain', { modelAPI: 'chat', model: 'gpt-4o-mini', config: { memory: { enabled: true, type: 'local', contextLimit: 6 } } }));
  await reconcile(ctx, 'Agent', NS, 'plain');
  t.equal(memoryDegraded(ctx, 'plain'), undefined);
  ctx.putKaos(boundAgent('switch'));
  await reconcile(ctx, 'Agent', NS, 'switch');
  t.ok(memoryDegraded(ctx, 'switch'));
  ctx.updateKaos('Agent', NS, 'switch', (o) => Object.assign(o, { spec: { modelAPI: 'chat', model: 'gpt-4o-mini' } }));
  await reconcile(ctx, 'Agent', NS, 'switch');
  t.equal(memoryDegraded(ctx, 'switch'), undefined, 'an owned condition goes when nothing states it');
  t.same(statusOf(ctx, 'Agent', NS, 'switch').linkedResources, { modelapi: 'chat' });
});

t.test('an Agent\'s own user read scope without a user identity: Failed with KAOS\'s message, Stalled; with one it runs', async (t) => {
  const USER = 'config.memory.maxReadScope references user scope, but cluster security posture has no user identity';
  for (const settings of [{}, { SECURITY_PDP_ENABLED: 'true' }, { SECURITY_USER_AUTH_ISSUER: 'https://idp.example' }]) {
    const ctx = new MemoryReconcileContext({ config: loadConfig(settings) });
    await readyModelAPI(ctx, chat);
    await readyStore(ctx, 'people', { maxReadScope: 'user' });
    ctx.putKaos(boundAgent('reader', { memoryStore: 'people', maxReadScope: 'user' }));
    t.equal(await reconcile(ctx, 'Agent', NS, 'reader'), undefined, `${JSON.stringify(settings)}: terminal`);
    t.match(statusOf(ctx, 'Agent', NS, 'reader'), { phase: 'Failed', ready: false, message: USER });
    t.same(conditions(statusOf(ctx, 'Agent', NS, 'reader')).slice(0, 3), ['Ready=False/InvalidMemoryReadScope', 'Reconciling=False/InvalidMemoryReadScope', 'Stalled=True/InvalidMemoryReadScope']);
    t.equal(ctx.child('Deployment', NS, 'agent-reader'), undefined, 'nothing applied');
  }
  const enforced = new MemoryReconcileContext({ config: loadConfig({ SECURITY_PDP_ENABLED: 'true', SECURITY_USER_AUTH_ISSUER: 'https://idp.example' }) });
  await readyModelAPI(enforced, chat);
  await readyStore(enforced, 'people', { maxReadScope: 'user' });
  enforced.putKaos(boundAgent('reader', { memoryStore: 'people', maxReadScope: 'user' }));
  await reconcile(enforced, 'Agent', NS, 'reader');
  t.ok(enforced.child('Deployment', NS, 'agent-reader'), 'security and the user plane: the Deployment is applied');
  const inherited = new MemoryReconcileContext();
  await readyModelAPI(inherited, chat);
  await readyStore(inherited, 'people', { maxReadScope: 'user' });
  inherited.putKaos(boundAgent('reader', { memoryStore: 'people' }));
  await reconcile(inherited, 'Agent', NS, 'reader');
  t.ok(inherited.child('Deployment', NS, 'agent-reader'), 'a scope inherited from the store is not judged');
});
