// Graceful shutdown of an HTTP(S) server: stop accepting, let requests in flight finish, close
// keep-alive connections as soon as they are idle, and force the rest after a bound.
import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';

/** How often idle connections are swept while draining; cheap, and nothing per request. */
const SWEEP_MS = 25;

export interface CloseOptions {
  /** After this long, connections still open are destroyed. */
  graceMs: number;
  /** Told how many connections were destroyed when the grace period ran out. */
  onForced?: (connections: number) => void;
}

/**
 * Resolves when the server has closed. Requests that arrive on kept-alive connections while
 * draining are still served, with `Connection: close`, so that the client opens its next
 * connection to another replica instead of reusing one that is about to go.
 */
export function closeGracefully(server: HttpServer | HttpsServer, options: CloseOptions): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.prependListener('request', (_req, res) => {
      if (!res.headersSent) res.setHeader('Connection', 'close');
    });
    const sweep = setInterval(() => server.closeIdleConnections(), SWEEP_MS);
    const force = setTimeout(() => {
      server.getConnections((err, count) => {
        options.onForced?.(err === null ? count : -1);
        server.closeAllConnections();
      });
    }, options.graceMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(force);
      resolve();
    });
    // Node's close() already drops idle connections; say so explicitly, it is the point.
    server.closeIdleConnections();
  });
}
