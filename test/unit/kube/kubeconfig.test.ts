import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { stringify } from 'yaml';
import { inClusterConnection, kubeconfigConnection } from '../../../src/kube/kubeconfig.ts';

const b64 = (text: string): string => Buffer.from(text).toString('base64');

function kubeconfig(user: Record<string, unknown>, cluster: Record<string, unknown> = { server: 'https://127.0.0.1:6443', 'certificate-authority-data': b64('CA') }): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'main',
    contexts: [{ name: 'other', context: { cluster: 'x', user: 'x' } }, { name: 'main', context: { cluster: 'c', user: 'u' } }],
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
  });
}

t.test('a token kubeconfig: server, embedded CA, bearer header', async (t) => {
  const c = kubeconfigConnection(kubeconfig({ token: 'abc' }), '/x/kubeconfig');
  t.equal(c?.server, 'https://127.0.0.1:6443');
  t.same(c?.tls.ca?.toString(), 'CA');
  t.same(await c?.authHeaders(), { Authorization: 'Bearer abc' });
});

t.test('client certificate files relative to the kubeconfig; TLS options', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
  writeFileSync(join(dir, 'ca.pem'), 'CA2');
  writeFileSync(join(dir, 'cert.pem'), 'CERT');
  writeFileSync(join(dir, 'key.pem'), 'KEY');
  const c = kubeconfigConnection(
    kubeconfig({ 'client-certificate': 'cert.pem', 'client-key': join(dir, 'key.pem') }, { server: 'https://k:443', 'certificate-authority': 'ca.pem', 'tls-server-name': 'kubernetes', 'insecure-skip-tls-verify': true }),
    join(dir, 'config'),
  );
  t.same({ ca: c?.tls.ca?.toString(), cert: c?.tls.cert?.toString(), key: c?.tls.key?.toString(), servername: c?.tls.servername, rejectUnauthorized: c?.tls.rejectUnauthorized }, { ca: 'CA2', cert: 'CERT', key: 'KEY', servername: 'kubernetes', rejectUnauthorized: false });
  t.same(await c?.authHeaders(), {}, 'no header: the certificate authenticates');
  const basic = kubeconfigConnection(kubeconfig({ username: 'u', password: 'p' }), join(dir, 'config'));
  t.same(await basic?.authHeaders(), { Authorization: `Basic ${b64('u:p')}` });
});

t.test('a token file is read again once a minute (rotation)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
  writeFileSync(join(dir, 'token'), 'one\n');
  let now = 0;
  const c = kubeconfigConnection(kubeconfig({ tokenFile: 'token' }), join(dir, 'config'), () => now);
  t.same(await c?.authHeaders(), { Authorization: 'Bearer one' });
  writeFileSync(join(dir, 'token'), 'two\n');
  now = 59_000;
  t.same(await c?.authHeaders(), { Authorization: 'Bearer one' });
  now = 60_000;
  t.same(await c?.authHeaders(), { Authorization: 'Bearer two' });
});

t.test('anything else is left to client-node: exec plugins, auth providers, proxies', async (t) => {
  t.equal(kubeconfigConnection(kubeconfig({ exec: { command: 'aws', apiVersion: 'client.authentication.k8s.io/v1' } }), '/x'), undefined);
  t.equal(kubeconfigConnection(kubeconfig({ 'auth-provider': { name: 'oidc' } }), '/x'), undefined);
  t.equal(kubeconfigConnection(kubeconfig({ token: 'a' }, { server: 'https://k', 'proxy-url': 'http://proxy:3128' }), '/x'), undefined);
  t.throws(() => kubeconfigConnection(stringify({ contexts: [] }), '/x'), /no current context/);
});

t.test('in cluster: the service account token and CA, the service host (IPv6 in brackets)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sa-'));
  writeFileSync(join(dir, 'ca.crt'), 'SACA');
  writeFileSync(join(dir, 'token'), 'sa-token');
  const c = inClusterConnection({ env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, dir });
  t.equal(c.server, 'https://10.96.0.1:443');
  t.equal(c.tls.ca?.toString(), 'SACA');
  t.same(await c.authHeaders(), { Authorization: 'Bearer sa-token' });
  t.equal(inClusterConnection({ env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, dir }).server, 'https://[fd00::1]:443');
  t.throws(() => inClusterConnection({ env: {}, dir }), /not in a cluster/);
});
