// The work queue: string keys (`Agent/ns/name`), never objects, so a reconcile always reads the
// newest state from the cache. Semantics are client-go's workqueue as controller-runtime drives it:
// - a key waiting to run is held once: adding it again merges (dirty set);
// - a key never runs twice at once: added while it runs, it runs once more after (processing set);
// - a failure puts the key back after a per-key exponential backoff, reset by a success;
// - `{ requeueAfter }` puts it back after that delay, `{ requeue: true }` with backoff.
// A reconciler that throws (or rejects) is a retry; nothing escapes as an unhandled rejection.
import { Backoff, type BackoffOptions } from '../kube/backoff.ts';
import { errorReason } from '../kube/errors.ts';
import { errorFields, silentLogger, type Logger } from '../leaves/logger.ts';
import { noControllerMetrics, type ControllerMetrics, type ReconcileResultLabel } from './metrics.ts';

/** What a reconciler returns: nothing ("done"), a delay before the next run, or a retry with backoff. */
export type ReconcileResult = void | { requeueAfter?: number; requeue?: boolean };

/** Reconciles one key. `signal` aborts when the queue stops with `abort` (shutdown, lost lease). */
export type Reconciler = (key: string, signal: AbortSignal) => ReconcileResult | Promise<ReconcileResult>;

/** Time and timers, injectable so tests drive them by hand. Milliseconds. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Per-key delay before a retry. */
export interface RateLimiter {
  /** The delay before the next retry of `key`; counts one more failure. */
  when(key: string): number;
  /** Forgets the key's failures (after a success). */
  forget(key: string): void;
  failures(key: string): number;
}

/**
 * client-go's ItemExponentialFailureRateLimiter: base · 2^failures, capped. controller-runtime's
 * default limiter is the maximum of this one (5 ms, 1000 s) and a token bucket shared by all keys
 * (10 per second, burst 100). We keep only the per-key part: the number of concurrent reconciles
 * already bounds the load on the API server, and after a mass failure (an API server restart
 * making 1,000 keys fail) the bucket would hold the last retries back by 100 s for no gain.
 */
export class ExponentialRateLimiter implements RateLimiter {
  readonly #options: BackoffOptions;
  /** One backoff (kube/backoff.ts, without jitter) per failing key. */
  readonly #byKey = new Map<string, Backoff>();

  constructor(options: { baseMs?: number; maxMs?: number } = {}) {
    const baseMs = options.baseMs ?? 5;
    const maxMs = options.maxMs ?? 1_000_000;
    if (!(baseMs > 0) || !(maxMs >= baseMs)) {
      throw new RangeError(`rate limiter: need 0 < baseMs <= maxMs, got baseMs ${baseMs}, maxMs ${maxMs}`);
    }
    this.#options = { initialMs: baseMs, maxMs, jitter: 'none' };
  }

  when(key: string): number {
    let backoff = this.#byKey.get(key);
    if (backoff === undefined) {
      backoff = new Backoff(this.#options);
      this.#byKey.set(key, backoff);
    }
    return backoff.next();
  }

  forget(key: string): void {
    this.#byKey.delete(key);
  }

  failures(key: string): number {
    return this.#byKey.get(key)?.attempts ?? 0;
  }
}

export interface WorkQueueOptions {
  /** The controller's name (e.g. `agent`): the metrics' `controller`/`name` label and in logs. */
  name: string;
  reconcile: Reconciler;
  /** Reconciles running at once (`MAX_CONCURRENT_RECONCILES`); default 4. */
  concurrency?: number;
  rateLimiter?: RateLimiter;
  clock?: Clock;
  metrics?: ControllerMetrics;
  logger?: Logger;
  /** Aborting it is stop({ abort: true }). */
  signal?: AbortSignal;
}

/** Node's timers overflow (and fire at once, with a warning) beyond 2^31-1 ms, about 24.8 days. */
const MAX_TIMER_MS = 2 ** 31 - 1;

type State = 'new' | 'running' | 'stopping' | 'stopped';

export class WorkQueue {
  readonly name: string;
  readonly #reconcile: Reconciler;
  readonly #concurrency: number;
  readonly #limiter: RateLimiter;
  readonly #clock: Clock;
  readonly #metrics: ControllerMetrics;
  readonly #log: Logger;
  /** Keys waiting to run → when they were added (for queue_duration). A key is here at most once. */
  readonly #dirty = new Map<string, number>();
  /** Dirty keys not running, in order of arrival: the ones a worker may take. */
  readonly #ready = new Set<string>();
  /** Keys running now → their reconcile's AbortController. */
  readonly #processing = new Map<string, AbortController>();
  /** Keys whose last reconcile failed: they are retried with backoff until one succeeds. */
  readonly #failing = new Set<string>();
  /** Keys put back for later → when, and the timer. */
  readonly #delayed = new Map<string, { at: number; timer: unknown }>();
  #state: State = 'new';
  #idleWaiters: (() => void)[] = [];
  #stopped: Promise<void> | undefined;

  constructor(options: WorkQueueOptions) {
    const concurrency = options.concurrency ?? 4;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`work queue ${options.name}: concurrency must be a positive integer, got ${concurrency}`);
    }
    this.name = options.name;
    this.#reconcile = options.reconcile;
    this.#concurrency = concurrency;
    this.#limiter = options.rateLimiter ?? new ExponentialRateLimiter();
    this.#clock = options.clock ?? systemClock;
    this.#metrics = options.metrics ?? noControllerMetrics;
    this.#log = options.logger ?? silentLogger;
    this.#metrics.maxConcurrentReconciles(concurrency);
    const signal = options.signal;
    if (signal !== undefined) {
      if (signal.aborted) this.#state = 'stopped';
      else signal.addEventListener('abort', () => void this.stop({ abort: true }), { once: true });
    }
  }

  /** Starts the workers. Keys added before are kept and run now (e.g. the cache's first list). */
  start(): void {
    if (this.#state !== 'new') return;
    this.#state = 'running';
    this.#pump();
  }

  /** Queues `key` to run as soon as a worker is free. Ignored once stopping. */
  add(key: string): void {
    if (this.#state === 'stopping' || this.#state === 'stopped') return;
    if (this.#dirty.has(key)) return; // merges with the waiting one
    this.#dirty.set(key, this.#clock.now());
    this.#metrics.added();
    this.#metrics.depth(this.#dirty.size);
    if (this.#processing.has(key)) return; // runs again when the current run ends
    this.#ready.add(key);
    this.#pump();
  }

  /** Queues `key` after `ms`. A key already waiting for an earlier time keeps the earlier one. */
  addAfter(key: string, ms: number): void {
    if (this.#state === 'stopping' || this.#state === 'stopped') return;
    if (!(ms > 0)) {
      this.add(key);
      return;
    }
    const delay = Math.min(ms, MAX_TIMER_MS);
    const at = this.#clock.now() + delay;
    const pending = this.#delayed.get(key);
    if (pending !== undefined) {
      if (pending.at <= at) return;
      this.#clock.clearTimeout(pending.timer);
    }
    const timer = this.#clock.setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, delay);
    this.#delayed.set(key, { at, timer });
  }

  /** Queues `key` after its backoff and counts one more failure of it. */
  addRateLimited(key: string): number {
    const delay = this.#limiter.when(key);
    this.#metrics.retried();
    this.addAfter(key, delay);
    return delay;
  }

  /** Keys waiting to run (workqueue_depth). */
  get depth(): number {
    return this.#dirty.size;
  }

  /** Keys running now. */
  get active(): number {
    return this.#processing.size;
  }

  /** Keys put back for later. */
  get delayed(): number {
    return this.#delayed.size;
  }

  /** Resolves when no key waits and none runs (keys put back for later may remain). */
  whenIdle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /**
   * Stops taking work: drops waiting and delayed keys, refuses new ones, and resolves when the
   * running reconciles have ended. With `abort`, their signals abort first (a lost lease must stop
   * writing at once); without, they finish (a graceful shutdown). A stopped queue stays stopped.
   */
  stop(options: { abort?: boolean } = {}): Promise<void> {
    if (options.abort === true) for (const controller of this.#processing.values()) controller.abort(new Error(`work queue ${this.name} stopped`));
    if (this.#stopped !== undefined) return this.#stopped;
    this.#state = 'stopping';
    for (const { timer } of this.#delayed.values()) this.#clock.clearTimeout(timer);
    this.#delayed.clear();
    this.#ready.clear();
    this.#dirty.clear();
    this.#failing.clear();
    this.#metrics.depth(0);
    this.#metrics.failing(0);
    this.#stopped = this.whenIdle().then(() => {
      this.#state = 'stopped';
    });
    return this.#stopped;
  }

  #pump(): void {
    if (this.#state !== 'running') return;
    while (this.#processing.size < this.#concurrency) {
      const next = this.#ready.values().next();
      if (next.done === true) break;
      const key = next.value;
      this.#ready.delete(key);
      const addedAt = this.#dirty.get(key) ?? this.#clock.now();
      this.#dirty.delete(key);
      this.#metrics.depth(this.#dirty.size);
      this.#metrics.started(Math.max(0, this.#clock.now() - addedAt) / 1000);
      const controller = new AbortController();
      this.#processing.set(key, controller);
      this.#metrics.activeWorkers(this.#processing.size);
      // #run handles every outcome of the reconciler; this catch only guards against a throwing
      // logger or metrics hook, which must not become an unhandled rejection either.
      this.#run(key, controller.signal).catch(() => {});
    }
  }

  async #run(key: string, signal: AbortSignal): Promise<void> {
    const start = this.#clock.now();
    let label: ReconcileResultLabel | undefined;
    try {
      const result = await this.#reconcile(key, signal);
      label = this.#handleResult(key, result);
    } catch (err) {
      label = this.#handleError(key, err, signal);
    } finally {
      try {
        if (label !== undefined) this.#metrics.reconciled(label, Math.max(0, this.#clock.now() - start) / 1000);
      } finally {
        this.#processing.delete(key);
        this.#metrics.activeWorkers(this.#processing.size);
        if (this.#dirty.has(key)) this.#ready.add(key);
        this.#pump();
        this.#notifyIfIdle();
      }
    }
  }

  #handleResult(key: string, result: ReconcileResult): ReconcileResultLabel {
    if (this.#failing.delete(key)) this.#metrics.failing(this.#failing.size);
    if (result === undefined || result === null) {
      this.#limiter.forget(key);
      return 'success';
    }
    const { requeueAfter, requeue } = result;
    if (requeueAfter !== undefined && !(Number.isFinite(requeueAfter) && requeueAfter >= 0)) {
      throw new TypeError(`reconciler returned an invalid requeueAfter: ${String(requeueAfter)} (a number of milliseconds >= 0)`);
    }
    if (requeueAfter !== undefined && requeueAfter > 0) {
      this.#limiter.forget(key);
      this.addAfter(key, requeueAfter);
      return 'requeue_after';
    }
    if (requeue === true) {
      this.addRateLimited(key);
      return 'requeue';
    }
    this.#limiter.forget(key);
    return 'success';
  }

  #handleError(key: string, err: unknown, signal: AbortSignal): ReconcileResultLabel | undefined {
    if (signal.aborted) {
      // Stopped on purpose (shutdown, lost lease): not a failure, and nothing to retry here.
      this.#log.debug({ controller: this.name, key }, 'reconcile aborted');
      return undefined;
    }
    const retryInMs = this.addRateLimited(key);
    this.#metrics.failed(errorReason(err));
    this.#failing.add(key);
    this.#metrics.failing(this.#failing.size);
    this.#log.error({ controller: this.name, key, retryInMs, failures: this.#limiter.failures(key), ...errorFields(err) }, 'reconcile failed');
    return 'error';
  }

  #isIdle(): boolean {
    return this.#processing.size === 0 && (this.#ready.size === 0 || this.#state !== 'running');
  }

  #notifyIfIdle(): void {
    if (!this.#isIdle() || this.#idleWaiters.length === 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
