// The webhook server with the webhooks' handlers over a lookup — wiring, written once for the two
// places that run it: the admission thread (admission-worker.ts, over its view of the cache) and,
// with WEBHOOK_THREAD=false, main.ts on its own thread (over the cache itself).
import { createMutatingHandler } from '../admission/mutate.ts';
import { createPodSpecCheck } from '../admission/pod-spec-check.ts';
import type { HandlerFactory } from '../admission/types.ts';
import { createValidatingHandler } from '../admission/validate.ts';
import type { ObjectLookup } from '../api/lookup.ts';
import type { Config } from '../config/config.ts';
import type { KubeClient } from '../kube/client.ts';
import { deploymentDryRun } from '../kube/dry-run.ts';
import type { Logger } from '../leaves/logger.ts';
import type { Registry } from '../leaves/prometheus.ts';
import { createWebhookMetrics, registerCertificateExpiryMetric } from '../server/webhook-metrics.ts';
import { startWebhookServer, type RunningWebhookServer } from '../server/webhook-server.ts';

export interface AdmissionServerOptions {
  config: Config;
  logger: Logger;
  /** For the podSpec check's server-side dry runs. */
  client: KubeClient;
  /** The cache, or the admission thread's view of it; mcpRuntimes() is the registry both read. */
  lookup: ObjectLookup & { mcpRuntimes(): ReturnType<NonNullable<ObjectLookup['mcpRuntimes']>> };
  /** Where the webhook metrics and the certificate's expiry go. */
  registry: Registry;
  /** Listen so that another thread's server can listen on the same port (https-server.ts). */
  reusePort?: boolean;
}

export async function startAdmissionServer(options: AdmissionServerOptions): Promise<RunningWebhookServer> {
  const { config, logger, client, lookup, registry } = options;
  const podSpecCheck = createPodSpecCheck({ dryRunCreate: deploymentDryRun(client), config, logger, mcpRuntimes: () => lookup.mcpRuntimes() });
  const handlers: HandlerFactory = (kind, type) =>
    type === 'mutate'
      ? createMutatingHandler(kind, { lookup, config })
      : createValidatingHandler(kind, { lookup, config, podSpecCheck });
  const webhook = await startWebhookServer({ config: config.webhook, handlers, logger, metrics: createWebhookMetrics(registry), reusePort: options.reusePort === true });
  registerCertificateExpiryMetric(registry, () => webhook.certificate());
  return webhook;
}
