// A TCP proxy on loopback in front of the API server, for the operator's connections: `cut()`
// resets every one of them at once (watches, requests in flight, idle keep-alive connections),
// the fault of a network that drops connections or a load balancer that restarts. TLS passes
// through untouched (the API server's certificate names 127.0.0.1, the proxy's address too).
// Either side's end ends the other; its failure resets the other: nothing is left half open.
import net from 'node:net';

interface Pair {
  readonly client: net.Socket;
  readonly upstream: net.Socket;
}

export class TcpProxy {
  readonly #port: () => number;
  readonly #server: net.Server;
  readonly #pairs = new Set<Pair>();
  /** Every socket of either side still open, for close(). */
  readonly #sockets = new Set<net.Socket>();
  /** Connections reset by cut(). */
  resets = 0;

  /** `port`: where the API server listens now (asked for each new connection). */
  constructor(port: () => number) {
    this.#port = port;
    this.#server = net.createServer({ pauseOnConnect: true }, (client) => this.#accept(client));
  }

  /** Listens on a free loopback port; resolves with it. */
  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
    return address.port;
  }

  /** Resets every connection; returns how many. */
  cut(): number {
    const count = this.#pairs.size;
    for (const pair of [...this.#pairs]) this.#reset(pair);
    this.resets += count;
    return count;
  }

  /** Open connections. */
  get connections(): number {
    return this.#pairs.size;
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.cut();
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  #accept(client: net.Socket): void {
    const upstream = net.connect({ host: '127.0.0.1', port: this.#port() });
    const pair: Pair = { client, upstream };
    this.#pairs.add(pair);
    for (const [socket, other] of [[client, upstream], [upstream, client]] as const) {
      this.#sockets.add(socket);
      socket.on('error', () => this.#reset(pair));
      // A graceful end is passed on by pipe(); a close without one ends the other side too.
      socket.on('close', () => {
        this.#sockets.delete(socket);
        this.#pairs.delete(pair);
        if (!other.destroyed) other.end();
      });
    }
    upstream.once('connect', () => {
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  }

  #reset(pair: Pair): void {
    if (!this.#pairs.delete(pair)) return;
    for (const socket of [pair.client, pair.upstream]) resetSocket(socket);
  }
}

/**
 * Ends `socket` with a reset (RST), or, when its end was already asked for (by pipe(), on the
 * other side's end), by closing it: a socket whose shutdown is still under way cannot be reset
 * (libuv's uv_tcp_close_reset refuses with EINVAL), and Node then marks its handle closing without
 * ever closing it: the socket stays open, its 'close' never comes, and the process can no longer
 * exit (it spins in its exit cleanup, waiting for that handle, until it is killed).
 */
export function resetSocket(socket: net.Socket): void {
  if (socket.destroyed) return;
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}
