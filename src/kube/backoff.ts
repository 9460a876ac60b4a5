// The one exponential backoff of the process: initial · 2^attempts with a cap, with "equal
// jitter" (the reflectors, so that many clients do not retry in step) or none (the work queue's
// per-key rate limiter, client-go's ItemExponentialFailureRateLimiter), and reset after a healthy
// period. Pure but for the clock and the random source, which are injectable for tests.

export interface BackoffOptions {
  /** First delay (before jitter). */
  initialMs?: number;
  /** Ceiling of any delay. */
  maxMs?: number;
  /** A failure this long after the last healthy moment starts again from initialMs. */
  resetAfterMs?: number;
  /** `equal` (default): half fixed, half random. `none`: the exact step. */
  jitter?: 'equal' | 'none';
  /** Returns [0, 1); Math.random by default. */
  random?: () => number;
  /** Milliseconds; Date.now by default. */
  now?: () => number;
}

export class Backoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #resetAfterMs: number;
  readonly #jitter: boolean;
  readonly #random: () => number;
  readonly #now: () => number;
  #attempt = 0;
  #healthySince: number | undefined;

  constructor(options: BackoffOptions = {}) {
    this.#initialMs = options.initialMs ?? 500;
    this.#maxMs = options.maxMs ?? 30_000;
    this.#resetAfterMs = options.resetAfterMs ?? 60_000;
    this.#jitter = options.jitter !== 'none';
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
  }

  /** Marks the start of a healthy period (a list succeeded, a watch opened). */
  healthy(): void {
    this.#healthySince ??= this.#now();
  }

  /**
   * The delay before retrying after a failure. Doubles per consecutive failure; "equal jitter"
   * (half fixed, half random) so that many clients do not retry in step yet never retry at once.
   */
  next(): number {
    if (this.#healthySince !== undefined && this.#now() - this.#healthySince >= this.#resetAfterMs) {
      this.#attempt = 0;
    }
    this.#healthySince = undefined;
    // The exponent's bound keeps the arithmetic finite after any number of failures.
    const base = Math.min(this.#maxMs, this.#initialMs * 2 ** Math.min(this.#attempt, 60));
    this.#attempt++;
    return this.#jitter ? Math.round(base / 2 + (this.#random() * base) / 2) : base;
  }

  /** Consecutive failures since the last reset. */
  get attempts(): number {
    return this.#attempt;
  }

  reset(): void {
    this.#attempt = 0;
    this.#healthySince = undefined;
  }
}
