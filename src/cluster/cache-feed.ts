// Feeds a CacheView (cache-view.ts) from the main thread's KaosCache: everything its stores hold
// at the start, then every change its reflectors make, whether a store has synced, and each
// runtime registry when it changes. The changes of one task (a watch chunk's events, a relist's
// differences) go out as one batch at the end of that task, so the view applies them whole.
//
// Each change carries what the view keeps of the object (viewChange): the dependency index's
// records for every KAOS object, its JSON text for the kinds admission reads whole, a
// Namespace's labels. An Agent's change whose records are those already sent (its status
// written, a label set) changes nothing the view keeps and is not sent: while the controller
// converges a bulk apply, those are most of the Agents' events.
import { KINDS, type KaosKind } from '../api/kinds.ts';
import { isReadKind, type KubeObject } from '../api/lookup.ts';
import type { ReflectorEvent } from '../kube/reflector.ts';
import type { KaosCache } from './cache.ts';
import { REGISTRY_NAMES, type RegistryStates } from './cache-lookup.ts';
import type { CacheBatch, CacheChange, ViewKind } from './cache-view.ts';
import { dependencyRecords, type DependencyRecords } from './dependency-index.ts';

export interface CacheFeed {
  /** Sends what changed since the last batch now (e.g. after a runtime registry changed). */
  flush(): void;
  /** Stops listening. */
  stop(): void;
}

/** Pure: what the view keeps of `object`, a `kind` the cache holds (its records worked out with the kind table). */
export function viewChange(kind: ViewKind, object: KubeObject, records?: DependencyRecords): CacheChange {
  const { namespace = '', name = '', labels = {} } = object.metadata ?? {};
  if (kind === 'Namespace') return { kind, op: 'put', name, labels };
  const asks = records ?? dependencyRecords(kind, object);
  return isReadKind(kind) ? { kind, op: 'put', namespace, name, records: asks, text: JSON.stringify(object) } : { kind, op: 'put', namespace, name, records: asks };
}

/** Pure: the change that takes `object` out of the view. */
export function viewDelete(kind: ViewKind, object: KubeObject): CacheChange {
  const { namespace, name = '' } = object.metadata ?? {};
  return { kind, op: 'delete', name, ...(namespace === undefined ? {} : { namespace }) };
}

/** The change an event makes to the view, or undefined when it changes nothing the view keeps. */
function eventChange(kind: ViewKind, event: ReflectorEvent<KubeObject>): CacheChange | undefined {
  if (event.type === 'delete') return viewDelete(kind, event.object);
  if (kind === 'Namespace' || isReadKind(kind) || event.type === 'add') return viewChange(kind, event.object);
  const records = dependencyRecords(kind, event.object);
  return sameRecords(records, dependencyRecords(kind, event.old)) ? undefined : viewChange(kind, event.object, records);
}

function sameRecords(a: DependencyRecords, b: DependencyRecords): boolean {
  return a.length === b.length && JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Starts feeding: the first batch (sent at once, even empty) holds every object the cache has now.
 * `send` is called once per batch, in order.
 */
export function feedCache(cache: KaosCache, send: (batch: CacheBatch) => void): CacheFeed {
  let changes: CacheChange[] = [];
  let scheduled = false;
  let stopped = false;
  const sentSynced = new Set<ViewKind>();
  const sentRegistries: Partial<RegistryStates> = {};
  const stores: Array<{ kind: ViewKind; isSynced: () => boolean; list: () => KubeObject[]; on: (l: (e: ReflectorEvent<KubeObject>) => void) => () => void }> = [
    ...KINDS.map((kind: KaosKind) => ({ kind, isSynced: () => cache.reflector(kind).isSynced(), list: () => cache.reflector(kind).list(), on: (l: (e: ReflectorEvent<KubeObject>) => void) => cache.reflector(kind).on(l) })),
    { kind: 'Namespace' as const, isSynced: () => cache.namespaces.isSynced(), list: () => cache.namespaces.list(), on: (l: (e: ReflectorEvent<KubeObject>) => void) => cache.namespaces.on(l) },
  ];

  let first = true;
  const flush = (): void => {
    scheduled = false;
    if (stopped) return;
    const synced = stores.filter((s) => !sentSynced.has(s.kind) && s.isSynced()).map((s) => s.kind);
    // Registry states are parsed once per version of their ConfigMap: a new object is a change.
    const now: RegistryStates = { mcp: cache.mcpRuntimes(), harness: cache.harnessRuntimes() };
    const registries: Partial<RegistryStates> = Object.fromEntries(REGISTRY_NAMES.filter((n) => now[n] !== sentRegistries[n]).map((n) => [n, now[n]]));
    const registriesChanged = Object.keys(registries).length > 0;
    // The first batch goes out even empty: the view has then seen all there was.
    if (!first && changes.length === 0 && synced.length === 0 && !registriesChanged) return;
    first = false;
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

  for (const store of stores) {
    for (const object of store.list()) changes.push(viewChange(store.kind, object));
  }
  const offs = stores.map((store) => store.on((event) => {
    const change = eventChange(store.kind, event);
    if (change === undefined) return;
    changes.push(change);
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
