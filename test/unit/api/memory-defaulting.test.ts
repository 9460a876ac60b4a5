// The mutating webhook's defaults for remote memory (docs/api.md, "MemoryStore" and "Agent remote
// memory"): a MemoryStore's constant defaults inside the blocks it writes, its replicas and image
// derived and recorded; an Agent memory block's type derived from its binding, and the original
// shape's defaults filled into an original-shape block only, going with the request that binds it.
import t from 'tap';
import { defaultObject } from '../../../src/api/defaulting/default-object.ts';
import { DEFAULTED_ANNOTATION, type KaosKind } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { agent, CONFIG, deepFreeze, localStoreSpec, memoryStore } from './objects.ts';

const run = (kind: KaosKind, object: KubeObject, oldObject?: KubeObject) =>
  defaultObject(kind, deepFreeze(object), { config: CONFIG, ...(oldObject === undefined ? {} : { oldObject }) });
const annotation = (o: KubeObject): string | undefined => o.metadata?.annotations?.[DEFAULTED_ANNOTATION];
const withAnnotation = (o: KubeObject, value: string): KubeObject => ({ ...o, metadata: { ...o.metadata, annotations: { [DEFAULTED_ANNOTATION]: value } } });
const memoryOf = (o: KubeObject): unknown => (o.spec as { config?: { memory?: unknown } }).config?.memory;

t.test('a local-mode MemoryStore: engine, failure mode, image and one replica; the local block only when written', async (t) => {
  const { object, defaulted } = run('MemoryStore', memoryStore('s', localStoreSpec()));
  t.same(object.spec, {
    ...localStoreSpec(),
    engine: 'mem0',
    replicas: 1,
    defaultFailureMode: 'soft',
    container: { image: 'axsauze/kaos-memory-service:0.4.8-dev' },
  });
  t.same(defaulted, ['spec.container.image', 'spec.replicas'], 'derived values are recorded; constant ones are not');
  t.equal(annotation(object), 'spec.container.image,spec.replicas');

  const written = run('MemoryStore', memoryStore('s', localStoreSpec({ storage: { type: 'local', local: { persistentVolume: {} } }, longTerm: { extraction: {} } }))).object;
  t.match(written.spec, {
    storage: { type: 'local', local: { provider: 'chroma', persistentVolume: { size: '5Gi' } } },
    longTerm: { extraction: { concurrency: 4 } },
  }, 'defaults inside the blocks the manifest wrote, as the API server applies them');
});

t.test('an external-mode MemoryStore: two replicas, pgvector and 1536 dimensions', async (t) => {
  const spec = localStoreSpec({ storage: { type: 'external', external: { connectionSecretRef: { name: 'pg', key: 'dsn' } } } });
  const { object } = run('MemoryStore', memoryStore('s', spec));
  t.match(object.spec, { replicas: 2, storage: { external: { provider: 'pgvector', embeddingDims: 1536, connectionSecretRef: { name: 'pg', key: 'dsn' } } } });
});

t.test("replicas follow the storage mode while they are the webhook's; the user's stay", async (t) => {
  const local = run('MemoryStore', memoryStore('s', localStoreSpec())).object;
  const external = { ...local, spec: { ...(local.spec as object), storage: { type: 'external', external: { connectionSecretRef: { name: 'pg', key: 'dsn' } } } } };
  t.equal((run('MemoryStore', external, local).object.spec as { replicas: number }).replicas, 2, 'a chosen value follows its source');

  const mine = memoryStore('s', localStoreSpec({ storage: { type: 'external', external: { connectionSecretRef: { name: 'pg', key: 'dsn' } } }, replicas: 3 }));
  const kept = run('MemoryStore', mine).object;
  t.equal((kept.spec as { replicas: number }).replicas, 3);
  t.equal(annotation(kept), 'spec.container.image', 'not recorded: the user wrote it');
  const second = run('MemoryStore', run('MemoryStore', memoryStore('s', localStoreSpec())).object);
  t.same(second.defaulted, ['spec.container.image', 'spec.replicas'], 'idempotent: a second pass changes nothing');
});

t.test("an Agent's memory block: type from its binding, recorded", async (t) => {
  const remote = run('Agent', agent('a', { modelAPI: 'm', model: 'x', config: { memory: { memoryStore: 'shared', maxReadScope: 'session' } } })).object;
  t.same(memoryOf(remote), { memoryStore: 'shared', maxReadScope: 'session', type: 'remote', enabled: true }, 'no original-shape field in a remote block');
  t.equal(annotation(remote), 'spec.config.memory.type,spec.config.toolCallMode,spec.container.image');

  const local = run('Agent', agent('a', { modelAPI: 'm', model: 'x', config: { memory: {} } })).object;
  t.same(memoryOf(local), { type: 'local', contextLimit: 6, maxSessions: 1000, maxSessionEvents: 500, enabled: true });

  const none = run('Agent', agent('a', { modelAPI: 'm', model: 'x' })).object;
  t.equal(memoryOf(none), undefined, 'no memory block is made');

  const written = run('Agent', agent('a', { modelAPI: 'm', model: 'x', config: { memory: { type: 'local', memoryStore: 'shared' } } })).object;
  t.equal((memoryOf(written) as { type: string }).type, 'local', "the user's type stays (validation refuses the pair)");
  t.notMatch(annotation(written) ?? '', /memory\.type/);
});

t.test("binding an original-shape block to a MemoryStore: the defaults chosen for the original shape go, the user's values stay", async (t) => {
  const before = run('Agent', agent('a', { modelAPI: 'm', model: 'x', config: { memory: {} } })).object;
  const recorded = annotation(before) ?? '';
  t.match(recorded, /spec\.config\.memory\.contextLimit/);
  const bound = { ...before, spec: { ...(before.spec as object), config: { memory: { ...(memoryOf(before) as object), memoryStore: 'shared' } } } };
  const after = run('Agent', bound, before).object;
  t.same(memoryOf(after), { type: 'remote', enabled: true, memoryStore: 'shared' }, 'as client-side kubectl apply sends it: the stored defaults and the new binding');
  t.equal(annotation(after), 'spec.config.memory.type,spec.config.toolCallMode,spec.container.image');

  const own = agent('a', { modelAPI: 'm', model: 'x', config: { memory: { contextLimit: 9, memoryStore: 'shared' } } });
  t.match(memoryOf(run('Agent', own).object), { contextLimit: 9, memoryStore: 'shared' }, 'a value the user wrote stays, for validation to name');

  const copied = withAnnotation(agent('a', { modelAPI: 'm', model: 'x', config: { memory: { contextLimit: 6, memoryStore: 'shared' } } }), 'spec.config.memory.contextLimit');
  t.notMatch(memoryOf(run('Agent', copied).object), { contextLimit: Number }, 'on CREATE a recorded default equal to its value goes too (a copied object)');
});

t.test('removing the binding turns a chosen remote type back to local', async (t) => {
  const remote = run('Agent', agent('a', { modelAPI: 'm', model: 'x', config: { memory: { memoryStore: 'shared' } } })).object;
  const unbound = { ...remote, spec: { ...(remote.spec as object), config: { memory: { type: 'remote', enabled: true } } } };
  t.match(memoryOf(run('Agent', unbound, remote).object), { type: 'local', contextLimit: 6 });
});
