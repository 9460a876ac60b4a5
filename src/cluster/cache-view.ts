// The admission thread's view of the cache: a replica of what admission reads — and only that —
// fed by the main thread, where the reflectors run (cache-feed.ts makes the batches). It answers
// lookups through the same CacheLookup as KaosCache (a miss reads live, as there), so admission's
// answers do not depend on which thread serves it.
//
// What it keeps of each kind is what admission reads of it (api/lookup.ts, READ_KINDS): the
// objects of the kinds it reads whole (ModelAPIs, MCPServers, MemoryStores: the dependencies it
// checks), of an Agent only its name (a peer is only ever asked to exist), of a Namespace only its
// labels; and of every KAOS object what it asks of the objects it names (the dependency index's
// records, which the main thread works out for its own index and sends with each change), for the
// warnings that name a dependency's dependents. So the Agents — nearly every object of a large
// cluster — cost this thread a name and their index records, not a second copy of each: the main
// thread's cache is the one copy.
//
// Consistency: a batch is every change the main thread's reflectors made in one task (a watch
// chunk, or a whole relist), applied here in one task too, so a request sees the cache as it was
// between two of the main thread's tasks: never half a relist, never an object without its place
// in the dependency index.
//
// The objects read whole are kept as their JSON text, parsed when a lookup reads them (the last
// LRU_SIZE parsed are kept): a string is one object to the garbage collector, where the same
// object as a tree is dozens.
import type { KaosKind } from '../api/kinds.ts';
import type { KubeObject, ReadKind, Referrer } from '../api/lookup.ts';
import { storeKey } from '../kube/paths.ts';
import { deepFreeze } from '../kube/reflector.ts';
import { DependencyIndex, type DependencyRecords } from './dependency-index.ts';
import type { LookupStore, LookupStores, NameStore, RegistryName, RegistryStates } from './cache-lookup.ts';

/** The stores the view replicates: the four kinds and Namespaces. */
export type ViewKind = KaosKind | 'Namespace';

/** One change of one store, in the order the main thread's reflector made it. */
export type CacheChange =
  | (KaosPut & { kind: ReadKind; /** The object as JSON. */ text: string })
  | (KaosPut & { kind: Exclude<KaosKind, ReadKind> })
  | { kind: 'Namespace'; op: 'put'; name: string; /** All admission reads of a Namespace. */ labels: Readonly<Record<string, string>> }
  | { kind: ViewKind; op: 'delete'; namespace?: string; name: string };

/** A KAOS object's put: its name, and what it asks of each object it names (dependency-index.ts). */
interface KaosPut {
  op: 'put';
  namespace: string;
  name: string;
  records: DependencyRecords;
}

/** What crosses to the admission thread: changes, and what is new about syncing and the registry. */
export interface CacheBatch {
  changes: CacheChange[];
  /** Stores that have synced since the last batch. */
  synced?: ViewKind[];
  /** The runtime registries that changed. */
  registries?: Partial<RegistryStates>;
}

/** Parsed objects kept per store: the dependencies a burst of requests names again and again. */
const LRU_SIZE = 256;

/** A store's sync flag, set by the batch that says so. */
class Synced {
  #synced = false;

  isSynced(): boolean {
    return this.#synced;
  }

  markSynced(): void {
    this.#synced = true;
  }
}

/** The objects of a kind read whole, as their texts. */
class ReplicaStore extends Synced implements LookupStore, NameStore {
  readonly #texts = new Map<string, string>();
  /** Recently read objects, oldest first (a Map keeps insertion order). */
  readonly #parsed = new Map<string, KubeObject>();

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

  has(namespace: string, name: string): boolean {
    return this.#texts.has(storeKey(namespace, name));
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

/** The names of a kind's objects: all admission asks of an Agent is whether it exists. */
class NameSet extends Synced implements NameStore {
  readonly #keys = new Set<string>();

  has(namespace: string, name: string): boolean {
    return this.#keys.has(storeKey(namespace, name));
  }

  put(key: string): void {
    this.#keys.add(key);
  }

  delete(key: string): void {
    this.#keys.delete(key);
  }

  get size(): number {
    return this.#keys.size;
  }
}

/** Namespaces with their labels, as the small frozen objects a lookup reads. */
class NamespaceStore extends Synced implements LookupStore {
  readonly #namespaces = new Map<string, KubeObject>();

  getByName(_namespace: string | undefined, name: string): KubeObject | undefined {
    return this.#namespaces.get(name);
  }

  put(name: string, labels: Readonly<Record<string, string>>): void {
    this.#namespaces.set(name, deepFreeze({ metadata: { name, labels } }));
  }

  delete(name: string): void {
    this.#namespaces.delete(name);
  }

  get size(): number {
    return this.#namespaces.size;
  }
}

export class CacheView implements LookupStores {
  readonly #objects: Record<ReadKind, ReplicaStore> = {
    ModelAPI: new ReplicaStore(),
    MCPServer: new ReplicaStore(),
    MemoryStore: new ReplicaStore(),
  };
  readonly #agents = new NameSet();
  /** The kinds admission only asks to exist: an Agent (a peer), an AccessGrant (never read). */
  readonly #nameSets: Record<Exclude<KaosKind, ReadKind>, NameSet> = { Agent: this.#agents, AccessGrant: new NameSet() };
  readonly #names: Record<KaosKind, ReplicaStore | NameSet> = { ...this.#nameSets, ...this.#objects };
  readonly #namespaces = new NamespaceStore();
  readonly #dependencies = new DependencyIndex();
  #registries: Partial<RegistryStates> = {};

  /** Applies one batch, whole: no read can fall between two of its changes. */
  apply(batch: CacheBatch): void {
    for (const change of batch.changes) {
      if (change.kind === 'Namespace') {
        if (change.op === 'put') this.#namespaces.put(change.name, change.labels);
        else this.#namespaces.delete(change.name);
        continue;
      }
      const key = storeKey(change.namespace, change.name);
      if (change.op === 'delete') {
        this.#names[change.kind].delete(key);
        if (change.namespace !== undefined) this.#dependencies.remove(change.kind, { metadata: { name: change.name, namespace: change.namespace } });
        continue;
      }
      if ('text' in change) this.#objects[change.kind].put(key, change.text);
      else this.#nameSets[change.kind].put(key);
      this.#dependencies.upsertRecords(change.kind, change.namespace, change.name, change.records);
    }
    for (const kind of batch.synced ?? []) (kind === 'Namespace' ? this.#namespaces : this.#names[kind]).markSynced();
    if (batch.registries !== undefined) this.#registries = { ...this.#registries, ...batch.registries };
  }

  kaos(kind: ReadKind): LookupStore {
    return this.#objects[kind];
  }

  names(kind: KaosKind): NameStore {
    return this.#names[kind];
  }

  get namespaceStore(): LookupStore {
    return this.#namespaces;
  }

  referencedBy(kind: KaosKind, namespace: string, name: string): Referrer[] {
    return this.#dependencies.referencedBy(kind, namespace, name);
  }

  registry<N extends RegistryName>(name: N): RegistryStates[N] | undefined {
    return this.#registries[name];
  }

  /** Objects held, by kind (for tests and logs). */
  sizes(): Record<ViewKind, number> {
    return {
      Agent: this.#agents.size,
      ModelAPI: this.#objects.ModelAPI.size,
      MCPServer: this.#objects.MCPServer.size,
      MemoryStore: this.#objects.MemoryStore.size,
      AccessGrant: this.#nameSets.AccessGrant.size,
      Namespace: this.#namespaces.size,
    };
  }
}
