// The bare webhook: an HTTPS server with the operator's certificate that parses each
// AdmissionReview and allows it, with no patch. Whatever a webhook does, two calls to it cannot
// cost a create less than this: the floor of any webhook on this machine. bench:admission runs it
// in its own process (and, for the HTTP/2 comparison, in the bench's process).
//
// Run as a child process (`fork`) it serves HTTP/1.1 on a free loopback port, sends
// `{ port }` once listening, and answers `'stats'` with the time each request took from its
// arrival to its answer since the previous `'stats'` (what the operator's own histogram measures),
// and its event loop's delay meanwhile as prom-client reports the operator's (a
// monitorEventLoopDelay histogram at 10 ms resolution): on a shared machine, how late any
// process's loop runs when the cores are busy.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import http2 from 'node:http2';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { withServerTimeouts } from '../../src/server/https-server.ts';

export interface BareWebhook { port: number; answered: () => number; close: () => Promise<void> }

/** Per-request times in ms, taken and cleared by `take()`. */
export interface ServiceTimes { take(): number[] }

/** The bare webhook: parse the review, allow it, no patch; counts what it answered. */
export async function startBareWebhook(certDir: string, protocol: 'http/1.1' | 'h2', times?: number[]): Promise<BareWebhook> {
  let answered = 0;
  const tls = { cert: readFileSync(join(certDir, 'tls.crt')), key: readFileSync(join(certDir, 'tls.key')) };
  const answer = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse): void => {
    const start = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request?: { uid?: string } };
      // Only the protocol asked for counts: waitForBare then proves the API server speaks it.
      if (req.httpVersion === (protocol === 'h2' ? '2.0' : '1.1')) answered++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request?.uid ?? '', allowed: true } }));
      times?.push(performance.now() - start);
    });
  };
  if (protocol === 'h2') {
    // HTTP/2 only (no allowHTTP1): a client that cannot speak it gets no answer at all.
    const server = http2.createSecureServer({ ...tls, allowHTTP1: false }, answer);
    const sessions = new Set<http2.ServerHttp2Session>();
    server.on('session', (session) => {
      sessions.add(session);
      session.on('close', () => sessions.delete(session));
    });
    const port = await listen(server);
    return { port, answered: () => answered, close: () => new Promise((r) => { for (const s of sessions) s.destroy(); server.close(() => r()); }) };
  }
  // The operator's timeouts: with Node's default 5 s keep-alive, the server closes idle
  // connections the API server's client may be about to reuse (a create fails: broken pipe).
  const server = withServerTimeouts(https.createServer(tls, answer));
  const port = await listen(server);
  return { port, answered: () => answered, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

async function listen(server: https.Server | http2.Http2SecureServer): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the bare webhook has no port');
  return address.port;
}

/** Event-loop delay, ms. */
export interface LoopDelay { p50: number; p99: number; max: number }

/** The messages of the child process. */
export type BareWebhookMessage = { port: number } | { times: number[]; answered: number; loop: LoopDelay };

if (import.meta.main) {
  const certDir = process.argv[2];
  if (certDir === undefined || process.send === undefined) throw new Error('usage: fork(bare-webhook.ts, [certDir])');
  const times: number[] = [];
  const bare = await startBareWebhook(certDir, 'http/1.1', times);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const send = (m: BareWebhookMessage): void => void process.send?.(m);
  process.on('message', (m: unknown) => {
    if (m === 'stats') {
      const loop = { p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 };
      delay.reset();
      send({ times: times.splice(0), answered: bare.answered(), loop });
    }
    if (m === 'stop') void bare.close().then(() => process.exit(0));
  });
  process.on('disconnect', () => process.exit(0));
  send({ port: bare.port });
}
