// The Helm chart against the real tools: `helm lint`, `helm template` for each certificate mode,
// a namespace-scoped install and a controller-only install, each rendering applied with
// `kubectl apply --dry-run=server` to a real kube-apiserver (with cert-manager's CRDs from its Go
// module, so Issuers and Certificates are checked by their real schemas), and values.schema.json
// enforced by helm itself. Never skipped.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { BUILTIN_HARNESS_RUNTIMES } from '../../src/api/harness-runtime-defaults.ts';
import { renderWebhookConfigurations } from '../../src/admission/webhook-configs.ts';
import { rulesFor } from '../../src/cluster/rbac.ts';
import { runCommand, startControlPlane } from '../cluster/control-plane.ts';
import { promtool } from '../prometheus/promtool.ts';

const CHART = fileURLToPath(new URL('../../chart', import.meta.url));
const NS = 'kaos-system';
const plane = await startControlPlane({ log: (line) => t.comment(line) });
t.teardown(() => plane.stop());
const helmBin = join(plane.binDir, 'helm');
const KUBE_VERSION = (await runCommand(join(plane.binDir, 'kubectl'), ['version', '--client', '-o', 'json'])).stdout.match(/"gitVersion":\s*"([^"]+)"/)?.[1] ?? '';

type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> }; [k: string]: unknown };

async function helm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCommand(helmBin, args, { env: { ...process.env, HELM_CACHE_HOME: join(plane.dir, 'helm-cache'), HELM_CONFIG_HOME: join(plane.dir, 'helm-config'), HELM_DATA_HOME: join(plane.dir, 'helm-data') } });
}

/** `helm template` with --set style arguments; fails the test on a non-zero exit. */
async function render(args: string[]): Promise<{ yaml: string; docs: Doc[] }> {
  const r = await helm(['template', 'kaos-operator', CHART, '--namespace', NS, '--kube-version', KUBE_VERSION, ...args]);
  if (r.code !== 0) throw new Error(`helm template ${args.join(' ')} failed: ${r.stderr}`);
  const docs = parseAllDocuments(r.stdout).map((d) => d.toJS() as Doc | null).filter((d): d is Doc => d !== null);
  return { yaml: r.stdout, docs };
}

const find = (docs: Doc[], kind: string, name?: string): Doc[] => docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));

async function dryRun(t: Test, yaml: string): Promise<void> {
  const r = await plane.kubectl(['apply', '--dry-run=server', '-f', '-'], { input: yaml });
  t.equal(r.code, 0, `kubectl apply --dry-run=server: ${r.stderr}`);
}

// cert-manager's CRDs (build.sh copies them from the module's deploy/crds), the chart's, and
// the namespaces the renderings name.
const cmCrds = join(plane.binDir, '..', 'cert-manager-crds');
for (const dir of [cmCrds, join(CHART, 'crds')]) {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml'));
  for (const file of files) {
    const r = await plane.kubectl(['apply', '--server-side', '-f', join(dir, file)]);
    if (r.code !== 0) throw new Error(`applying ${file}: ${r.stderr}`);
  }
}
const established = await plane.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
if (established.code !== 0) throw new Error(`CRDs not established: ${established.stderr}`);
for (const ns of [NS, 'team-a', 'team-b']) await plane.kubectl(['create', 'namespace', ns]);

t.test("the chart installs on its floor's minor and refuses the one before (Chart.yaml's kubeVersion)", async (t) => {
  const floor = /^kubeVersion: ">=1\.(\d+)\.0-0"$/m.exec(await readFile(join(CHART, 'Chart.yaml'), 'utf8'))?.[1];
  t.ok(floor, 'Chart.yaml states a floor');
  const at = async (minor: number): Promise<{ code: number; stderr: string }> => helm(['template', 'x', CHART, '--kube-version', `v1.${minor}.0`]);
  t.equal((await at(Number(floor))).code, 0, `v1.${floor}.0 renders`);
  const before = await at(Number(floor) - 1);
  t.not(before.code, 0, `v1.${Number(floor) - 1}.0 is refused`);
  t.match(before.stderr, /incompatible with Kubernetes v1\.\d+\.0/);
});

t.test('helm lint passes with the defaults and with every certificate mode', async (t) => {
  for (const args of [[], ['--set', 'certManager.enabled=false'], ['--set', 'certManager.enabled=false', '--set', 'webhooks.certificate.existingSecret=mine', '--set', 'webhooks.certificate.caBundle=Q0E=']]) {
    const r = await helm(['lint', CHART, '--strict', '--kube-version', KUBE_VERSION, ...args]);
    t.equal(r.code, 0, `helm lint ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  }
});

t.test('cert-manager mode (the default): Issuers, CA and serving Certificates, injected CA, whole-directory mount', async (t) => {
  const { yaml, docs } = await render([]);
  t.same(find(docs, 'Issuer').map((d) => d.metadata.name).sort(), ['kaos-operator-ca', 'kaos-operator-selfsigned']);
  const [serving] = find(docs, 'Certificate', 'kaos-operator-webhook') as [Doc & { spec: { dnsNames: string[]; secretName: string; issuerRef: { name: string } } }];
  t.ok(serving, 'the serving Certificate');
  t.ok(serving.spec.dnsNames.includes(`kaos-operator-webhook.${NS}.svc`), 'the Service DNS name the API server uses');
  t.equal(serving.spec.issuerRef.name, 'kaos-operator-ca');
  for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
    const [c] = find(docs, kind) as [Doc & { webhooks: { clientConfig: { caBundle?: string } }[] }];
    t.equal(c.metadata.annotations?.['cert-manager.io/inject-ca-from'], `${NS}/kaos-operator-webhook`, `${kind}: injected by cainjector`);
    t.notOk(c.webhooks.some((w) => w.clientConfig.caBundle !== undefined), `${kind}: no caBundle of the chart's`);
  }
  const [deploy] = find(docs, 'Deployment') as [Doc & { spec: { replicas: number; template: { spec: { volumes: { name: string; secret?: { secretName: string } }[]; containers: { volumeMounts: { subPath?: string }[] }[] } } } }];
  t.equal(deploy.spec.replicas, 2);
  t.same(deploy.spec.template.spec.volumes.find((v) => v.secret)?.secret?.secretName, serving.spec.secretName, 'the Certificate\'s Secret is mounted');
  t.notOk(deploy.spec.template.spec.containers[0]?.volumeMounts.some((m) => m.subPath !== undefined), 'no subPath: renewals reach the files');
  t.equal(find(docs, 'Secret').length, 0, 'no Secret of the chart\'s');
  await dryRun(t, yaml);
});

t.test('the webhook entries are webhook-configs.ts entries, with the chart\'s namespaceSelector', async (t) => {
  const { docs } = await render(['--set', 'certManager.enabled=false']);
  const expected = renderWebhookConfigurations({ service: { name: 'kaos-operator-webhook', namespace: NS } });
  for (const source of expected) {
    const [rendered] = find(docs, source.kind) as [Doc & { webhooks: Record<string, unknown>[] }];
    const strip = (w: Record<string, unknown>) => {
      const { namespaceSelector: _n, clientConfig, ...rest } = w as { namespaceSelector?: unknown; clientConfig: { caBundle?: string } };
      const { caBundle: _c, ...client } = clientConfig;
      return { ...rest, clientConfig: client };
    };
    t.same(rendered.webhooks.map(strip), source.webhooks.map((w) => strip(w as unknown as Record<string, unknown>)), source.kind);
    for (const w of rendered.webhooks) {
      t.equal(w['namespaceSelector'], undefined, `${String(w['name'])}: every namespace, the release namespace included`);
    }
  }
  const limited = await render(['--set', 'certManager.enabled=false', '--set', 'watchNamespaces={team-a,team-b}', '--set-json', 'webhooks.namespaceSelectorExpressions=[{"key":"tier","operator":"Exists"}]']);
  for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
    const [configuration] = find(limited.docs, kind) as [Doc & { webhooks: Record<string, unknown>[] }];
    for (const w of configuration.webhooks) {
      t.same(w['namespaceSelector'], { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['team-a', 'team-b'] }, { key: 'tier', operator: 'Exists' }] }, `${String(w['name'])}: watchNamespaces and the extra expressions`);
    }
  }
});

t.test('generated mode: a Secret whose CA is the caBundle, and a checksum on the pod template', async (t) => {
  const { yaml, docs } = await render(['--set', 'certManager.enabled=false']);
  t.equal(find(docs, 'Certificate').length + find(docs, 'Issuer').length, 0, 'nothing of cert-manager');
  const [secret] = find(docs, 'Secret', 'kaos-operator-webhook-tls') as [Doc & { type: string; data: Record<string, string> }];
  t.equal(secret.type, 'kubernetes.io/tls');
  for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
    const [c] = find(docs, kind) as [Doc & { webhooks: { clientConfig: { caBundle?: string } }[] }];
    t.ok(c.webhooks.every((w) => w.clientConfig.caBundle === secret.data['ca.crt']), `${kind}: caBundle is the Secret's ca.crt`);
    t.notOk(c.metadata.annotations, `${kind}: no cert-manager annotation`);
  }
  const [deploy] = find(docs, 'Deployment') as [Doc & { spec: { template: { metadata: { annotations: Record<string, string> } } } }];
  t.match(deploy.spec.template.metadata.annotations['checksum/webhook-tls'], /^[0-9a-f]{64}$/);
  await dryRun(t, yaml);
});

t.test('existing-Secret mode: the user\'s Secret mounted, their CA (PEM accepted) as caBundle', async (t) => {
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
  const { yaml, docs } = await render(['--set', 'certManager.enabled=false', '--set', 'webhooks.certificate.existingSecret=my-tls', '--set-string', `webhooks.certificate.caBundle=${pem}`]);
  t.equal(find(docs, 'Secret').length, 0);
  const [v] = find(docs, 'ValidatingWebhookConfiguration') as [Doc & { webhooks: { clientConfig: { caBundle?: string } }[] }];
  t.ok(v.webhooks.every((w) => w.clientConfig.caBundle === Buffer.from(pem).toString('base64')));
  t.match(yaml, /secretName: my-tls/);
  await dryRun(t, yaml);
  const missing = await helm(['template', 'x', CHART, '--kube-version', KUBE_VERSION, '--set', 'certManager.enabled=false', '--set', 'webhooks.certificate.existingSecret=my-tls']);
  t.not(missing.code, 0);
  t.match(missing.stderr, 'webhooks.certificate.caBundle is required');
});

t.test('a namespace-scoped install: Roles per watched namespace, webhooks limited to them', async (t) => {
  const { yaml, docs } = await render(['--set', 'watchNamespaces={team-a,team-b}']);
  const [clusterRole] = find(docs, 'ClusterRole') as [Doc & { rules: unknown[] }];
  t.same(clusterRole.rules, rulesFor('cluster'), 'the ClusterRole keeps only cluster-scoped rules');
  for (const ns of ['team-a', 'team-b']) {
    const role = docs.find((d) => d.kind === 'Role' && d.metadata.namespace === ns) as (Doc & { rules: unknown[] }) | undefined;
    t.same(role?.rules, rulesFor('watched'), `a Role in ${ns}`);
    t.ok(docs.some((d) => d.kind === 'RoleBinding' && d.metadata.namespace === ns), `bound in ${ns}`);
  }
  const lease = docs.find((d) => d.kind === 'Role' && d.metadata.namespace === NS) as (Doc & { rules: unknown[] }) | undefined;
  t.same(lease?.rules, rulesFor('operator'), 'the Lease Role in the release namespace');
  const [m] = find(docs, 'MutatingWebhookConfiguration') as [Doc & { webhooks: { namespaceSelector: { matchExpressions: { operator: string; values: string[] }[] } }[] }];
  t.ok(m.webhooks.every((w) => w.namespaceSelector.matchExpressions.some((e) => e.operator === 'In' && e.values.join() === 'team-a,team-b')));
  t.match(yaml, /name: WATCH_NAMESPACES\n\s+value: "team-a,team-b"/);
  await dryRun(t, yaml);
});

for (const mode of [[], ['--set', 'certManager.enabled=false']]) {
  t.test(`webhooks.enabled=false${mode.length > 0 ? ' without cert-manager' : ''}: controller only — no webhook Service, configurations or certificate, nothing mounted`, async (t) => {
    const { yaml, docs } = await render(['--set', 'webhooks.enabled=false', '--set', 'metrics.service.enabled=true', ...mode]);
    t.equal(find(docs, 'MutatingWebhookConfiguration').length + find(docs, 'ValidatingWebhookConfiguration').length, 0, 'no webhook configuration');
    t.same(find(docs, 'Service').map((d) => d.metadata.name), ['kaos-operator-metrics'], 'only the metrics Service');
    t.equal(find(docs, 'Certificate').length + find(docs, 'Issuer').length + find(docs, 'Secret').length, 0, 'no certificate of any kind');
    type Container = { env: { name: string; value?: string }[]; ports: { name: string }[]; volumeMounts: { name: string }[] };
    const [deploy] = find(docs, 'Deployment') as [Doc & { spec: { template: { metadata: { annotations: Record<string, string> }; spec: { volumes: { name: string; secret?: unknown }[]; containers: Container[] } } } }];
    const pod = deploy.spec.template.spec;
    const container = pod.containers[0] as Container;
    t.same(container.env.find((e) => e.name === 'WEBHOOKS_ENABLED'), { name: 'WEBHOOKS_ENABLED', value: 'false' }, 'the operator is told');
    t.notOk(container.env.some((e) => e.name === 'WEBHOOK_CERT_DIR'), 'no certificate directory');
    t.same(container.ports.map((p) => p.name), ['metrics'], 'no webhook port');
    t.notOk(pod.volumes.some((v) => v.secret !== undefined), 'no Secret volume');
    t.same(container.volumeMounts.map((m) => m.name), ['tmp'], 'only /tmp mounted');
    t.notOk(deploy.spec.template.metadata.annotations['checksum/webhook-tls'], 'no certificate checksum');
    await dryRun(t, yaml);
  });
}

t.test('config values become the operator\'s variables; the ServiceMonitor renders when asked', async (t) => {
  const { yaml } = await render(['--set', 'config.logLevel=debug', '--set', 'config.maxConcurrentReconciles=8', '--set-json', 'config.defaultTolerations=[{"key":"gpu","operator":"Exists"}]', '--set', 'metrics.serviceMonitor.enabled=true']);
  t.match(yaml, /name: LOG_LEVEL\n\s+value: "debug"/);
  t.match(yaml, /name: MAX_CONCURRENT_RECONCILES\n\s+value: "8"/);
  t.match(yaml, /name: DEFAULT_TOLERATIONS\n\s+value: "\[\{\\"key\\":\\"gpu\\",\\"operator\\":\\"Exists\\"\}\]"/);
  t.match(yaml, /kind: ServiceMonitor/);
});

t.test('the PrometheusRule and the Grafana dashboard render when asked, off by default, with their namespace, labels and thresholds; promtool accepts the rendered rules', async (t) => {
  t.same([...find((await render([])).docs, 'PrometheusRule'), ...find((await render([])).docs, 'ConfigMap', 'kaos-operator-dashboard')], [], 'neither by default');
  const { docs } = await render([
    '--set', 'metrics.prometheusRule.enabled=true', '--set', 'metrics.prometheusRule.namespace=monitoring', '--set', 'metrics.prometheusRule.labels.release=kps',
    '--set', 'metrics.prometheusRule.thresholds.notReadySeconds=1800', '--set', 'metrics.prometheusRule.thresholds.reconcileFailingFor=30m',
    '--set', 'metrics.prometheusRule.thresholds.queueDepth=0',
    '--set', 'metrics.grafanaDashboard.enabled=true', '--set', 'metrics.grafanaDashboard.label=my_dashboards', '--set', 'metrics.grafanaDashboard.labelValue=yes',
  ]);
  const [rule] = find(docs, 'PrometheusRule');
  t.equal(rule?.metadata.namespace, 'monitoring');
  t.equal((rule?.metadata as { labels?: Record<string, string> }).labels?.['release'], 'kps');
  const rules = (rule?.['spec'] as { groups: { rules: { alert: string; expr: string; for?: string; annotations: Record<string, string> }[] }[] }).groups[0]!.rules;
  const byName = (name: string) => rules.find((r) => r.alert === name);
  t.match(byName('KaosObjectNotReady')?.expr, /\) > 1800$/, 'a threshold set by value');
  t.equal(byName('KaosReconcileErrors')?.for, '30m', 'a duration set by value');
  t.match(byName('KaosWorkQueueBacklog')?.expr, /\) > 0$/, 'a threshold of 0 is 0, not the default');
  t.equal(byName('KaosNoLeader')?.for, '5m', 'the others keep their defaults');
  t.match(byName('KaosNoLeader')?.expr, 'leader_election_master_status{job="kaos-operator-metrics"}', 'the job: the metrics Service\'s name');
  t.equal(byName('KaosObjectNotReady')?.annotations['description'], '{{ $labels.kind }} {{ $labels.object_namespace }}/{{ $labels.name }} has not been Ready for {{ $value | humanizeDuration }} (reason {{ $labels.reason }}).', 'the alert\'s own templates survive Helm');
  const dir = await mkdtemp(join(tmpdir(), 'kaos-rules-'));
  await writeFile(join(dir, 'rules.yaml'), stringify(rule?.['spec']));
  const check = await promtool(['check', 'rules', join(dir, 'rules.yaml')]);
  t.equal(check.code, 0, `promtool check rules: ${check.stdout}${check.stderr}`);
  await rm(dir, { recursive: true, force: true });

  const [dashboard] = find(docs, 'ConfigMap', 'kaos-operator-dashboard');
  t.equal((dashboard?.metadata as { labels?: Record<string, string> }).labels?.['my_dashboards'], 'yes', 'the sidecar\'s label');
  const json = (dashboard?.['data'] as Record<string, string>)['kaos-operator.json'] ?? '';
  t.same(JSON.parse(json), JSON.parse(await readFile(join(CHART, 'dashboards', 'kaos-operator.json'), 'utf8')), 'the dashboard file, whole');
});

t.test('security values become the operator\'s variables: ServiceAccount identity by default, as KAOS\'s chart', async (t) => {
  type Env = { name: string; value?: string }[];
  const operatorEnv = (docs: Doc[]): Env => (find(docs, 'Deployment')[0] as unknown as { spec: { template: { spec: { containers: { env: Env }[] } } } }).spec.template.spec.containers[0]?.env ?? [];
  const security = (env: Env) => env.filter((e) => /^(SECURITY_|AUTHZ_)/.test(e.name));
  t.same(security(operatorEnv((await render([])).docs)), [{ name: 'SECURITY_AGENT_AUTH_IDENTITY_PROVIDER', value: 'serviceaccount' }], 'only the provider by default');
  t.same(security(operatorEnv((await render(['--set-json', 'security.agentAuth.identity.provider=""'])).docs)), [], 'provider "": nothing');
  const { docs, yaml } = await render([
    '--set', 'security.pdp.enabled=true',
    '--set', 'security.agentAuth.identity.serviceAccount.expirationSeconds=7200',
    '--set', 'security.networkPolicy.enabled=false',
    '--set', 'security.agentAuth.projection.policyConfigMap.name=kaos-authz-policy',
    '--set', 'security.agentAuth.projection.namespaces={team-a,team-b}',
    '--set-json', 'security.agentAuth.identity.serviceAccount.jwks={"keys":[]}',
  ]);
  t.same(security(operatorEnv(docs)), [
    { name: 'SECURITY_PDP_ENABLED', value: 'true' },
    { name: 'SECURITY_AGENT_AUTH_IDENTITY_PROVIDER', value: 'serviceaccount' },
    { name: 'SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_EXPIRATION_SECONDS', value: '7200' },
    { name: 'SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_JWKS', value: '{"keys":[]}' },
    { name: 'AUTHZ_POLICY_CONFIGMAP_NAME', value: 'kaos-authz-policy' },
    { name: 'AUTHZ_PROJECTION_NAMESPACES', value: 'team-a,team-b' },
    { name: 'SECURITY_NETWORK_POLICY_DISABLED', value: 'true' },
  ], 'each value its variable; networkPolicy.enabled=false is SECURITY_NETWORK_POLICY_DISABLED');
  await dryRun(t, yaml);
  for (const [value, name] of [['security.agentAuth.identity.provider=oidc', 'provider'], ['security.agentAuth.identity.serviceAccount.expirationSeconds=300', 'expirationSeconds'], ['security.agentAuth.identity.serviceAccount.tokenPath=token', 'tokenPath'], ['security.agentAuth.extAuthzUrl=http://kaos-pdp:9191', 'extAuthzUrl'], ['security.agentAuth.extAuthzUrl=10.0.0.5:9191', 'extAuthzUrl']] as const) {
    const r = await helm(['template', 'x', CHART, '--kube-version', KUBE_VERSION, '--set', value]);
    t.not(r.code, 0, `${value} is refused, as the operator refuses it at start`);
    t.match(r.stderr, name);
  }
});

t.test('the harness runtime registry: the built-in pi and claude, custom merged over them, in SYSTEM_NAMESPACE (the release namespace)', async (t) => {
  const registryOf = (docs: Doc[]): unknown => {
    const [configMap] = find(docs, 'ConfigMap', 'kaos-harness-runtimes');
    t.equal(configMap?.metadata.namespace, NS, 'in the release namespace');
    return parse(String((configMap?.data as Record<string, unknown> | undefined)?.['runtimes.yaml']));
  };
  const defaults = await render([]);
  t.same(registryOf(defaults.docs), { runtimes: BUILTIN_HARNESS_RUNTIMES }, 'the defaults are src/api/harness-runtime-defaults.ts\'s');
  const [deploy] = find(defaults.docs, 'Deployment');
  const containers = (deploy?.spec as { template: { spec: { containers: { env?: Record<string, unknown>[] }[] } } } | undefined)?.template.spec.containers ?? [];
  const env = containers[0]?.env ?? [];
  t.same(env.find((e) => e.name === 'SYSTEM_NAMESPACE'), { name: 'SYSTEM_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } });

  const custom = await render(['--set', 'defaultImages.harnessPi=registry.example/pi:2', '--set-json', 'harnessRuntimes.custom={"codex":{"image":"registry.example/codex:1","driver":"codex"},"claude":{"image":"registry.example/claude:1"}}']);
  t.same(registryOf(custom.docs), {
    runtimes: {
      pi: { image: 'registry.example/pi:2', driver: 'pi', description: 'pi coding harness (MIT)' },
      claude: { image: 'registry.example/claude:1', driver: 'claude', description: 'Claude Code (proprietary, bring your own image)' },
      codex: { image: 'registry.example/codex:1', driver: 'codex' },
    },
  }, 'defaultImages.harnessPi, and custom entries merged over the built-in ones');
  await dryRun(t, custom.yaml);
  t.same(find((await render(['--set', 'harnessRuntimes.create=false'])).docs, 'ConfigMap', 'kaos-harness-runtimes'), [], 'create=false leaves it to you');
  const noDriver = await helm(['template', 'x', CHART, '--kube-version', KUBE_VERSION, '--set-json', 'harnessRuntimes.custom={"codex":{"image":"x"}}']);
  t.not(noDriver.code, 0, 'an entry without a driver is refused by values.schema.json');
});

type PodSpec = { topologySpreadConstraints?: Record<string, unknown>[] };
const podSpec = (docs: Doc[]): PodSpec => (find(docs, 'Deployment')[0] as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;

t.test('HA: the replicas spread over nodes by default, softly; a list of your own replaces it, [] turns it off', async (t) => {
  const byDefault = await render([]);
  // The pods' own labels (kaos-operator.selectorLabels): the spread counts this release's operator pods and no other.
  const selector = { matchLabels: { 'app.kubernetes.io/instance': 'kaos-operator', 'app.kubernetes.io/name': 'kaos-operator' } };
  t.same(podSpec(byDefault.docs).topologySpreadConstraints, [
    { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', matchLabelKeys: ['pod-template-hash'], labelSelector: selector },
  ], 'one soft constraint on kubernetes.io/hostname, over this release\'s pods, each rollout\'s new pods among themselves');
  await dryRun(t, byDefault.yaml);
  const zones = { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { team: 'a' } } };
  const own = await render(['--set-json', `topologySpreadConstraints=${JSON.stringify([zones, { maxSkew: 2, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule' }])}`]);
  t.same(podSpec(own.docs).topologySpreadConstraints, [zones, { maxSkew: 2, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: selector }],
    'yours as written; one without a labelSelector gets the release\'s');
  await dryRun(t, own.yaml);
  t.equal(podSpec((await render(['--set-json', 'topologySpreadConstraints=[]'])).docs).topologySpreadConstraints, undefined, '[]: no constraint');
});

t.test('HA: more than one replica with leader election off is refused, with the way out', async (t) => {
  const refused = await helm(['template', 'x', CHART, '--kube-version', KUBE_VERSION, '--set', 'leaderElection.enabled=false']);
  t.not(refused.code, 0, 'replicaCount 2 (the default) with leaderElection.enabled=false: refused');
  t.match(refused.stderr, /replicaCount 2 with leaderElection\.enabled=false: every replica would run the controller/, 'says why');
  t.match(refused.stderr, /Keep leaderElection\.enabled=true .*replicaCount=1.*config\.controllerEnabled="false"/, 'and what to do');
  const three = await helm(['template', 'x', CHART, '--kube-version', KUBE_VERSION, '--set', 'leaderElection.enabled=false', '--set', 'replicaCount=3']);
  t.match(three.stderr, /replicaCount 3 with leaderElection\.enabled=false/, 'any count above one');
  for (const more of [['--set', 'replicaCount=1'], ['--set-string', 'config.controllerEnabled=false']]) {
    const { docs } = await render(['--set', 'leaderElection.enabled=false', ...more]);
    t.equal(find(docs, 'Deployment').length, 1, `leaderElection.enabled=false with ${more[1] ?? ''}: rendered`);
  }
});

t.test('helm enforces values.schema.json', async (t) => {
  const wrongType = await helm(['template', 'x', CHART, '--kube-version', KUBE_VERSION, '--set', 'replicaCount=two']);
  t.not(wrongType.code, 0, 'replicaCount=two is refused');
  t.match(wrongType.stderr, /replicaCount/);
  const unknown = await helm(['template', 'x', CHART, '--kube-version', KUBE_VERSION, '--set', 'replica=3']);
  t.not(unknown.code, 0, 'an unknown top-level key is refused');
  t.match(unknown.stderr, /replica/);
});
