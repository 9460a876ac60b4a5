// The operator's one cache: a reflector per watched type (the four KAOS kinds and Namespaces;
// the controller registers the children it owns and Secrets' metadata), the "who depends on X"
// index of the kind table's dependencies, and the ObjectLookup that admission reads through. With `namespaces` (WATCH_NAMESPACES)
// every namespaced type gets one reflector per namespace; Namespaces are always watched whole
// (admission reads any namespace's labels).
import { KINDS, type KaosKind } from '../api/kinds.ts';
import type { KubeObject, ObjectLookup, Referrer } from '../api/lookup.ts';
import type { Agent, KaosObjects, MCPServer, MemoryStore, ModelAPI } from '../api/schema/index.ts';
import type { RegistryState } from '../api/mcp-runtimes.ts';
import { LookupNotMade, type LookupBudget } from '../api/lookup-budget.ts';
import type { KubeClient } from '../kube/client.ts';
import { ApiError, isNotFound } from '../kube/errors.ts';
import { silentLogger, type Logger } from '../logger.ts';
import { NAMESPACE, resourcePath, type ResourceType } from '../kube/paths.ts';
import { KAOS_TYPES, kaosPath } from './kaos-resources.ts';
import { DependencyIndex } from './dependency-index.ts';
import { Reflector, type ReflectorOptions } from '../kube/reflector.ts';
import { ReflectorGroup } from '../kube/reflector-group.ts';
import { slimObject } from '../kube/slim.ts';

export type CacheClient = Pick<KubeClient, 'list' | 'watch' | 'get'>;

export interface KaosCacheOptions {
  client: CacheClient;
  logger?: Logger;
  /**
   * Deadline of the one live read made on a cache miss. The webhooks have timeoutSeconds 5 in
   * all, so a read must give up well before the API server gives up on us.
   */
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

/** The reflectors of the four kinds, each typed as its schema's object type. */
export type KaosReflectors = { readonly [K in KaosKind]: ReflectorGroup<KaosObjects[K]> };

/** What the cache needs of a reflector to run it: nothing that depends on its object type. */
type Runnable = Pick<Reflector, 'start' | 'stop' | 'isSynced' | 'waitForSync'>;

export class KaosCache implements ObjectLookup {
  readonly agents: ReflectorGroup<Agent>;
  readonly modelAPIs: ReflectorGroup<ModelAPI>;
  readonly mcpServers: ReflectorGroup<MCPServer>;
  readonly memoryStores: ReflectorGroup<MemoryStore>;
  readonly namespaces: Reflector;
  /** Who depends on what (the kind table's dependencies), for the triggers and referencedBy. */
  readonly dependencies = new DependencyIndex();
  readonly #client: CacheClient;
  readonly #log: Logger;
  readonly #liveReadTimeoutMs: number;
  readonly #reflectorOptions: KaosCacheOptions['reflector'];
  readonly #reflectors: Runnable[] = [];
  readonly #kinds: KaosReflectors;
  /** The watched namespaces; undefined = all. */
  readonly #namespaces: readonly string[] | undefined;
  #started = false;
  #liveReads = 0;
  /** Set by controller/runtime-registry.ts when it registers the registry's reflector. */
  #mcpRuntimes: (() => RegistryState) | undefined;

  constructor(options: KaosCacheOptions) {
    this.#client = options.client;
    this.#log = options.logger ?? silentLogger;
    this.#liveReadTimeoutMs = options.liveReadTimeoutMs ?? 1500;
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
    this.#kinds = { Agent: this.agents, ModelAPI: this.modelAPIs, MCPServer: this.mcpServers, MemoryStore: this.memoryStores };
    this.namespaces = this.register(NAMESPACE, { transform });
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

  /** Resolves when every reflector has synced; rejects if `signal` aborts first or the cache stops. */
  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all(this.#reflectors.map((r) => r.waitForSync(signal)));
  }

  /** Live reads made on cache misses so far (for tests and metrics). */
  get liveReads(): number {
    return this.#liveReads;
  }

  async get(kind: KaosKind, namespace: string, name: string, budget?: LookupBudget): Promise<KubeObject | undefined> {
    const reflector = this.reflector(kind);
    if (reflector.isSynced()) {
      const cached = reflector.getByName(namespace, name);
      if (cached !== undefined) return cached;
    }
    if (namespace === '' || name === '') return undefined;
    // A miss may be an object created a moment ago that the watch has not delivered yet: one
    // live read settles it. Errors other than 404 propagate: "could not check" is not "absent".
    // With a budget, only as many as the request may make (lookup-budget.ts).
    const timeoutMs = budget?.claim();
    return this.#liveGet<KubeObject>(kaosPath(kind, { namespace, name }), { kind, namespace, name }, budget, timeoutMs);
  }

  async exists(kind: KaosKind, namespace: string, name: string, budget?: LookupBudget): Promise<boolean> {
    return (await this.get(kind, namespace, name, budget)) !== undefined;
  }

  /** The MCP runtime registry (docs/api.md, "MCPServer runtimes") from its reflector; a problem until one is attached and synced. */
  mcpRuntimes(): RegistryState {
    return this.#mcpRuntimes?.() ?? { problem: 'the MCP runtime registry is not watched' };
  }

  attachMcpRuntimes(read: () => RegistryState): void {
    this.#mcpRuntimes = read;
  }

  referencedBy(kind: KaosKind, namespace: string, name: string): Referrer[] {
    return this.dependencies.referencedBy(kind, namespace, name, (k, ns, n) => this.cached(k, ns, n));
  }

  async namespaceLabels(namespace: string, budget?: LookupBudget): Promise<Record<string, string> | undefined> {
    let ns: KubeObject | undefined;
    if (this.namespaces.isSynced()) ns = this.namespaces.getByName(undefined, namespace);
    if (ns === undefined) {
      if (namespace === '') return undefined;
      ns = await this.#liveGet<KubeObject>(
        resourcePath(NAMESPACE, { name: namespace }),
        { kind: 'Namespace', name: namespace },
        budget,
        budget?.timeLeft(),
      );
    }
    return ns === undefined ? undefined : (ns.metadata?.labels ?? {});
  }

  async #liveGet<T>(
    path: string,
    logFields: Record<string, unknown>,
    budget: LookupBudget | undefined,
    budgetMs: number | undefined,
  ): Promise<T | undefined> {
    this.#liveReads++;
    this.#log.debug(logFields, 'cache miss, reading live');
    try {
      return await this.#client.get<T>(path, { timeoutMs: Math.min(this.#liveReadTimeoutMs, budgetMs ?? Infinity) });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      // Cut short by the request's deadline, not by an outage: the object is unknown.
      if (budget !== undefined && budget.remainingMs() <= 0) throw new LookupNotMade('deadline', budget);
      // No answer from the API server (it restarts, a connection was cut, it is overloaded): the
      // object is unknown too, for the request's policy to judge, not an internal error. A refusal
      // (401, 403) is the operator's misconfiguration and stays one.
      if (budget !== undefined && isOutage(err)) throw new LookupNotMade('unavailable', budget, outageText(err));
      throw err;
    }
  }
}

/** An error that says the API server did not answer: a network error (the client's, with its code), a 5xx, or 429. */
function isOutage(err: unknown): boolean {
  return err instanceof ApiError ? err.code >= 500 || err.code === 429 : networkCode(err) !== undefined;
}

/** A short text of an outage: the network error's code, or the HTTP status. */
function outageText(err: unknown): string {
  return err instanceof ApiError ? `${err.code} ${err.reason}` : (networkCode(err) ?? '');
}

/** The code of the network error under a client error (ECONNRESET, ECONNREFUSED, …), if that is what it is. */
function networkCode(err: unknown): string | undefined {
  const cause = err instanceof Error ? err.cause : undefined;
  const code = cause instanceof Error ? (cause as NodeJS.ErrnoException).code : undefined;
  return typeof code === 'string' ? code : undefined;
}
