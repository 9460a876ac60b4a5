// Slow and greedy clients against the real HTTPS webhook server: a body trickled byte by byte is
// answered 408 and cut at the body deadline (shortened here), logged once per request, while
// normal requests are served; connections beyond the cap are closed at once, and normal
// traffic is served again as soon as there is room.
import t from 'tap';
import { connect, type TLSSocket } from 'node:tls';
import { startWebhookServer, type RunningWebhookServer } from '../../../src/server/webhook-server.ts';
import { webhookPath } from '../../../src/admission/webhook-paths.ts';
import type { AdmissionDecision } from '../../../src/admission/types.ts';
import { makeTestCerts, type TestCerts } from '../../support/certs.ts';
import { captureLogger, httpsRequest } from './helpers.ts';
import { admissionRequest, review, sampleObject } from '../../support/admission-request.ts';
import { eventually } from '../../support/poll.ts';

const PATH = webhookPath('validate', 'Agent');
const MAX_CONNECTIONS = 4;
let certs: TestCerts;
let server: RunningWebhookServer;
const log = captureLogger('info');

t.before(async () => {
  certs = await makeTestCerts();
  server = await startWebhookServer({
    config: { host: '127.0.0.1', port: 0, certDir: certs.dir, certCheckIntervalSeconds: 3600, maxConnections: MAX_CONNECTIONS, bodyTimeoutSeconds: 0.5 },
    handlers: () => async (): Promise<AdmissionDecision> => ({ allowed: true }),
    logger: log.logger,
  });
});
t.teardown(async () => {
  await server.close();
  await certs.cleanup();
});

const normalRequest = () => httpsRequest(server.port, PATH, review(admissionRequest('Agent', sampleObject('Agent'))), { ca: certs.caPem });

function open(): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: server.port, ca: certs.caPem, servername: 'localhost' }, () => resolve(socket));
    socket.once('error', reject);
  });
}

interface Trickle {
  /** Everything the server sent, once it closed the connection. */
  closed: Promise<string>;
  /** Bytes of body sent before the connection closed. */
  sent(): number;
}

/** Sends headers promising a 1,000-byte body, then one byte every 100 ms until cut off. */
async function trickle(): Promise<Trickle> {
  const socket = await open();
  let sent = 0;
  const received: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  socket.on('error', () => undefined); // a reset after the answer is the cut we expect
  socket.write(`POST ${PATH} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`);
  const timer = setInterval(() => {
    if (!socket.writable) return;
    socket.write('{');
    sent++;
  }, 100);
  const closed = new Promise<string>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer);
      resolve(Buffer.concat(received).toString('utf8'));
    }),
  );
  return { closed, sent: () => sent };
}

t.test('a trickled body is answered 408 and cut at the deadline; normal requests are served meanwhile', async (t) => {
  const before = log.find('warn', 'request body not received').length;
  const slow = [await trickle(), await trickle()];
  const normal = await normalRequest();
  t.equal(normal.status, 200, 'a fresh normal request is answered while the slow ones trickle');
  t.equal((JSON.parse(normal.body) as { response: { allowed: boolean } }).response.allowed, true);
  for (const [i, client] of slow.entries()) {
    const answer = await client.closed;
    t.match(answer, /^HTTP\/1\.1 408 /, `client ${i}: 408`);
    t.match(answer, /connection: close/i, `client ${i}: told the connection closes`);
    t.match(answer, /"message":"request body not received within 0\.5 s"/, `client ${i}: says why`);
    t.ok(client.sent() < 1000, `client ${i}: cut before its body was complete (${client.sent()} bytes sent)`);
  }
  t.equal(log.find('warn', 'request body not received').length - before, 2, 'logged once per request');
  t.equal((await normalRequest()).status, 200, 'and the server still serves');
});

t.test('connections beyond the cap are closed at once; normal traffic is served when there is room', async (t) => {
  const connections = () => new Promise<number>((resolve) => server.server.getConnections((_err, n) => resolve(n)));
  await eventually('no open connections', async () => (await connections()) === 0); // the previous test's are gone
  const idle = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => open()));
  const refused = await new Promise<string>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: server.port, ca: certs.caPem, servername: 'localhost' }, () => {
      socket.destroy();
      resolve('handshake completed');
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(`refused: ${err.code ?? err.message}`));
  });
  t.match(refused, /^refused: /, 'the extra connection is closed before its TLS handshake');
  t.equal(log.find('warn', 'too many open connections').length, 1, 'logged');
  idle[0]?.destroy();
  const answered = await eventually('a normal request to be answered', async () => await normalRequest().catch(() => undefined));
  t.equal(answered.status, 200, 'a normal request is answered once a connection is free');
  for (const socket of idle) socket.destroy();
});
