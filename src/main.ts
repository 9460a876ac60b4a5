// The operator process — wiring only: config → API client → cache (with the controller's watches)
// → admission (on this thread, then on its own once the cluster is large: admission-worker.ts, fed
// the cache) → health and metrics → controller → signals. Every decision lives in the modules it
// wires together.
import { ConfigError, loadConfig, type Config } from './config/config.ts';
import { gatewayRoutingEnabled, networkPoliciesEnabled, securityEnabled, securityWarnings, serviceAccountIdentity } from './config/security.ts';
import { AuthzProjection, projectionSettings, registerProjectionWatches } from './controller/authz-projection.ts';
import { Controller } from './controller/controller.ts';
import { registerUserIssuerMetrics, STALE_AFTER_REFRESHES, UserIssuerKeys } from './controller/user-issuer.ts';
import { EventRecorder } from './kube/events.ts';
import { defaultIdentity } from './kube/leader-election.ts';
import { getJson } from './kube/json-get.ts';
import { watchHarnessRegistry, watchRuntimeRegistry } from './controller/runtime-registry.ts';
import { httpRoutesWanted, registerControllerWatches, watchGatewayAddress } from './controller/watches.ts';
import { KaosCache } from './cluster/cache.ts';
import { registerObjectMetrics } from './controller/object-metrics.ts';
import { ServiceAccountIssuerDiscovery } from './cluster/service-account-issuer.ts';
import { KubeClient } from './kube/client.ts';
import { startAdmission } from './admission-thread/admission.ts';
import { allReady, startHealthServer } from './server/health-server.ts';
import { createLogger, type Logger } from './server/pino-logger.ts';
import { createRegistry } from './leaves/prometheus.ts';

/** The admission thread's entry point, beside this one (dist/, or src/ when run from source). */
const ADMISSION_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './admission-worker.ts' : './admission-worker.js', import.meta.url);

/** An Event recorder for what the operator tells outside a reconcile (made when first needed). */
let eventRecorder: EventRecorder | undefined;
function operatorEvents(client: KubeClient, config: Config): EventRecorder {
  eventRecorder ??= new EventRecorder({ client, instance: config.controller.podName !== '' ? config.controller.podName : defaultIdentity() });
  return eventRecorder;
}

async function main(config: Config, logger: Logger): Promise<void> {
  const client = await KubeClient.fromKubeConfig(config.kubeconfig, { userAgent: 'kaos-operator' });
  const cache = new KaosCache({ client, logger, namespaces: config.controller.watchNamespaces });
  // Registered before the cache starts: /readyz waits for these reflectors too. A webhook-only
  // replica (CONTROLLER_ENABLED=false) watches only what admission reads.
  const watches = config.controller.enabled
    ? registerControllerWatches(cache, { httpRoutes: await httpRoutesWanted(client, config) })
    : undefined;
  // Admission and the controller both read the runtime registries (docs/api.md, "MCPServer runtimes", "Agent harness").
  const runtimes = watchRuntimeRegistry(cache, { namespace: config.operatorNamespace, logger });
  const harnessRuntimes = watchHarnessRegistry(cache, { namespace: config.systemNamespace, logger });
  // The AccessGrant projection's policy ConfigMap and the Rego it copies (docs/api.md, "Policy ConfigMap").
  const authz = projectionSettings(config.security);
  const authzWatches = watches === undefined ? undefined : registerProjectionWatches(cache, authz);
  // Gateway routing through the Gateway's status address, when no SECURITY_GATEWAY_HOST names one.
  const { security } = config;
  const gatewayAddress = watches?.httpRoutesServed === true && securityEnabled(security) && gatewayRoutingEnabled(security) && security.gatewayHost === ''
    ? watchGatewayAddress(cache, { namespace: config.gateway.namespace, name: config.gateway.name })
    : undefined;
  cache.start();

  let stopping = false;
  const registry = createRegistry();
  registerObjectMetrics(registry, (kind) => cache.reflector(kind).list());
  // WEBHOOKS_ENABLED=false: controller only — no webhook server, so no certificate is read.
  // Admission starts on this thread and moves to its own once the cache holds WEBHOOK_THREAD_OBJECTS
  // KAOS objects (admission-thread/admission.ts says why); WEBHOOK_THREAD=false keeps it here.
  const admission = config.webhook.enabled
    ? await startAdmission({
        config,
        logger,
        client,
        cache,
        onRuntimesChange: (listener) => {
          const offs = [runtimes.onChange(listener), harnessRuntimes.onChange(listener)];
          return () => { for (const off of offs) off(); };
        },
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
  // The ServiceAccount issuer and its keys, for the policies that verify agent tokens: with
  // security enabled none can be written without them, so a failed discovery stops the operator;
  // otherwise it is tried again each minute.
  const issuer = watches !== undefined && serviceAccountIdentity(config.security)
    ? new ServiceAccountIssuerDiscovery({
        client,
        settings: config.security.serviceAccount,
        refreshIntervalMs: config.security.jwksRefreshIntervalSeconds * 1000,
        logger,
      })
    : undefined;
  const discoveryFailure = await issuer?.start();
  if (discoveryFailure !== undefined && securityEnabled(config.security)) {
    logger.fatal({ err: discoveryFailure.message }, 'ServiceAccount issuer discovery failed with security enabled; exiting');
    process.exit(1);
  }
  // The user issuer (any OIDC provider): its discovery names where its keys are, for the policy
  // data and for every SecurityPolicy's user provider. Its outage never stops the operator: the
  // keys it had are kept, their age is a metric, and past the bound a Warning Event on the policy
  // ConfigMap says so (user-issuer.ts).
  const background = new AbortController();
  const refreshIntervalMs = config.security.jwksRefreshIntervalSeconds * 1000;
  const policyConfigMap = authz.configMap;
  const userIssuer = authz.user === undefined || watches === undefined
    ? undefined
    : new UserIssuerKeys({
        issuer: authz.user.issuer,
        jwksUri: config.security.userAuth.jwksUri,
        get: getJson,
        logger,
        staleAfterMs: STALE_AFTER_REFRESHES * refreshIntervalMs,
        ...(policyConfigMap === undefined ? {} : {
          onStale: ({ stale, message }) => operatorEvents(client, config).record({
            regarding: { apiVersion: 'v1', kind: 'ConfigMap', namespace: policyConfigMap.namespace, name: policyConfigMap.name },
            type: stale ? 'Warning' : 'Normal',
            reason: stale ? 'UserIssuerKeysStale' : 'UserIssuerKeysRefreshed',
            action: 'RefreshKeys',
            note: message,
          }),
        }),
      });
  registerUserIssuerMetrics(registry, userIssuer);
  userIssuer?.discoverUntilKnown(background.signal);
  const projection = watches === undefined
    ? undefined
    : new AuthzProjection({
        cache,
        settings: authz,
        serviceAccountKeys: () => issuer?.current(),
        ...(userIssuer === undefined ? {} : { userKeys: userIssuer, refreshIntervalMs }),
        client,
        ...authzWatches,
        logger,
        registry,
      });
  issuer?.onChange(() => projection?.trigger());
  const controller = watches === undefined
    ? undefined
    : new Controller({
        cache,
        watches,
        runtimes,
        harnessRuntimes,
        client,
        config,
        registry,
        logger,
        ...(projection === undefined ? {} : { projection }),
        grantGates: authz.gates,
        ...(issuer === undefined ? {} : { serviceAccountIssuer: issuer }),
        ...(userIssuer === undefined ? {} : { userIssuer }),
        ...(gatewayAddress === undefined ? {} : { gatewayAddress }),
      });
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
    issuer?.stop();
    // From now on each connection the API server holds here carries one more review at most:
    // it opens the next where its view of the endpoints sends it, and close() finds no
    // connection it could cut under a review being written (docs/reliability.md).
    if (delayMs > 0) admission?.drain();
    background.abort();
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
for (const warning of securityWarnings(process.env, config.security)) logger.warn({}, warning);
if (networkPoliciesEnabled(config.security) && !gatewayRoutingEnabled(config.security)) {
  // Pods then accept only the gateway's traffic, while Agents still call their dependencies directly.
  logger.warn({}, 'NetworkPolicies are on but gateway routing is off: Agents call their dependencies directly, which the NetworkPolicies refuse; set SECURITY_GATEWAY_ROUTING_ENABLED=true');
}
main(config, logger).catch((err: unknown) => {
  logger.fatal({ err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) }, 'startup failed');
  process.exit(1);
});
