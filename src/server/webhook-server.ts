// The admission webhook server: the webhook routes on an HTTPS server that reloads its
// certificate. This is what main.ts starts (and closes on SIGTERM).
import type { Logger } from '../logger.ts';
import type { Config } from '../config.ts';
import type { HandlerFactory } from '../admission/types.ts';
import { createWebhookListener } from './webhook-router.ts';
import { startHttpsServer, type RunningHttpsServer } from './https-server.ts';
import type { WebhookMetrics } from './metrics.ts';

export interface WebhookServerOptions {
  /** `config.webhook`: host, port, certDir, certCheckIntervalSeconds. */
  config: Config['webhook'];
  handlers: HandlerFactory;
  logger: Logger;
  /** createWebhookMetrics(registry); no metrics when omitted. */
  metrics?: WebhookMetrics;
  /** How long close() lets requests in flight finish. Default 10 s. */
  shutdownGraceMs?: number;
  /** Default 100 ms; tests shorten it. */
  certDebounceMs?: number;
}

export type RunningWebhookServer = RunningHttpsServer;

export function startWebhookServer(options: WebhookServerOptions): Promise<RunningWebhookServer> {
  const { config, logger } = options;
  const listener = createWebhookListener({
    handlers: options.handlers,
    logger,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  });
  return startHttpsServer({
    host: config.host,
    port: config.port,
    certDir: config.certDir,
    certCheckIntervalSeconds: config.certCheckIntervalSeconds,
    listener,
    logger,
    ...(options.shutdownGraceMs === undefined ? {} : { shutdownGraceMs: options.shutdownGraceMs }),
    ...(options.certDebounceMs === undefined ? {} : { certDebounceMs: options.certDebounceMs }),
  });
}
