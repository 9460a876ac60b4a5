// The chart, installed for real: `helm install` into the local control plane with a real
// cert-manager (controller and cainjector built from its Go module by test/cluster/build.sh)
// issuing the serving certificate and injecting its CA; the operator (`node dist/main.js`) runs
// as a process under the chart's ServiceAccount (a token for it, RBAC enforced, so the chart's
// roles are proven enough) with the certificate cert-manager issued; the API server reaches it
// through the chart's Service-based webhook configurations (--enable-aggregator-routing and an
// EndpointSlice whose address is on a veth pair into a network namespace this test creates and
// removes — endpoint addresses may not be loopback). Then a renewal reaches the running process,
// an upgrade changes no Secret, an uninstall leaves no webhook configuration behind, and without
// cert-manager the chart-generated certificate survives an upgrade (lookup).
// Needs root (ip netns) and `npm run build`. Never skipped.
import { spawnSync } from 'node:child_process';
import { randomBytes, randomInt, X509Certificate } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import tls from 'node:tls';
import { operatorArgs, operatorProcessEnv } from '../../scripts/operator-command.ts';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parseAllDocuments, stringify } from 'yaml';
import { serviceAccountUser } from '../../src/cluster/rbac.ts';
import { freePorts, runCommand, startControlPlane } from '../cluster/control-plane.ts';
import { startProcess, type ManagedProcess } from '../cluster/processes.ts';
import { eventually } from '../support/poll.ts';

const CHART = fileURLToPath(new URL('../../chart', import.meta.url));
const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const NS = 'kaos-system';
const RELEASE = 'kaos-operator';
const SERVICE = `${RELEASE}-webhook`;
const SECRET = `${RELEASE}-webhook-tls`;
const CONFIGS = [`${RELEASE}-mutating-webhook-configuration`, `${RELEASE}-validating-webhook-configuration`] as const;
const log = (line: string): void => { t.comment(line); };

const saToken = randomBytes(24).toString('hex');
const plane = await startControlPlane({
  log,
  extraApiServerArgs: ['--enable-aggregator-routing=true'],
  extraTokens: [{ token: saToken, user: serviceAccountUser(NS, RELEASE), uid: 'kaos-operator-sa-uid', groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`] }],
});
const processes: ManagedProcess[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
// Also when this process dies of an error the teardown never sees: stop what it started (each
// in its own process group) and remove the network namespace and veth pair.
const exitCleanups: (() => void)[] = [];
process.once('exit', () => { for (const c of exitCleanups) { try { c(); } catch { /* already gone */ } } });
t.teardown(async () => {
  for (const p of processes.reverse()) await p.stop(2000);
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await plane.stop();
});

const helmEnv = { ...process.env, HELM_CACHE_HOME: join(plane.dir, 'helm-cache'), HELM_CONFIG_HOME: join(plane.dir, 'helm-config'), HELM_DATA_HOME: join(plane.dir, 'helm-data') };
const helm = (args: string[]) => runCommand(join(plane.binDir, 'helm'), [...args, '--kubeconfig', plane.kubeconfigPath], { env: helmEnv, timeoutMs: 120_000 });
async function kubectl(args: string[], input?: string): Promise<string> {
  const r = await plane.kubectl(args, input === undefined ? {} : { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
const ip = (args: string[]) => runCommand('ip', args);

// ---- cert-manager: its CRDs, then its controller and cainjector as processes ----------------
const cmCrds = join(plane.binDir, '..', 'cert-manager-crds');
for (const file of (await readdir(cmCrds)).filter((f) => f.endsWith('.yaml'))) await kubectl(['apply', '--server-side', '-f', join(cmCrds, file)]);
await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
for (const bin of ['cert-manager-controller', 'cert-manager-cainjector']) {
  const p = startProcess(bin, join(plane.binDir, bin), [`--kubeconfig=${plane.kubeconfigPath}`, '-v=1'], { logFile: join(plane.dir, `${bin}.log`) });
  processes.push(p);
  exitCleanups.push(() => process.kill(-p.pid, 'SIGKILL'));
}

// ---- the operator as a process behind the chart's Service -------------------------------------
const suffix = randomBytes(3).toString('hex');
const netns = `kaos-e2e-${suffix}`;
const hostIf = `kh${suffix}`;
const base = randomInt(0, 64) * 4;
const hostIp = `10.251.${randomInt(0, 256)}.${base + 1}`;
const nsIp = hostIp.replace(/\.\d+$/, `.${base + 2}`);
exitCleanups.push(() => spawnSync('ip', ['link', 'del', hostIf]), () => spawnSync('ip', ['netns', 'del', netns]));
for (const args of [['netns', 'add', netns], ['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', `kn${suffix}`, 'netns', netns], ['addr', 'add', `${hostIp}/30`, 'dev', hostIf], ['link', 'set', hostIf, 'up'], ['-n', netns, 'addr', 'add', `${nsIp}/30`, 'dev', `kn${suffix}`], ['-n', netns, 'link', 'set', `kn${suffix}`, 'up']]) {
  const r = await ip(args);
  if (r.code !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr}`);
}
cleanups.push(() => ip(['link', 'del', hostIf]), () => ip(['netns', 'del', netns]));

const certDir = join(plane.dir, 'serving-certs');
await mkdir(certDir, { recursive: true });
/** What the kubelet does with a Secret volume: the Secret's keys as files, swapped atomically. */
async function syncSecretToFiles(): Promise<string> {
  const secret = JSON.parse(await kubectl(['get', 'secret', '-n', NS, SECRET, '-o', 'json'])) as { data: Record<string, string> };
  for (const [key, value] of Object.entries(secret.data)) {
    await writeFile(join(certDir, `.${key}.tmp`), Buffer.from(value, 'base64'));
    await rename(join(certDir, `.${key}.tmp`), join(certDir, key));
  }
  return secret.data['tls.crt'] ?? '';
}
const [webhookPort, metricsPort] = await freePorts(2) as [number, number];
const saKubeconfig = join(plane.dir, 'operator.kubeconfig');
const caData = (await readFile(plane.caFile)).toString('base64');
await writeFile(saKubeconfig, stringify({
  apiVersion: 'v1', kind: 'Config', 'current-context': 'sa',
  clusters: [{ name: 'c', cluster: { server: plane.server, 'certificate-authority-data': caData } }],
  users: [{ name: 'sa', user: { token: saToken } }],
  contexts: [{ name: 'sa', context: { cluster: 'c', user: 'sa' } }],
}), { mode: 0o600 });
let operator: ManagedProcess | undefined;

// ---- helm install ----------------------------------------------------------------------------
// The operator process above stands in for the chart's pods, reached through the EndpointSlice
// this test adds: the pods themselves must not be endpoints too. On kwok they would be Ready at
// fake addresses nothing answers on, and the API server routes each webhook call to a random ready
// endpoint of the Service (Kubernetes v1.37's endpointslice controller lists them beside this
// test's slice). A node selector no node matches keeps them Pending, with no address.
const NO_NODE = ['--set-string', 'nodeSelector.e2e-stand-in=operator-process'];
await t.test('helm install: cert-manager issues the serving certificate and cainjector fills both caBundles', async (t) => {
  const install = await helm(['install', RELEASE, CHART, '--namespace', NS, '--create-namespace', ...NO_NODE]);
  t.equal(install.code, 0, `helm install: ${install.stderr}`);
  t.match(install.stdout, /Check the install/, 'NOTES.txt is shown');

  await kubectl(['wait', '-n', NS, '--for=condition=Ready', '--timeout=180s', `certificate/${RELEASE}-webhook`]);
  const secret = JSON.parse(await kubectl(['get', 'secret', '-n', NS, SECRET, '-o', 'json'])) as { type: string; data: Record<string, string> };
  t.equal(secret.type, 'kubernetes.io/tls');
  const cert = new X509Certificate(Buffer.from(secret.data['tls.crt'] ?? '', 'base64'));
  t.match(cert.subjectAltName ?? '', `DNS:${SERVICE}.${NS}.svc`, 'issued for the Service DNS name');

  for (const [kind, name] of [['mutatingwebhookconfiguration', CONFIGS[0]], ['validatingwebhookconfiguration', CONFIGS[1]]] as const) {
    const bundles = await eventually(`${kind} caBundle`, async () => {
      const c = JSON.parse(await kubectl(['get', kind, name, '-o', 'json'])) as { webhooks: { clientConfig: { caBundle?: string } }[] };
      const all = c.webhooks.map((w) => w.clientConfig.caBundle ?? '');
      return all.every((b) => b !== '') ? all : undefined;
    }, { timeoutMs: 60_000, intervalMs: 500, retryErrors: true });
    t.ok(bundles.every((b) => b === secret.data['ca.crt']), `${kind}: every entry carries the issuing CA`);
  }
});

await t.test('every object of the release exists', async (t) => {
  const manifest = await helm(['get', 'manifest', RELEASE, '--namespace', NS]);
  t.equal(manifest.code, 0, manifest.stderr);
  const docs = parseAllDocuments(manifest.stdout).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string } } | null).filter((d) => d !== null);
  t.ok(docs.length >= 14, `${docs.length} objects`);
  for (const d of docs) {
    const r = await plane.kubectl(['get', d.kind, d.metadata.name, ...(d.metadata.namespace === undefined ? [] : ['-n', d.metadata.namespace])]);
    t.ok(r.code === 0 && r.stdout.includes(d.metadata.name), `${d.kind}/${d.metadata.name}`);
  }
  for (const crd of ['agents.kaos.tools', 'modelapis.kaos.tools', 'mcpservers.kaos.tools']) await kubectl(['get', 'crd', crd]);
});

await t.test('helm upgrade with unchanged values changes no Secret', async (t) => {
  const versions = async () => (await kubectl(['get', 'secrets', '-n', NS, '-o', 'jsonpath={range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}'])).trim().split(' ').filter((s) => !s.startsWith('sh.helm.release')).sort();
  const before = await versions();
  const upgrade = await helm(['upgrade', RELEASE, CHART, '--namespace', NS, '--reuse-values']);
  t.equal(upgrade.code, 0, upgrade.stderr);
  await new Promise((r) => setTimeout(r, 3000)); // room for cert-manager to (wrongly) reissue
  t.same(await versions(), before);
});

await t.test('the operator runs under the chart\'s ServiceAccount behind the chart\'s Service', async (t) => {
  await syncSecretToFiles();
  operator = startProcess('kaos-operator', process.execPath, operatorArgs(MAIN), {
    logFile: join(plane.dir, 'operator.log'),
    env: {
      ...operatorProcessEnv(), KUBECONFIG: saKubeconfig,
      // As the chart's Deployment sets them (downward API): the Lease goes to the release namespace.
      POD_NAMESPACE: NS, POD_NAME: `${RELEASE}-e2e-0`, LEADER_ELECTION_NAMESPACE: '', LEADER_ELECT: 'true', WEBHOOK_HOST: hostIp, WEBHOOK_PORT: String(webhookPort),
      WEBHOOK_CERT_DIR: certDir, WEBHOOK_CERT_CHECK_INTERVAL_SECONDS: '1', METRICS_HOST: '127.0.0.1', METRICS_PORT: String(metricsPort), LOG_LEVEL: 'info',
    },
  });
  processes.push(operator);
  const started = operator;
  exitCleanups.push(() => process.kill(-started.pid, 'SIGKILL'));
  await kubectl(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: `${SERVICE}-e2e`, namespace: NS, labels: { 'kubernetes.io/service-name': SERVICE, 'endpointslice.kubernetes.io/managed-by': 'e2e.kaos.tools' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [hostIp], conditions: { ready: true } }],
    ports: [{ name: 'https', port: webhookPort, protocol: 'TCP' }],
  }));
  await eventually('the operator ready', async () => ((await runCommand('curl', ['-sf', `http://127.0.0.1:${metricsPort}/readyz`])).code === 0 ? true : undefined), { timeoutMs: 60_000, intervalMs: 500, retryErrors: true })
    .catch((err: unknown) => { t.comment(`operator log:\n${started.tail(40)}`); throw err; });
  t.equal(started.hasExited(), false, 'running, its cache synced with the chart\'s roles (readyz)');
});

/** The fingerprint of the certificate the operator serves on its webhook address. */
function servedFingerprint(): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: hostIp, port: webhookPort, servername: `${SERVICE}.${NS}.svc`, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
      socket.destroy();
    });
    socket.once('error', reject);
  });
}
const fingerprintOf = (b64: string) => new X509Certificate(Buffer.from(b64, 'base64')).fingerprint256;

await t.test('kubectl apply goes through the chart\'s webhook configurations to the operator', async (t) => {
  await kubectl(['create', 'namespace', 'demo']);
  const modelApi = { apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'hosted', namespace: 'demo' }, spec: { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } } };
  const applied = await eventually('an admitted apply', async () => {
    const r = await plane.kubectl(['apply', '-f', '-', '-o', 'json'], { input: JSON.stringify(modelApi) });
    if (r.code !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout) as { metadata: { annotations?: Record<string, string> } };
  }, { timeoutMs: 60_000, intervalMs: 500, retryErrors: true });
  t.ok(applied.metadata.annotations?.['kaos.tools/defaulted'], 'defaulted by the mutating webhook, reached through the Service');
  // The release namespace is no exception: a KAOS object there (an AccessGrant beside the PDP)
  // is validated like anywhere else. The selector's operator is checked by the webhook alone.
  const grant = { apiVersion: 'kaos.tools/v1alpha1', kind: 'AccessGrant', metadata: { name: 'beside-the-pdp', namespace: NS }, spec: { subjects: [{ kind: 'User', name: 'alice' }], resources: [{ selector: { matchExpressions: [{ key: 'team', operator: 'Near', values: ['a'] }] } }] } };
  // As above, a call that did not reach the operator (the API server still resolving the Service's
  // endpoints) is tried again; an answer from the webhook is final.
  const refused = await eventually('an answer from the webhooks', async () => {
    const r = await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(grant) });
    if (r.stderr.includes('failed calling webhook')) throw new Error(r.stderr);
    return r;
  }, { timeoutMs: 60_000, intervalMs: 500, retryErrors: true });
  t.not(refused.code, 0, 'refused in the release namespace');
  t.match(refused.stderr, 'Warning: this AccessGrant will not be enforced: Gateway authorization is not enabled; this AccessGrant is not enforced', 'the mutating and validating webhooks answered');
  t.match(refused.stderr, 'The AccessGrant "beside-the-pdp" is invalid: spec.resources[0].selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator');
  const inRelease = await eventually('an answer from the webhooks', async () => {
    const r = await plane.kubectl(['apply', '--dry-run=server', '-f', '-', '-o', 'json'], { input: JSON.stringify({ ...modelApi, metadata: { name: 'hosted', namespace: NS } }) });
    if (r.stderr.includes('failed calling webhook')) throw new Error(r.stderr);
    return r;
  }, { timeoutMs: 60_000, intervalMs: 500, retryErrors: true });
  t.equal(inRelease.code, 0, inRelease.stderr);
  t.ok((JSON.parse(inRelease.stdout) as { metadata: { annotations?: Record<string, string> } }).metadata.annotations?.['kaos.tools/defaulted'], 'and defaulted there by the mutating webhook (a server-side dry run: nothing stored)');
  t.equal(operator?.hasExited(), false);
});

await t.test('the controller, under the chart\'s roles: leads through its Lease, gives the sample its children, a status and an Event', async (t) => {
  const lease = await eventually('the Lease held', async () => {
    const r = await plane.kubectl(['get', 'lease', '-n', NS, RELEASE, '-o', 'jsonpath={.spec.holderIdentity}']);
    return r.code === 0 && r.stdout !== '' ? r.stdout : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500, retryErrors: true }).catch((err: unknown) => { t.comment(`operator log:\n${operator?.tail(40) ?? ''}`); throw err; });
  t.equal(lease, `${RELEASE}-e2e-0`, 'the Lease in the release namespace names POD_NAME (the chart\'s operator Role)');
  const metrics = (await runCommand('curl', ['-sf', `http://127.0.0.1:${metricsPort}/metrics`])).stdout;
  t.match(metrics, /leader_election_master_status\{[^}]*\} 1/, 'leader_election_master_status 1');
  const expiry = Number(/^kaos_operator_webhook_certificate_expiry_seconds (\S+)$/m.exec(metrics)?.[1]);
  t.ok(expiry > 86_400 && expiry <= 90 * 86_400, `the served certificate expires in ${expiry} s (certManager.duration 2160h)`);
  // Deployment and Service: server-side apply under the chart's ClusterRole (create + patch).
  for (const kind of ['deployment', 'service']) {
    const owner = await eventually(`${kind}/modelapi-hosted`, async () => {
      const r = await plane.kubectl(['get', kind, 'modelapi-hosted', '-n', 'demo', '-o', 'jsonpath={.metadata.ownerReferences[0].name}']);
      return r.code === 0 && r.stdout !== '' ? r.stdout : undefined;
    }, { timeoutMs: 60_000, intervalMs: 500, retryErrors: true }).catch((err: unknown) => { t.comment(`operator log:\n${operator?.tail(40) ?? ''}`); throw err; });
    t.equal(owner, 'hosted', `${kind}/modelapi-hosted, controlled by the ModelAPI`);
  }
  // The status subresource (update).
  const status = await eventually('a Ready status', async () => {
    const m = JSON.parse(await kubectl(['get', 'modelapi', 'hosted', '-n', 'demo', '-o', 'json'])) as { metadata: { generation: number }; status?: { phase?: string; observedGeneration?: number; conditions?: { type: string }[] } };
    return m.status?.observedGeneration === m.metadata.generation && m.status.phase === 'Ready' ? m.status : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500, retryErrors: true });
  t.equal(status.phase, 'Ready', 'Ready: its pod runs on a kwok node of the local control plane');
  t.ok((status.conditions ?? []).some((c) => c.type === 'Ready'), 'a Ready condition');
  // events.k8s.io (create): the controller says what it created.
  const events = await eventually('an Event about the ModelAPI', async () => {
    const r = await kubectl(['get', 'events.events.k8s.io', '-n', 'demo', '--field-selector', 'regarding.name=hosted', '-o', 'jsonpath={range .items[*]}{.reportingController}{"\\n"}{end}']);
    return r.trim() !== '' ? r.trim().split('\n') : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500, retryErrors: true });
  t.ok(events.length > 0, `${events.length} Event(s) about modelapi/hosted`);
  t.notMatch(operator?.tail(200) ?? '', /forbidden/i, 'no request of the operator was forbidden');
});

await t.test('a renewed certificate is served without a restart', async (t) => {
  const before = await servedFingerprint();
  const oldCrt = await syncSecretToFiles();
  t.equal(before, fingerprintOf(oldCrt), 'serves the certificate cert-manager issued');
  await kubectl(['delete', 'secret', '-n', NS, SECRET]); // cmctl-style renewal: cert-manager reissues
  const newCrt = await eventually('a reissued Secret', async () => {
    const r = await plane.kubectl(['get', 'secret', '-n', NS, SECRET, '-o', 'jsonpath={.data.tls\\.crt}']);
    return r.code === 0 && r.stdout !== '' && r.stdout !== oldCrt ? r.stdout : undefined;
  }, { timeoutMs: 120_000, intervalMs: 500, retryErrors: true });
  await syncSecretToFiles();
  const after = await eventually('the new certificate served', async () => {
    const f = await servedFingerprint();
    return f === fingerprintOf(newCrt) ? f : undefined;
  }, { timeoutMs: 30_000, intervalMs: 500, retryErrors: true });
  t.not(after, before);
  t.equal(operator?.hasExited(), false, 'the same process');
  const r = await plane.kubectl(['apply', '--dry-run=server', '-f', '-'], { input: JSON.stringify({ apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'second', namespace: 'demo' }, spec: { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } } }) });
  t.equal(r.code, 0, `admitted with the new certificate: ${r.stderr}`);
});

await t.test('helm uninstall leaves no webhook configuration behind', async (t) => {
  const r = await helm(['uninstall', RELEASE, '--namespace', NS]);
  t.equal(r.code, 0, r.stderr);
  for (const kind of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
    t.equal((await kubectl(['get', kind, '-o', 'name'])).trim(), '', `no ${kind}`);
  }
});

await t.test('webhooks.enabled=false: the controller alone, under the chart\'s roles, with no certificate anywhere', async (t) => {
  await operator?.stop(10_000); // SIGTERM: it releases its Lease
  const install = await helm(['install', RELEASE, CHART, '--namespace', NS, '--set', 'webhooks.enabled=false']);
  t.equal(install.code, 0, install.stderr);
  t.match(install.stdout, /controller only: no webhooks/, 'NOTES.txt says so');
  for (const kind of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations', 'certificates.cert-manager.io']) {
    t.equal((await kubectl(['get', kind, '-A', '-o', 'name'])).trim(), '', `no ${kind}`);
  }
  const [metricsPort2] = await freePorts(1) as [number];
  const controllerOnly = startProcess('kaos-operator-controller-only', process.execPath, operatorArgs(MAIN), {
    logFile: join(plane.dir, 'operator-controller-only.log'),
    env: {
      ...operatorProcessEnv(), KUBECONFIG: saKubeconfig, POD_NAMESPACE: NS, POD_NAME: `${RELEASE}-e2e-1`, LEADER_ELECTION_NAMESPACE: '', LEADER_ELECT: 'true',
      WEBHOOKS_ENABLED: 'false', WEBHOOK_CERT_DIR: join(plane.dir, 'no-such-directory'), WEBHOOK_HOST: hostIp, WEBHOOK_PORT: String(webhookPort),
      METRICS_HOST: '127.0.0.1', METRICS_PORT: String(metricsPort2), LOG_LEVEL: 'info',
    },
  });
  processes.push(controllerOnly);
  exitCleanups.push(() => process.kill(-controllerOnly.pid, 'SIGKILL'));
  await eventually('the Lease taken by the controller-only replica', async () => {
    const r = await plane.kubectl(['get', 'lease', '-n', NS, RELEASE, '-o', 'jsonpath={.spec.holderIdentity}']);
    return r.stdout === `${RELEASE}-e2e-1` ? true : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500, retryErrors: true }).catch((err: unknown) => { t.comment(`operator log:\n${controllerOnly.tail(40)}`); throw err; });
  t.equal(controllerOnly.hasExited(), false, 'running without a certificate directory');
  const served = await new Promise<string>((resolve) => {
    const socket = tls.connect({ host: hostIp, port: webhookPort, rejectUnauthorized: false }, () => { socket.destroy(); resolve('served'); });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
  t.equal(served, 'ECONNREFUSED', 'nothing listens on the webhook port');
  const metrics = (await runCommand('curl', ['-sf', `http://127.0.0.1:${metricsPort2}/metrics`])).stdout;
  t.notMatch(metrics, /^kaos_operator_webhook_certificate_expiry_seconds /m, 'no certificate metric sample');
  await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'proxy', namespace: 'demo' }, spec: { mode: 'Proxy', proxyConfig: { apiBase: 'http://backend:11434' } } }));
  const owner = await eventually('deployment/modelapi-proxy', async () => {
    const r = await plane.kubectl(['get', 'deployment', 'modelapi-proxy', '-n', 'demo', '-o', 'jsonpath={.metadata.ownerReferences[0].name}']);
    return r.code === 0 && r.stdout !== '' ? r.stdout : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500, retryErrors: true }).catch((err: unknown) => { t.comment(`operator log:\n${controllerOnly.tail(40)}`); throw err; });
  t.equal(owner, 'proxy', 'an object applied without webhooks still gets its children');
  await controllerOnly.stop(10_000);
  const uninstall = await helm(['uninstall', RELEASE, '--namespace', NS]);
  t.equal(uninstall.code, 0, uninstall.stderr);
});

await t.test('without cert-manager: the chart-generated certificate survives helm upgrade (lookup), and the pods do not roll', async (t) => {
  const ns = 'kaos-generated';
  const install = await helm(['install', RELEASE, CHART, '--namespace', ns, '--create-namespace', '--set', 'certManager.enabled=false']);
  t.equal(install.code, 0, install.stderr);
  const state = async () => ({
    crt: await kubectl(['get', 'secret', '-n', ns, SECRET, '-o', 'jsonpath={.data.tls\\.crt}']),
    checksum: await kubectl(['get', 'deployment', '-n', ns, RELEASE, '-o', 'jsonpath={.spec.template.metadata.annotations.checksum/webhook-tls}']),
    caBundle: await kubectl(['get', 'validatingwebhookconfiguration', CONFIGS[1], '-o', 'jsonpath={.webhooks[0].clientConfig.caBundle}']),
  });
  const before = await state();
  t.ok(before.crt !== '' && before.checksum !== '' && before.caBundle !== '', 'a certificate, its checksum and its CA');
  const upgrade = await helm(['upgrade', RELEASE, CHART, '--namespace', ns, '--reuse-values']);
  t.equal(upgrade.code, 0, upgrade.stderr);
  t.same(await state(), before, 'the same certificate, checksum and caBundle');
  const uninstall = await helm(['uninstall', RELEASE, '--namespace', ns]);
  t.equal(uninstall.code, 0, uninstall.stderr);
});
