// The webhook server on a thread of its own (node:worker_threads), both ends of it: the main
// thread starts it (startAdmissionThread) and feeds it the cache, the thread serves (serveAdmissionThread).
// Why a thread: on one event loop every AdmissionReview waits behind whatever else holds the
// loop — a reconcile burst, a relist of thousands of objects, a major GC of a heap full of them
// (docs/benchmarks.md, "Admission while the controller works"). A worker has its own loop and
// its own V8 heap, so neither the controller's work nor its garbage collections delay admission,
// as controller-runtime's webhooks run on goroutines of their own.
//
// The protocol is small: the main thread posts cache batches (opaque here: cluster/cache-feed.ts
// makes them, cluster/cache-view.ts applies them) and asks for the thread's metrics at each scrape;
// the thread applies the first batch before it listens (so it never answers from an empty view
// what the main thread's cache already knows), says where it listens, answers, and ends once its
// server has closed.
import { setFlagsFromString } from 'node:v8';
import { Worker, parentPort, type ResourceLimits } from 'node:worker_threads';
import type { Logger } from '../leaves/logger.ts';
import { errorMessage } from '../leaves/error-message.ts';

export type ToAdmissionThread<Batch> =
  | { type: 'feed'; batch: Batch }
  | { type: 'metrics'; id: number }
  | { type: 'drain' }
  | { type: 'close' };

export type FromAdmissionThread =
  | { type: 'listening'; port: number }
  | { type: 'metrics'; id: number; text: string };

/**
 * The admission thread's V8 limits: a young generation of 3 MiB (1 MiB semi-spaces). Every
 * request's garbage is made there and nearly all of it dies young, so a small one is collected
 * more often but as fast (a scavenge costs what survives it, a request's objects in flight); with
 * the process's 8 MiB semi-spaces (operator-command.ts) the thread kept 16 MiB of them committed
 * (docs/benchmarks.md, "Memory").
 */
export const ADMISSION_THREAD_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 3 };

/** How long a scrape waits for the thread's metrics before it is served without them. */
const METRICS_TIMEOUT_MS = 2_000;

export interface AdmissionThreadOptions {
  /** The thread's entry point (dist/admission-worker.js). */
  entry: URL;
  logger: Logger;
  /** The thread ended after it had started, without being closed: the process cannot serve admission. */
  onFailure: (err: Error) => void;
  /** Default ADMISSION_THREAD_LIMITS. */
  resourceLimits?: ResourceLimits;
  /** The thread's workerData: what its entry point reads there (the port to listen on, tests' modes). */
  workerData?: unknown;
}

export interface AdmissionThread<Batch> {
  /**
   * Resolves with the webhook server's port once it listens, which it does once it has applied
   * the first batch: feed it. Rejects if the thread fails to start.
   */
  readonly listening: Promise<number>;
  /** Posts one cache batch; the thread applies batches in order, each whole. */
  feed(batch: Batch): void;
  /** The thread's metrics as Prometheus text ('' if it does not answer in time). */
  metrics(): Promise<string>;
  /** The webhook server's drain(): every answer from now on says `Connection: close`. */
  drain(): void;
  /** Closes the webhook server (draining requests in flight) and ends the thread. Idempotent. */
  close(): Promise<void>;
}

/** Starts the thread; it listens once fed its first batch (`listening`). */
export function startAdmissionThread<Batch>(options: AdmissionThreadOptions): AdmissionThread<Batch> {
  const { logger } = options;
  // V8's --max-semi-space-size, a process flag (operator-command.ts), sizes the young generation of
  // every isolate made after it and wins over a worker's resourceLimits; cleared (0: none) before
  // the thread's isolate is made, it leaves the limits to the thread. The main thread's heap was
  // sized when the process started and keeps the flag's.
  setFlagsFromString('--max-semi-space-size=0');
  const worker = new Worker(options.entry, {
    resourceLimits: options.resourceLimits ?? ADMISSION_THREAD_LIMITS,
    ...(options.workerData === undefined ? {} : { workerData: options.workerData }),
  });
  const pending = new Map<number, (text: string) => void>();
  let nextId = 0;
  let closing: Promise<void> | undefined;
  let started = false;
  let ended = false;
  const post = (message: ToAdmissionThread<Batch>): void => worker.postMessage(message);

  const listening = new Promise<number>((resolve, reject) => {
    // 'error' (an uncaught exception) is followed by 'exit': report the first.
    const fail = (err: Error): void => {
      if (ended) return;
      ended = true;
      for (const answer of pending.values()) answer('');
      pending.clear();
      if (!started) reject(err);
      else if (closing === undefined) options.onFailure(err);
    };
    worker.on('error', (err) => fail(err));
    worker.on('exit', (code) => fail(new Error(`the admission thread exited with code ${code}`)));
    worker.on('message', (message: FromAdmissionThread) => {
      if (message.type === 'listening') {
        started = true;
        resolve(message.port);
      } else if (message.type === 'metrics') {
        const answer = pending.get(message.id);
        pending.delete(message.id);
        answer?.(message.text);
      }
    });
  });
  // A thread that fails to start is the caller's to hear, through `listening`, not an unhandled rejection.
  listening.catch(() => undefined);

  return {
    listening,
    feed: (batch) => post({ type: 'feed', batch }),
    metrics: () => new Promise<string>((answer) => {
      if (ended) return answer('');
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        logger.warn({ timeoutMs: METRICS_TIMEOUT_MS }, 'the admission thread did not report its metrics in time');
        answer('');
      }, METRICS_TIMEOUT_MS);
      pending.set(id, (text) => {
        clearTimeout(timer);
        answer(text);
      });
      post({ type: 'metrics', id });
    }),
    drain: () => { if (!ended) post({ type: 'drain' }); },
    close: () => {
      closing ??= ended
        ? Promise.resolve()
        : new Promise<void>((done) => {
          worker.once('exit', () => done());
          post({ type: 'close' });
        });
      return closing;
    },
  };
}

/** What the thread serves once it listens. */
export interface ServedAdmission {
  port: number;
  metrics(): Promise<string>;
  drain(): void;
  close(): Promise<void>;
}

export interface AdmissionThreadSide<Batch> {
  /** Applies one batch to the thread's view of the cache (from the first on, before the server listens). */
  apply(batch: Batch): void;
  /** Starts the webhook server (and whatever it reads); called once the first batch is applied. */
  serve(): Promise<ServedAdmission>;
}

/**
 * The thread's side: applies every batch the main thread posts, in order; after the first, starts
 * the server; then answers the main thread until it says close. Rejects if the server fails to
 * start: the main thread's `listening` rejects with that error.
 */
export function serveAdmissionThread<Batch>(side: AdmissionThreadSide<Batch>, logger: Logger): Promise<void> {
  const port = parentPort;
  if (port === null) return Promise.reject(new Error('serveAdmissionThread runs in a worker thread'));
  const reply = (message: FromAdmissionThread): void => port.postMessage(message);
  return new Promise<void>((resolve, reject) => {
    let served: Promise<ServedAdmission> | undefined;
    port.on('message', (message: ToAdmissionThread<Batch>) => {
      if (message.type === 'feed') {
        side.apply(message.batch);
        if (served !== undefined) return;
        served = side.serve();
        served.then((s) => {
          reply({ type: 'listening', port: s.port });
          resolve();
        }, reject);
      } else if (message.type === 'metrics') {
        // Before the first batch nothing is served, and nothing measured.
        if (served === undefined) return reply({ type: 'metrics', id: message.id, text: '' });
        void served.then((s) => {
          s.metrics().then(
            (text) => reply({ type: 'metrics', id: message.id, text }),
            (err: unknown) => {
              logger.error({ err: errorMessage(err) }, 'admission thread metrics failed');
              reply({ type: 'metrics', id: message.id, text: '' });
            },
          );
        }, () => undefined);
      } else if (message.type === 'drain') {
        void served?.then((s) => s.drain(), () => undefined);
      } else {
        // The thread ends here, whatever handle (a timer, a watcher) might otherwise keep it up:
        // the main thread's close() resolves on its exit.
        if (served === undefined) process.exit(0);
        void served.then((s) => s.close(), () => undefined).finally(() => process.exit(0));
      }
    });
  });
}
