// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it:
// candidates poll the Lease every retry period and take it when it is free, released, or has
// not changed for a whole lease duration *as observed locally* (so clocks never need to agree);
// the leader renews it every retry period and stops leading the moment it has not renewed for
// the renew deadline.
//
// Why losing is safe: the renew deadline is measured from the *start* of the last successful
// renew request, which is no later than the moment the API server stored it, which is no later
// than the moment any other candidate observed it. Another candidate takes over no earlier than
// its observation + leaseDuration; this one has stopped (its signal aborted, its in-flight
// request cancelled) at renew start + renewDeadline, and renewDeadline < leaseDuration.
import { METRIC } from '../leaves/metric-names.ts';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Registry } from 'prom-client';
import { Gauge } from 'prom-client';
import type { KubeClient } from './client.ts';
import { isConflict, isNotFound } from './errors.ts';
import { errorFields, silentLogger, type Logger } from '../leaves/logger.ts';
import { LEASE, resourcePath } from './paths.ts';
import { formatMicroTime } from '../leaves/meta-time.ts';

/** coordination.k8s.io/v1 LeaseSpec (the fields leader election uses). */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [key: string]: unknown };
  spec?: LeaseSpec;
}

export type LeaseClient = Pick<KubeClient, 'get' | 'create' | 'replace'>;

export interface LeaderElectionOptions {
  client: LeaseClient;
  /** Namespace and name of the Lease. */
  namespace: string;
  name: string;
  /** Default: POD_NAME, else `<hostname>_<pid>`. */
  identity?: string;
  /** How long a Lease that has not changed keeps other candidates out. Default 15 s. */
  leaseDurationMs?: number;
  /** A leader that has not renewed for this long stops leading. Default 10 s; < leaseDuration. */
  renewDeadlineMs?: number;
  /** Between two attempts to acquire or renew. Default 2 s; < renewDeadline. */
  retryPeriodMs?: number;
  /**
   * Called on becoming the leader. `signal` aborts the moment leadership is lost or stop() is
   * called; no write may be made after that. A returned promise is awaited by stop() before the
   * Lease is released, so a successor never overlaps with work still in flight.
   */
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /** Called once after each term, after the signal has aborted. */
  onStoppedLeading?: () => void;
  /** Called whenever the observed holder changes (including to this identity). */
  onNewLeader?: (identity: string) => void;
  /** stop() releases the Lease so that a successor takes over at once. Default true. */
  releaseOnStop?: boolean;
  metrics?: LeaderElectionMetrics;
  logger?: Logger;
  /** For tests: jitter source. */
  random?: () => number;
}

export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;
/** Candidates wait retryPeriod × [1, 1 + JITTER) so that they do not poll in step. */
const JITTER = 0.2;

export function defaultIdentity(env: NodeJS.ProcessEnv = process.env): string {
  const pod = env.POD_NAME;
  return pod !== undefined && pod !== '' ? pod : `${hostname()}_${process.pid}`;
}

/** The checks client-go makes, with clear messages. */
export function validateTimings(leaseDurationMs: number, renewDeadlineMs: number, retryPeriodMs: number): void {
  const problems: string[] = [];
  for (const [name, v] of [['leaseDuration', leaseDurationMs], ['renewDeadline', renewDeadlineMs], ['retryPeriod', retryPeriodMs]] as const) {
    if (!Number.isFinite(v) || v <= 0) problems.push(`${name} must be a positive number of milliseconds (got ${v})`);
  }
  if (leaseDurationMs <= renewDeadlineMs) problems.push(`leaseDuration (${leaseDurationMs} ms) must be greater than renewDeadline (${renewDeadlineMs} ms)`);
  if (renewDeadlineMs <= retryPeriodMs * (1 + JITTER)) problems.push(`renewDeadline (${renewDeadlineMs} ms) must be greater than retryPeriod × ${1 + JITTER} (${retryPeriodMs} ms)`);
  if (problems.length > 0) throw new Error(`leader election: ${problems.join('; ')}`);
}

/**
 * Pure: may `identity` take or renew the Lease whose spec is `record`, last seen to change at
 * `observedAtMs` (local monotonic time)? Yes when there is none, it is released (no holder), it
 * is ours, or it has not changed for a whole lease duration — the holder's (its
 * `leaseDurationSeconds`, as client-go reads it), else ours: a holder with a longer lease than
 * ours is not taken over early.
 */
export function canAcquire(record: LeaseSpec | undefined, identity: string, observedAtMs: number, nowMs: number, leaseDurationMs: number): boolean {
  const holder = record?.holderIdentity ?? '';
  if (holder === '' || holder === identity) return true;
  const seconds = record?.leaseDurationSeconds;
  const duration = typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : leaseDurationMs;
  return observedAtMs + duration <= nowMs;
}

/** Pure: the spec this identity writes to take or renew the Lease at `now`. */
export function acquiredSpec(record: LeaseSpec | undefined, identity: string, now: Date, leaseDurationMs: number): LeaseSpec {
  const time = formatMicroTime(now);
  const same = record?.holderIdentity === identity;
  const transitions = record?.leaseTransitions ?? 0;
  return {
    holderIdentity: identity,
    leaseDurationSeconds: Math.max(1, Math.ceil(leaseDurationMs / 1000)),
    acquireTime: same && record?.acquireTime !== undefined ? record.acquireTime : time,
    renewTime: time,
    // A transition is a change of holder; the first holder of a new Lease is none.
    leaseTransitions: same || record === undefined ? transitions : transitions + 1,
  };
}

/** Pure: the released spec (client-go's ReleaseOnCancel): no holder, so the next candidate takes it at once. */
export function releasedSpec(record: LeaseSpec | undefined, now: Date): LeaseSpec {
  const time = formatMicroTime(now);
  return { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: time, renewTime: time, leaseTransitions: record?.leaseTransitions ?? 0 };
}

function sameRecord(a: LeaseSpec | undefined, b: LeaseSpec | undefined): boolean {
  return (
    a?.holderIdentity === b?.holderIdentity &&
    a?.renewTime === b?.renewTime &&
    a?.acquireTime === b?.acquireTime &&
    a?.leaseTransitions === b?.leaseTransitions &&
    a?.leaseDurationSeconds === b?.leaseDurationSeconds
  );
}

// ---------------------------------------------------------------------------------------------
// Metrics

export interface LeaderElectionMetrics {
  setLeading(name: string, leading: boolean): void;
}

const MASTER_STATUS = METRIC.leaderStatus;

/**
 * `leader_election_master_status{name}`: 1 while this process leads the Lease `name`, else 0
 * (client-go's metric). Idempotent per registry, so several electors can share it.
 */
export function createLeaderElectionMetrics(registry: Registry): LeaderElectionMetrics {
  const existing = registry.getSingleMetric(MASTER_STATUS);
  const gauge =
    existing instanceof Gauge
      ? (existing as Gauge<'name'>)
      : new Gauge({
          name: MASTER_STATUS,
          help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. \'name\' is the string used to identify the lease.',
          labelNames: ['name'] as const,
          registers: [registry],
        });
  return { setLeading: (name, leading) => gauge.set({ name }, leading ? 1 : 0) };
}

// ---------------------------------------------------------------------------------------------
// The elector

export class LeaderElector {
  readonly identity: string;
  readonly #client: LeaseClient;
  readonly #namespace: string;
  readonly #name: string;
  readonly #path: string;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #options: LeaderElectionOptions;
  readonly #log: Logger;
  readonly #random: () => number;
  readonly #stop = new AbortController();
  /** The last Lease read or written, and when (monotonic) its spec was seen to change. */
  #observed: Lease | undefined;
  #observedAtMs = 0;
  #observedHolder = '';
  /** Present while leading. */
  #term: { abort: AbortController; deadline: NodeJS.Timeout; work: Promise<void> } | undefined;
  #loop: Promise<void> | undefined;

  constructor(options: LeaderElectionOptions) {
    this.#options = options;
    this.#client = options.client;
    this.#namespace = options.namespace;
    this.#name = options.name;
    this.#path = resourcePath(LEASE, { namespace: options.namespace, name: options.name });
    this.identity = options.identity ?? defaultIdentity();
    if (this.identity === '') throw new Error('leader election: empty identity');
    this.#leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    this.#retryPeriodMs = options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    validateTimings(this.#leaseDurationMs, this.#renewDeadlineMs, this.#retryPeriodMs);
    this.#log = options.logger ?? silentLogger;
    this.#random = options.random ?? Math.random;
    options.metrics?.setLeading(this.#name, false);
  }

  /** Starts campaigning. Idempotent; a stopped elector cannot be restarted. */
  start(): void {
    if (this.#stop.signal.aborted) throw new Error('leader elector was stopped');
    this.#loop ??= this.#run();
  }

  isLeader(): boolean {
    return this.#term !== undefined;
  }

  /**
   * Stops campaigning. A leader stops leading (its signal aborts), waits for the work that
   * onStartedLeading returned, then releases the Lease unless `release` is false (a crash).
   */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    this.#stop.abort(new Error('leader elector stopped'));
    const release = options.release ?? this.#options.releaseOnStop ?? true;
    const term = this.#term;
    if (term !== undefined) {
      this.#endTerm('stopping');
      await term.work;
    }
    await this.#loop;
    // Also when an acquire completed just as stop() was called: whatever Lease we last saw as
    // ours is handed over (guarded by its resourceVersion, so never one someone else wrote).
    if (release) await this.#release();
  }

  async #run(): Promise<void> {
    const stop = this.#stop.signal;
    while (!stop.aborted) {
      let acquired = false;
      const started = performance.now();
      try {
        acquired = await this.#tryAcquireOrRenew(stop, started);
      } catch (err) {
        if (stop.aborted) break;
        this.#log.warn({ lease: this.#name, ...errorFields(err) }, 'error acquiring the lease');
      }
      if (acquired && !stop.aborted) {
        await this.#lead(started);
        continue;
      }
      try {
        await sleep(this.#retryPeriodMs * (1 + JITTER * this.#random()), undefined, { signal: stop });
      } catch {
        break;
      }
    }
  }

  /**
   * One term, from the acquiring request that started at `acquiredStart`: renew every retry
   * period until the deadline passes, the Lease is lost or stop() is called.
   */
  async #lead(acquiredStart: number): Promise<void> {
    const abort = new AbortController();
    const signal = abort.signal;
    const deadline = setTimeout(() => this.#endTerm('renew deadline passed'), this.#renewDeadlineMs);
    this.#term = { abort, deadline, work: Promise.resolve() };
    this.#rearm(acquiredStart);
    this.#options.metrics?.setLeading(this.#name, true);
    this.#log.info({ lease: this.#name, identity: this.identity }, 'became leader');
    this.#term.work = Promise.resolve()
      .then(() => this.#options.onStartedLeading(signal))
      .catch((err: unknown) => this.#log.error({ lease: this.#name, ...errorFields(err) }, 'onStartedLeading failed'));

    while (!signal.aborted) {
      try {
        await sleep(this.#retryPeriodMs, undefined, { signal });
      } catch {
        break;
      }
      const started = performance.now();
      let renewed = false;
      try {
        renewed = await this.#tryAcquireOrRenew(signal, started);
      } catch (err) {
        if (signal.aborted) break;
        this.#log.warn({ lease: this.#name, ...errorFields(err) }, 'error renewing the lease');
        continue;
      }
      if (signal.aborted) break;
      if (renewed) {
        // The deadline counts from the start of this successful request (see the top).
        this.#rearm(started);
      } else {
        this.#endTerm(`lease held by ${this.#observedHolder}`);
      }
    }
  }

  /** Moves the deadline to lastRenewStart + renewDeadline. */
  #rearm(lastRenewStart: number): void {
    const term = this.#term;
    if (term === undefined) return;
    clearTimeout(term.deadline);
    const remaining = Math.max(0, lastRenewStart + this.#renewDeadlineMs - performance.now());
    term.deadline = setTimeout(() => this.#endTerm('renew deadline passed'), remaining);
  }

  /** Stops leading now: abort first (no write after this), then the metric and the callback. */
  #endTerm(why: string): void {
    const term = this.#term;
    if (term === undefined) return;
    this.#term = undefined;
    clearTimeout(term.deadline);
    term.abort.abort(new Error(`leadership lost: ${why}`));
    this.#options.metrics?.setLeading(this.#name, false);
    this.#log.info({ lease: this.#name, identity: this.identity, reason: why }, 'stopped leading');
    try {
      this.#options.onStoppedLeading?.();
    } catch (err) {
      this.#log.error({ lease: this.#name, ...errorFields(err) }, 'onStoppedLeading threw');
    }
  }

  /**
   * One attempt. The leader writes straight over the Lease it last saw (one request per renew);
   * on a conflict, or as a candidate, it reads the Lease first.
   */
  async #tryAcquireOrRenew(signal: AbortSignal, nowMs: number): Promise<boolean> {
    const observed = this.#observed;
    if (this.#term !== undefined && observed?.spec?.holderIdentity === this.identity) {
      try {
        return await this.#write(observed, signal);
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
    }
    let lease: Lease;
    try {
      lease = await this.#client.get<Lease>(this.#path, { signal, timeoutMs: this.#requestTimeoutMs() });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const created = await this.#client.create<Lease>(
        resourcePath(LEASE, { namespace: this.#namespace }),
        {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.#name, namespace: this.#namespace },
          spec: acquiredSpec(undefined, this.identity, new Date(), this.#leaseDurationMs),
        },
        { signal, timeoutMs: this.#requestTimeoutMs() },
      );
      this.#observe(created, nowMs);
      return true;
    }
    this.#observe(lease, performance.now());
    if (!canAcquire(lease.spec, this.identity, this.#observedAtMs, nowMs, this.#leaseDurationMs)) return false;
    try {
      return await this.#write(lease, signal);
    } catch (err) {
      if (isConflict(err)) return false; // someone else wrote it first
      throw err;
    }
  }

  async #write(base: Lease, signal: AbortSignal): Promise<boolean> {
    const written = await this.#client.replace<Lease>(
      this.#path,
      { ...base, spec: { ...base.spec, ...acquiredSpec(base.spec, this.identity, new Date(), this.#leaseDurationMs) } },
      { signal, timeoutMs: this.#requestTimeoutMs() },
    );
    this.#observe(written, performance.now());
    return true;
  }

  /** No request may outlive the renew deadline. */
  #requestTimeoutMs(): number {
    return this.#renewDeadlineMs;
  }

  #observe(lease: Lease, atMs: number): void {
    if (!sameRecord(lease.spec, this.#observed?.spec)) this.#observedAtMs = atMs;
    this.#observed = lease;
    const holder = lease.spec?.holderIdentity ?? '';
    if (holder !== this.#observedHolder) {
      this.#observedHolder = holder;
      if (holder !== '') this.#options.onNewLeader?.(holder);
    }
  }

  /** Hands the Lease over: only if it is still ours, with our last resourceVersion. */
  async #release(): Promise<void> {
    const options = { timeoutMs: this.#renewDeadlineMs };
    try {
      let lease = this.#observed;
      for (let attempt = 0; attempt < 2; attempt++) {
        if (lease?.spec?.holderIdentity !== this.identity) return;
        try {
          this.#observed = await this.#client.replace<Lease>(
            this.#path,
            { ...lease, spec: { ...lease.spec, ...releasedSpec(lease.spec, new Date()) } },
            options,
          );
          this.#log.info({ lease: this.#name, identity: this.identity }, 'released the lease');
          return;
        } catch (err) {
          // A renew cut short by stop() may still have reached the server: read it again once.
          if (!isConflict(err) || attempt > 0) throw err;
          lease = await this.#client.get<Lease>(this.#path, options);
        }
      }
    } catch (err) {
      this.#log.warn({ lease: this.#name, ...errorFields(err) }, 'could not release the lease');
    }
  }
}
