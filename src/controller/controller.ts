// The controller: cache events → keys (triggers.ts) → one WorkQueue per kind → the kind's
// reconciler with a ReconcileContext bound to the cache and the API client. Queues exist only
// while this replica leads (a Lease, or at once with LEADER_ELECT=false) and the cache has
// synced; losing the lease aborts them at once, so no write follows a lost lease. The webhooks
// are not part of this and keep serving either way.
import type { Registry } from 'prom-client';
import { KINDS, WORKLOAD_KINDS, type KaosKind } from '../api/kinds.ts';
import { securityEnabled } from '../config/security.ts';
import type { ServiceAccountIssuerSource } from '../cluster/service-account-issuer.ts';
import type { KubeObject } from '../api/lookup.ts';
import type { Config } from '../config/config.ts';
import type { KaosCache } from '../cluster/cache.ts';
import type { KubeClient } from '../kube/client.ts';
import { EventRecorder } from '../kube/events.ts';
import {
  createLeaderElectionMetrics,
  defaultIdentity,
  LeaderElector,
  type LeaderElectionOptions,
} from '../kube/leader-election.ts';
import type { ReflectorEvent } from '../kube/reflector.ts';
import type { Logger } from '../leaves/logger.ts';
import type { GrantGateFacts } from '../api/access-grants.ts';
import type { AuthzProjection } from './authz-projection.ts';
import { bindReconcileContext } from './context-binding.ts';
import { createControllerMetrics, type ControllerMetrics } from './metrics.ts';
import { WorkQueue } from './queue.ts';
import type { KindReconciler, ReconcileContext } from './reconcile/context.ts';
import { RECONCILERS } from './reconcile/index.ts';
import { parseRefKey, refKey } from '../cluster/object-ref.ts';
import { keysForChildEvent, keysForDependencyEvent, keysForKaosEvent } from './triggers.ts';
import { harnessAgentKeysForRegistryChange, mcpServerKeysForRegistryChange, type HarnessRegistry, type RuntimeRegistry } from './runtime-registry.ts';
import type { ControllerWatches } from './watches.ts';

/** controller-runtime's controller names: the `controller` label of every metric. */
export const CONTROLLER_NAMES: Readonly<Record<KaosKind, string>> = {
  Agent: 'agent',
  ModelAPI: 'modelapi',
  MCPServer: 'mcpserver',
  MemoryStore: 'memorystore',
  AccessGrant: 'accessgrant',
};

/** The leader-election Lease (in LEADER_ELECTION_NAMESPACE). */
export const LEASE_NAME = 'kaos-operator';

/**
 * Pure: the wait before the next periodic resync, `periodMs` ± 10 % (`random` in [0, 1)), so that
 * replicas and restarts do not resync in step.
 */
export function resyncDelay(periodMs: number, random: number): number {
  return Math.round(periodMs * (0.9 + 0.2 * random));
}

export interface ControllerOptions {
  cache: KaosCache;
  watches: ControllerWatches;
  /** The MCP runtime registry: its changes wake the MCPServers whose entries changed. */
  runtimes?: Pick<RuntimeRegistry, 'onChange'>;
  /** The harness runtime registry: its changes wake the Agents whose entries changed. */
  harnessRuntimes?: Pick<HarnessRegistry, 'onChange'>;
  client: Pick<KubeClient, 'get' | 'create' | 'replace' | 'patch' | 'apply' | 'delete'>;
  config: Config;
  registry: Registry;
  logger: Logger;
  /** The policy projection (authz-projection.ts): it runs while this replica leads. */
  projection?: AuthzProjection;
  /** What AccessGrants read without a projection (it is not active): the gates alone. */
  grantGates?: GrantGateFacts;
  /** The discovered ServiceAccount issuer: the routes' SecurityPolicies verify agent tokens with its keys. */
  serviceAccountIssuer?: ServiceAccountIssuerSource;
  /** The user issuer's keys' URI (user-issuer.ts): the routes' SecurityPolicies name it in their user JWT provider. */
  userIssuer?: { jwksUri(): string | undefined; onChange(listener: () => void): void };
  /** The Gateway's status address, for gateway routing (watches.ts watchGatewayAddress). */
  gatewayAddress?: { address(): string | undefined; onChange(listener: () => void): void };
  /** Default: the RECONCILERS table. */
  reconcilers?: Readonly<Record<KaosKind, KindReconciler>>;
  /** Lease timings (tests shorten them); default client-go's 15/10/2 s. */
  leaseTimings?: Pick<LeaderElectionOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>;
}

export class Controller {
  readonly #cache: KaosCache;
  readonly #config: Config;
  readonly #log: Logger;
  readonly #reconcilers: Readonly<Record<KaosKind, KindReconciler>>;
  readonly #context: ReconcileContext;
  readonly #metrics: Record<KaosKind, ControllerMetrics>;
  readonly #elector: LeaderElector | undefined;
  readonly #projection: AuthzProjection | undefined;
  readonly #grantGates: GrantGateFacts;
  /** Without leader election: the one term, aborted by stop(). */
  readonly #ownTerm = new AbortController();
  #ownTermDone: Promise<void> | undefined;
  /** The queues of the current term; undefined while not leading. */
  #queues: Map<KaosKind, WorkQueue> | undefined;

  constructor(options: ControllerOptions) {
    const { cache, watches, client, config, registry, logger } = options;
    this.#cache = cache;
    this.#config = config;
    this.#log = logger;
    this.#reconcilers = options.reconcilers ?? RECONCILERS;
    this.#projection = options.projection;
    this.#grantGates = options.grantGates ?? { securityEnabled: false, userPlaneEnabled: false, projectionActive: false };
    this.#projection?.onGrantsChanged((keys) => this.#enqueue(keys));
    const factory = createControllerMetrics(registry);
    // One handle per controller for the life of the process: queues are new on each term.
    this.#metrics = Object.fromEntries(KINDS.map((kind) => [kind, factory.forController(CONTROLLER_NAMES[kind])])) as Record<KaosKind, ControllerMetrics>;
    const identity = config.controller.podName !== '' ? config.controller.podName : defaultIdentity();
    const events = new EventRecorder({ client, instance: identity, logger });
    this.#context = bindReconcileContext({
      cache,
      children: watches.children,
      secrets: watches.dependencies.Secret,
      // The dependency reflector (every ConfigMap, metadata only), not children.ConfigMap.
      configMaps: watches.dependencies.ConfigMap,
      httpRoutesServed: watches.httpRoutesServed,
      grantProjection: () => this.#projection?.reads() ?? { gates: this.#grantGates, of: () => ({ state: 'pending' }) },
      securityPoliciesServed: () => watches.optional.envoyGateway?.served() ?? false,
      serviceAccountIssuer: () => options.serviceAccountIssuer?.current(),
      userJwksUri: () => options.userIssuer?.jwksUri(),
      gatewayAddress: () => options.gatewayAddress?.address(),
      client,
      events,
      config,
      logger,
    });
    if (config.controller.leaderElect) {
      this.#elector = new LeaderElector({
        client,
        namespace: config.controller.leaderElectionNamespace,
        name: LEASE_NAME,
        identity,
        ...options.leaseTimings,
        metrics: createLeaderElectionMetrics(registry),
        logger,
        onStartedLeading: (signal) => this.#lead(signal),
      });
    }
    this.#subscribe(watches);
    // Every route's policies follow Envoy Gateway's CRD (installed later: they are written; removed:
    // the routes are withheld) and, with security enabled, the ServiceAccount issuer's keys they inline.
    watches.optional.envoyGateway?.onChange(() => this.#enqueueKinds(WORKLOAD_KINDS));
    options.serviceAccountIssuer?.onChange(() => {
      if (securityEnabled(config.security)) this.#enqueueKinds(WORKLOAD_KINDS);
    });
    // And the URI of the user issuer's keys, once discovered or when it moves.
    options.userIssuer?.onChange(() => {
      if (securityEnabled(config.security)) this.#enqueueKinds(WORKLOAD_KINDS);
    });
    options.gatewayAddress?.onChange(() => this.#enqueueKinds(['Agent']));
    options.runtimes?.onChange((previous, next) => this.#enqueue(mcpServerKeysForRegistryChange(previous, next, cache.mcpServers.list())));
    options.harnessRuntimes?.onChange((previous, next) => this.#enqueue(harnessAgentKeysForRegistryChange(previous, next, cache.agents.list())));
  }

  /** Starts campaigning for the Lease, or (LEADER_ELECT=false) reconciling once the cache syncs. */
  start(): void {
    if (this.#elector !== undefined) this.#elector.start();
    else this.#ownTermDone ??= this.#lead(this.#ownTerm.signal);
  }

  /** True while the queues run or wait for the cache (this replica leads). */
  isLeading(): boolean {
    return this.#queues !== undefined;
  }

  /**
   * Stops reconciling now (reconciles in flight are aborted: every write is idempotent and the
   * next leader redoes them), then releases the Lease so a successor takes over at once.
   */
  async stop(): Promise<void> {
    if (this.#elector !== undefined) {
      await this.#elector.stop();
    } else {
      this.#ownTerm.abort(new Error('controller stopped'));
      await this.#ownTermDone;
    }
  }

  /** Listeners live as long as the cache; keys go to the queues of the current term, if any. */
  #subscribe(watches: ControllerWatches): void {
    for (const kind of KINDS) {
      // The cache updates its dependency index first (its listener was registered before ours).
      this.#cache.reflector(kind).on((event) => this.#enqueue(keysForKaosEvent(kind, event, this.#cache.dependencies)));
    }
    for (const group of Object.values(watches.children)) {
      group.on((event) => this.#enqueue(keysForChildEvent(event)));
    }
    for (const [kind, group] of Object.entries(watches.dependencies)) {
      group.on((event: ReflectorEvent<KubeObject>) => this.#enqueue(keysForDependencyEvent(kind, event, this.#cache.dependencies)));
    }
  }

  #enqueue(keys: readonly string[]): void {
    const queues = this.#queues;
    if (queues === undefined) return;
    for (const key of keys) queues.get(parseRefKey(key).kind)?.add(key);
  }

  /**
   * One term: new queues (a stopped queue stays stopped), every cached object enqueued once the
   * cache has synced, then started. Resolves when the term's queues have stopped after `signal`
   * aborts (the elector waits for that before it releases the Lease).
   */
  async #lead(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const queues = new Map<KaosKind, WorkQueue>();
    for (const kind of KINDS) {
      queues.set(kind, new WorkQueue({
        name: CONTROLLER_NAMES[kind],
        concurrency: this.#config.controller.maxConcurrentReconciles,
        metrics: this.#metrics[kind],
        logger: this.#log,
        // Aborting the term is stop({ abort: true }): in-flight reconciles see their signal abort.
        signal,
        reconcile: (key, s) => this.#reconcile(kind, key, s),
      }));
    }
    this.#queues = queues;
    const stopped = new Promise<void>((resolve) => {
      signal.addEventListener('abort', () => {
        if (this.#queues === queues) this.#queues = undefined;
        void Promise.all([...queues.values()].map((q) => q.stop({ abort: true }))).then(() => resolve());
      }, { once: true });
    });
    try {
      await this.#cache.waitForSync(signal);
    } catch {
      return stopped; // the term ended (or the cache stopped) before the cache synced
    }
    if (signal.aborted) return stopped;
    const keys = this.#enqueueAll(queues);
    for (const queue of queues.values()) queue.start();
    this.#projection?.lead(signal);
    this.#log.info({ keys, leaderElection: this.#elector !== undefined }, 'controller started');
    this.#resyncEvery(this.#config.controller.resyncPeriodSeconds * 1000, queues, signal);
    return stopped;
  }

  /** Every cached object of `kinds` into its queue, while this replica leads. */
  #enqueueKinds(kinds: readonly KaosKind[]): void {
    const keys: string[] = [];
    for (const kind of kinds) {
      for (const object of this.#cache.reflector(kind).list()) {
        const { namespace, name } = object.metadata ?? {};
        if (namespace !== undefined && name !== undefined) keys.push(refKey(kind, namespace, name));
      }
    }
    this.#enqueue(keys);
  }

  /** Every cached object's key into its kind's queue; how many. */
  #enqueueAll(queues: ReadonlyMap<KaosKind, WorkQueue>): number {
    let keys = 0;
    for (const kind of KINDS) {
      const queue = queues.get(kind);
      for (const object of this.#cache.reflector(kind).list()) {
        const { namespace, name } = object.metadata ?? {};
        if (namespace === undefined || name === undefined) continue;
        queue?.add(refKey(kind, namespace, name));
        keys++;
      }
    }
    return keys;
  }

  /**
   * The periodic resync (controller-runtime's SyncPeriod, kube-rs's reconcile_all_on): every
   * cached object enqueued again each `periodMs` ± 10 % while the term lasts — a safety net
   * against a missed event, not a source of writes (a converged object's reconcile writes
   * nothing). A key already waiting merges. 0 = off.
   */
  #resyncEvery(periodMs: number, queues: ReadonlyMap<KaosKind, WorkQueue>, signal: AbortSignal): void {
    if (!(periodMs > 0) || signal.aborted) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (): void => {
      timer = setTimeout(() => {
        if (signal.aborted) return;
        this.#log.debug({ keys: this.#enqueueAll(queues) }, 'periodic resync');
        arm();
      }, resyncDelay(periodMs, Math.random()));
      // The term's end clears it; it must not keep the process alive on its own either.
      timer.unref();
    };
    arm();
    signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  }

  /** The kind's reconciler (which logs one line when it changed something: reconcile/frame.ts). */
  async #reconcile(kind: KaosKind, key: string, signal: AbortSignal): Promise<Awaited<ReturnType<KindReconciler>>> {
    return this.#reconcilers[kind](this.#context, parseRefKey(key), signal);
  }
}

