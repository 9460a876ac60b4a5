// Feeds a CacheView (cache-view.ts) from the main thread's KaosCache: everything its stores hold
// at the start, then every change its reflectors make (an object as its JSON text), whether a
// store has synced, and each runtime registry when it changes. The changes of one task (a watch chunk's events, a relist's
// differences) go out as one batch at the end of that task, so the view applies them whole.
import { KINDS } from '../api/kinds.ts';
import type { KubeObject } from '../api/lookup.ts';
import type { ReflectorEvent } from '../kube/reflector.ts';
import type { KaosCache } from './cache.ts';
import { REGISTRY_NAMES, type RegistryStates } from './cache-lookup.ts';
import type { CacheBatch, CacheChange, ViewKind } from './cache-view.ts';

export interface CacheFeed {
  /** Sends what changed since the last batch now (e.g. after a runtime registry changed). */
  flush(): void;
  /** Stops listening. */
  stop(): void;
}

/**
 * Starts feeding: the first batch (sent at once) holds every object the cache has now. `send` is
 * called once per batch, in order.
 */
export function feedCache(cache: KaosCache, send: (batch: CacheBatch) => void): CacheFeed {
  let changes: CacheChange[] = [];
  let scheduled = false;
  let stopped = false;
  const sentSynced = new Set<ViewKind>();
  const sentRegistries: Partial<RegistryStates> = {};
  const stores: Array<{ kind: ViewKind; isSynced: () => boolean; list: () => KubeObject[]; on: (l: (e: ReflectorEvent<KubeObject>) => void) => () => void }> = [
    ...KINDS.map((kind) => ({ kind, isSynced: () => cache.reflector(kind).isSynced(), list: () => cache.reflector(kind).list(), on: (l: (e: ReflectorEvent<KubeObject>) => void) => cache.reflector(kind).on(l) })),
    { kind: 'Namespace' as const, isSynced: () => cache.namespaces.isSynced(), list: () => cache.namespaces.list(), on: (l: (e: ReflectorEvent<KubeObject>) => void) => cache.namespaces.on(l) },
  ];

  const flush = (): void => {
    scheduled = false;
    if (stopped) return;
    const synced = stores.filter((s) => !sentSynced.has(s.kind) && s.isSynced()).map((s) => s.kind);
    // Registry states are parsed once per version of their ConfigMap: a new object is a change.
    const now: RegistryStates = { mcp: cache.mcpRuntimes(), harness: cache.harnessRuntimes() };
    const registries: Partial<RegistryStates> = Object.fromEntries(REGISTRY_NAMES.filter((n) => now[n] !== sentRegistries[n]).map((n) => [n, now[n]]));
    const registriesChanged = Object.keys(registries).length > 0;
    if (changes.length === 0 && synced.length === 0 && !registriesChanged) return;
    const batch: CacheBatch = { changes, ...(synced.length === 0 ? {} : { synced }), ...(registriesChanged ? { registries } : {}) };
    changes = [];
    for (const kind of synced) sentSynced.add(kind);
    Object.assign(sentRegistries, registries);
    send(batch);
  };
  const soon = (): void => {
    if (scheduled || stopped) return;
    scheduled = true;
    // After the task that made the changes: a relist's differences are all emitted by then.
    setImmediate(flush);
  };

  const change = (kind: ViewKind, type: ReflectorEvent<KubeObject>['type'], object: KubeObject): CacheChange => {
    if (type !== 'delete') return { kind, op: 'put', text: JSON.stringify(object) };
    const { namespace, name = '' } = object.metadata ?? {};
    return { kind, op: 'delete', name, ...(namespace === undefined ? {} : { namespace }) };
  };
  for (const store of stores) {
    for (const object of store.list()) changes.push(change(store.kind, 'add', object));
  }
  const offs = stores.map((store) => store.on((event) => {
    changes.push(change(store.kind, event.type, event.object));
    soon();
  }));
  // A store can sync without a change (nothing to list): its flag must still reach the view.
  void cache.waitForSync().then(soon, () => undefined);
  flush();

  return {
    flush,
    stop: () => {
      stopped = true;
      for (const off of offs) off();
    },
  };
}
