// One job that many events ask for, run once for all of them: the policy projection is a
// whole-world pass, so a burst of changes (a bulk apply of 1,000 Agents) must cost a few passes,
// not one per change. A trigger waits for `quietMs` without another one, but never more than
// `maxWaitMs` after the first trigger it collects, so a steady stream of changes still gets a
// pass every `maxWaitMs`. Triggers that arrive while a pass runs collect for the next one; a pass
// never runs twice at once. A failed pass is retried after a backoff (kube/backoff.ts), which a
// trigger does not cut short. Nothing runs without a trigger: no timer ticks while nothing changes.
import { Backoff } from '../kube/backoff.ts';
import type { Logger } from '../leaves/logger.ts';
import { errorFields } from '../leaves/logger.ts';
import { systemClock, type Clock } from './queue.ts';

export interface CoalescerOptions {
  /** The job; a rejection is a failure, retried after a backoff. */
  run: (signal: AbortSignal) => Promise<void>;
  quietMs: number;
  maxWaitMs: number;
  signal: AbortSignal;
  logger: Logger;
  /** What the log lines call the job. */
  name: string;
  clock?: Clock;
  backoff?: Backoff;
}

export class Coalescer {
  readonly #options: CoalescerOptions;
  readonly #clock: Clock;
  readonly #backoff: Backoff;
  /** When the oldest trigger not yet served came; undefined when none waits. */
  #firstAt: number | undefined;
  #lastAt = 0;
  /** A failed pass's retry is not due before this. */
  #retryAt = 0;
  #timer: unknown;
  #running = false;
  #runs = 0;

  constructor(options: CoalescerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#backoff = options.backoff ?? new Backoff({ initialMs: 500, maxMs: 60_000, jitter: 'none' });
    options.signal.addEventListener('abort', () => this.#disarm(), { once: true });
  }

  /** Passes run so far (for tests and the benchmark). */
  get runs(): number {
    return this.#runs;
  }

  /** Asks for a pass. */
  trigger(): void {
    if (this.#options.signal.aborted) return;
    const now = this.#clock.now();
    this.#firstAt ??= now;
    this.#lastAt = now;
    if (!this.#running) this.#arm();
  }

  #arm(): void {
    if (this.#firstAt === undefined) return;
    const due = Math.max(Math.min(this.#lastAt + this.#options.quietMs, this.#firstAt + this.#options.maxWaitMs), this.#retryAt);
    this.#disarm();
    this.#timer = this.#clock.setTimeout(() => void this.#fire(), Math.max(0, due - this.#clock.now()));
  }

  #disarm(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #fire(): Promise<void> {
    this.#timer = undefined;
    const { signal } = this.#options;
    if (this.#running || signal.aborted) return;
    this.#running = true;
    this.#firstAt = undefined;
    this.#runs++;
    let failed = false;
    try {
      await this.#options.run(signal);
      this.#backoff.reset();
      this.#retryAt = 0;
    } catch (err) {
      failed = true;
      if (!signal.aborted) {
        const delay = this.#backoff.next();
        this.#retryAt = this.#clock.now() + delay;
        this.#options.logger.warn({ job: this.#options.name, retryInMs: delay, ...errorFields(err) }, 'failed; retrying');
      }
    } finally {
      this.#running = false;
    }
    if (signal.aborted) return;
    if (failed) {
      // The failed pass's work is still to do.
      this.#firstAt ??= this.#clock.now();
      this.#lastAt = this.#clock.now();
    }
    this.#arm();
  }
}
