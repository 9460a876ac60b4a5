// The controller at rest and through crashes, against a real control plane with an audit log of
// the operator's own requests (it runs under its ServiceAccount, the only user the policy
// records): a converged cluster gets no write for a whole minute and no resourceVersion moves;
// restarting the operator over it changes nothing; SIGKILL in the middle of creating 50 Agents
// and a restart converge with no duplicate or orphaned child; after a kube-apiserver restart new
// objects are reconciled; and a KAOS default install (ServiceAccount identity) on the same
// cluster: each Agent's ServiceAccount, token and env, its pod under it (a harness Agent's too),
// idle, then switched off. The operator's /metrics, recorded from the bulk create through the
// crash to a policy that refuses every Deployment, are evaluated by Prometheus' engine (promtool)
// with the chart's alerts and the dashboard's queries, and checked against docs/metrics.md.
//
// Leader election is on, as in a cluster (LEADER_ELECT defaults to true): its Lease renewals
// (`update leases`, every 2 s) are the operator's only expected writes, so they are excluded from
// the idle count, and reported. KAOS_E2E_IDLE_SECONDS shortens the idle window for local runs
// (CI runs the full 60 s).
import t from 'tap';
import type { KubeObject } from '../../src/api/lookup.ts';
import { KINDS } from '../../src/api/kinds.ts';
import { OPERATOR_USER } from '../../src/cluster/rbac.ts';
import { resourcePath } from '../../src/kube/paths.ts';
import { kaosPath } from '../../src/cluster/kaos-resources.ts';
import { startLocalStack, tail, waitForAdmission, type OperatorProcess } from '../../scripts/local-stack.ts';
import {
  CHILD_TYPES, auditMark, auditSince, changedKeys, describeRequest, getDeployment, getKaos, killHard, kubectl, kubectlApply,
  metricSum, operatorSettled, resourceVersions, scrape, sleep, startAnotherOperator, statusIs, waitForStatus,
  writesBy, containerEnv, type OwnerReference,
} from './support/lifecycle.ts';
import { eventually } from '../support/poll.ts';
import { httpGet, probe } from './support/children.ts';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { API_SERVER_WEBHOOK_REJECTIONS, DEFAULT_THRESHOLDS, alerts, ruleGroups, type Thresholds } from '../../monitoring/alerts.ts';
import { dashboardQueries } from '../../monitoring/dashboard.ts';
import { documentedMetrics } from '../support/metrics-doc.ts';
import { apiServerScrape, engineTest, families, httpScrape, record, returnsSeries, type Recording } from '../prometheus/recorded.ts';
import { promtool, promtoolPath } from '../prometheus/promtool.ts';

const IDLE_SECONDS = Number(process.env.KAOS_E2E_IDLE_SECONDS ?? '60');
if (!Number.isFinite(IDLE_SECONDS) || IDLE_SECONDS <= 0) throw new Error(`KAOS_E2E_IDLE_SECONDS must be a positive number of seconds, got ${process.env.KAOS_E2E_IDLE_SECONDS}`);

// One identity across restarts, as a StatefulSet pod would have: a restarted process takes its
// own Lease back at once instead of waiting 15 s for it to expire.
const OPERATOR_ENV = { POD_NAME: 'kaos-operator-0', SHUTDOWN_DELAY_SECONDS: '0' };

const stack = await startLocalStack({ log: (line) => t.comment(line), audit: { users: [OPERATOR_USER] }, operatorEnv: OPERATOR_ENV });
const { plane, client } = stack;
const auditLog = plane.logs.audit;
if (auditLog === undefined) throw new Error('the control plane was started without its audit log');
/** The operator process running now (restarts replace it), on the port the webhooks point at. */
let operator: OperatorProcess = stack.operator;
const webhookPort = stack.operator.webhookPort;
let metricsPort = stack.operator.metricsPort;
t.teardown(async () => {
  if (!t.passing()) t.comment(`operator log (tail):\n${tail(operator.log(), 40)}`);
  await operator.stop();
  await stack.stop();
});

/** Stops the current process (unless it is already dead) and starts another on the same webhook port. */
async function restartOperator(how: 'SIGTERM' | 'SIGKILL' | 'dead', name: string, env: Readonly<Record<string, string>> = {}): Promise<void> {
  if (how === 'SIGKILL') await killHard(operator);
  else if (how === 'SIGTERM') await operator.stop();
  operator = await startAnotherOperator(stack, name, { ...OPERATOR_ENV, ...env }, webhookPort);
  metricsPort = operator.metricsPort;
}

const kaos = (kind: string, namespace: string, name: string, spec: Record<string, unknown>): KubeObject =>
  ({ apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name, namespace }, spec });
const namespace = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

const IDLE_NS = 'e2e-idle';
const IDLE_OBJECTS = 5;

t.test('idle means idle: a converged cluster gets no write from the operator for a whole window, and no resourceVersion moves', async (t) => {
  const fromStart = auditMark(auditLog);
  await kubectlApply(plane, [
    namespace(IDLE_NS),
    kaos('ModelAPI', IDLE_NS, 'llm', { mode: 'Proxy', proxyConfig: { apiBase: 'http://litellm.example:4000' } }),
    kaos('ModelAPI', IDLE_NS, 'local', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }),
    kaos('MCPServer', IDLE_NS, 'tools', { type: 'python-runtime', config: { tools: { fromString: 'def echo(text: str) -> str:\n    return text\n' } } }),
  ]);
  await kubectlApply(plane, [
    kaos('Agent', IDLE_NS, 'worker', { modelAPI: 'llm', mcpServers: ['tools'] }),
    kaos('Agent', IDLE_NS, 'lead', { modelAPI: 'local', agentNetwork: { access: ['worker'] } }),
  ]);
  // Ready through the real chain: Deployment and ReplicaSet controllers, scheduler, kwok's pods.
  for (const [kind, name] of [['ModelAPI', 'llm'], ['ModelAPI', 'local'], ['MCPServer', 'tools'], ['Agent', 'worker'], ['Agent', 'lead']] as const) {
    await waitForStatus(client, kind, IDLE_NS, name, (o) => statusIs(o, 'Ready', 'Deployment ready replicas: 1/1'), 'Ready');
  }
  await eventually('lead wired to worker', async () => containerEnv(await getDeployment(client, IDLE_NS, 'agent-lead'), 'agent').includes('PEER_AGENTS=worker'), { timeoutMs: 30_000, intervalMs: 200, retryErrors: true });
  await eventually('the operator\'s queues to empty', () => operatorSettled(metricsPort, IDLE_OBJECTS), { timeoutMs: 30_000, intervalMs: 200, retryErrors: true });

  // The audit log sees the operator's writes: creating all this took some.
  const converging = writesBy(auditSince(auditLog, fromStart), OPERATOR_USER);
  t.ok(converging.some((e) => e.objectRef?.resource === 'deployments'), `the audit log records the operator's writes (${converging.length} while converging)`);

  const before = await resourceVersions(client, [IDLE_NS]);
  t.equal(before.size, 5 + 5 + 5 + 1, 'five objects, five Deployments, five Services, one ConfigMap');
  const mark = auditMark(auditLog);
  t.comment(`idle window: ${IDLE_SECONDS} s`);
  await sleep(IDLE_SECONDS * 1000);
  const writes = writesBy(auditSince(auditLog, mark), OPERATOR_USER);
  const leaseWrites = writes.filter((e) => e.objectRef?.resource === 'leases');
  const others = writes.filter((e) => e.objectRef?.resource !== 'leases');
  t.comment(`operator writes in the idle window: ${writes.length}, of which ${leaseWrites.length} Lease renewals (leader election; excluded)`);
  t.same(others.map(describeRequest), [], 'no write request from the operator besides its Lease');
  t.same(changedKeys(before, await resourceVersions(client, [IDLE_NS])), [], 'no resourceVersion changed');
});

t.test('restarting the operator over a converged cluster changes no resourceVersion and writes nothing', async (t) => {
  const before = await resourceVersions(client, [IDLE_NS]);
  const mark = auditMark(auditLog);
  await restartOperator('SIGTERM', 'restarted');
  await eventually('the new process to lead', async () => metricSum(await scrape(metricsPort), 'leader_election_master_status') === 1, { timeoutMs: 30_000, intervalMs: 200, retryErrors: true });
  const settled = await eventually('the restarted operator to reconcile every object', async () => (await operatorSettled(metricsPort, IDLE_OBJECTS)) && await scrape(metricsPort), { timeoutMs: 30_000, intervalMs: 200, retryErrors: true });
  t.ok((metricSum(settled, 'controller_runtime_reconcile_total') ?? 0) >= IDLE_OBJECTS, 'it reconciled every object again');
  // Anything late (an Event, a status write) would land here.
  await sleep(3000);
  const writes = writesBy(auditSince(auditLog, mark), OPERATOR_USER).filter((e) => e.objectRef?.resource !== 'leases');
  t.same(writes.map(describeRequest), [], 'no write request besides the Lease');
  t.same(changedKeys(before, await resourceVersions(client, [IDLE_NS])), [], 'no resourceVersion changed');
});

/**
 * The operator's /metrics from the bulk create below until the fault's test stops it, every
 * RECORD_INTERVAL_MS, whichever process runs. The labels are those a ServiceMonitor's scrape adds.
 */
const RECORD_INTERVAL_MS = 2_000;
const TARGET = { job: 'kaos-operator-metrics', pod: OPERATOR_ENV.POD_NAME, instance: 'operator:8080' };
/** The API server's refusals of webhook calls (KaosWebhookUnreachable's), as kube-prometheus-stack scrapes them. */
const API_SERVER_TARGET = { job: 'apiserver', instance: 'apiserver:6443' };
let recording: ReturnType<typeof record> | undefined;
let apiServerRecording: { stop(): Promise<Recording> } | undefined;
// promtool builds (or is found in the cache) while the tests before the fault run.
const promtoolBuilt = promtoolPath();
promtoolBuilt.catch(() => {});

t.test('SIGKILL while 50 Agents are being created, then a restart: converges with no duplicate or orphaned child', async (t) => {
  const NS = 'e2e-crash';
  const live = record(httpScrape(() => `http://127.0.0.1:${metricsPort}/metrics`), RECORD_INTERVAL_MS);
  recording = live;
  apiServerRecording = record(apiServerScrape(plane.server, plane.caFile, plane.token, [API_SERVER_WEBHOOK_REJECTIONS]), RECORD_INTERVAL_MS);
  await kubectlApply(plane, [
    namespace(NS),
    kaos('ModelAPI', NS, 'llm', { mode: 'Proxy', proxyConfig: { model: 'ollama/smollm2:135m' } }),
    kaos('MCPServer', NS, 'tools', { type: 'python-runtime', config: { tools: { fromPackage: 'test-mcp-echo-server' } } }),
  ]);
  await waitForStatus(client, 'ModelAPI', NS, 'llm', (o) => statusIs(o, 'Ready', 'Deployment ready replicas: 1/1'), 'Ready');
  await waitForStatus(client, 'MCPServer', NS, 'tools', (o) => statusIs(o, 'Ready', 'Deployment ready replicas: 1/1'), 'Ready');

  const agents = Array.from({ length: 50 }, (_, i) => kaos('Agent', NS, `agent-${String(i).padStart(2, '0')}`, { modelAPI: 'llm', mcpServers: ['tools'] }));
  const agentDeployments = async (): Promise<number> =>
    (await client.list<KubeObject>(resourcePath(CHILD_TYPES[0]!, { namespace: NS }), { labelSelector: 'app=agent' })).items.length;
  // kubectl creates them one by one through the webhooks of the very process killed below: the
  // rest of its creates fail, as they would for a user, who then applies again.
  const applying = plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: agents }) });
  await eventually('the first Agent Deployments', async () => (await agentDeployments()) >= 5, { timeoutMs: 60_000, intervalMs: 20, retryErrors: true });
  await killHard(operator);
  const scrapedAtKill = live.scrapes.length;
  const firstApply = await applying;
  const atKill = await agentDeployments();
  const agentsAtKill = (await client.list<KubeObject>(kaosPath('Agent', { namespace: NS }))).items.length;
  t.comment(`at the kill: ${agentsAtKill} Agents created, ${atKill} with a Deployment; first kubectl apply exited ${firstApply.code}`);
  t.ok(atKill < 50, 'the operator was killed mid-way (fewer than 50 Agent Deployments)');

  // The recording holds a failed scrape of the killed operator before another starts: how long
  // the restart takes is the machine's, so the test waits for one rather than hoping to catch it.
  await eventually('a scrape of the killed operator to fail', () => live.scrapes.slice(scrapedAtKill).some((s) => s.text === undefined), { timeoutMs: 30_000, intervalMs: 100 });
  await restartOperator('dead', 'after-kill');
  await waitForAdmission(client);
  await kubectlApply(plane, agents);
  for (const a of agents) {
    await waitForStatus(client, 'Agent', NS, a.metadata?.name ?? '', (o) => statusIs(o, 'Ready', 'Deployment ready replicas: 1/1'), 'Ready (its pod runs)', 60_000);
  }
  await eventually('the operator\'s queues to empty', () => operatorSettled(metricsPort, 52), { timeoutMs: 60_000, intervalMs: 200, retryErrors: true });

  // Every child: managed, exactly one controller owner, and that owner exists (same uid).
  const owners = new Map<string, string>();
  for (const kind of KINDS) {
    for (const o of (await client.list<KubeObject & { metadata: { uid: string } }>(kaosPath(kind, { namespace: NS }))).items) owners.set(`${kind}/${o.metadata.name ?? ''}`, o.metadata.uid);
  }
  t.equal(owners.size, 52, '50 Agents, a ModelAPI, an MCPServer');
  const problems: string[] = [];
  const counts: Record<string, number> = {};
  for (const type of CHILD_TYPES) {
    // All of them, not only the labelled ones: an unlabelled stray would be a child too.
    const all = (await client.list<KubeObject & { metadata: { ownerReferences?: OwnerReference[] } }>(resourcePath(type, { namespace: NS }))).items
      .filter((o) => !(type.kind === 'ConfigMap' && o.metadata.name === 'kube-root-ca.crt') && !(type.kind === 'ServiceAccount' && o.metadata.name === 'default'));
    counts[type.kind] = all.length;
    for (const child of all) {
      const id = `${type.kind}/${child.metadata.name ?? ''}`;
      const controllers = (child.metadata.ownerReferences ?? []).filter((r) => r.controller === true);
      if (child.metadata.labels?.['app.kubernetes.io/managed-by'] !== 'kaos-operator') problems.push(`${id}: not labelled managed-by kaos-operator`);
      if (controllers.length !== 1) { problems.push(`${id}: ${controllers.length} controller owners`); continue; }
      const [owner] = controllers;
      if (owners.get(`${owner!.kind}/${owner!.name}`) !== owner!.uid) problems.push(`${id}: owner ${owner!.kind}/${owner!.name} ${owner!.uid} does not exist`);
    }
  }
  t.same(problems, [], 'every child has exactly one controller owner, and it exists');
  t.same(counts, { Deployment: 52, Service: 52, ConfigMap: 1, PersistentVolumeClaim: 0, PodDisruptionBudget: 0, ServiceAccount: 0, HorizontalPodAutoscaler: 0 }, 'one Deployment and one Service per object, one ConfigMap for the Proxy ModelAPI, no MemoryStore child, no ServiceAccount without agent identity, no HorizontalPodAutoscaler without autoscaling');
  for (const a of agents) {
    const name = a.metadata?.name ?? '';
    const d = await getDeployment(client, NS, `agent-${name}`);
    const owner = d?.metadata.ownerReferences?.[0];
    if (owner?.name !== name) t.fail(`agent-${name} is owned by ${owner?.name ?? 'nobody'}`);
  }
});

/**
 * The alerts the fault must raise, with their thresholds shortened so that the fault need last
 * seconds instead of 15 minutes; every other threshold is the default.
 */
const FAULT_THRESHOLDS: Thresholds = { ...DEFAULT_THRESHOLDS, notReadySeconds: 10, reconcileFailingFor: '10s' };
const FAULT_AGENTS = ['f-0', 'f-1', 'f-2'];
/** A ValidatingAdmissionPolicy (CEL, in the API server itself) and its binding refusing every Deployment of `ns`. */
const FREEZE = (ns: string): KubeObject[] => [
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: `freeze-${ns}` },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }] },
      validations: [{ expression: 'false', message: 'deployments are frozen in this namespace', reason: 'Forbidden' }],
    },
  } as KubeObject,
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: `freeze-${ns}` },
    spec: { policyName: `freeze-${ns}`, validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } } },
  } as KubeObject,
];

t.test('the live metrics through a bulk create, a crash and a policy refusing every Deployment, evaluated by Prometheus\' engine: every dashboard query and alert query returns series, the fault\'s alerts fire, docs/metrics.md lists what is exported', async (t) => {
  const NS = 'e2e-fault';
  // The fault: a cluster policy that refuses every Deployment of the namespace (as a policy
  // engine's would), so each Agent's reconcile fails (Forbidden) and is retried with backoff, and
  // no Agent gets Ready. Enforced once a dry-run create is refused.
  await kubectlApply(plane, [namespace(NS), ...FREEZE(NS)]);
  await eventually('the policy to refuse Deployments', async () => {
    const r = await plane.kubectl(['create', 'deployment', 'probe', '--image=x', '-n', NS, '--dry-run=server']);
    return r.code !== 0 && r.stderr.includes('frozen');
  }, { timeoutMs: 30_000, intervalMs: 500 });
  await kubectlApply(plane, [
    kaos('ModelAPI', NS, 'm', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }),
    ...FAULT_AGENTS.map((name) => kaos('Agent', NS, name, { modelAPI: 'm', waitForDependencies: false })),
  ]);
  const failing = await eventually('the three Agents failing their reconciles', async () => {
    const n = metricSum(await scrape(metricsPort), 'kaos_operator_reconcile_failing_objects', { controller: 'agent' }) ?? 0;
    return n >= FAULT_AGENTS.length ? n : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500, retryErrors: true });
  t.equal(failing, FAULT_AGENTS.length, 'kaos_operator_reconcile_failing_objects{controller="agent"}');
  // The fault lasts past the shortened thresholds, and a few scrapes more.
  await sleep(10_000 + 3 * RECORD_INTERVAL_MS);
  const recorded = await recording!.stop();
  const apiServerRecorded = await apiServerRecording!.stop();
  const scraped = recorded.scrapes.filter((s) => s.text !== undefined).length;
  t.comment(`recorded ${recorded.scrapes.length} scrapes (${scraped} answered) over ${((recorded.scrapes.at(-1)?.slot ?? 0) * RECORD_INTERVAL_MS / 1000).toFixed(0)} s`);
  t.ok(recorded.scrapes.some((s) => s.text === undefined), 'the crash shows as failed scrapes');
  t.ok(recorded.scrapes.at(-1)?.text !== undefined, 'the last scrape answered');

  // docs/metrics.md: every family exported is documented with its type and labels, and every one documented is exported.
  const live = families(recorded.scrapes);
  const documented = documentedMetrics(await readFile(join(import.meta.dirname, '..', '..', 'docs', 'metrics.md'), 'utf8'));
  t.same([...live.keys()].filter((name) => !documented.has(name)).sort(), [], 'no exported metric is missing from docs/metrics.md');
  t.same([...documented.keys()].filter((name) => !live.has(name)).sort(), [], 'no documented metric is missing from the export');
  for (const [name, doc] of documented) {
    const exported = live.get(name);
    if (exported === undefined) continue;
    t.equal(exported.type, doc.type, `${name}: type`);
    t.same([...exported.labels].filter((l) => !doc.labels.includes(l) && !doc.optional.includes(l)).sort(), [], `${name}: no undocumented label`);
    t.same(doc.labels.filter((l) => !exported.labels.has(l)).sort(), [], `${name}: every documented label is exported`);
  }

  // Prometheus' engine over the recording: the rules (the fault's thresholds shortened), every
  // query of the dashboard and of the alerts, and which alerts fire at the end.
  const dir = await mkdtemp(join(tmpdir(), 'kaos-promtool-'));
  try {
    await writeFile(join(dir, 'rules.yaml'), stringify({ groups: ruleGroups(FAULT_THRESHOLDS, TARGET.job) }, { lineWidth: 0 }));
    const expectations = [
      ...dashboardQueries(TARGET.job, '1m').map((q) => returnsSeries(q.expr)),
      ...alerts(FAULT_THRESHOLDS, TARGET.job).map((a) => returnsSeries(a.query)),
      { expr: 'count by (alertname, controller) (ALERTS{alertname="KaosReconcileErrors",alertstate="firing",controller="agent"})', samples: [{ labels: '{alertname="KaosReconcileErrors",controller="agent"}', value: 1 }] },
      { expr: `count by (alertname, kind, object_namespace) (ALERTS{alertname="KaosObjectNotReady",alertstate="firing",kind="Agent",object_namespace="${NS}"})`, samples: [{ labels: `{alertname="KaosObjectNotReady",kind="Agent",object_namespace="${NS}"}`, value: FAULT_AGENTS.length }] },
      { expr: 'count by (controller, reason) (kaos_operator_reconcile_errors_total{controller="agent",reason="Forbidden"})', samples: [{ labels: '{controller="agent",reason="Forbidden"}', value: 1 }] },
      // What a healthy operator that was killed once and came back must not raise.
      { expr: 'ALERTS{alertname=~"KaosOperatorDown|KaosNoLeader|KaosWebhookErrors|KaosOperatorRestarting"}', samples: [] },
    ];
    await writeFile(join(dir, 'live.test.yaml'), stringify(engineTest([{ recording: recorded, target: TARGET }, { recording: apiServerRecorded, target: API_SERVER_TARGET }], ['rules.yaml'], expectations), { lineWidth: 0 }));
    await promtoolBuilt;
    const check = await promtool(['check', 'rules', join(dir, 'rules.yaml')]);
    t.equal(check.code, 0, 'promtool check rules', { stdout: check.stdout, stderr: check.stderr });
    const run = await promtool(['test', 'rules', join(dir, 'live.test.yaml')]);
    t.equal(run.code, 0, `promtool test rules: ${expectations.length} expressions over ${scraped} scrapes`, { stdout: run.stdout.slice(0, 20_000), stderr: run.stderr.slice(0, 4_000) });
  } finally {
    if (t.passing()) await rm(dir, { recursive: true, force: true });
    else t.comment(`promtool's files kept in ${dir}`);
  }
  // The tests after this one count the operator's requests: no failing reconcile may be left.
  await kubectl(plane, ['delete', 'namespace', NS, '--wait=true', '--timeout=120s']);
  await kubectl(plane, ['delete', 'validatingadmissionpolicybinding,validatingadmissionpolicy', `freeze-${NS}`]);
});

t.test('kube-apiserver restarted under a running operator: objects created afterwards are reconciled within 30 s', async (t) => {
  const NS = 'e2e-apiserver-restart';
  await plane.restartApiServer();
  await waitForAdmission(client, 'default', 60_000);
  t.ok(operator.pid > 0 && (await scrape(metricsPort)).length > 0, 'the same operator process is still running');

  const created = Date.now();
  await kubectlApply(plane, [
    namespace(NS),
    kaos('ModelAPI', NS, 'm', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }),
    kaos('MCPServer', NS, 's', { type: 'python-runtime', config: { tools: { fromPackage: 'test-mcp-echo-server' } } }),
  ]);
  // waitForDependencies: false, so the Agent gets its Deployment while its dependencies may still be Pending.
  await kubectlApply(plane, [kaos('Agent', NS, 'a', { modelAPI: 'm', mcpServers: ['s'], waitForDependencies: false })]);
  const deadline = created + 30_000;
  for (const [kind, name, child] of [['ModelAPI', 'm', 'modelapi-m'], ['MCPServer', 's', 'mcpserver-s'], ['Agent', 'a', 'agent-a']] as const) {
    // Reconciled: a status of this generation from its Deployment (Pending or, once its pod runs, Ready).
    const o = await waitForStatus(client, kind, NS, name, (x) => x.status?.observedGeneration === x.metadata.generation && (x.status?.phase === 'Pending' || x.status?.phase === 'Ready'),
      'reconciled (its Deployment\'s progress)', Math.max(0, deadline - Date.now()));
    t.equal(o.status?.observedGeneration, o.metadata.generation, `${kind} ${name} reconciled`);
    t.ok(await getDeployment(client, NS, child), `Deployment ${child}`);
  }
  t.comment(`reconciled ${Date.now() - created} ms after the first create following the apiserver restart`);
  for (const [kind, name] of [['ModelAPI', 'm'], ['MCPServer', 's'], ['Agent', 'a']] as const) {
    await waitForStatus(client, kind, NS, name, (x) => statusIs(x, 'Ready', 'Deployment ready replicas: 1/1'), 'Ready (its pod runs)', 60_000);
  }
});

t.test('a KAOS default install (ServiceAccount identity): each Agent gets its ServiceAccount, token and env, its pod runs under it, idle writes nothing; no provider takes it all away', async (t) => {
  const NS = 'e2e-identity';
  type Pod = { metadata: { name: string }; spec: { serviceAccountName?: string; automountServiceAccountToken?: boolean; volumes?: { name: string; projected?: unknown }[] } };
  type Template = { serviceAccountName?: string; serviceAccount?: string; automountServiceAccountToken?: boolean; volumes?: unknown[]; containers: { name: string; volumeMounts?: unknown[]; env?: { name: string; value?: string }[] }[] };
  const template = async (name: string): Promise<Template> => ((await getDeployment(client, NS, `agent-${name}`)) as unknown as { spec: { template: { spec: Template } } }).spec.template.spec;
  const podsOf = async (agent: string): Promise<Pod[]> => (JSON.parse(await kubectl(plane, ['-n', NS, 'get', 'pods', '-l', `agent=${agent}`, '-o', 'json'])) as { items: Pod[] }).items;
  const serviceAccount = async (name: string): Promise<KubeObject & { automountServiceAccountToken?: boolean } | undefined> => {
    const r = await plane.kubectl(['-n', NS, 'get', 'serviceaccount', name, '-o', 'json']);
    return r.code === 0 ? JSON.parse(r.stdout) as KubeObject & { automountServiceAccountToken?: boolean } : undefined;
  };

  await restartOperator('SIGTERM', 'identity', { SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount' });
  await waitForAdmission(client);
  const discovered = await eventually('the issuer discovered from the API server', () => operator.log().split('\n').map((l) => { try { return JSON.parse(l) as Record<string, unknown>; } catch { return {}; } }).find((e) => e['msg'] === 'ServiceAccount issuer discovered'), { timeoutMs: 30_000, intervalMs: 200 });
  t.match(discovered, { issuer: 'https://kubernetes.default.svc.cluster.local' }, 'the issuer the API server publishes (its --service-account-issuer), read under the operator\'s own RBAC');

  await kubectlApply(plane, [namespace(NS), kaos('ModelAPI', NS, 'llm', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } })]);
  await kubectlApply(plane, [
    kaos('Agent', NS, 'scout', { modelAPI: 'llm', container: { env: [{ name: 'MINE', value: '1' }] } }),
    kaos('Agent', NS, 'planner', { modelAPI: 'llm', model: 'smollm2:135m' }),
    // A harness Agent with a workspace: in the idle window below with the rest (the registry watched, never read).
    kaos('Agent', NS, 'coder', { modelAPI: 'llm', model: 'smollm2:135m', harness: { runtime: 'pi', workspace: { repoURL: 'https://github.com/acme/service.git' } } }),
  ]);
  for (const name of ['scout', 'planner', 'coder']) await waitForStatus(client, 'Agent', NS, name, (o) => statusIs(o, 'Ready', 'Deployment ready replicas: 1/1'), 'Ready (its pod runs)', 60_000);

  // The ServiceAccount, as docs/api.md ("Agent identity by ServiceAccount") states it.
  const scoutUid = (await getKaos(client, 'Agent', NS, 'scout'))?.metadata.uid;
  const sa = await serviceAccount('kaos-agent-scout');
  t.same(sa?.metadata?.labels, { app: 'agent', agent: 'scout', 'app.kubernetes.io/managed-by': 'kaos-operator', 'kaos.tools/agent': 'scout' }, 'kaos-agent-scout: the §1 labels and kaos.tools/agent');
  t.equal(sa?.automountServiceAccountToken, false, 'no automounted API token');
  t.match(sa?.metadata?.ownerReferences, [{ kind: 'Agent', name: 'scout', uid: scoutUid, controller: true, blockOwnerDeletion: true }], 'owned by its Agent');

  // The pod template: its ServiceAccount, the projected token and its mount, the env last before spec.container.env.
  const scout = await template('scout');
  t.equal(scout.serviceAccountName, 'kaos-agent-scout');
  t.equal(scout.automountServiceAccountToken, false);
  t.same(scout.volumes, [{ name: 'agent-auth-token', projected: { defaultMode: 420, sources: [{ serviceAccountToken: { audience: 'kaos-gateway', expirationSeconds: 3600, path: 'token' } }] } }], 'the projected token (the API server adds defaultMode)');
  const agentContainer = scout.containers.find((c) => c.name === 'agent');
  t.same(agentContainer?.volumeMounts, [{ name: 'agent-auth-token', mountPath: '/var/run/secrets/kaos-agent', readOnly: true }]);
  t.same((agentContainer?.env ?? []).slice(-3), [
    { name: 'AGENT_AUTH_IDENTITY', value: `kaos://agent/${NS}/scout` },
    { name: 'AGENT_AUTH_TOKEN_FILE', value: '/var/run/secrets/kaos-agent/token' },
    { name: 'MINE', value: '1' },
  ], 'identity last of the generated env, spec.container.env after it');
  t.same(containerEnv(await getDeployment(client, NS, 'agent-planner'), 'agent').slice(-2), [`AGENT_AUTH_IDENTITY=kaos://agent/${NS}/planner`, 'AGENT_AUTH_TOKEN_FILE=/var/run/secrets/kaos-agent/token'], 'the newer shape too');
  const coder = await template('coder');
  t.equal(coder.serviceAccountName, 'kaos-agent-coder', 'the harness Agent runs under its own too');
  t.same(coder.volumes?.map((v) => (v as { name: string }).name), ['agent-auth-token', 'workspace', 'state'], 'its token volume before the workspace\'s');
  // The probes (docs/api.md, "Agent probes in 2026"): KAOS 2026's for the newer shape, the original ones kept.
  const probesOf = async (name: string): Promise<unknown> => {
    const c = (await template(name)).containers.find((x) => x.name === 'agent') as { livenessProbe?: unknown; readinessProbe?: unknown } | undefined;
    return { livenessProbe: c?.livenessProbe, readinessProbe: c?.readinessProbe };
  };
  t.same(await probesOf('planner'), { livenessProbe: probe(httpGet('/health', 8000), 5, 10, 3, 3), readinessProbe: probe(httpGet('/ready', 8000), 3, 5, 3, 2) }, 'the newer shape: KAOS 2026\'s timings');
  t.same(await probesOf('scout'), { livenessProbe: probe(httpGet('/health', 8000), 30, 10), readinessProbe: probe(httpGet('/ready', 8000), 10, 5) }, 'the original shape keeps its own');

  // The pod kwok runs is the API server's: it runs under the Agent's ServiceAccount, with no API token mounted.
  const pods = await podsOf('scout');
  t.equal(pods.length, 1);
  t.equal(pods[0]?.spec.serviceAccountName, 'kaos-agent-scout', 'the pod runs under kaos-agent-scout');
  t.same(pods[0]?.spec.volumes?.map((v) => v.name), ['agent-auth-token'], 'only the agent token: no kube-api-access volume');
  const replicaSets = JSON.parse(await kubectl(plane, ['-n', NS, 'get', 'replicasets', '-l', 'agent=scout', '-o', 'json'])) as { items: unknown[] };
  t.equal(replicaSets.items.length, 1, 'one rollout: the ServiceAccount was there before the Deployment');
  t.ok((await plane.kubectl(['-n', IDLE_NS, 'get', 'serviceaccount', 'kaos-agent-worker'])).code === 0, 'an Agent from before (e2e-idle) got its ServiceAccount too');

  // Idle with identity in the cluster: no write besides the Lease, no resourceVersion moves.
  await eventually('the operator\'s queues to empty', () => operatorSettled(metricsPort, IDLE_OBJECTS), { timeoutMs: 60_000, intervalMs: 200, retryErrors: true });
  const window = Math.min(IDLE_SECONDS, 20);
  const before = await resourceVersions(client, [NS, IDLE_NS]);
  t.ok([...before.keys()].some((k) => k.startsWith('ServiceAccount/')), 'the ServiceAccounts are among what is watched for a change');
  const mark = auditMark(auditLog);
  await sleep(window * 1000);
  const writes = writesBy(auditSince(auditLog, mark), OPERATOR_USER).filter((e) => e.objectRef?.resource !== 'leases');
  t.same(writes.map(describeRequest), [], `no write request besides the Lease in ${window} s`);
  t.same(changedKeys(before, await resourceVersions(client, [NS, IDLE_NS])), [], 'no resourceVersion changed');

  // Switched off: the pod template loses all of it, then the ServiceAccount goes.
  await restartOperator('SIGTERM', 'no-identity', { SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: '' });
  await eventually('kaos-agent-scout deleted', async () => (await serviceAccount('kaos-agent-scout')) === undefined, { timeoutMs: 60_000, intervalMs: 200, retryErrors: true });
  const off = await template('scout');
  t.equal(off.serviceAccountName, undefined, 'no serviceAccountName');
  t.equal(off.serviceAccount, undefined, 'nor its deprecated alias, which would bring the name back');
  t.equal(off.automountServiceAccountToken, undefined);
  t.equal(off.volumes, undefined, 'no token volume');
  t.notOk((off.containers.find((c) => c.name === 'agent')?.env ?? []).some((e) => e.name.startsWith('AGENT_AUTH_')), 'no AGENT_AUTH_* env');
  await eventually('the pods under the default ServiceAccount', async () => {
    const now = await podsOf('scout');
    return now.length === 1 && now[0]?.spec.serviceAccountName === 'default';
  }, { timeoutMs: 60_000, intervalMs: 500, retryErrors: true });
  await eventually('every Agent\'s ServiceAccount gone', async () => (await plane.kubectl(['-n', IDLE_NS, 'get', 'serviceaccount', 'kaos-agent-worker'])).code !== 0, { timeoutMs: 60_000, intervalMs: 200 });
  await waitForStatus(client, 'Agent', NS, 'scout', (o) => statusIs(o, 'Ready', 'Deployment ready replicas: 1/1'), 'Ready again', 60_000);
});
