// Graceful shutdown: close() stops accepting, lets the request in flight finish (telling its
// client not to reuse the connection), drops idle keep-alive connections, and is bounded.
import t from 'tap';
import { Agent } from 'node:https';
import { startWebhookServer } from '../../../src/server/webhook-server.ts';
import { webhookPath } from '../../../src/admission/webhook-paths.ts';
import type { AdmissionDecision, AdmissionRequest } from '../../../src/admission/types.ts';
import { makeTestCerts, type TestCerts } from '../../support/certs.ts';
import { captureLogger, deferred, httpsRequest, peerFingerprint } from './helpers.ts';
import { admissionRequest, review, sampleObject } from '../../support/admission-request.ts';
import { eventually } from '../../support/poll.ts';

const PATH = webhookPath('mutate', 'ModelAPI');
let certs: TestCerts;
t.before(async () => {
  certs = await makeTestCerts();
});
t.teardown(() => certs.cleanup());

function slowServer(shutdownGraceMs: number) {
  const gate = deferred();
  const arrived = deferred();
  const log = captureLogger('info');
  const handlers = () => async (request: AdmissionRequest): Promise<AdmissionDecision> => {
    if (request.name === 'slow') {
      arrived.resolve();
      await gate.promise;
    }
    return { allowed: true };
  };
  return {
    gate,
    arrived,
    log,
    start: () =>
      startWebhookServer({
        config: { host: '127.0.0.1', port: 0, certDir: certs.dir, certCheckIntervalSeconds: 3600 },
        handlers,
        logger: log.logger,
        shutdownGraceMs,
      }),
  };
}

t.test('close() drains: in-flight request finishes, idle connections close, new ones are refused', async (t) => {
  const { gate, arrived, log, start } = slowServer(600_000);
  const server = await start();
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: certs.caPem });
  t.teardown(() => agent.destroy());

  // An idle keep-alive connection: one request done, the client keeps the socket for the next.
  const idleAgent = new Agent({ keepAlive: true, maxSockets: 1, ca: certs.caPem });
  t.teardown(() => idleAgent.destroy());
  await httpsRequest(server.port, PATH, review(admissionRequest('ModelAPI', sampleObject('ModelAPI'))), { agent: idleAgent });
  const idle = Object.values(idleAgent.freeSockets).flat()[0];
  t.ok(idle, 'the client holds an idle connection');
  let idleClosed = false;
  idle?.once('close', () => (idleClosed = true));

  const slow = httpsRequest(server.port, PATH, review(admissionRequest('ModelAPI', sampleObject('ModelAPI'), { name: 'slow' })), { agent });
  await arrived.promise;
  let closed = false;
  const closing = server.close().then(() => (closed = true));

  await eventually('the idle connection to close', () => idleClosed);
  t.ok(idleClosed, 'the idle connection was closed');
  await t.rejects(peerFingerprint(server.port), { code: 'ECONNREFUSED' }, 'new connections are refused');
  t.equal(closed, false, 'close() waits for the request in flight');

  gate.resolve();
  const reply = await slow;
  t.equal(reply.status, 200, 'the request in flight completes');
  t.equal(reply.headers.connection, 'close', 'and tells its client not to reuse the connection');
  await closing;
  t.equal(log.find('warn', 'grace period').length, 0, 'nothing had to be cut off');
  t.equal(log.find('info', 'closed').length, 1);
  await server.close(); // idempotent
});

t.test('drain() (SIGTERM, before close): every connection, idle or new, is served once more and told to go', async (t) => {
  const { log, start } = slowServer(600_000);
  const server = await start();
  t.teardown(() => server.close());
  const body = review(admissionRequest('ModelAPI', sampleObject('ModelAPI')));
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: certs.caPem });
  t.teardown(() => agent.destroy());
  const before = await httpsRequest(server.port, PATH, body, { agent });
  t.equal(before.headers.connection, 'keep-alive', 'before: the connection is kept for the next review');
  const idle = Object.values(agent.freeSockets).flat()[0];
  t.ok(idle, 'the client holds an idle connection');
  let idleClosed = false;
  idle?.once('close', () => (idleClosed = true));

  server.drain();
  await new Promise((resolve) => setTimeout(resolve, 200)); // two of close()'s sweeps: drain() must cut nothing
  t.equal(idleClosed, false, 'the idle connection is not cut: the client may be writing a review on it');
  const onIdle = await httpsRequest(server.port, PATH, body, { agent });
  t.equal(onIdle.status, 200, 'a review on the idle connection is answered');
  t.equal(onIdle.headers.connection, 'close', 'and its answer says Connection: close');
  await eventually('the used connection to close', () => idleClosed);
  const fresh = await httpsRequest(server.port, PATH, body, { ca: certs.caPem });
  t.equal(fresh.status, 200, 'a new connection is still accepted and answered');
  t.equal(fresh.headers.connection, 'close', 'with Connection: close too');
  t.equal(log.find('info', 'closed').length, 0, 'the server still runs');
});

t.test('close() is bounded: a request that never finishes is cut off after the grace period', async (t) => {
  const { arrived, log, start } = slowServer(50);
  const server = await start();
  const slow = httpsRequest(server.port, PATH, review(admissionRequest('ModelAPI', sampleObject('ModelAPI'), { name: 'slow' })), { ca: certs.caPem });
  await arrived.promise;
  await server.close();
  await t.rejects(slow, 'the stuck request is cut off');
  t.equal(log.find('warn', 'grace period').length, 1);
  t.equal(log.find('warn', 'grace period')[0]?.connections, 1);
});

t.test('server settings: keep-alive 90 s, headers 32 s, a bounded request time', async (t) => {
  const { start } = slowServer(1000);
  const server = await start();
  t.teardown(() => server.close());
  t.equal(server.server.keepAliveTimeout, 90_000);
  t.equal(server.server.headersTimeout, 32_000);
  t.equal(server.server.requestTimeout, 60_000);
});
