// The operator's one cache: a reflector per watched type (the five KAOS kinds and Namespaces;
// the controller registers the children it owns and Secrets' metadata), the "who depends on X"
// index of the kind table's dependencies, and the ObjectLookup that admission reads through. With `namespaces` (WATCH_NAMESPACES)
// every namespaced type gets one reflector per namespace; Namespaces are always watched whole
// (admission reads any namespace's labels).
import { KINDS, type KaosKind } from '../api/kinds.ts';
import type { KubeObject, ObjectLookup, ReadKind, Referrer } from '../api/lookup.ts';
import type { AccessGrant, Agent, KaosObjects, MCPServer, MemoryStore, ModelAPI } from '../api/schema/index.ts';
import type { HarnessRegistryState } from '../api/harness-runtimes.ts';
import type { RegistryState } from '../api/mcp-runtimes.ts';
import type { LookupBudget } from '../api/lookup-budget.ts';
import type { KubeClient } from '../kube/client.ts';
import { silentLogger, type Logger } from '../leaves/logger.ts';
import { NAMESPACE, type ResourceType } from '../kube/paths.ts';
import { CacheLookup, type LookupStores, type NameStore, type RegistryName, type RegistryStates } from './cache-lookup.ts';
import { KAOS_TYPES } from './kaos-resources.ts';
import { DependencyIndex } from './dependency-index.ts';
import { Reflector, type ReflectorOptions } from '../kube/reflector.ts';
import { ReflectorGroup } from '../kube/reflector-group.ts';
import { slimObject } from '../kube/slim.ts';

export type CacheClient = Pick<KubeClient, 'list' | 'watch' | 'get'>;

export interface KaosCacheOptions {
  client: CacheClient;
  logger?: Logger;
  /** CacheLookupOptions.liveReadTimeoutMs. */
  liveReadTimeoutMs?: number;
  /**
   * Namespaces to watch (WATCH_NAMESPACES); empty or absent = all. Lookups in other namespaces
   * are cache misses, answered by a live read as any miss is.
   */
  namespaces?: readonly string[];
  /** Passed to every reflector (timeouts, backoff): for tests. */
  reflector?: Pick<ReflectorOptions, 'pageSize' | 'watchTimeoutSeconds' | 'watchIdleTimeoutMs' | 'backoff' | 'random'>;
}

export interface RegisterOptions<T extends KubeObject = KubeObject> {
  /** Watch one namespace only. */
  namespace?: string;
  /** E.g. `app.kubernetes.io/managed-by=kaos-operator` for owned children. */
  labelSelector?: string;
  /** E.g. `metadata.name=x` (one object by name). */
  fieldSelector?: string;
  /** PartialObjectMetadata only (Secrets). */
  metadataOnly?: boolean;
  /** Shrinks each object before it is stored (ReflectorOptions.transform). */
  transform?: (object: T) => T;
}

/** The reflectors of the five kinds, each typed as its schema's object type. */
export type KaosReflectors = { readonly [K in KaosKind]: ReflectorGroup<KaosObjects[K]> };

/** What the cache needs of a reflector to run it: nothing that depends on its object type. */
type Runnable = Pick<Reflector, 'start' | 'stop' | 'isSynced' | 'waitForSync'>;

export class KaosCache implements ObjectLookup {
  readonly agents: ReflectorGroup<Agent>;
  readonly modelAPIs: ReflectorGroup<ModelAPI>;
  readonly mcpServers: ReflectorGroup<MCPServer>;
  readonly memoryStores: ReflectorGroup<MemoryStore>;
  readonly accessGrants: ReflectorGroup<AccessGrant>;
  readonly namespaces: Reflector;
  /** Who depends on what (the kind table's dependencies), for the triggers and referencedBy. */
  readonly dependencies = new DependencyIndex();
  readonly #client: CacheClient;
  readonly #log: Logger;
  readonly #lookup: CacheLookup;
  readonly #reflectorOptions: KaosCacheOptions['reflector'];
  readonly #reflectors: Runnable[] = [];
  readonly #kinds: KaosReflectors;
  /** The watched namespaces; undefined = all. */
  readonly #namespaces: readonly string[] | undefined;
  #started = false;
  /** Set by controller/runtime-registry.ts when it registers a registry's reflector. */
  readonly #registries: { [N in RegistryName]?: () => RegistryStates[N] } = {};

  constructor(options: KaosCacheOptions) {
    this.#client = options.client;
    this.#log = options.logger ?? silentLogger;
    this.#reflectorOptions = options.reflector;
    this.#namespaces = options.namespaces === undefined || options.namespaces.length === 0 ? undefined : [...new Set(options.namespaces)];
    // The API server validated every stored object against its CRD (generated from the same
    // schemas), so each kind's objects have its schema's type. Stored without managedFields and
    // last-applied-configuration (kube/slim.ts): nobody reads them.
    const transform = <T extends KubeObject>(object: T): T => slimObject(object);
    this.agents = this.registerGroup<Agent>(KAOS_TYPES.Agent, { transform });
    this.modelAPIs = this.registerGroup<ModelAPI>(KAOS_TYPES.ModelAPI, { transform });
    this.mcpServers = this.registerGroup<MCPServer>(KAOS_TYPES.MCPServer, { transform });
    this.memoryStores = this.registerGroup<MemoryStore>(KAOS_TYPES.MemoryStore, { transform });
    this.accessGrants = this.registerGroup<AccessGrant>(KAOS_TYPES.AccessGrant, { transform });
    this.#kinds = { Agent: this.agents, ModelAPI: this.modelAPIs, MCPServer: this.mcpServers, MemoryStore: this.memoryStores, AccessGrant: this.accessGrants };
    this.namespaces = this.register(NAMESPACE, { transform });
    this.#lookup = new CacheLookup(this.lookupStores(), {
      client: this.#client,
      logger: this.#log,
      ...(options.liveReadTimeoutMs === undefined ? {} : { liveReadTimeoutMs: options.liveReadTimeoutMs }),
    });
    // Registered before start(), so the index sees every event from the first list on,
    // including the deletes and updates a relist produces.
    for (const kind of KINDS) {
      this.reflector(kind).on((event) => {
        if (event.type === 'delete') this.dependencies.remove(kind, event.object);
        else this.dependencies.upsert(kind, event.object);
      });
    }
  }

  /**
   * Adds a reflector for another type (the controller's owned children). Part of isSynced() and
   * waitForSync(); started at once when the cache already runs.
   */
  register<T extends KubeObject = KubeObject>(type: ResourceType, options: RegisterOptions<T> = {}): Reflector<T> {
    const reflector = new Reflector<T>({
      ...this.#reflectorOptions,
      client: this.#client,
      type,
      ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
      ...(options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector }),
      ...(options.fieldSelector === undefined ? {} : { fieldSelector: options.fieldSelector }),
      ...(options.metadataOnly === true ? { metadataOnly: true } : {}),
      ...(options.transform === undefined ? {} : { transform: options.transform }),
      logger: this.#log,
    });
    this.#reflectors.push(reflector);
    if (this.#started) reflector.start();
    return reflector;
  }

  /**
   * A namespaced type across the watched namespaces (the cache's `namespaces`): one reflector
   * per namespace, or one for all. Same lifecycle as register().
   */
  registerGroup<T extends KubeObject = KubeObject>(type: ResourceType, options: Omit<RegisterOptions<T>, 'namespace'> = {}): ReflectorGroup<T> {
    if (!type.namespaced) throw new Error(`${type.kind} is cluster-scoped: register it with register()`);
    const namespaces = this.#namespaces;
    const reflectors = namespaces === undefined
      ? [this.register<T>(type, options)]
      : namespaces.map((namespace) => this.register<T>(type, { ...options, namespace }));
    return new ReflectorGroup<T>(type, reflectors, namespaces);
  }

  /** The watched namespaces; undefined = all. */
  get watchedNamespaces(): readonly string[] | undefined {
    return this.#namespaces;
  }

  /** The reflectors of a KAOS kind. */
  reflector<K extends KaosKind>(kind: K): KaosReflectors[K] {
    return this.#kinds[kind];
  }

  /** A cached object of a KAOS kind, typed as its kind's schema type; undefined when the cache has none. */
  cached<K extends KaosKind>(kind: K, namespace: string, name: string): KaosObjects[K] | undefined {
    return this.reflector(kind).getByName(namespace, name);
  }

  /** The stores lookups read: the reflectors of the kinds and of Namespaces, the index, the registries. */
  lookupStores(): LookupStores {
    const names = (kind: KaosKind): NameStore => {
      const reflector = this.reflector(kind);
      return { isSynced: () => reflector.isSynced(), has: (namespace, name) => reflector.getByName(namespace, name) !== undefined };
    };
    const nameStores = Object.fromEntries(KINDS.map((kind) => [kind, names(kind)])) as Record<KaosKind, NameStore>;
    return {
      kaos: (kind) => this.reflector(kind),
      names: (kind) => nameStores[kind],
      namespaceStore: this.namespaces,
      referencedBy: (kind, namespace, name) => this.dependencies.referencedBy(kind, namespace, name),
      registry: (name) => this.#registries[name]?.(),
    };
  }

  start(): void {
    this.#started = true;
    for (const reflector of this.#reflectors) reflector.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.#reflectors.map((r) => r.stop()));
  }

  /** True when every reflector has completed its first list (for /readyz). */
  isSynced(): boolean {
    return this.#reflectors.every((r) => r.isSynced());
  }

  /**
   * Resolves when every reflector has synced, those registered while it waits included (an
   * optional API's, registered once its CRD is seen: controller/watches.ts); rejects if `signal`
   * aborts first or the cache stops. Without them a controller started on this would take their
   * type for not served, and withhold what depends on it (a route behind its SecurityPolicy).
   */
  async waitForSync(signal?: AbortSignal): Promise<void> {
    for (let waited = 0; waited < this.#reflectors.length;) {
      const batch = this.#reflectors.slice(waited);
      waited = this.#reflectors.length;
      await Promise.all(batch.map((r) => r.waitForSync(signal)));
    }
  }

  /** Live reads made on cache misses so far (for tests and metrics). */
  get liveReads(): number {
    return this.#lookup.liveReads;
  }

  get(kind: ReadKind, namespace: string, name: string, budget?: LookupBudget): Promise<KubeObject | undefined> {
    return this.#lookup.get(kind, namespace, name, budget);
  }

  current(kind: KaosKind, namespace: string, name: string, budget?: LookupBudget): Promise<KubeObject | undefined> {
    return this.#lookup.current(kind, namespace, name, budget);
  }

  exists(kind: KaosKind, namespace: string, name: string, budget?: LookupBudget): Promise<boolean> {
    return this.#lookup.exists(kind, namespace, name, budget);
  }

  /** The MCP runtime registry (docs/api.md, "MCPServer runtimes") from its reflector; a problem until one is attached and synced. */
  mcpRuntimes(): RegistryState {
    return this.#lookup.mcpRuntimes();
  }

  /** The harness runtime registry (docs/api.md, "Agent harness") from its reflector; a problem until one is attached and synced. */
  harnessRuntimes(): HarnessRegistryState {
    return this.#lookup.harnessRuntimes();
  }

  /** Makes `read` the answer for the registry `name` (controller/runtime-registry.ts, when it registers its reflector). */
  attachRegistry<N extends RegistryName>(name: N, read: () => RegistryStates[N]): void {
    (this.#registries as Record<N, () => RegistryStates[N]>)[name] = read;
  }

  referencedBy(kind: KaosKind, namespace: string, name: string): Referrer[] {
    return this.#lookup.referencedBy(kind, namespace, name);
  }

  namespaceLabels(namespace: string, budget?: LookupBudget): Promise<Record<string, string> | undefined> {
    return this.#lookup.namespaceLabels(namespace, budget);
  }
}

