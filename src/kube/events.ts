// Kubernetes Events (events.k8s.io/v1) about the operator's parent objects, aggregated the way
// client-go's new events library does it: the first occurrence creates an Event; a repeat of the
// same (regarding, type, reason, action) within the window PATCHes that Event's `series` (count,
// lastObservedTime) instead of creating another. So a parent updated again and again is one
// `Updated` Event whose count grows, never one Event per apply, whatever children each apply
// named (client-go's key has no note either; the Event keeps its first note, as the note of an
// events.k8s.io/v1 Event cannot be changed). A Warning's note is part of its key: a different
// error is news of its own, while the same error retried with backoff is one Event. Memory is
// bounded by an LRU of the most recent distinct events.
//
// Recording never throws: an Event is a courtesy to the user, and its failure must not fail a
// reconcile. Errors are logged.
import type { KubeClient } from './client.ts';
import { isNotFound } from './errors.ts';
import { errorFields, silentLogger, type Logger } from '../leaves/logger.ts';
import { formatMicroTime } from '../leaves/meta-time.ts';

export const REPORTING_CONTROLLER = 'kaos.tools/kaos-operator';
const EVENTS_PATH = (namespace: string): string => `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`;

/** The object an Event is about (core/v1 ObjectReference). */
export interface EventRegarding {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
}

export type EventType = 'Normal' | 'Warning';

export interface EventInput {
  regarding: EventRegarding;
  type: EventType;
  /** UpperCamelCase, e.g. `ChildCreated`, `ReconcileFailed`. */
  reason: string;
  /** What the operator did or failed to do, e.g. `Apply`, `Prune`, `Reconcile`. */
  action: string;
  /** Human-readable; truncated to the API's 1 kB. */
  note: string;
}

export interface EventSeries {
  count: number;
  lastObservedTime: string;
}

/** The events.k8s.io/v1 Event the recorder writes. */
export interface KubeEvent {
  apiVersion: 'events.k8s.io/v1';
  kind: 'Event';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  note: string;
  type: EventType;
  regarding: EventRegarding;
  series?: EventSeries;
}

export type EventClient = Pick<KubeClient, 'create' | 'patch'>;

export interface EventRecorderOptions {
  client: EventClient;
  /** reportingInstance: the elector's identity (pod name, or host_pid). */
  instance: string;
  /** A repeat this long after the previous occurrence starts a new Event. Default 10 minutes. */
  windowMs?: number;
  /** Distinct events remembered. Default 4096. */
  maxEntries?: number;
  logger?: Logger;
  /**
   * Event writes in flight at once. Default 2: Events are best-effort, and a burst (1,000 new
   * Agents) must not compete with the reconciles for the API server or hold a socket each.
   */
  maxInFlight?: number;
  /** Writes waiting for a slot; beyond this an occurrence is dropped (as client-go's broadcaster does). Default 1000. */
  maxBacklog?: number;
  /** For tests. */
  now?: () => Date;
}

/** The API's limits (events.k8s.io/v1 validation). */
const NOTE_MAX_BYTES = 1024;
const FIELD_MAX = 128;

/**
 * Pure: the Event for the first occurrence of `input` at `now`, named like client-go's
 * (`<regarding name>.<hex nanoseconds>`), in the regarding object's namespace.
 */
export function buildEvent(input: EventInput, instance: string, now: Date, uniquifier = 0): KubeEvent {
  const namespace = input.regarding.namespace !== undefined && input.regarding.namespace !== '' ? input.regarding.namespace : 'default';
  const nanos = BigInt(now.getTime()) * 1_000_000n + BigInt(uniquifier % 1_000_000);
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: `${input.regarding.name}.${nanos.toString(16)}`, namespace },
    eventTime: formatMicroTime(now),
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: truncate(instance, FIELD_MAX),
    action: truncate(input.action, FIELD_MAX),
    reason: truncate(input.reason, FIELD_MAX),
    note: truncateBytes(input.note, NOTE_MAX_BYTES),
    type: input.type,
    regarding: { ...input.regarding },
  };
}

/** Pure: the identity of an event for aggregation (a Normal event's note is not part of it). */
export function eventKey(input: EventInput): string {
  const r = input.regarding;
  const key = [r.apiVersion, r.kind, r.namespace ?? '', r.name, r.uid ?? '', input.type, input.reason, input.action];
  return JSON.stringify(input.type === 'Warning' ? [...key, input.note] : key);
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max);
}

function truncateBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let out = Buffer.from(text).subarray(0, maxBytes - 3).toString('utf8');
  // A cut inside a multi-byte character decodes to U+FFFD: drop it.
  out = out.replace(/\uFFFD$/, '');
  return `${out}...`;
}

interface Entry {
  /** Where the Event was created: all a PATCH of its series needs (the rest is not kept). */
  namespace: string;
  name: string;
  count: number;
  lastSeenMs: number;
  /** Writes for this key run one after another, so a repeat never races its creation. */
  chain: Promise<void>;
}

export class EventRecorder {
  readonly #client: EventClient;
  readonly #instance: string;
  readonly #windowMs: number;
  readonly #maxEntries: number;
  readonly #log: Logger;
  readonly #now: () => Date;
  /** Insertion order is recency order: a hit is moved to the end, the oldest evicted first. */
  readonly #recent = new Map<string, Entry>();
  #sequence = 0;
  readonly #maxInFlight: number;
  readonly #maxBacklog: number;
  #inFlight = 0;
  readonly #backlog: Array<() => void> = [];
  #dropped = 0;
  #lastDropLogMs = -Infinity;

  constructor(options: EventRecorderOptions) {
    this.#client = options.client;
    this.#instance = options.instance;
    this.#windowMs = options.windowMs ?? 10 * 60_000;
    this.#maxEntries = options.maxEntries ?? 4096;
    if (!(this.#maxEntries >= 1)) throw new Error(`event recorder: maxEntries must be at least 1 (got ${this.#maxEntries})`);
    this.#log = options.logger ?? silentLogger;
    this.#now = options.now ?? (() => new Date());
    this.#maxInFlight = options.maxInFlight ?? 2;
    this.#maxBacklog = options.maxBacklog ?? 1000;
    if (!(this.#maxInFlight >= 1)) throw new Error(`event recorder: maxInFlight must be at least 1 (got ${this.#maxInFlight})`);
  }

  /** Occurrences dropped because the backlog was full. */
  get dropped(): number {
    return this.#dropped;
  }

  /**
   * Runs `write` when a slot is free, in arrival order. Resolves false without writing when the
   * backlog is full: the occurrence is dropped (counted, logged at most once a minute).
   */
  async #slot(write: () => Promise<void>): Promise<boolean> {
    if (this.#inFlight >= this.#maxInFlight) {
      if (this.#backlog.length >= this.#maxBacklog) {
        this.#dropped++;
        const nowMs = this.#now().getTime();
        if (nowMs - this.#lastDropLogMs >= 60_000) {
          this.#lastDropLogMs = nowMs;
          this.#log.warn({ dropped: this.#dropped, backlog: this.#backlog.length }, 'event backlog full: dropping events');
        }
        return false;
      }
      await new Promise<void>((resolve) => this.#backlog.push(resolve));
    } else {
      this.#inFlight++;
    }
    try {
      await write();
      return true;
    } finally {
      // Hand the slot straight to the next waiter (in-flight count unchanged), or free it.
      const next = this.#backlog.shift();
      if (next !== undefined) next();
      else this.#inFlight--;
    }
  }

  /** Distinct events currently remembered (≤ maxEntries). */
  get size(): number {
    return this.#recent.size;
  }

  /**
   * Records one occurrence. Resolves once it is written (or failed, which is logged); never
   * rejects. Callers need not await it.
   */
  record(input: EventInput): Promise<void> {
    const key = eventKey(input);
    const now = this.#now();
    const nowMs = now.getTime();
    const entry = this.#recent.get(key);
    if (entry !== undefined && nowMs - entry.lastSeenMs < this.#windowMs) {
      this.#recent.delete(key);
      this.#recent.set(key, entry);
      entry.count += 1;
      entry.lastSeenMs = nowMs;
      const count = entry.count;
      entry.chain = entry.chain.then(() => this.#writeRepeat(entry, input, count, now));
      return entry.chain;
    }
    const event = buildEvent(input, this.#instance, now, this.#sequence++);
    const fresh: Entry = { namespace: event.metadata.namespace, name: event.metadata.name, count: 1, lastSeenMs: nowMs, chain: Promise.resolve() };
    this.#recent.delete(key);
    this.#recent.set(key, fresh);
    while (this.#recent.size > this.#maxEntries) {
      const oldest = this.#recent.keys().next().value;
      if (oldest === undefined) break;
      this.#recent.delete(oldest);
    }
    fresh.chain = this.#create(event).then((created) => {
      if (!created) this.#forget(key, fresh);
    });
    return fresh.chain;
  }

  async #create(event: KubeEvent): Promise<boolean> {
    try {
      return await this.#slot(async () => {
        await this.#client.create(EVENTS_PATH(event.metadata.namespace), event, { discardAnswer: true });
      });
    } catch (err) {
      this.#log.warn({ event: event.metadata.name, namespace: event.metadata.namespace, reason: event.reason, ...errorFields(err) }, 'could not record an event');
      return false;
    }
  }

  /**
   * A repeat: PATCH the series with the count this occurrence brought it to. An Event that has
   * gone (the API server's TTL, someone deleted it) is created afresh.
   */
  async #writeRepeat(entry: Entry, input: EventInput, count: number, now: Date): Promise<void> {
    // The creation failed and the entry was dropped: this occurrence starts over.
    if (this.#recent.get(eventKey(input)) !== entry) return this.record(input);
    const series: EventSeries = { count, lastObservedTime: formatMicroTime(now) };
    const path = `${EVENTS_PATH(entry.namespace)}/${encodeURIComponent(entry.name)}`;
    try {
      await this.#slot(async () => {
        await this.#client.patch(path, { series }, 'merge', { discardAnswer: true });
      });
    } catch (err) {
      if (isNotFound(err)) {
        this.#forget(eventKey(input), entry);
        await this.record(input);
        return;
      }
      this.#log.warn({ event: entry.name, namespace: entry.namespace, reason: input.reason, ...errorFields(err) }, 'could not update an event series');
    }
  }

  #forget(key: string, entry: Entry): void {
    if (this.#recent.get(key) === entry) this.#recent.delete(key);
  }
}
