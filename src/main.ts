// The operator process — wiring only: config → API client → cache (with the controller's watches)
// → admission (on this thread, then on its own once the cluster is large: admission-worker.ts, fed
// the cache) → health and metrics → controller → signals. Every decision lives in the modules it
// wires together.
import { ConfigError, loadConfig, type Config } from './config/config.ts';
import { Controller } from './controller/controller.ts';
import { watchRuntimeRegistry } from './controller/runtime-registry.ts';
import { httpRoutesWanted, registerControllerWatches } from './controller/watches.ts';
import { KaosCache } from './cluster/cache.ts';
import { KubeClient } from './kube/client.ts';
import { startAdmission } from './admission-thread/admission.ts';
import { allReady, startHealthServer } from './server/health-server.ts';
import { createLogger, type Logger } from './server/pino-logger.ts';
import { createRegistry } from './leaves/prometheus.ts';

/** The admission thread's entry point, beside this one (dist/, or src/ when run from source). */
const ADMISSION_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './admission-worker.ts' : './admission-worker.js', import.meta.url);

async function main(config: Config, logger: Logger): Promise<void> {
  const client = await KubeClient.fromKubeConfig(config.kubeconfig, { userAgent: 'kaos-operator' });
  const cache = new KaosCache({ client, logger, namespaces: config.controller.watchNamespaces });
  // Registered before the cache starts: /readyz waits for these reflectors too. A webhook-only
  // replica (CONTROLLER_ENABLED=false) watches only what admission reads.
  const watches = config.controller.enabled
    ? registerControllerWatches(cache, { httpRoutes: await httpRoutesWanted(client, config) })
    : undefined;
  // Admission and the controller both read the MCP runtime registry (docs/api.md, "MCPServer runtimes").
  const runtimes = watchRuntimeRegistry(cache, { namespace: config.operatorNamespace, logger });
  cache.start();

  let stopping = false;
  const registry = createRegistry();
  // WEBHOOKS_ENABLED=false: controller only — no webhook server, so no certificate is read.
  // Admission starts on this thread and moves to its own once the cache holds WEBHOOK_THREAD_OBJECTS
  // KAOS objects (admission-thread/admission.ts says why); WEBHOOK_THREAD=false keeps it here.
  const admission = config.webhook.enabled
    ? await startAdmission({
        config,
        logger,
        client,
        cache,
        onRuntimesChange: (listener) => runtimes.onChange(listener),
        entry: ADMISSION_ENTRY,
        onFailure: (err) => {
          logger.fatal({ err: err.message }, 'the admission thread failed; exiting');
          process.exit(1);
        },
      })
    : undefined;
  const health = await startHealthServer({
    host: config.metricsHost,
    port: config.metricsPort,
    registry,
    ...(admission === undefined ? {} : { moreMetrics: () => admission.metrics() }),
    logger,
    // Admission can answer before the cache syncs (a miss costs one live read), but a replica
    // that is still listing should not take traffic from one that is warm.
    readiness: allReady({
      shutdown: () => (stopping ? { ready: false, reason: 'shutting down' } : { ready: true }),
      cache: () => (cache.isSynced() ? { ready: true } : { ready: false, reason: 'not synced' }),
    }),
  });
  const controller = watches === undefined ? undefined : new Controller({ cache, watches, runtimes, client, config, registry, logger });
  controller?.start();
  logger.info(
    {
      webhookPort: admission?.port ?? 'disabled',
      webhookThread: admission?.onThread() ?? false,
      webhookThreadFromObjects: config.webhook.thread ? config.webhook.threadFromObjects : 'never',
      metricsPort: health.port,
      server: client.server.origin,
      controller: config.controller.enabled,
      leaderElection: config.controller.leaderElect,
      watchNamespaces: config.controller.watchNamespaces.length === 0 ? 'all' : config.controller.watchNamespaces,
      httpRoutes: watches?.httpRoutesServed,
    },
    'kaos-operator started',
  );

  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    // SIGTERM is Kubernetes stopping a pod: keep answering while /readyz fails and the endpoints
    // drop this pod. SIGINT is a person at a terminal: stop now.
    const delayMs = signal === 'SIGTERM' ? config.shutdownDelaySeconds * 1000 : 0;
    logger.info({ signal, delaySeconds: delayMs / 1000 }, 'shutting down');
    // The controller at once (stop reconciling, release the Lease so another replica takes over
    // while this one still drains), then the webhook (drains requests in flight), then the
    // rest; exit even if something hangs.
    const deadline = setTimeout(() => {
      logger.error({}, 'shutdown took too long; exiting');
      process.exit(1);
    }, delayMs + 15_000);
    deadline.unref();
    void Promise.all([controller?.stop(), new Promise((resolve) => setTimeout(resolve, delayMs))])
      .then(() => admission?.close())
      .then(() => Promise.all([health.close(), cache.stop()]))
      .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err: String(err) }, 'error during shutdown');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

let config: Config;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`kaos-operator: ${err.message}\n`);
  process.exit(2);
}
const logger = createLogger({ level: config.logLevel });
main(config, logger).catch((err: unknown) => {
  logger.fatal({ err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) }, 'startup failed');
  process.exit(1);
});
