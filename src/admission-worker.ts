// The admission thread — wiring only, as main.ts is for the process: config → API client (for
// the live reads of cache misses and the podSpec dry run) → the view of the cache the main thread
// feeds → the webhook server (admission-server.ts) and its metrics. main.ts starts it as a worker
// thread (admission-thread/thread.ts says why); built to dist/admission-worker.js.
import { workerData } from 'node:worker_threads';
import { startAdmissionServer } from './admission-thread/admission-server.ts';
import type { AdmissionThreadData } from './admission-thread/admission.ts';
import { loadConfig } from './config/config.ts';
import { CacheLookup } from './cluster/cache-lookup.ts';
import { CacheView, type CacheBatch } from './cluster/cache-view.ts';
import { KubeClient } from './kube/client.ts';
import { createRegistry, threadMetrics } from './leaves/prometheus.ts';
import { serveAdmissionThread } from './admission-thread/thread.ts';
import { createLogger } from './server/pino-logger.ts';

/** The `thread` label of this thread's event-loop, GC and heap metrics. */
const ADMISSION_THREAD = 'admission';

// The main thread validated the same environment before it started this thread; it says which
// port to take over (the one its own webhook server listens on, when it hands admission over).
const data = (workerData ?? {}) as Partial<AdmissionThreadData>;
const loaded = loadConfig(process.env);
const config = { ...loaded, webhook: { ...loaded.webhook, port: data.port ?? loaded.webhook.port } };
const logger = createLogger({ level: config.logLevel });
const view = new CacheView();

await serveAdmissionThread<CacheBatch>({
  apply: (batch) => view.apply(batch),
  serve: async () => {
    const client = await KubeClient.fromKubeConfig(config.kubeconfig, { userAgent: 'kaos-operator' });
    const lookup = new CacheLookup(view, { client, logger });
    // The thread's own metrics; the main thread serves them on /metrics beside its own.
    const registry = createRegistry({ defaultMetrics: false });
    const ownThread = threadMetrics(ADMISSION_THREAD);
    const webhook = await startAdmissionServer({ config, logger, client, lookup, registry, reusePort: data.reusePort === true });
    return {
      port: webhook.port,
      metrics: async () => `${await registry.metrics()}\n${await ownThread()}`,
      drain: () => webhook.drain(),
      close: async () => {
        await webhook.close();
        client.close();
      },
    };
  },
}, logger);
