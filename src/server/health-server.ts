// Liveness, readiness and metrics on a plain-HTTP port of their own, so that probes and
// Prometheus need no certificate and a webhook under load does not starve them of sockets.
import type { Server, ServerResponse } from 'node:http';
import { http } from '../leaves/node-http.ts';
import type { Express, NextFunction, Request, Response } from 'express';
import { bareExpressApp } from './express-app.ts';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../leaves/logger.ts';
import { mergeExpositions, type Registry } from '../leaves/prometheus.ts';
import { closeGracefully } from './close.ts';
import { errorMessage } from '../leaves/error-message.ts';

export type Readiness = { ready: true } | { ready: false; reason: string };
/** Answers "may this replica receive traffic?" (e.g. caches synced); may be async. */
export type ReadinessCheck = () => Readiness | Promise<Readiness>;

export const READY: Readiness = { ready: true };

/** Ready when every check is; otherwise the reasons of those that are not. */
export function allReady(checks: Readonly<Record<string, ReadinessCheck>>): ReadinessCheck {
  return async () => {
    const reasons: string[] = [];
    for (const [name, check] of Object.entries(checks)) {
      const result = await check();
      if (!result.ready) reasons.push(`${name}: ${result.reason}`);
    }
    return reasons.length === 0 ? READY : { ready: false, reason: reasons.join('; ') };
  };
}

export interface HealthServerOptions {
  host: string;
  port: number;
  registry: Registry;
  /** Default: always ready. */
  readiness?: ReadinessCheck;
  logger: Logger;
  /** More metrics in Prometheus text, e.g. another thread's, served with the registry's (families merged). */
  moreMetrics?: () => Promise<string>;
}

export interface RunningHealthServer {
  readonly server: Server;
  readonly port: number;
  close(): Promise<void>;
}

export async function startHealthServer(options: HealthServerOptions): Promise<RunningHealthServer> {
  const server = http.createServer(createHealthApp(options));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ host: options.host, port }, 'health and metrics server listening');
  let closing: Promise<void> | undefined;
  return {
    server,
    port,
    close() {
      closing ??= closeGracefully(server, { graceMs: 2_000 });
      return closing;
    },
  };
}

/**
 * The express application: GET (and HEAD) only, exact paths, query ignored; text answers.
 * Express's own additions (X-Powered-By, ETag) are off: a probe reads the status, nothing else.
 */
export function createHealthApp(options: Pick<HealthServerOptions, 'registry' | 'readiness' | 'logger' | 'moreMetrics'>): Express {
  const { registry, logger, moreMetrics } = options;
  const readiness = options.readiness ?? (() => READY);
  const app = bareExpressApp();

  app.use((req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    res.setHeader('Allow', 'GET, HEAD');
    text(res, 405, 'method not allowed\n');
  });
  // The process answers, so it is alive: nothing else belongs in a liveness probe.
  app.get(['/healthz', '/livez'], (_req, res) => text(res, 200, 'ok\n'));
  app.get('/readyz', async (_req, res) => {
    let result: Readiness;
    try {
      result = await readiness();
    } catch (err) {
      result = { ready: false, reason: `readiness check failed: ${errorMessage(err)}` };
    }
    if (result.ready) text(res, 200, 'ok\n');
    else text(res, 503, `not ready: ${result.reason}\n`);
  });
  app.get('/metrics', async (req, res) => {
    const body = moreMetrics === undefined
      ? await registry.metrics()
      : mergeExpositions(await Promise.all([registry.metrics(), moreMetrics()]));
    res.statusCode = 200;
    res.setHeader('Content-Type', registry.contentType);
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  app.use((_req, res) => text(res, 404, 'not found\n'));
  // A rejected handler (express 5 passes it here) or a bug: log once, answer if still possible.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    logger.error({ err, url: req.originalUrl.slice(0, 200) }, 'health server request failed');
    if (!res.headersSent) text(res, 500, 'internal error\n');
    else res.destroy();
  });
  return app;
}

function text(res: ServerResponse, code: number, body: string): void {
  res.statusCode = code;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
