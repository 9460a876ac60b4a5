// Where admission runs: on the main thread while the cluster is small, on a thread of its own
// (thread.ts) once the cache holds WEBHOOK_THREAD_OBJECTS KAOS objects — or from the start (0), or
// never (WEBHOOK_THREAD=false).
//
// Why not always the thread: it is a second V8 isolate and Node environment, with the admission
// code compiled again: 30 MiB at the peak of a bulk apply of 1,000 Agents, a fifth of what the
// whole operator needed (docs/benchmarks.md, "Admission while the controller works"). What it buys —
// admission that never waits behind the controller's work or its garbage collections — grows with
// the cluster: a relist, a major GC and a reconcile burst all grow with the objects the main
// thread holds. While 1,000 Agents converge the main thread answers at 1.54× a bare webhook's p99
// and the thread at its floor; while 300 converge beside 300 more, the two answer alike, which is
// why the default threshold (WEBHOOK_DEFAULTS in config/config.ts) lies between those sizes
// (docs/benchmarks.md, "The thread for a small cluster").
//
// The move, once: the thread is started on the main webhook server's port (both listen with
// SO_REUSEPORT), fed the cache, and listens once it has applied what the cache holds; then the
// main thread's server stops accepting and lets its open connections end one by one (https-server.ts,
// handOver: the next answer on each says `Connection: close`), so the API server's next calls
// reach the thread. No call is refused or cut on the way. The webhook metrics start again from zero
// on the thread (a counter reset, which Prometheus' rate() reads as one).
import { KINDS } from '../api/kinds.ts';
import type { KaosCache } from '../cluster/cache.ts';
import { feedCache } from '../cluster/cache-feed.ts';
import type { CacheBatch } from '../cluster/cache-view.ts';
import type { Config } from '../config/config.ts';
import type { KubeClient } from '../kube/client.ts';
import { createRegistry } from '../leaves/prometheus.ts';
import type { Logger } from '../leaves/logger.ts';
import { errorMessage } from '../leaves/error-message.ts';
import type { RunningWebhookServer } from '../server/webhook-server.ts';
import { startAdmissionServer } from './admission-server.ts';
import { startAdmissionThread, type AdmissionThread } from './thread.ts';

/** What the admission thread's entry point is told (its workerData). */
export interface AdmissionThreadData {
  /** The port to listen on: the main thread's webhook server's, when admission moves over. */
  port: number;
  /** Listen beside the main thread's server until it has closed. */
  reusePort: boolean;
}

export interface AdmissionOptions {
  config: Config;
  logger: Logger;
  client: KubeClient;
  cache: KaosCache;
  /** Subscribes to changes of the runtime registries (changes the cache's events do not carry). */
  onRuntimesChange: (listener: () => void) => () => void;
  /** The thread's entry point (dist/admission-worker.js). */
  entry: URL;
  /** The thread failed after it started: the process cannot serve admission. */
  onFailure: (err: Error) => void;
}

export interface Admission {
  /** The webhook server's port. */
  readonly port: number;
  /** Whether admission runs on its own thread now. */
  onThread(): boolean;
  /** Admission's metrics (the webhook metrics, the certificate's expiry, the thread's own) as Prometheus text. */
  metrics(): Promise<string>;
  /** Keeps serving, every answer saying `Connection: close` (https-server.ts, drain). */
  drain(): void;
  /** Stops serving (requests in flight are answered). Idempotent. */
  close(): Promise<void>;
}

/** A running admission thread: its port, and what stops feeding it. */
interface Thread {
  admission: AdmissionThread<CacheBatch>;
  port: number;
  stop(): void;
}

/** KAOS objects the cache holds now. */
function kaosObjects(cache: KaosCache): number {
  return KINDS.reduce((sum, kind) => sum + cache.reflector(kind).size, 0);
}

export async function startAdmission(options: AdmissionOptions): Promise<Admission> {
  const { config, logger, cache } = options;
  const { thread: threadAllowed, threadFromObjects } = config.webhook;

  /** Starts the thread on `port` and feeds it; resolves once it listens, with what stops it. */
  const startThread = async (port: number, reusePort: boolean): Promise<Thread> => {
    const admission = startAdmissionThread<CacheBatch>({
      entry: options.entry,
      logger,
      onFailure: options.onFailure,
      workerData: { port, reusePort } satisfies AdmissionThreadData,
    });
    // Posted at once: the thread applies what the cache holds before it listens.
    const feed = feedCache(cache, (batch) => admission.feed(batch));
    const offRuntimes = options.onRuntimesChange(() => feed.flush());
    const stop = (): void => {
      feed.stop();
      offRuntimes();
    };
    try {
      return { admission, port: await admission.listening, stop };
    } catch (err) {
      stop();
      throw err;
    }
  };

  if (threadAllowed && threadFromObjects === 0) {
    const only = await startThread(config.webhook.port, false);
    return {
      port: only.port,
      onThread: () => true,
      metrics: () => only.admission.metrics(),
      drain: () => only.admission.drain(),
      close: async () => {
        await only.admission.close();
        only.stop();
      },
    };
  }

  let thread: Thread | undefined;
  // The main thread serves, over the cache itself, with metrics of its own that go with it.
  const registry = createRegistry({ defaultMetrics: false });
  const mainServer: RunningWebhookServer = await startAdmissionServer({ config, logger, client: options.client, lookup: cache, registry, reusePort: threadAllowed });
  const port = mainServer.port;
  let closing: Promise<void> | undefined;
  let moving: Promise<void> | undefined;
  let draining = false;

  const moveToThread = async (objects: number): Promise<void> => {
    logger.info({ objects, threshold: threadFromObjects }, 'the cache holds enough objects: moving admission to its own thread');
    try {
      thread = await startThread(port, true);
    } catch (err) {
      // Admission stays where it is, as good as before: a thread that cannot start costs only this line.
      logger.error({ err: errorMessage(err) }, 'the admission thread did not start; admission stays on the main thread');
      return;
    }
    if (closing !== undefined) return;
    if (draining) thread.admission.drain();
    logger.info({ port, objects: kaosObjects(cache) }, 'admission moved to its own thread');
    // The main thread answers what the API server still sends on its open connections, then lets
    // them go (close() ends what is left of it).
    void mainServer.handOver();
  };

  let offEvents: (() => void) | undefined;
  if (threadAllowed) {
    let scheduled = false;
    const check = (): void => {
      scheduled = false;
      const objects = kaosObjects(cache);
      if (moving !== undefined || objects < threadFromObjects) return;
      offEvents?.();
      moving = moveToThread(objects);
    };
    const offs = KINDS.map((kind) => cache.reflector(kind).on(() => {
      if (scheduled) return;
      scheduled = true;
      // Once per task: a relist's thousand events are one check.
      setImmediate(check);
    }));
    offEvents = () => { for (const off of offs) off(); };
    check();
  }

  return {
    port,
    onThread: () => thread !== undefined,
    metrics: async () => (thread === undefined ? registry.metrics() : thread.admission.metrics()),
    drain: () => {
      draining = true;
      mainServer.drain();
      thread?.admission.drain();
    },
    close: () => {
      closing ??= (async () => {
        offEvents?.();
        await moving;
        await Promise.all([mainServer.close(), thread?.admission.close()]);
        thread?.stop();
      })();
      return closing;
    },
  };
}
