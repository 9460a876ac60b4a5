// An HTTPS server whose certificate follows its files: a new pair goes into service through
// server.setSecureContext(), so no restart, and connections already open keep their session
// and finish what they are doing. Knows nothing about admission; webhook-server.ts puts the
// webhook application (webhook-router.ts, express) on it.
import { createServer, type Server } from 'node:https';
import { Server as TlsServer } from 'node:tls';
import type { RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../leaves/logger.ts';
import {
  loadCertificatePair,
  watchCertificates,
  type CertificateCheck,
  type CertificateInfo,
  type CertificatePair,
} from './certificates.ts';
import { closeGracefully, drainingListener } from './close.ts';

/**
 * Timeouts, and why. The API server's webhook client is Go's net/http, which drops idle
 * connections after 90 s: keeping ours open at least that long means the client, not us, closes
 * an idle connection, so it never sends a request on a socket we are closing. Headers must come
 * within 32 s (a little above the longest webhook timeout the API server allows, 30 s), and a
 * whole request within 60 s, so a stalled client cannot hold a socket for ever.
 */
export const SERVER_TIMEOUTS = {
  keepAliveTimeout: 90_000,
  headersTimeout: 32_000,
  requestTimeout: 60_000,
} as const;

/** `server` with SERVER_TIMEOUTS: every server that stands where the webhook server does (tests and benches too) keeps them. */
export function withServerTimeouts<S extends { keepAliveTimeout: number; headersTimeout: number; requestTimeout: number }>(server: S): S {
  server.keepAliveTimeout = SERVER_TIMEOUTS.keepAliveTimeout;
  server.headersTimeout = SERVER_TIMEOUTS.headersTimeout;
  server.requestTimeout = SERVER_TIMEOUTS.requestTimeout;
  return server;
}

export interface HttpsServerOptions {
  host: string;
  /** 0 picks a free port; see RunningHttpsServer.port. */
  port: number;
  /** Holds tls.crt and tls.key. */
  certDir: string;
  certCheckIntervalSeconds: number;
  listener: RequestListener;
  logger: Logger;
  /** How long close() waits for requests in flight before cutting them off. Default 10 s. */
  shutdownGraceMs?: number;
  /** Quiet time after a change in certDir before the files are read. Default 100 ms. */
  certDebounceMs?: number;
  /**
   * Connections open at once; beyond it Node closes a new connection as soon as it is accepted
   * (before the TLS handshake), so a flood of idle connections costs a bounded amount of memory.
   * Default: unlimited.
   */
  maxConnections?: number;
  /**
   * Listen with SO_REUSEPORT, so that another server of this process (another thread's) can listen
   * on the same port while this one closes: the kernel spreads new connections over both, and
   * none is refused while admission moves from one thread to the other.
   */
  reusePort?: boolean;
}

export interface RunningHttpsServer {
  readonly server: Server;
  readonly host: string;
  readonly port: number;
  /** The certificate in service. */
  certificate(): CertificateInfo;
  /** Reads certDir now instead of waiting for a file event or the timer. */
  checkCertificates(): Promise<CertificateCheck>;
  /** Stops accepting, drains (bounded by shutdownGraceMs) and resolves when closed. Idempotent. */
  close(): Promise<void>;
  /**
   * Keeps serving, but from now on every answer says `Connection: close`: each connection a client
   * holds carries one more request at most, and the client opens the next one where its view of
   * the endpoints sends it. What a replica does between SIGTERM and close(), so that close() has
   * (nearly) no idle connection left to cut under a request the client is writing. Idempotent.
   */
  drain(): void;
  /**
   * Stops accepting for another server on the same port (reusePort) and lets each open connection
   * end without a race: the next answer on it says `Connection: close`, and one that stays idle
   * is closed by the client (or by keepAliveTimeout, as any idle one). Unlike close(), no idle
   * connection is cut: a request the client has just written on one would be lost with it (the
   * API server resends a webhook call only when nothing of it was written). Resolves when the last
   * connection has gone; close() still ends it all within its grace period.
   */
  handOver(): Promise<void>;
}

/** Stops listening and calls back once every connection has ended, cutting none (https.Server's close() cuts the idle ones). */
const tlsServerClose: (this: Server, callback: () => void) => void = TlsServer.prototype.close;

/** Seconds between two log lines about failed TLS handshakes; scanners must not flood the log. */
const TLS_ERROR_LOG_INTERVAL_MS = 60_000;

export async function startHttpsServer(options: HttpsServerOptions): Promise<RunningHttpsServer> {
  const { logger, certDir } = options;
  let pair: CertificatePair = await loadCertificatePair(certDir);
  const draining = drainingListener(options.listener);
  const server = withServerTimeouts(createServer({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' }, draining.listener));
  server.on('tlsClientError', throttledTlsLog(logger));
  if (options.maxConnections !== undefined) {
    server.maxConnections = options.maxConnections;
    server.on('drop', throttled(logger, DROP_LOG_INTERVAL_MS, (suppressed) => [
      { maxConnections: options.maxConnections, suppressed },
      'connection refused: too many open connections',
    ]));
  }

  const watcher = watchCertificates({
    certDir,
    current: pair,
    intervalMs: options.certCheckIntervalSeconds * 1000,
    debounceMs: options.certDebounceMs ?? 100,
    apply(next) {
      server.setSecureContext({ cert: next.cert, key: next.key, minVersion: 'TLSv1.2' });
      pair = next;
    },
    onReload: (info) => logger.info({ certDir, ...info }, 'serving certificate reloaded'),
    onReject: (error) =>
      logger.error({ certDir, err: error.message }, 'serving certificate not reloaded; keeping the one in service'),
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port: options.port, host: options.host, reusePort: options.reusePort === true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    watcher.stop();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  logger.info({ host: options.host, port, certDir, ...pair.info }, 'HTTPS server listening');

  let closing: Promise<void> | undefined;
  let handingOver: Promise<void> | undefined;
  const graceMs = options.shutdownGraceMs ?? 10_000;
  return {
    server,
    host: options.host,
    port,
    certificate: () => pair.info,
    checkCertificates: () => watcher.check(),
    drain: () => draining.drain(),
    close() {
      closing ??= (async () => {
        watcher.stop();
        draining.drain();
        if (handingOver === undefined) {
          await closeGracefully(server, {
            graceMs,
            onForced: (connections) =>
              logger.warn({ connections }, 'shutdown grace period over; closing connections still open'),
          });
        } else {
          // No longer listening: end the connections left as closeGracefully would.
          server.closeIdleConnections();
          const force = setTimeout(() => server.closeAllConnections(), graceMs);
          await handingOver;
          clearTimeout(force);
        }
        logger.info({ port }, 'HTTPS server closed');
      })();
      return closing;
    },
    handOver() {
      handingOver ??= new Promise<void>((resolve) => {
        watcher.stop();
        draining.drain();
        // net.Server's close, not the HTTP server's, which would also cut every idle connection.
        tlsServerClose.call(server, () => resolve());
        logger.info({ port }, 'HTTPS server handing over: no new connection, the open ones end one by one');
      });
      return handingOver;
    },
  };
}

/** Like the TLS log: a flood of refused connections is one line a minute, with the count. */
const DROP_LOG_INTERVAL_MS = 60_000;

function throttled(logger: Logger, intervalMs: number, line: (suppressed: number) => [Record<string, unknown>, string]): () => void {
  let last = -Infinity;
  let suppressed = 0;
  return () => {
    const now = Date.now();
    if (now - last < intervalMs) {
      suppressed += 1;
      return;
    }
    const [fields, msg] = line(suppressed);
    logger.warn(fields, msg);
    last = now;
    suppressed = 0;
  };
}

function throttledTlsLog(logger: Logger): (err: Error) => void {
  let last = 0;
  let suppressed = 0;
  return (err) => {
    const now = Date.now();
    if (now - last < TLS_ERROR_LOG_INTERVAL_MS) {
      suppressed += 1;
      return;
    }
    logger.warn({ err: err.message, suppressed }, 'TLS handshake failed (is the caBundle the CA of this certificate?)');
    last = now;
    suppressed = 0;
  };
}
