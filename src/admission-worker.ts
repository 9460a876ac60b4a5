// The admission thread — wiring only, as main.ts is for the process: config → API client (for
// the live reads of cache misses and the podSpec dry run) → the view of the cache the main thread
// feeds → the webhook server (admission-server.ts) and its metrics. main.ts starts it as a worker
// thread (admission-thread/thread.ts says why); built to dist/admission-worker.js.
import { startAdmissionServer } from './admission-thread/admission-server.ts';
import { loadConfig } from './config/config.ts';
import { CacheLookup } from './cluster/cache-lookup.ts';
import { CacheView, type CacheBatch } from './cluster/cache-view.ts';
import { KubeClient } from './kube/client.ts';
import { createRegistry, threadMetrics } from './leaves/prometheus.ts';
import { serveAdmissionThread } from './admission-thread/thread.ts';
import { createLogger } from './server/pino-logger.ts';

/** The `thread` label of this thread's event-loop, GC and heap metrics. */
const ADMISSION_THREAD = 'admission';

// The main thread validated the same environment before it started this thread.
const config = loadConfig(process.env);
const logger = createLogger({ level: config.logLevel });

await serveAdmissionThread<CacheBatch>(async () => {
  const client = await KubeClient.fromKubeConfig(config.kubeconfig, { userAgent: 'kaos-operator' });
  const view = new CacheView();
  const lookup = new CacheLookup(view, { client, logger });
  // The thread's own metrics; the main thread serves them on /metrics beside its own.
  const registry = createRegistry({ defaultMetrics: false });
  const ownThread = threadMetrics(ADMISSION_THREAD);
  const webhook = await startAdmissionServer({ config, logger, client, lookup, registry });
  return {
    port: webhook.port,
    apply: (batch) => view.apply(batch),
    metrics: async () => `${await registry.metrics()}\n${await ownThread()}`,
    close: async () => {
      await webhook.close();
      client.close();
    },
  };
}, logger);
