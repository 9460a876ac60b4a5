// The soak's TCP proxy in front of the API server, on real loopback sockets: bytes pass both
// ways, to wherever the target is now; cut() resets every connection (its clients see a reset);
// an end on one side ends the other; a socket whose end is under way is closed, never left open.
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { TcpProxy, resetSocket } from '../../soak/tcp-proxy.ts';

/** A server that answers each chunk with `<name>:<chunk>`. */
async function echoServer(name: string): Promise<{ port: number; sockets: Set<net.Socket>; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.on('data', (chunk) => socket.write(`${name}:${chunk.toString()}`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    sockets,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/** An echo server `a` behind a proxy listening on `port`, both closed when `t` ends. */
async function proxiedEcho(t: Test): Promise<{ a: Awaited<ReturnType<typeof echoServer>>; proxy: TcpProxy; port: number }> {
  const a = await echoServer('a');
  const proxy = new TcpProxy(() => a.port);
  const port = await proxy.listen();
  t.teardown(async () => { await proxy.close(); await a.close(); });
  return { a, proxy, port };
}

function ask(socket: net.Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    socket.once('data', (chunk) => resolve(chunk.toString()));
    socket.once('error', reject);
    socket.write(text);
  });
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** How the socket ended: its error code (ECONNRESET for a reset) or 'end'. */
function ending(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    socket.once('end', () => resolve('end'));
  });
}

t.test('passes bytes both ways, each new connection to where the target is now', async (t) => {
  const a = await echoServer('a');
  const b = await echoServer('b');
  let target = a.port;
  const proxy = new TcpProxy(() => target);
  const port = await proxy.listen();
  t.teardown(async () => { await proxy.close(); await a.close(); await b.close(); });
  const first = await connect(port);
  t.equal(await ask(first, 'hello'), 'a:hello');
  target = b.port;
  const second = await connect(port);
  t.equal(await ask(second, 'hello'), 'b:hello', 'a restarted server on another port is reached');
  t.equal(await ask(first, 'again'), 'a:again', 'an open connection stays where it was');
  t.equal(proxy.connections, 2);
  first.destroy();
  second.destroy();
});

t.test('cut() resets every connection: its clients see a reset, new ones get through', async (t) => {
  const { proxy, port } = await proxiedEcho(t);
  const sockets = [await connect(port), await connect(port)];
  for (const s of sockets) t.equal(await ask(s, 'x'), 'a:x');
  const endings = sockets.map(ending);
  t.equal(proxy.cut(), 2);
  t.same(await Promise.all(endings), ['ECONNRESET', 'ECONNRESET']);
  t.equal(proxy.resets, 2);
  const fresh = await connect(port);
  t.equal(await ask(fresh, 'after'), 'a:after');
  fresh.destroy();
});

t.test('the server ending a connection ends the client\'s', async (t) => {
  const { a, port } = await proxiedEcho(t);
  const socket = await connect(port);
  t.equal(await ask(socket, 'x'), 'a:x');
  const ended = ending(socket);
  for (const s of a.sockets) s.end();
  t.equal(await ended, 'end');
});

t.test('nothing listening at the target: the client is reset', async (t) => {
  const a = await echoServer('a');
  const dead = a.port;
  await a.close();
  const proxy = new TcpProxy(() => dead);
  const port = await proxy.listen();
  t.teardown(() => proxy.close());
  // The reset may come before or after the client sees the connection open.
  t.equal(await ending(net.connect({ host: '127.0.0.1', port })), 'ECONNRESET');
});

t.test('resetSocket(): a socket whose end is under way is closed, not left open for good', async (t) => {
  const a = await echoServer('a');
  t.teardown(() => a.close());
  const socket = await connect(a.port);
  socket.on('error', () => {});
  socket.write('x');
  // Its shutdown is under way until the next turn of the event loop: a reset now is refused
  // (EINVAL), and a socket reset regardless would never close, nor let this process exit.
  socket.end();
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve('closed')));
  resetSocket(socket);
  t.equal(await Promise.race([closed, sleep(10_000, 'still open 10 s later', { ref: false })]), 'closed');
});

t.test('resetSocket(): a socket in use is reset: its peer sees ECONNRESET', async (t) => {
  const peers: net.Socket[] = [];
  const server = net.createServer((s) => peers.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const socket = await connect((server.address() as net.AddressInfo).port);
  while (peers.length === 0) await sleep(10);
  const peerEnding = ending(peers[0] as net.Socket);
  resetSocket(socket);
  t.equal(await peerEnding, 'ECONNRESET');
});
