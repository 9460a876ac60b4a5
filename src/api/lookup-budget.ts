// How many live reads one admission request may make, and until when. The cache answers almost
// every lookup; a miss may be an object created a moment ago, which one live read settles. An
// object naming thousands of missing objects would turn that into thousands of reads, blocking
// the event loop and the API server for everyone: so each request gets its own budget, passed
// down to its lookups (never a global queue, so no request waits behind another's), and the
// names beyond it are "unknown". So is a name whose live read the API server did not answer
// (it restarts, a connection was cut): its absence is not known either, and an outage must not
// turn a review into an internal error.

/** Live reads one request may make on cache misses. */
export const MAX_LIVE_LOOKUPS = 10;
/** From the request's start (the budget's making): after it no live read starts and none is waited for. Well inside the webhooks' 5 s. */
export const LIVE_LOOKUP_DEADLINE_MS = 2000;

export type UncheckedReason = 'count' | 'deadline' | 'unavailable';

/**
 * Thrown by a lookup the budget did not allow, or the API server did not answer: the object is
 * unknown, neither found nor absent. `cause`: what the API server's failure was ('unavailable').
 */
export class LookupNotMade extends Error {
  readonly reason: UncheckedReason;
  constructor(reason: UncheckedReason, budget: Pick<LookupBudget, 'maxLiveLookups' | 'deadlineMs'>, cause?: string) {
    super(uncheckedDetail(reason, budget, cause));
    this.name = 'LookupNotMade';
    this.reason = reason;
  }
}

export interface LookupBudgetOptions {
  maxLiveLookups?: number;
  deadlineMs?: number;
  /** Milliseconds, monotonic; for tests. */
  now?: () => number;
}

export class LookupBudget {
  readonly maxLiveLookups: number;
  readonly deadlineMs: number;
  readonly #now: () => number;
  readonly #start: number;
  #used = 0;

  constructor(options: LookupBudgetOptions = {}) {
    this.maxLiveLookups = options.maxLiveLookups ?? MAX_LIVE_LOOKUPS;
    this.deadlineMs = options.deadlineMs ?? LIVE_LOOKUP_DEADLINE_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#start = this.#now();
  }

  /** Live reads claimed so far. */
  get used(): number {
    return this.#used;
  }

  /** Milliseconds left before the deadline (0 when it has passed). */
  remainingMs(): number {
    return Math.max(0, this.#start + this.deadlineMs - this.#now());
  }

  /**
   * Claims one live read: returns the time it may take, or throws LookupNotMade when this
   * request has made all it may, or its time is up.
   */
  claim(): number {
    const remaining = this.remainingMs();
    if (remaining <= 0) throw new LookupNotMade('deadline', this);
    if (this.#used >= this.maxLiveLookups) throw new LookupNotMade('count', this);
    this.#used++;
    return remaining;
  }

  /** Time for a read that is not counted (one per request whatever the object holds), or throws at the deadline. */
  timeLeft(): number {
    const remaining = this.remainingMs();
    if (remaining <= 0) throw new LookupNotMade('deadline', this);
    return remaining;
  }
}

/** The detail of a "Not found" for a name that was not looked up, in Kubernetes' terse style. */
export function uncheckedDetail(reason: UncheckedReason, budget: Pick<LookupBudget, 'maxLiveLookups' | 'deadlineMs'>, cause?: string): string {
  switch (reason) {
    case 'count':
      return `not checked: this request already made ${budget.maxLiveLookups} lookups that the cache could not answer`;
    case 'deadline':
      return `not checked: the lookups that the cache could not answer took all of this request's ${budget.deadlineMs / 1000}s`;
    case 'unavailable':
      return `not checked: the API server did not answer its lookup${cause === undefined ? '' : ` (${cause})`}`;
  }
}
