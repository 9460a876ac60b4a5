// The soak's webhook Service over real HTTPS on loopback, with a development certificate as the
// replicas have: a review goes to the replicas in turn; one that drops the connection or does
// not answer within the per-try timeout is skipped for the next, which answers the client; a
// replica back in the rotation while a review fails answers it; none answering within the
// review's time is a 503; a replica whose readiness probe fails leaves the rotation and comes back.
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { makeDevCerts } from '../../../certs/make-dev-certs.ts';
import { eventually } from '../../support/poll.ts';
import { WebhookService, type Backend } from '../../soak/webhook-service.ts';

type Behaviour = 'answer' | 'drop' | 'hang';

/** A replica stand-in: an HTTPS webhook port that behaves as told, and a /readyz port. */
async function replica(certDir: string, id: string): Promise<Backend & { behaviour: Behaviour; ready: boolean; close(): Promise<void> }> {
  const state = { behaviour: 'answer' as Behaviour, ready: true };
  const webhook = https.createServer({ key: readFileSync(join(certDir, 'tls.key')), cert: readFileSync(join(certDir, 'tls.crt')) }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => {
      if (state.behaviour === 'drop') req.socket.destroy();
      else if (state.behaviour === 'answer') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ by: id, got: body }));
    });
  });
  const health = http.createServer((_req, res) => res.writeHead(state.ready ? 200 : 500).end());
  await Promise.all([webhook, health].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()))));
  return Object.assign(state, {
    id,
    webhookPort: (webhook.address() as AddressInfo).port,
    metricsPort: (health.address() as AddressInfo).port,
    close: async () => {
      webhook.closeAllConnections();
      health.closeAllConnections();
      await Promise.all([webhook, health].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  });
}

const dir = await mkdtemp(join(tmpdir(), 'soak-webhook-service-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const certs = await makeDevCerts({ outDir: dir });
const a = await replica(dir, 'a');
const b = await replica(dir, 'b');
const changes: string[] = [];
const service = new WebhookService({
  certDir: dir,
  backends: () => [a, b],
  onChange: (id, ready) => changes.push(`${id} ${ready ? 'in' : 'out'}`),
  // Tighter than the soak's (webhook-service.ts) so that the file is quick, but with room for a
  // process that gets a core only now and then (npm test runs the unit files at a low priority
  // beside the end-to-end files): a probe that times out on a starved event loop would take a
  // ready replica out of the rotation, which is not what these tests are about.
  perTryTimeoutMs: 1000,
  reviewBudgetMs: 4000,
  probe: { periodMs: 50, timeoutMs: 2000, failureThreshold: 3 },
});
const port = await service.listen();
t.teardown(async () => { await service.close(); await a.close(); await b.close(); });

/** POSTs a review through the Service as the API server does. */
function review(body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: '/validate', method: 'POST', ca: certs.caPem, servername: 'localhost', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

t.test('reviews go to the replicas in turn, body and answer passed whole', async (t) => {
  const answers = [await review('{"n":1}'), await review('{"n":2}')].map((r) => JSON.parse(r.body) as { by: string; got: string });
  t.same(answers.map((x) => x.by).sort(), ['a', 'b']);
  t.same(answers.map((x) => x.got).sort(), ['{"n":1}', '{"n":2}']);
});

for (const behaviour of ['drop', 'hang'] as const) {
  t.test(`a replica that ${behaviour === 'drop' ? 'drops the connection under a review' : 'does not answer'}: the other answers, as a retry`, async (t) => {
    a.behaviour = behaviour;
    t.teardown(() => { a.behaviour = 'answer'; });
    const retries = service.retries;
    for (let i = 0; i < 4; i++) {
      const answer = await review(`{"i":${i}}`);
      t.equal(answer.status, 200);
      t.equal((JSON.parse(answer.body) as { by: string }).by, 'b');
    }
    t.equal(service.retries - retries, 2, 'the two reviews that went to a first were sent again');
  });
}

t.test('no replica answers: 503, counted', async (t) => {
  a.behaviour = 'drop';
  b.behaviour = 'drop';
  t.teardown(() => { a.behaviour = 'answer'; b.behaviour = 'answer'; });
  t.equal((await review('{}')).status, 503);
  t.equal(service.failures, 1);
});

t.test('a replica whose readiness fails leaves the rotation, and comes back', async (t) => {
  a.ready = false;
  await eventually('a out of the rotation', () => !service.isReady('a'), { timeoutMs: 5000 });
  a.behaviour = 'hang'; // would cost a per-try timeout and a retry if it were still tried
  const retries = service.retries;
  for (let i = 0; i < 3; i++) t.equal((JSON.parse((await review('{}')).body) as { by: string }).by, 'b');
  t.equal(service.retries, retries, 'no review went to a');
  a.ready = true;
  a.behaviour = 'answer';
  await eventually('a back', () => service.isReady('a'), { timeoutMs: 5000 });
  t.same(changes, ['a out', 'a in']);
});

t.test('a replica back in the rotation while a review keeps failing on the other answers it', async (t) => {
  a.ready = false;
  await eventually('a out of the rotation', () => !service.isReady('a'), { timeoutMs: 5000 });
  b.behaviour = 'drop';
  t.teardown(() => { b.behaviour = 'answer'; });
  const answering = review('{"late":true}');
  setTimeout(() => { a.ready = true; }, 200);
  const answer = await answering;
  t.equal(answer.status, 200);
  t.equal((JSON.parse(answer.body) as { by: string }).by, 'a', 'answered by the replica that came back');
});

t.test('a replica frozen before the TLS handshake (it accepts, never speaks) costs one per-try timeout, not more', async (t) => {
  const frozen = net.createServer(() => {});
  await new Promise<void>((resolve) => frozen.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => { frozen.close(); });
  const stuck = { id: 'frozen', webhookPort: (frozen.address() as AddressInfo).port, metricsPort: b.metricsPort };
  // A review's time shorter than two per-try timeouts: it is answered only if the frozen try ends on time.
  const alone = new WebhookService({ certDir: dir, backends: () => [stuck, b], perTryTimeoutMs: 400, reviewBudgetMs: 700, probe: { periodMs: 10_000, timeoutMs: 200, failureThreshold: 3 } });
  const alonePort = await alone.listen();
  t.teardown(() => alone.close());
  const answers = await Promise.all([0, 1].map(() => new Promise<number>((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: alonePort, path: '/validate', method: 'POST', ca: certs.caPem, servername: 'localhost', agent: false }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
    req.on('error', reject);
    req.end('{}');
  })));
  t.same(answers, [200, 200], 'both answered by the other replica, within the review\'s time');
});
