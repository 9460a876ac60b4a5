// Certificate hot reload: new files are served without a restart, whether they are written in
// place, published by a kubelet-style `..data` symlink swap, or changed behind a symlink where
// only the periodic check can see them; a bad pair is refused (logged once) and the old one kept;
// a request in flight on a kept-alive connection completes.
import t from 'tap';
import { X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWebhookServer, type RunningWebhookServer } from '../../../src/server/webhook-server.ts';
import { webhookPath } from '../../../src/admission/webhook-paths.ts';
import type { AdmissionDecision, AdmissionRequest } from '../../../src/admission/types.ts';
import { makeTestCerts, type TestCerts } from '../../support/certs.ts';
import { captureLogger, deferred, httpsRequest, peerFingerprint } from './helpers.ts';
import { admissionRequest, review, sampleObject } from '../../support/admission-request.ts';
import { eventually } from '../../support/poll.ts';

interface Pair {
  cert: string;
  key: string;
  fingerprint: string;
}

let certs: TestCerts;
const cleanups: (() => Promise<unknown>)[] = [];
t.before(async () => {
  certs = await makeTestCerts();
});
t.teardown(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await certs.cleanup();
});

/** A new serving certificate from the test CA, held in memory. */
async function issue(): Promise<Pair> {
  const files = await certs.renew();
  const cert = await readFile(files.certFile, 'utf8');
  return { cert, key: await readFile(files.keyFile, 'utf8'), fingerprint: new X509Certificate(cert).fingerprint256 };
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kaos-served-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function writePair(dir: string, pair: Pair): Promise<void> {
  await writeFile(join(dir, 'tls.key'), pair.key);
  await writeFile(join(dir, 'tls.crt'), pair.cert);
}

/** Replaces a file by rename, so that a reader sees the old or the new content, never a mix. */
async function replace(path: string, content: string): Promise<void> {
  await writeFile(`${path}.tmp`, content);
  await rename(`${path}.tmp`, path);
}

let gate = deferred();
const handlers = () => async (request: AdmissionRequest): Promise<AdmissionDecision> => {
  if (request.name === 'slow') await gate.promise;
  return { allowed: true };
};

async function serve(certDir: string, certCheckIntervalSeconds = 3600) {
  const log = captureLogger('info');
  const server: RunningWebhookServer = await startWebhookServer({
    config: { host: '127.0.0.1', port: 0, certDir, certCheckIntervalSeconds },
    handlers,
    logger: log.logger,
    certDebounceMs: 20,
  });
  cleanups.push(() => server.close());
  return { server, log };
}

const PATH = webhookPath('validate', 'Agent');

t.test('files replaced in place: the next handshake presents the new certificate', async (t) => {
  const dir = await tempDir();
  const a = await issue();
  const b = await issue();
  await writePair(dir, a);
  const { server } = await serve(dir);
  t.equal(await peerFingerprint(server.port), a.fingerprint, 'serves A');
  t.equal(server.certificate().fingerprint256, a.fingerprint);

  await writePair(dir, b);
  await eventually('the server to present certificate B', async () => (await peerFingerprint(server.port)) === b.fingerprint);
  t.equal(await peerFingerprint(server.port), b.fingerprint, 'serves B after the change, without a restart');
  t.equal(server.certificate().fingerprint256, b.fingerprint);
  const reply = await httpsRequest(server.port, PATH, review(admissionRequest('Agent', sampleObject('Agent'))), { ca: certs.caPem });
  t.equal(reply.status, 200, 'and B verifies against the CA');
});

t.test('kubelet-style ..data symlink swap', async (t) => {
  const dir = await tempDir();
  const a = await issue();
  const b = await issue();
  // The layout of a Secret volume: files are links through ..data to a timestamped directory.
  await mkdir(join(dir, '..2025_01_01_a'));
  await writePair(join(dir, '..2025_01_01_a'), a);
  await symlink('..2025_01_01_a', join(dir, '..data'));
  await symlink('..data/tls.crt', join(dir, 'tls.crt'));
  await symlink('..data/tls.key', join(dir, 'tls.key'));
  const { server, log } = await serve(dir);
  t.equal(await peerFingerprint(server.port), a.fingerprint);

  await mkdir(join(dir, '..2025_01_02_b'));
  await writePair(join(dir, '..2025_01_02_b'), b);
  await symlink('..2025_01_02_b', join(dir, '..data_tmp'));
  await rename(join(dir, '..data_tmp'), join(dir, '..data')); // the atomic swap
  await rm(join(dir, '..2025_01_01_a'), { recursive: true });
  await eventually('the server to present certificate B', async () => (await peerFingerprint(server.port)) === b.fingerprint);
  t.equal(await peerFingerprint(server.port), b.fingerprint, 'serves B after the swap');
  t.equal(log.find('error').length, 0, 'an atomic swap never shows a bad pair');
  t.equal(log.find('info', 'serving certificate reloaded').length, 1);
});

t.test('a change the directory watch cannot see is found by the periodic check', async (t) => {
  const dir = await tempDir();
  const target = await tempDir();
  const a = await issue();
  const b = await issue();
  await writePair(target, a);
  await symlink(join(target, 'tls.crt'), join(dir, 'tls.crt'));
  await symlink(join(target, 'tls.key'), join(dir, 'tls.key'));
  const { server } = await serve(dir, 0.05);
  t.equal(await peerFingerprint(server.port), a.fingerprint);
  await writePair(target, b); // outside the watched directory
  await eventually('the server to present certificate B', async () => (await peerFingerprint(server.port)) === b.fingerprint);
  t.equal(await peerFingerprint(server.port), b.fingerprint, 'serves B');
});

t.test('a mismatched or half-written pair is refused, logged once, the old one kept; the next change is taken', async (t) => {
  const dir = await tempDir();
  const a = await issue();
  const b = await issue();
  const c = await issue();
  await writePair(dir, a);
  const { server, log } = await serve(dir);
  const rejected = () => log.find('error', 'not reloaded');

  // B's certificate with A's key.
  await replace(join(dir, 'tls.crt'), b.cert);
  await eventually('the mismatched pair to be rejected', () => rejected().length === 1);
  t.match(rejected()[0]?.err, /does not match the certificate/);
  t.equal(await peerFingerprint(server.port), a.fingerprint, 'still serves A');
  const again = await server.checkCertificates();
  t.match(again, { outcome: 'rejected', reported: false }, 'the same bad pair is not reported twice');
  t.equal(rejected().length, 1, 'logged once');

  // Half-written certificate.
  await replace(join(dir, 'tls.crt'), b.cert.slice(0, 200));
  await eventually('the half-written certificate to be rejected', () => rejected().length === 2);
  t.match(rejected()[1]?.err, /not a PEM certificate/);
  t.equal(await peerFingerprint(server.port), a.fingerprint, 'still serves A');

  await replace(join(dir, 'tls.key'), c.key);
  await replace(join(dir, 'tls.crt'), c.cert);
  await eventually('the server to present certificate C', async () => (await peerFingerprint(server.port)) === c.fingerprint);
  t.equal(await peerFingerprint(server.port), c.fingerprint, 'a good pair is taken on the next change');
  const reply = await httpsRequest(server.port, PATH, review(admissionRequest('Agent', sampleObject('Agent'))), { ca: certs.caPem });
  t.equal(reply.status, 200);
});

t.test('a request in flight on a kept-alive connection completes across a reload', async (t) => {
  const dir = await tempDir();
  const a = await issue();
  const b = await issue();
  await writePair(dir, a);
  const { server } = await serve(dir);
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: certs.caPem });
  t.teardown(() => agent.destroy());

  const warm = await httpsRequest(server.port, PATH, review(admissionRequest('Agent', sampleObject('Agent'))), { agent });
  t.equal(warm.fingerprint, a.fingerprint, 'connection opened with A');
  gate = deferred();
  const slow = httpsRequest(server.port, PATH, review(admissionRequest('Agent', sampleObject('Agent'), { name: 'slow' })), { agent });

  await writePair(dir, b);
  await eventually('the server to present certificate B', async () => (await peerFingerprint(server.port)) === b.fingerprint);
  gate.resolve();
  const reply = await slow;
  t.equal(reply.status, 200, 'the request in flight completes');
  t.equal(reply.fingerprint, a.fingerprint, 'on its old connection');
  const next = await httpsRequest(server.port, PATH, review(admissionRequest('Agent', sampleObject('Agent'))), { agent });
  t.equal(next.status, 200, 'which stays usable');
  const fresh = await httpsRequest(server.port, PATH, review(admissionRequest('Agent', sampleObject('Agent'))), { ca: certs.caPem });
  t.equal(fresh.fingerprint, b.fingerprint, 'new connections get B');
});

t.test('the server will not start without a usable pair', async (t) => {
  const dir = await tempDir();
  const log = captureLogger('info');
  const start = () =>
    startWebhookServer({
      config: { host: '127.0.0.1', port: 0, certDir: dir, certCheckIntervalSeconds: 3600 },
      handlers,
      logger: log.logger,
    });
  await t.rejects(start(), { name: 'CertificateError', message: /cannot read tls.crt and tls.key/ });
  const a = await issue();
  const b = await issue();
  await writeFile(join(dir, 'tls.crt'), a.cert);
  await writeFile(join(dir, 'tls.key'), b.key);
  await t.rejects(start(), { name: 'CertificateError', message: /does not match/ });
});
