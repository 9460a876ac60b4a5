// How admission's lookups are answered from a cache (the ObjectLookup of api/lookup.ts), written
// once for every cache that answers them: KaosCache, whose stores are its reflectors, and the
// admission thread's CacheView, whose stores are a replica of them. A hit is answered from the
// store; a miss may be an object created a moment ago that the watch has not delivered yet, so it
// costs one live read (within the request's LookupBudget when it has one).
import type { KaosKind } from '../api/kinds.ts';
import type { KubeObject, ObjectLookup, ReadKind, Referrer } from '../api/lookup.ts';
import { HARNESS_REGISTRY_NOT_READ, type HarnessRegistryState } from '../api/harness-runtimes.ts';
import type { RegistryState } from '../api/mcp-runtimes.ts';
import { LookupNotMade, type LookupBudget } from '../api/lookup-budget.ts';
import type { KubeClient } from '../kube/client.ts';
import { ApiError, isNotFound } from '../kube/errors.ts';
import { NAMESPACE, resourcePath } from '../kube/paths.ts';
import type { Logger } from '../leaves/logger.ts';
import { kaosPath } from './kaos-resources.ts';

/** Which objects of one type exist, as a lookup asks it. */
export interface NameStore {
  isSynced(): boolean;
  has(namespace: string, name: string): boolean;
}

/** One type's store as a lookup reads it: a reflector, a reflector group, or a replica. */
export interface LookupStore {
  isSynced(): boolean;
  /** `namespace` is undefined for a cluster-scoped type (Namespaces). */
  getByName(namespace: string | undefined, name: string): KubeObject | undefined;
}

/**
 * The runtime registries a cache holds, each as its readers know it (docs/api.md, "MCPServer
 * runtimes" and "Agent harness"): one ConfigMap each, watched by name.
 */
export interface RegistryStates {
  readonly mcp: RegistryState;
  readonly harness: HarnessRegistryState;
}
export type RegistryName = keyof RegistryStates;
export const REGISTRY_NAMES: readonly RegistryName[] = ['mcp', 'harness'];

/** What a cache answers lookups from. */
export interface LookupStores {
  /** The objects of the kinds admission reads whole. */
  kaos(kind: ReadKind): LookupStore;
  /** Which objects of a kind exist (of an Agent, all the admission thread's view keeps). */
  names(kind: KaosKind): NameStore;
  readonly namespaceStore: LookupStore;
  referencedBy(kind: KaosKind, namespace: string, name: string): Referrer[];
  /** Undefined while that registry is not watched. */
  registry<N extends RegistryName>(name: N): RegistryStates[N] | undefined;
}

export interface CacheLookupOptions {
  client: Pick<KubeClient, 'get'>;
  logger: Logger;
  /**
   * Deadline of the one live read made on a cache miss. The webhooks have timeoutSeconds 5 in
   * all, so a read must give up well before the API server gives up on us.
   */
  liveReadTimeoutMs?: number;
}

export class CacheLookup implements ObjectLookup {
  readonly #stores: LookupStores;
  readonly #client: Pick<KubeClient, 'get'>;
  readonly #log: Logger;
  readonly #liveReadTimeoutMs: number;
  #liveReads = 0;

  constructor(stores: LookupStores, options: CacheLookupOptions) {
    this.#stores = stores;
    this.#client = options.client;
    this.#log = options.logger;
    this.#liveReadTimeoutMs = options.liveReadTimeoutMs ?? 1500;
  }

  /** Live reads made on cache misses so far (for tests and metrics). */
  get liveReads(): number {
    return this.#liveReads;
  }

  async get(kind: ReadKind, namespace: string, name: string, budget?: LookupBudget): Promise<KubeObject | undefined> {
    const store = this.#stores.kaos(kind);
    if (store.isSynced()) {
      const cached = store.getByName(namespace, name);
      if (cached !== undefined) return cached;
    }
    return this.#readMiss(kind, namespace, name, budget);
  }

  current(kind: KaosKind, namespace: string, name: string, budget?: LookupBudget): Promise<KubeObject | undefined> {
    return this.#readMiss(kind, namespace, name, budget);
  }

  async exists(kind: KaosKind, namespace: string, name: string, budget?: LookupBudget): Promise<boolean> {
    const store = this.#stores.names(kind);
    if (store.isSynced() && store.has(namespace, name)) return true;
    return (await this.#readMiss(kind, namespace, name, budget)) !== undefined;
  }

  /**
   * A miss may be an object created a moment ago that the watch has not delivered yet: one live
   * read settles it. Errors other than 404 propagate: "could not check" is not "absent". With a
   * budget, only as many as the request may make (lookup-budget.ts).
   */
  #readMiss(kind: KaosKind, namespace: string, name: string, budget: LookupBudget | undefined): Promise<KubeObject | undefined> {
    if (namespace === '' || name === '') return Promise.resolve(undefined);
    const timeoutMs = budget?.claim();
    return this.#liveGet<KubeObject>(kaosPath(kind, { namespace, name }), { kind, namespace, name }, budget, timeoutMs);
  }

  /** The MCP runtime registry (docs/api.md, "MCPServer runtimes") from its reflector; a problem until one is attached and synced. */
  mcpRuntimes(): RegistryState {
    return this.#stores.registry('mcp') ?? { problem: 'the MCP runtime registry is not watched' };
  }

  /** The harness runtime registry (docs/api.md, "Agent harness") from its reflector; a problem until one is attached and synced. */
  harnessRuntimes(): HarnessRegistryState {
    return this.#stores.registry('harness') ?? HARNESS_REGISTRY_NOT_READ;
  }

  referencedBy(kind: KaosKind, namespace: string, name: string): Referrer[] {
    return this.#stores.referencedBy(kind, namespace, name);
  }

  async namespaceLabels(namespace: string, budget?: LookupBudget): Promise<Record<string, string> | undefined> {
    let ns: KubeObject | undefined;
    const store = this.#stores.namespaceStore;
    if (store.isSynced()) ns = store.getByName(undefined, namespace);
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
