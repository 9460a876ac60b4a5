// npm run bench:keepalive — what idle keep-alive TLS connections cost the webhook server.
//
// The real webhook server (real router and TLS; trivial handlers) runs in a child process, so
// its RSS is its own; this process opens BENCH_CONNECTIONS (default 1,000) TLS connections, sends
// one AdmissionReview on each with keep-alive, and leaves them idle, as the API server's client
// does between calls. The child reports RSS and heap (after a full GC) before and after; the
// difference over the connections is the cost of one. It then checks the cap: with
// WEBHOOK_MAX_CONNECTIONS' default, connections beyond it are refused and the cost is bounded.
// Never part of pass/fail.
import { fork, type ChildProcess } from 'node:child_process';
import { connect, type TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { webhookPath } from '../../src/admission/webhook-paths.ts';
import type { AdmissionDecision } from '../../src/admission/types.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/server/pino-logger.ts';
import { startWebhookServer } from '../../src/server/webhook-server.ts';
import { makeTestCerts } from '../support/certs.ts';
import { admissionRequest, review, sampleObject } from '../support/admission-request.ts';

interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
}
type ToChild = { type: 'memory' } | { type: 'stop' };
type FromChild = { type: 'listening'; port: number } | { type: 'memory'; memory: Memory };

const PATH = webhookPath('validate', 'Agent');
const BODY = review(admissionRequest('Agent', sampleObject('Agent')));
const REQUEST = `POST ${PATH} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`;
const DEFAULT_CAP = loadConfig({}).webhook.maxConnections;

function startChild(certDir: string, maxConnections: number): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(fileURLToPath(import.meta.url), {
    execArgv: ['--expose-gc'],
    env: { ...process.env, KEEPALIVE_ROLE: 'server', KEEPALIVE_CERT_DIR: certDir, KEEPALIVE_MAX_CONNECTIONS: String(maxConnections) },
  });
  return new Promise((resolve) => {
    child.once('message', (m: FromChild) => {
      if (m.type === 'listening') resolve({ child, port: m.port });
    });
  });
}

function memory(child: ChildProcess): Promise<Memory> {
  return new Promise((resolve) => {
    const onMessage = (m: FromChild): void => {
      if (m.type !== 'memory') return;
      child.off('message', onMessage);
      resolve(m.memory);
    };
    child.on('message', onMessage);
    child.send({ type: 'memory' } satisfies ToChild);
  });
}

/** A TLS connection that has sent one request and read its answer; undefined when refused. */
function idleConnection(port: number, ca: string): Promise<TLSSocket | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => socket.write(REQUEST));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
      if (answer.includes('"allowed":true')) resolve(socket);
    });
    socket.on('error', () => resolve(undefined));
    socket.on('close', () => resolve(undefined));
  });
}

async function openMany(port: number, ca: string, count: number): Promise<TLSSocket[]> {
  const sockets: TLSSocket[] = [];
  // 50 handshakes at a time: the figure is about idle connections, not a handshake storm.
  for (let i = 0; i < count; i += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => idleConnection(port, ca)));
    for (const s of batch) if (s !== undefined) sockets.push(s);
  }
  return sockets;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const kib = (bytes: number): string => (bytes / 1024).toFixed(1);
const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

async function measure(certDir: string, ca: string, count: number, cap: number): Promise<void> {
  const { child, port } = await startChild(certDir, cap);
  // One connection first, so that everything paid once (TLS context, router, JIT) is in the baseline.
  (await idleConnection(port, ca))?.destroy();
  await sleep(500);
  const before = await memory(child);
  const sockets = await openMany(port, ca, count);
  await sleep(2000);
  const after = await memory(child);
  const n = sockets.length;
  console.log(`cap ${cap}: ${count} connections tried, ${n} held open and idle (${count - n} refused)`);
  console.log(`  server RSS ${mib(before.rss)} → ${mib(after.rss)} MiB: ${kib((after.rss - before.rss) / Math.max(n, 1))} KiB per connection`);
  console.log(`  heap used ${kib((after.heapUsed - before.heapUsed) / Math.max(n, 1))} KiB, external ${kib((after.external - before.external) / Math.max(n, 1))} KiB per connection`);
  for (const s of sockets) s.destroy();
  child.send({ type: 'stop' } satisfies ToChild);
  await new Promise((r) => child.once('exit', r));
}

async function main(): Promise<void> {
  const count = Number(process.env.BENCH_CONNECTIONS ?? 1000);
  const certs = await makeTestCerts();
  try {
    console.log(`idle keep-alive TLS connections, each after one AdmissionReview (node ${process.version})`);
    await measure(certs.dir, certs.caPem, count, count + 100);
    console.log(`with the default cap (WEBHOOK_MAX_CONNECTIONS=${DEFAULT_CAP}), trying ${DEFAULT_CAP + 200}:`);
    await measure(certs.dir, certs.caPem, DEFAULT_CAP + 200, DEFAULT_CAP);
  } finally {
    await certs.cleanup();
  }
}

async function serve(): Promise<void> {
  const server = await startWebhookServer({
    config: {
      host: '127.0.0.1',
      port: 0,
      certDir: process.env.KEEPALIVE_CERT_DIR ?? '',
      certCheckIntervalSeconds: 3600,
      maxConnections: Number(process.env.KEEPALIVE_MAX_CONNECTIONS),
    },
    handlers: () => async (): Promise<AdmissionDecision> => ({ allowed: true }),
    logger: createLogger({ level: 'error' }),
  });
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', (message: ToChild) => {
    if (message.type === 'stop') {
      void server.close().then(() => process.exit(0));
      return;
    }
    gc?.();
    const { rss, heapUsed, external } = process.memoryUsage();
    process.send?.({ type: 'memory', memory: { rss, heapUsed, external } } satisfies FromChild);
  });
  process.send?.({ type: 'listening', port: server.port } satisfies FromChild);
}

await (process.env.KEEPALIVE_ROLE === 'server' ? serve() : main());
