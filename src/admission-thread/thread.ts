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
// the thread says where it listens, answers, and ends once its server has closed.
import { Worker, parentPort, type ResourceLimits } from 'node:worker_threads';
import type { Logger } from '../leaves/logger.ts';
import { errorMessage } from '../leaves/error-message.ts';

export type ToAdmissionThread<Batch> =
  | { type: 'feed'; batch: Batch }
  | { type: 'metrics'; id: number }
  | { type: 'close' };

export type FromAdmissionThread =
  | { type: 'listening'; port: number }
  | { type: 'metrics'; id: number; text: string };

/** How long a scrape waits for the thread's metrics before it is served without them. */
const METRICS_TIMEOUT_MS = 2_000;

export interface AdmissionThreadOptions {
  /** The thread's entry point (dist/admission-worker.js). */
  entry: URL;
  logger: Logger;
  /** The thread ended after it had started, without being closed: the process cannot serve admission. */
  onFailure: (err: Error) => void;
  resourceLimits?: ResourceLimits;
  /** The thread's workerData (tests). */
  workerData?: unknown;
}

export interface AdmissionThread<Batch> {
  /** The webhook server's port. */
  readonly port: number;
  /** Posts one cache batch; the thread applies batches in order, each whole. */
  feed(batch: Batch): void;
  /** The thread's metrics as Prometheus text ('' if it does not answer in time). */
  metrics(): Promise<string>;
  /** Closes the webhook server (draining requests in flight) and ends the thread. Idempotent. */
  close(): Promise<void>;
}

/** Starts the thread; resolves once its webhook server listens, rejects if it fails to start. */
export function startAdmissionThread<Batch>(options: AdmissionThreadOptions): Promise<AdmissionThread<Batch>> {
  const { logger } = options;
  const worker = new Worker(options.entry, {
    ...(options.resourceLimits === undefined ? {} : { resourceLimits: options.resourceLimits }),
    ...(options.workerData === undefined ? {} : { workerData: options.workerData }),
  });
  const pending = new Map<number, (text: string) => void>();
  let nextId = 0;
  let closing: Promise<void> | undefined;
  const post = (message: ToAdmissionThread<Batch>): void => worker.postMessage(message);

  return new Promise((resolve, reject) => {
    let started = false;
    let ended = false;
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
        resolve({
          port: message.port,
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
          close: () => {
            closing ??= new Promise<void>((done) => {
              worker.once('exit', () => done());
              post({ type: 'close' });
            });
            return closing;
          },
        });
      } else if (message.type === 'metrics') {
        const answer = pending.get(message.id);
        pending.delete(message.id);
        answer?.(message.text);
      }
    });
  });
}

export interface ServedAdmission<Batch> {
  port: number;
  apply(batch: Batch): void;
  metrics(): Promise<string>;
  close(): Promise<void>;
}

/**
 * The thread's side: `serve` starts the webhook server (and whatever it reads); then this answers
 * the main thread until it says close. Messages posted before the server listened wait in the
 * port's queue, so no cache batch is lost. A failure to start throws: the main thread's
 * startAdmissionThread rejects with it.
 */
export async function serveAdmissionThread<Batch>(serve: () => Promise<ServedAdmission<Batch>>, logger: Logger): Promise<void> {
  const port = parentPort;
  if (port === null) throw new Error('serveAdmissionThread runs in a worker thread');
  const served = await serve();
  const reply = (message: FromAdmissionThread): void => port.postMessage(message);
  port.on('message', (message: ToAdmissionThread<Batch>) => {
    if (message.type === 'feed') {
      served.apply(message.batch);
    } else if (message.type === 'metrics') {
      served.metrics().then(
        (text) => reply({ type: 'metrics', id: message.id, text }),
        (err: unknown) => {
          logger.error({ err: errorMessage(err) }, 'admission thread metrics failed');
          reply({ type: 'metrics', id: message.id, text: '' });
        },
      );
    } else {
      // The thread ends here, whatever handle (a timer, a watcher) might otherwise keep it up:
      // the main thread's close() resolves on its exit.
      void served.close().finally(() => process.exit(0));
    }
  });
  reply({ type: 'listening', port: served.port });
}
