// Liveness, readiness and metrics on a plain-HTTP port of their own, so that probes and
// Prometheus need no certificate and a webhook under load does not starve them of sockets.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logger.ts';
import type { Registry } from 'prom-client';
import { closeGracefully } from './close.ts';

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
}

export interface RunningHealthServer {
  readonly server: Server;
  readonly port: number;
  close(): Promise<void>;
}

export async function startHealthServer(options: HealthServerOptions): Promise<RunningHealthServer> {
  const { registry, logger } = options;
  const readiness = options.readiness ?? (() => READY);

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return text(res, 405, 'method not allowed\n');
    }
    switch (path) {
      case '/healthz':
      case '/livez':
        // The process answers, so it is alive: nothing else belongs in a liveness probe.
        return text(res, 200, 'ok\n');
      case '/readyz': {
        let result: Readiness;
        try {
          result = await readiness();
        } catch (err) {
          result = { ready: false, reason: `readiness check failed: ${(err as Error).message}` };
        }
        return result.ready ? text(res, 200, 'ok\n') : text(res, 503, `not ready: ${result.reason}\n`);
      }
      case '/metrics': {
        const body = await registry.metrics();
        res.statusCode = 200;
        res.setHeader('Content-Type', registry.contentType);
        res.end(req.method === 'HEAD' ? undefined : body);
        return;
      }
      default:
        return text(res, 404, 'not found\n');
    }
  };

  const server = createServer((req, res) => {
    serve(req, res).catch((err: unknown) => {
      logger.error({ err, url: req.url?.slice(0, 200) }, 'health server request failed');
      if (!res.headersSent) text(res, 500, 'internal error\n');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ host: options.host, port }, 'health and metrics server listening');
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

function text(res: ServerResponse, code: number, body: string): void {
  res.statusCode = code;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
