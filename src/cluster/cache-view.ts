// The admission thread's view of the cache: a replica of what admission reads — the objects of
// the kinds and the Namespaces, whether each store has synced, and the runtime registries — fed
// by the main thread, where the reflectors run (cache-feed.ts makes the batches).
// It answers lookups through the same CacheLookup as KaosCache (a miss reads live, as there),
// so admission's answers do not depend on which thread serves it.
//
// Consistency: a batch is every change the main thread's reflectors made in one task (a watch
// chunk, or a whole relist), applied here in one task too, so a request sees the cache as it was
// between two of the main thread's tasks: never half a relist, never an object without its
// place in the dependency index. The index keeps what each object asks of the objects it names,
// worked out from the same text when its change is applied, so the warnings that name a ModelAPI's
// dependents (referencedBy) parse none of them and agree with the stores.
//
// Each object is kept as its JSON text, parsed when a lookup reads it (the last LRU_SIZE parsed
// are kept): a string is one object to the garbage collector, where the same object as a tree is
// dozens. Every object of the cache passes through this thread's heap, and as trees they made its
// collections — and the pauses of the requests waiting on them — grow with the cluster.
import type { KaosKind } from '../api/kinds.ts';
import type { KubeObject, Referrer } from '../api/lookup.ts';
import { storeKey } from '../kube/paths.ts';
import { deepFreeze } from '../kube/reflector.ts';
import { DependencyIndex } from './dependency-index.ts';
import type { LookupStore, LookupStores, RegistryName, RegistryStates } from './cache-lookup.ts';

/** The stores the view replicates: the three kinds and Namespaces. */
export type ViewKind = KaosKind | 'Namespace';

/** One change of one store, in the order the main thread's reflector made it. */
export type CacheChange =
  | { kind: ViewKind; op: 'put'; /** The object as JSON. */ text: string }
  | { kind: ViewKind; op: 'delete'; namespace?: string; name: string };

/** What crosses to the admission thread: changes, and what is new about syncing and the registries. */
export interface CacheBatch {
  changes: CacheChange[];
  /** Stores that have synced since the last batch. */
  synced?: ViewKind[];
  /** The runtime registries that changed. */
  registries?: Partial<RegistryStates>;
}

/** Parsed objects kept per store: the dependencies a burst of requests names again and again. */
const LRU_SIZE = 256;

class ReplicaStore implements LookupStore {
  readonly #texts = new Map<string, string>();
  /** Recently read objects, oldest first (a Map keeps insertion order). */
  readonly #parsed = new Map<string, KubeObject>();
  #synced = false;

  isSynced(): boolean {
    return this.#synced;
  }

  markSynced(): void {
    this.#synced = true;
  }

  /** Frozen, and shared with every reader of the same version, like the reflectors' objects. */
  getByName(namespace: string | undefined, name: string): KubeObject | undefined {
    const key = storeKey(namespace, name);
    const hit = this.#parsed.get(key);
    if (hit !== undefined) {
      this.#parsed.delete(key);
      this.#parsed.set(key, hit);
      return hit;
    }
    const text = this.#texts.get(key);
    if (text === undefined) return undefined;
    const object = deepFreeze(JSON.parse(text) as KubeObject);
    this.#parsed.set(key, object);
    if (this.#parsed.size > LRU_SIZE) this.#parsed.delete(this.#parsed.keys().next().value as string);
    return object;
  }

  put(key: string, text: string): void {
    this.#texts.set(key, text);
    this.#parsed.delete(key);
  }

  delete(key: string): void {
    this.#texts.delete(key);
    this.#parsed.delete(key);
  }

  get size(): number {
    return this.#texts.size;
  }
}

export class CacheView implements LookupStores {
  readonly #stores: Record<ViewKind, ReplicaStore> = {
    Agent: new ReplicaStore(),
    ModelAPI: new ReplicaStore(),
    MCPServer: new ReplicaStore(),
    MemoryStore: new ReplicaStore(),
    AccessGrant: new ReplicaStore(),
    Namespace: new ReplicaStore(),
  };
  readonly #dependencies = new DependencyIndex();
  #registries: Partial<RegistryStates> = {};

  /** Applies one batch, whole: no read can fall between two of its changes. */
  apply(batch: CacheBatch): void {
    for (const change of batch.changes) {
      const store = this.#stores[change.kind];
      if (change.op === 'put') {
        const object = JSON.parse(change.text) as KubeObject;
        store.put(storeKey(object.metadata?.namespace, object.metadata?.name ?? ''), change.text);
        if (change.kind !== 'Namespace') this.#dependencies.upsert(change.kind, object);
      } else {
        store.delete(storeKey(change.namespace, change.name));
        if (change.kind !== 'Namespace') this.#dependencies.remove(change.kind, { metadata: { name: change.name, ...(change.namespace === undefined ? {} : { namespace: change.namespace }) } });
      }
    }
    for (const kind of batch.synced ?? []) this.#stores[kind].markSynced();
    if (batch.registries !== undefined) this.#registries = { ...this.#registries, ...batch.registries };
  }

  kaos(kind: KaosKind): LookupStore {
    return this.#stores[kind];
  }

  get namespaceStore(): LookupStore {
    return this.#stores.Namespace;
  }

  referencedBy(kind: KaosKind, namespace: string, name: string): Referrer[] {
    return this.#dependencies.referencedBy(kind, namespace, name);
  }

  registry<N extends RegistryName>(name: N): RegistryStates[N] | undefined {
    return this.#registries[name];
  }

  /** Objects held, by kind (for tests and logs). */
  sizes(): Record<ViewKind, number> {
    const sizes = {} as Record<ViewKind, number>;
    for (const kind of Object.keys(this.#stores) as ViewKind[]) sizes[kind] = this.#stores[kind].size;
    return sizes;
  }
}
