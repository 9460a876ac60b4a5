// Graceful shutdown of an HTTP(S) server: stop accepting, let requests in flight finish, close
// keep-alive connections as soon as they are idle, and force the rest after a bound.
import type { RequestListener, Server as HttpServer, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';

/** Backstop sweep for connections that turn idle while draining; nothing runs per request. */
const SWEEP_MS = 100;

export interface DrainingListener {
  listener: RequestListener;
  /**
   * From now on every answer says `Connection: close` (those in flight too, if their headers
   * are not out yet), so no client sends another request on a connection that is about to go.
   */
  drain(): void;
}

/** Wraps a request listener so that drain() can reach the responses in flight. */
export function drainingListener(inner: RequestListener): DrainingListener {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  function done(this: ServerResponse): void {
    inFlight.delete(this);
  }
  return {
    listener(req, res) {
      if (draining) {
        res.setHeader('Connection', 'close');
      } else {
        inFlight.add(res);
        res.on('close', done); // not once(): no wrapper to allocate; 'close' comes once anyway
      }
      inner(req, res);
    },
    drain() {
      draining = true;
      for (const res of inFlight) {
        if (!res.headersSent) res.setHeader('Connection', 'close');
      }
    },
  };
}

export interface CloseOptions {
  /** After this long, connections still open are destroyed. */
  graceMs: number;
  /** Told how many connections were destroyed when the grace period ran out. */
  onForced?: (connections: number) => void;
}

/**
 * Resolves when the server has closed: every connection ended, or cut off after graceMs. A
 * connection that has not sent its first request counts as busy to Node (its header timer is
 * running), so only the grace period ends it; the API server never opens one without sending.
 */
export function closeGracefully(server: HttpServer | HttpsServer, options: CloseOptions): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
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
    // Node's close() already drops idle keep-alive connections; say so, it is the point.
    server.closeIdleConnections();
  });
}
