// certs/make-dev-certs.ts: the CA and serving certificate, their SANs and file modes, CA reuse,
// and loadCertificatePair's reasons for refusing a pair.
import t from 'tap';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultSans, makeDevCerts, normaliseSan } from '../../../certs/make-dev-certs.ts';
import { loadCertificatePair } from '../../../src/server/certificates.ts';

const dirs: string[] = [];
t.teardown(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kaos-certs-test-'));
  dirs.push(dir);
  return dir;
}

t.test('makeDevCerts writes a CA and a serving certificate with the expected SANs', async (t) => {
  const outDir = await tempDir();
  const certs = await makeDevCerts({ outDir, sans: ['10.1.2.3', 'DNS:extra.example', 'host.docker.internal'] });
  t.same(certs, { caPem: await readFile(join(outDir, 'ca.crt'), 'utf8'), caFile: join(outDir, 'ca.crt'), certFile: join(outDir, 'tls.crt'), keyFile: join(outDir, 'tls.key') });
  const ca = new X509Certificate(certs.caPem);
  const leaf = new X509Certificate(await readFile(certs.certFile));
  t.ok(ca.ca, 'a CA');
  t.notOk(leaf.ca, 'a leaf');
  t.ok(leaf.verify(ca.publicKey), 'signed by the CA');
  t.equal(leaf.checkIssued(ca), true);
  for (const name of ['127.0.0.1', 'localhost', 'kaos-operator-webhook.kaos-system.svc', 'kaos-operator-webhook.kaos-system.svc.cluster.local', 'extra.example', 'host.docker.internal']) {
    t.ok(name === '127.0.0.1' || name === '10.1.2.3' ? leaf.checkIP(name) : leaf.checkHost(name), `covers ${name}`);
  }
  t.ok(leaf.checkIP('10.1.2.3'), 'covers an extra IP');
  t.equal((await stat(certs.keyFile)).mode & 0o777, 0o600, 'tls.key is 0600');
  t.equal((await stat(join(outDir, 'ca.key'))).mode & 0o777, 0o600, 'ca.key is 0600');
  t.equal((await loadCertificatePair(outDir)).info.fingerprint256, leaf.fingerprint256, 'the server accepts the pair');
});

t.test('service name and namespace are configurable; the CA is reused unless asked', async (t) => {
  const outDir = await tempDir();
  const first = await makeDevCerts({ outDir, serviceName: 'hook', namespace: 'ops' });
  const leaf = new X509Certificate(await readFile(first.certFile));
  t.ok(leaf.checkHost('hook.ops.svc'));
  t.ok(leaf.checkHost('hook.ops.svc.cluster.local'));
  t.notOk(leaf.checkHost('kaos-operator-webhook.kaos-system.svc'));
  const second = await makeDevCerts({ outDir });
  t.equal(second.caPem, first.caPem, 'same CA');
  t.not(new X509Certificate(await readFile(second.certFile)).fingerprint256, leaf.fingerprint256, 'new serving certificate');
  const third = await makeDevCerts({ outDir, newCa: true });
  t.not(third.caPem, first.caPem, 'new CA on request');
});

t.test('SAN helpers', async (t) => {
  t.same(defaultSans(), [
    'IP:127.0.0.1',
    'DNS:localhost',
    'DNS:kaos-operator-webhook.kaos-system.svc',
    'DNS:kaos-operator-webhook.kaos-system.svc.cluster.local',
  ]);
  t.equal(normaliseSan('::1'), 'IP:::1');
  t.equal(normaliseSan('a.b'), 'DNS:a.b');
  t.equal(normaliseSan('IP:1.2.3.4'), 'IP:1.2.3.4');
  await t.rejects(makeDevCerts({ outDir: await tempDir(), sans: ['DNS:bad name,IP:1.1.1.1'] }), /invalid subject alternative name/);
});

t.test('a missing openssl is reported clearly', async (t) => {
  const saved = process.env.OPENSSL;
  process.env.OPENSSL = '/nonexistent/openssl';
  t.teardown(() => {
    if (saved === undefined) delete process.env.OPENSSL;
    else process.env.OPENSSL = saved;
  });
  await t.rejects(makeDevCerts({ outDir: await tempDir() }), /openssl is needed to make certificates.*install it/);
});

t.test('loadCertificatePair says what is wrong', async (t) => {
  const a = await tempDir();
  const b = await tempDir();
  await makeDevCerts({ outDir: a });
  await makeDevCerts({ outDir: b });
  const mixed = await tempDir();
  await writeFile(join(mixed, 'tls.crt'), await readFile(join(a, 'tls.crt')));
  await writeFile(join(mixed, 'tls.key'), await readFile(join(b, 'tls.key')));
  await t.rejects(loadCertificatePair(mixed), { name: 'CertificateError', message: /does not match the certificate/ });
  await writeFile(join(mixed, 'tls.key'), 'not a key');
  await t.rejects(loadCertificatePair(mixed), { message: /is not a usable private key/ });
  await writeFile(join(mixed, 'tls.crt'), '-----BEGIN CERTIFICATE-----\nMIIB\n');
  await t.rejects(loadCertificatePair(mixed), { message: /is not a PEM certificate/ });
  await t.rejects(loadCertificatePair(join(mixed, 'absent')), { message: /cannot read tls.crt and tls.key/ });
});
