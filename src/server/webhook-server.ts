// The admission webhook server: the webhook routes on an HTTPS server that reloads its
// certificate. This is what main.ts starts (and closes on SIGTERM).
import type { Logger } from '../leaves/logger.ts';
import { WEBHOOK_DEFAULTS, type Config } from '../config/config.ts';
import type { HandlerFactory } from '../admission/types.ts';
import { createWebhookApp } from './webhook-router.ts';
import { startHttpsServer, type RunningHttpsServer } from './https-server.ts';
import type { WebhookMetrics } from './webhook-metrics.ts';

export interface WebhookServerOptions {
  /**
   * `config.webhook`: host, port, certDir, certCheckIntervalSeconds; maxConnections and
   * bodyTimeoutSeconds default to WEBHOOK_DEFAULTS (config.ts), the environment's defaults.
   */
  config: Omit<Config['webhook'], 'enabled' | 'thread' | 'threadFromObjects' | 'maxConnections' | 'bodyTimeoutSeconds'> &
    Partial<Pick<Config['webhook'], 'maxConnections' | 'bodyTimeoutSeconds'>>;
  handlers: HandlerFactory;
  logger: Logger;
  /** createWebhookMetrics(registry); no metrics when omitted. */
  metrics?: WebhookMetrics;
  /** How long close() lets requests in flight finish. Default 10 s. */
  shutdownGraceMs?: number;
  /** Default 100 ms; tests shorten it. */
  certDebounceMs?: number;
  /** HttpsServerOptions.reusePort: another thread's server may listen on the same port (a handover). */
  reusePort?: boolean;
}

export type RunningWebhookServer = RunningHttpsServer;

export function startWebhookServer(options: WebhookServerOptions): Promise<RunningWebhookServer> {
  const { config, logger } = options;
  const listener = createWebhookApp({
    handlers: options.handlers,
    logger,
    bodyTimeoutMs: (config.bodyTimeoutSeconds ?? WEBHOOK_DEFAULTS.bodyTimeoutSeconds) * 1000,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  });
  return startHttpsServer({
    host: config.host,
    port: config.port,
    certDir: config.certDir,
    certCheckIntervalSeconds: config.certCheckIntervalSeconds,
    listener,
    logger,
    maxConnections: config.maxConnections ?? WEBHOOK_DEFAULTS.maxConnections,
    ...(options.shutdownGraceMs === undefined ? {} : { shutdownGraceMs: options.shutdownGraceMs }),
    ...(options.certDebounceMs === undefined ? {} : { certDebounceMs: options.certDebounceMs }),
    ...(options.reusePort === true ? { reusePort: true } : {}),
  });
}
