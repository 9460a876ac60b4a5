// A list+watch reflector for one resource type: keeps an in-memory store equal to the API
// server's view and tells listeners what changed.
//
// State machine (one loop, never exits until stop()):
//   LIST (paginated, consistent read) ──▶ replace store, emit the differences, synced
//   WATCH from the last resourceVersion, with bookmarks and a server-side timeout
//     clean end (server timeout)          ──▶ WATCH again from the last resourceVersion
//     410 Gone / ERROR event code 410     ──▶ LIST again (immediately the first time)
//     any other error                     ──▶ wait (jittered exponential backoff) ──▶ WATCH
//                                             (or LIST again if the list itself failed)
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from './meta.ts';
import { Backoff, type BackoffOptions } from './backoff.ts';
import type { KubeClient, WatchEvent } from './client.ts';
import { ApiError, isGone } from './errors.ts';
import { errorFields, silentLogger, type Logger } from '../leaves/logger.ts';
import { apiVersionOf, storeKey, resourcePath, type ResourceType } from './paths.ts';

/** What a reflector needs from the client (a narrow seam for tests). */
export type ListWatchClient = Pick<KubeClient, 'list' | 'watch'>;

export type ReflectorEvent<T> =
  | { type: 'add'; object: T }
  | { type: 'update'; old: T; object: T }
  /** `object` is the last state seen: the DELETED event's object, or the stored one on relist. */
  | { type: 'delete'; object: T };

export type ReflectorListener<T> = (event: ReflectorEvent<T>) => void;

export interface ReflectorOptions<T = KubeObject> {
  client: ListWatchClient;
  type: ResourceType;
  /** Watch one namespace only; all namespaces by default. */
  namespace?: string;
  labelSelector?: string;
  /** E.g. `metadata.name=x`: one object by name (RBAC can then grant just that name). */
  fieldSelector?: string;
  /** List and watch PartialObjectMetadata only (client.ts): for Secrets, whose data must never be held. */
  metadataOnly?: boolean;
  /**
   * Applied to every object before it is stored (client-go's SetTransform): keep only what
   * readers need. It receives a fresh, unshared object and may return a smaller one.
   */
  transform?: (object: T) => T;
  logger?: Logger;
  /** Items per list page. */
  pageSize?: number;
  /**
   * Server-side watch timeout; each watch uses a random value in [0.8, 1.2] × this so that many
   * reflectors do not reconnect in step. Ending a watch this way is normal.
   */
  watchTimeoutSeconds?: number;
  /** Silence after which a watch connection is presumed dead (see WatchOptions.idleTimeoutMs). */
  watchIdleTimeoutMs?: number;
  backoff?: BackoffOptions;
  random?: () => number;
}

export interface ReflectorStats {
  /** Completed lists (the first sync included). */
  lists: number;
  /** Lists caused by 410 Gone. */
  relists: number;
  /** Watches the server accepted. */
  watches: number;
  /** Failures of a list or a watch other than 410 (each followed by a backoff). */
  errors: number;
}

/** A watch that closes this fast with no event counts as a failure, so it cannot spin. */
const MIN_HEALTHY_WATCH_MS = 1000;

export class Reflector<T extends KubeObject = KubeObject> {
  readonly type: ResourceType;
  readonly #client: ListWatchClient;
  readonly #path: string;
  readonly #labelSelector: string | undefined;
  readonly #fieldSelector: string | undefined;
  readonly #metadataOnly: boolean;
  readonly #transform: ((object: T) => T) | undefined;
  readonly #log: Logger;
  readonly #pageSize: number;
  readonly #watchTimeoutSeconds: number;
  readonly #watchIdleTimeoutMs: number | undefined;
  readonly #backoff: Backoff;
  readonly #random: () => number;
  readonly #store = new Map<string, T>();
  readonly #listeners = new Set<ReflectorListener<T>>();
  readonly #syncWaiters = new Set<{ resolve: () => void; reject: (err: unknown) => void }>();
  readonly #stats: ReflectorStats = { lists: 0, relists: 0, watches: 0, errors: 0 };
  #resourceVersion: string | undefined;
  #synced = false;
  #abort: AbortController | undefined;
  #loop: Promise<void> | undefined;
  #stopped = false;
  /** 410s since the last event: a second one in a row backs off instead of relisting at once. */
  #goneStreak = 0;

  constructor(options: ReflectorOptions<T>) {
    this.type = options.type;
    this.#client = options.client;
    this.#path = resourcePath(options.type, options.namespace === undefined ? {} : { namespace: options.namespace });
    this.#labelSelector = options.labelSelector;
    this.#fieldSelector = options.fieldSelector;
    this.#metadataOnly = options.metadataOnly === true;
    this.#transform = options.transform;
    this.#log = options.logger ?? silentLogger;
    this.#pageSize = options.pageSize ?? 500;
    this.#watchTimeoutSeconds = options.watchTimeoutSeconds ?? 300;
    this.#watchIdleTimeoutMs = options.watchIdleTimeoutMs;
    this.#random = options.random ?? Math.random;
    this.#backoff = new Backoff({ random: this.#random, ...options.backoff });
  }

  /** Starts the list+watch loop. Idempotent; a stopped reflector cannot be restarted. */
  start(): void {
    if (this.#stopped) throw new Error(`reflector ${this.type.kind} was stopped`);
    if (this.#loop !== undefined) return;
    this.#abort = new AbortController();
    this.#loop = this.#run(this.#abort.signal);
  }

  /** Stops the loop, closes its watch and waits until it has exited. Listeners stay registered. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort?.abort(new Error('reflector stopped'));
    await this.#loop;
    for (const waiter of this.#syncWaiters) waiter.reject(new Error(`reflector ${this.type.kind} stopped before it synced`));
    this.#syncWaiters.clear();
  }

  /** True once the first list has been stored (and forever after, even while reconnecting). */
  isSynced(): boolean {
    return this.#synced;
  }

  /** Resolves at the first sync; rejects when `signal` aborts or the reflector stops first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    if (this.#stopped) return Promise.reject(new Error(`reflector ${this.type.kind} stopped before it synced`));
    return new Promise<void>((resolve, reject) => {
      signal?.throwIfAborted();
      const waiter = {
        resolve: () => { signal?.removeEventListener('abort', onAbort); resolve(); },
        reject: (err: unknown) => { signal?.removeEventListener('abort', onAbort); reject(err); },
      };
      const onAbort = (): void => {
        this.#syncWaiters.delete(waiter);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#syncWaiters.add(waiter);
    });
  }

  /** Subscribes to changes; returns the unsubscribe function. Listeners must not throw (logged if they do). */
  on(listener: ReflectorListener<T>): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * The stored object (read-only: objects are frozen and shared with every reader). Key is
   * `namespace/name`, or `name` for cluster-scoped types.
   */
  get(key: string): T | undefined {
    return this.#store.get(key);
  }

  getByName(namespace: string | undefined, name: string): T | undefined {
    return this.#store.get(storeKey(namespace, name));
  }

  list(): T[] {
    return [...this.#store.values()];
  }

  keys(): string[] {
    return [...this.#store.keys()];
  }

  get size(): number {
    return this.#store.size;
  }

  /** The last resourceVersion seen (list, event or bookmark): where the next watch resumes. */
  get resourceVersion(): string | undefined {
    return this.#resourceVersion;
  }

  get stats(): Readonly<ReflectorStats> {
    return { ...this.#stats };
  }

  async #run(signal: AbortSignal): Promise<void> {
    let needList = true;
    while (!signal.aborted) {
      let listing = needList;
      try {
        if (needList) {
          await this.#listAndReplace(signal);
          needList = false;
          listing = false;
        }
        const { events, elapsedMs } = await this.#watchOnce(signal);
        this.#log.debug({ resource: this.type.plural, events, elapsedMs, resourceVersion: this.#resourceVersion }, 'watch ended');
        if (events === 0 && elapsedMs < MIN_HEALTHY_WATCH_MS) {
          throw new Error(`watch closed after ${elapsedMs} ms without an event`);
        }
      } catch (err) {
        if (signal.aborted) break;
        if (isGone(err)) {
          // The resourceVersion we hold was compacted away: only a fresh list can catch up. The
          // first time, relist at once (what client-go does); in a row, back off like any error.
          needList = true;
          this.#stats.relists++;
          this.#log.info({ resource: this.type.plural, resourceVersion: this.#resourceVersion, ...errorFields(err) }, 'resourceVersion too old, relisting');
          if (this.#goneStreak++ === 0) continue;
        } else {
          this.#stats.errors++;
        }
        const delayMs = this.#backoff.next();
        this.#log.warn(
          { resource: this.type.plural, phase: listing ? 'list' : 'watch', delayMs, attempt: this.#backoff.attempts, ...errorFields(err) },
          `${listing ? 'list' : 'watch'} failed, retrying`,
        );
        try {
          await sleep(delayMs, undefined, { signal });
        } catch {
          break; // aborted: stop() was called
        }
      }
    }
  }

  async #listAndReplace(signal: AbortSignal): Promise<void> {
    const fresh = new Map<string, T>();
    let continueToken: string | undefined;
    let resourceVersion: string | undefined;
    do {
      const page = await this.#client.list<T>(this.#path, {
        limit: this.#pageSize,
        continue: continueToken,
        labelSelector: this.#labelSelector,
        ...(this.#fieldSelector === undefined ? {} : { fieldSelector: this.#fieldSelector }),
        ...(this.#metadataOnly ? { metadataOnly: true } : {}),
        signal,
      });
      for (const item of page.items) {
        const object = this.#normalize(item);
        fresh.set(this.#key(object), object);
      }
      continueToken = page.metadata?.continue === '' ? undefined : page.metadata?.continue;
      resourceVersion = page.metadata?.resourceVersion;
    } while (continueToken !== undefined);
    if (resourceVersion === undefined || resourceVersion === '') {
      throw new ApiError(500, 'InternalError', `list ${this.#path}: no resourceVersion in the response`);
    }
    signal.throwIfAborted();

    // Replace the store first, then tell listeners, so they always read a consistent store.
    const events: Array<ReflectorEvent<T>> = [];
    for (const [key, old] of this.#store) {
      if (!fresh.has(key)) {
        this.#store.delete(key);
        events.push({ type: 'delete', object: old });
      }
    }
    for (const [key, object] of fresh) {
      const old = this.#store.get(key);
      if (old === undefined) {
        this.#store.set(key, object);
        events.push({ type: 'add', object });
      } else if (old.metadata?.resourceVersion !== object.metadata?.resourceVersion) {
        this.#store.set(key, object);
        events.push({ type: 'update', old, object });
      }
    }
    this.#resourceVersion = resourceVersion;
    this.#stats.lists++;
    this.#backoff.healthy();
    this.#log.info({ resource: this.type.plural, items: fresh.size, changes: events.length, resourceVersion }, 'listed');
    for (const event of events) this.#emit(event);
    if (!this.#synced) {
      this.#synced = true;
      for (const waiter of this.#syncWaiters) waiter.resolve();
      this.#syncWaiters.clear();
    }
  }

  async #watchOnce(signal: AbortSignal): Promise<{ events: number; elapsedMs: number }> {
    const started = Date.now();
    let events = 0;
    const timeoutSeconds = Math.max(1, Math.round(this.#watchTimeoutSeconds * (0.8 + 0.4 * this.#random())));
    await this.#client.watch<T>(
      this.#path,
      {
        resourceVersion: this.#resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
        labelSelector: this.#labelSelector,
        ...(this.#fieldSelector === undefined ? {} : { fieldSelector: this.#fieldSelector }),
        ...(this.#metadataOnly ? { metadataOnly: true } : {}),
        ...(this.#watchIdleTimeoutMs === undefined ? {} : { idleTimeoutMs: this.#watchIdleTimeoutMs }),
        onOpen: () => {
          this.#stats.watches++;
          this.#backoff.healthy();
        },
      },
      (event) => {
        this.#apply(event);
        events++;
      },
      signal,
    );
    return { events, elapsedMs: Date.now() - started };
  }

  /** Applies one watch event to the store; throws on ERROR so that the watch ends with it. */
  #apply(event: WatchEvent<T>): void {
    if (event.type === 'ERROR') throw ApiError.fromStatus(event.object);
    this.#goneStreak = 0;
    const resourceVersion = event.object.metadata?.resourceVersion;
    if (event.type === 'BOOKMARK') {
      // A bookmark carries only a resourceVersion: progress without a change.
      if (resourceVersion !== undefined && resourceVersion !== '') this.#resourceVersion = resourceVersion;
      return;
    }
    const object = this.#normalize(event.object);
    const key = this.#key(object);
    const old = this.#store.get(key);
    if (event.type === 'DELETED') {
      this.#store.delete(key);
      this.#resourceVersion = resourceVersion ?? this.#resourceVersion;
      this.#emit({ type: 'delete', object });
      return;
    }
    this.#store.set(key, object);
    this.#resourceVersion = resourceVersion ?? this.#resourceVersion;
    this.#emit(old === undefined ? { type: 'add', object } : { type: 'update', old, object });
  }

  #emit(event: ReflectorEvent<T>): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (err) {
        this.#log.error({ resource: this.type.plural, event: event.type, ...errorFields(err) }, 'reflector listener threw');
      }
    }
  }

  #key(object: T): string {
    const name = object.metadata?.name;
    if (name === undefined || name === '') throw new ApiError(500, 'InternalError', `${this.type.kind} without metadata.name`);
    return storeKey(object.metadata?.namespace, name);
  }

  /**
   * Items of a list of built-in types come without apiVersion and kind: fill them in so that
   * every stored object is self-describing. Then freeze: stored objects are shared by every reader.
   */
  #normalize(item: T): T {
    if (this.#transform !== undefined) item = this.#transform(item);
    if (item.apiVersion === undefined || item.kind === undefined) {
      item = { ...item, apiVersion: item.apiVersion ?? apiVersionOf(this.type), kind: item.kind ?? this.type.kind };
    }
    return deepFreeze(item);
  }
}

/** Freezes an object and everything under it: what a store holds is shared by every reader. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
