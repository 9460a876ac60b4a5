// Two containers of the operator's image, as the chart's two replicas run (test/support/chart-pod.ts:
// leader election on, each its own POD_NAME): one leads — it holds the Lease, reconciles, and says
// so in leader_election_master_status — while both serve the webhooks through the API server.
// `<engine> stop` of the leader releases the Lease, and the other leads and reconciles within
// seconds, not a lease duration. Then the chart itself: `helm install` of two replicas, which the
// scheduler spreads over two of kwok's nodes and this test runs as a kubelet would
// (support/pod-runner.ts), the API server reaching them through the chart's Service and its
// endpoints; and `helm upgrade` rolls both while clients create, update and delete objects of
// every kind: not one request fails. Never skipped: an engine that cannot build or run the image
// fails this file with the engine's own message. Needs root (the pods' addresses).
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { KINDS, KIND_NAMES, type KaosKind } from '../../src/api/kinds.ts';
import type { KubeObject } from '../../src/api/lookup.ts';
import { CONFIGURATION_NAMES, renderWebhookConfigurations } from '../../src/admission/webhook-configs.ts';
import { IMAGE, ROOT } from '../../scripts/image/build.ts';
import { RUN_BY_TEST_ANNOTATION, runCommand } from '../cluster/control-plane.ts';
import { imageValues } from '../support/chart-pod.ts';
import type { Lease } from '../../src/kube/leader-election.ts';
import { LEASE, resourcePath } from '../../src/kube/paths.ts';
import { applySetupObjects, startLocalStack, tail, waitForAdmission } from '../../scripts/local-stack.ts';
import { eventually } from '../support/poll.ts';
import { CHART_NAMESPACE, CHART_OLLAMA_IMAGE, prepareImage, startContainerOperator, type ContainerOperator } from './support/container.ts';
import { kubectlApply, metricSum, scrape, waitForStatus } from './support/lifecycle.ts';
import { watchLeaseHolders } from './support/watch.ts';
import { startPodRunner, type PodRunner } from './support/pod-runner.ts';

// `npm run image` waits for another file's build, or builds cold: minutes beyond the usual 10.
t.setTimeout(40 * 60_000);

const log = (line: string): void => t.comment(line);
const { engine, deployment } = await prepareImage(log);
const stack = await startLocalStack({
  log,
  launch: (o) => startContainerOperator(engine, deployment, { ...o, podName: 'kaos-operator-a' }),
  // A Service's webhooks reach its endpoints (pod IPs) directly: there is no kube-proxy here.
  extraApiServerArgs: ['--enable-aggregator-routing=true'],
});
const a = stack.operator as ContainerOperator;
let b: ContainerOperator | undefined;
let runner: PodRunner | undefined;
t.teardown(async () => {
  if (!t.passing()) for (const o of [a, b]) t.comment(`${o?.podName ?? ''} log (tail):\n${tail(o?.log() ?? '', 30)}`);
  if (!t.passing()) for (const pod of runner?.pods.values() ?? []) t.comment(`${pod.name} log (tail):\n${tail(pod.container?.log() ?? '', 30)}`);
  await runner?.stop();
  await b?.stop();
  await stack.stop();
});
const { plane, client } = stack;

const NS = 'e2e-image-ha';
const leads = async (o: ContainerOperator): Promise<number | undefined> => metricSum(await scrape(o.metricsPort), 'leader_election_master_status');
const reconciles = async (o: ContainerOperator): Promise<number> => metricSum(await scrape(o.metricsPort), 'controller_runtime_reconcile_total') ?? 0;
const holder = async (): Promise<string | undefined> =>
  (await client.get<Lease>(resourcePath(LEASE, { namespace: CHART_NAMESPACE, name: 'kaos-operator' }))).spec?.holderIdentity;
const modelApi = (name: string, spec: Record<string, unknown>): KubeObject =>
  ({ apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name, namespace: NS }, spec });
const ready = (o: { status?: { phase?: string } }): boolean => o.status?.phase === 'Ready';
/** The admission requests a container answered, by webhook (its controller_runtime_webhook_requests_total). */
const served = async (o: ContainerOperator): Promise<{ mutate: number; validate: number }> => {
  const text = await scrape(o.metricsPort);
  const count = (webhook: string): number => metricSum(text, 'controller_runtime_webhook_requests_total', { webhook }) ?? 0;
  return { mutate: count('/mutate-kaos-tools-v1alpha1-modelapi'), validate: count('/validate-kaos-tools-v1alpha1-modelapi') };
};

await eventually('kaos-operator-a to lead', async () => (await leads(a)) === 1, { timeoutMs: 30_000, intervalMs: 200, retryErrors: true });
b = await startContainerOperator(engine, deployment, {
  kubeconfig: stack.operatorKubeconfig, certDir: stack.certDir, logFile: join(plane.dir, 'operator-b.log'), podName: 'kaos-operator-b',
});
const follower = b;
await kubectlApply(plane, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }]);
const ca = await readFile(join(stack.certDir, 'ca.crt'), 'utf8');

t.test('one leads, the other follows', async (t) => {
  t.equal(await holder(), 'kaos-operator-a', 'the Lease names kaos-operator-a');
  t.equal(await leads(a), 1, 'leader_election_master_status 1 on a');
  t.equal(await leads(follower), 0, '0 on b');
});

t.test('both serve the webhooks through the API server', async (t) => {
  // The webhook configurations pointed at one container, then the other, as a Service would send
  // a request to either ready replica.
  for (const [i, o] of [a, follower].entries()) {
    const other = o === a ? follower : a;
    await applySetupObjects(client, renderWebhookConfigurations({ url: `https://127.0.0.1:${o.webhookPort}`, caBundle: ca }));
    await waitForAdmission(client);
    const before = { o: await served(o), other: await served(other) };
    const name = `through-${o.podName}`;
    await kubectlApply(plane, [modelApi(name, { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } })]);
    const live = await client.get<KubeObject & { spec: { container?: { image?: string } } }>(`/apis/kaos.tools/v1alpha1/namespaces/${NS}/modelapis/${name}`);
    t.equal(live.spec.container?.image, CHART_OLLAMA_IMAGE, `${o.podName}: defaulted by the mutating webhook`);
    const refused = await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(modelApi(`refused-${i}`, { mode: 'Hosted' })) });
    t.not(refused.code, 0, `${o.podName}: a Hosted ModelAPI without a model is refused`);
    t.match(refused.stderr, /spec\.hostedConfig\.model: Required value/, 'with the field and the reason');
    const after = { o: await served(o), other: await served(other) };
    t.ok(after.o.mutate > before.o.mutate && after.o.validate >= before.o.validate + 2, `${o.podName} answered both (its webhook metrics: ${JSON.stringify(before.o)} → ${JSON.stringify(after.o)})`);
    t.same(after.other, before.other, `${other.podName} answered neither`);
  }
});

t.test('only the leader reconciles', async (t) => {
  for (const name of ['through-kaos-operator-a', 'through-kaos-operator-b']) {
    t.ok(ready(await waitForStatus(client, 'ModelAPI', NS, name, ready, 'Ready', 60_000)), `${name} Ready`);
  }
  t.ok((await reconciles(a)) >= 2, `a reconciled (${await reconciles(a)})`);
  t.equal(await reconciles(follower), 0, 'b reconciled nothing');
});

t.test(`${engine.name} stop of the leader: it releases the Lease, the other leads at once`, async (t) => {
  // Every holder the Lease names from now on, as a watch delivers each version: a release is a
  // version with no holder between a's and b's. How soon b then takes over is only printed: its
  // next retry runs when the machine's load lets it.
  const holders = watchLeaseHolders(plane, CHART_NAMESPACE, 'kaos-operator');
  await eventually('the Lease watch to start', () => holders.seen.length > 0, { timeoutMs: 30_000, intervalMs: 100 });
  const asked = Date.now();
  const stopping = a.stop();
  const took = await eventually('kaos-operator-b to lead', async () => ((await leads(follower)) === 1 ? Date.now() - asked : undefined), { timeoutMs: 60_000, intervalMs: 200, retryErrors: true });
  t.comment(`b leads ${took} ms after a was asked to stop`);
  await eventually('the watch to deliver b\'s Lease', () => holders.seen.at(-1) === 'kaos-operator-b', { timeoutMs: 30_000, intervalMs: 100 });
  await holders.stop();
  const fromA = holders.seen.lastIndexOf('kaos-operator-a');
  const changes = holders.seen.slice(fromA).filter((h, i, all) => i === 0 || h !== all[i - 1]); // renewals repeat a holder
  t.same(changes, ['kaos-operator-a', '', 'kaos-operator-b'], 'a released the Lease (no holder) before b took it: b did not wait out a lease');
  t.equal(await holder(), 'kaos-operator-b', 'the Lease names kaos-operator-b');
  t.equal(await stopping, 0, 'a exits 0 once it has drained');
  await kubectlApply(plane, [modelApi('after', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } })]);
  t.ok(ready(await waitForStatus(client, 'ModelAPI', NS, 'after', ready, 'Ready', 60_000)), 'b reconciles a new object to Ready');
});

// ---- the chart: helm install, then a rolling update under a stream of writes ---------------------
const RELEASE = 'kaos-roll';
const ROLL_NS = 'kaos-roll';
const DEPLOYMENT = `${RELEASE}-kaos-operator`;
const SELECTOR = `app.kubernetes.io/name=kaos-operator,app.kubernetes.io/instance=${RELEASE}`;
const STREAM_NS = 'e2e-roll';
const helm = (args: readonly string[]) => runCommand(join(plane.binDir, 'helm'), [...args, '--kubeconfig', plane.kubeconfigPath], {
  env: { ...process.env, HELM_CACHE_HOME: join(plane.dir, 'helm-cache'), HELM_CONFIG_HOME: join(plane.dir, 'helm-config'), HELM_DATA_HOME: join(plane.dir, 'helm-data') },
  timeoutMs: 120_000,
});
const rolledOut = async (): Promise<void> => {
  const r = await plane.kubectl(['rollout', 'status', `deployment/${DEPLOYMENT}`, '-n', ROLL_NS, '--timeout=300s']);
  if (r.code !== 0) throw new Error(`rollout status: ${r.stderr}${r.stdout}\nthe runner: ${runner?.errors.join('; ') ?? ''}`);
};
/** The release's pods that are not being deleted: name → node. */
const podNodes = async (): Promise<Map<string, string>> => {
  const list = await client.get<{ items: Array<{ metadata: { name: string; deletionTimestamp?: string }; spec: { nodeName?: string } }> }>(`/api/v1/namespaces/${ROLL_NS}/pods?labelSelector=${encodeURIComponent(SELECTOR)}`);
  return new Map(list.items.filter((p) => p.metadata.deletionTimestamp === undefined).map((p) => [p.metadata.name, p.spec.nodeName ?? '']));
};
/** The admission reviews a container has answered (every webhook). */
const reviews = async (o: ContainerOperator): Promise<number> => metricSum(await scrape(o.metricsPort), 'controller_runtime_webhook_requests_total') ?? 0;

/** One object of each kind, valid (the objects a stream writes): `n` makes each create and update differ. */
const STREAM_SPECS: Readonly<Record<KaosKind, (n: number) => Record<string, unknown>>> = {
  ModelAPI: (n) => ({ mode: 'Proxy', proxyConfig: { apiBase: `http://litellm-${n}.example:4000` } }),
  Agent: (n) => ({ modelAPI: 'base', model: 'gpt-4o-mini', config: { description: `revision ${n}` } }),
  MCPServer: (n) => ({ runtime: 'python-string', params: `def echo(text: str) -> str:\n    return text  # ${n}\n` }),
  MemoryStore: (n) => ({
    storage: { type: 'external', external: { connectionSecretRef: { name: 'memory-dsn', key: 'dsn' } } },
    replicas: 1 + (n % 2),
    models: { summarization: { modelAPI: 'base', model: 'gpt-4o-mini' }, embedding: { modelAPI: 'base', model: 'text-embedding-3-small' } },
  }),
  AccessGrant: (n) => ({ subjects: [{ kind: 'User', name: `user-${n}@example.com` }], resources: [{ selector: { matchLabels: { team: 'platform' } } }] }),
};

interface Stream {
  /** Requests answered with success, and the time of the last. */
  ok: number;
  lastOkAt: number;
  /** Every request that failed: what it was and what the API server said. */
  failed: string[];
  stop(): Promise<void>;
}

/**
 * `workers` clients, each creating an object of the next kind, updating its spec and deleting it,
 * over and over, through the API server (and so through both webhooks) until stop().
 */
function startStream(workers: number): Stream {
  let stopping = false;
  const stream: Stream = { ok: 0, lastOkAt: 0, failed: [], stop: async () => { stopping = true; await Promise.all(running); } };
  const call = async (what: string, request: () => Promise<unknown>): Promise<boolean> => {
    try {
      await request();
      stream.ok += 1;
      stream.lastOkAt = Date.now();
      return true;
    } catch (err) {
      stream.failed.push(`${what}: ${String(err)}`);
      await new Promise((resolve) => setTimeout(resolve, 100)); // no busy loop while nothing answers
      return false;
    }
  };
  const worker = async (w: number): Promise<void> => {
    for (let n = 0; !stopping; n++) {
      const kind = KINDS[n % KINDS.length] as KaosKind;
      const base = `/apis/kaos.tools/v1alpha1/namespaces/${STREAM_NS}/${KIND_NAMES[kind].plural}`;
      const name = `w${w}-${n}`;
      const object = { apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name, namespace: STREAM_NS }, spec: STREAM_SPECS[kind](n) };
      if (!(await call(`create ${kind} ${name}`, () => client.create(`${base}`, object, { discardAnswer: true })))) continue;
      await call(`update ${kind} ${name}`, () => client.patch(`${base}/${name}`, { spec: STREAM_SPECS[kind](n + 1) }, 'merge', { discardAnswer: true }));
      await call(`delete ${kind} ${name}`, () => client.delete(`${base}/${name}`));
    }
  };
  const running = Array.from({ length: workers }, (_, w) => worker(w));
  return stream;
}

t.test('helm install: two replicas on two of kwok\'s nodes, serving the webhooks through the chart\'s Service', async (t) => {
  // The containers above leave: the second releases the Lease, and the url-based configurations go.
  await follower.stop();
  for (const kind of ['mutatingwebhookconfiguration', 'validatingwebhookconfiguration'] as const) {
    const r = await plane.kubectl(['delete', kind, CONFIGURATION_NAMES[kind === 'mutatingwebhookconfiguration' ? 'mutating' : 'validating']]);
    t.equal(r.code, 0, `the url-based ${kind} deleted: ${r.stderr}`);
  }
  runner = startPodRunner({ plane, client, engine, namespace: ROLL_NS, selector: SELECTOR, log });
  const install = await helm(['install', RELEASE, join(ROOT, 'chart'), '--namespace', ROLL_NS, '--create-namespace',
    ...imageValues(IMAGE).flatMap((v) => ['--set', v]), '--set', 'certManager.enabled=false',
    '--set-json', `podAnnotations=${JSON.stringify({ [RUN_BY_TEST_ANNOTATION]: 'test' })}`]);
  t.equal(install.code, 0, `helm install: ${install.stderr}`);
  await rolledOut();
  const nodes = await podNodes();
  t.equal(nodes.size, 2, `two pods: ${[...nodes.keys()].join(', ')}`);
  t.equal(new Set(nodes.values()).size, 2, `on two nodes (the chart's default spread): ${[...nodes.values()].join(', ')}`);
  t.ok([...nodes.values()].every((n) => plane.nodes.includes(n)), 'kwok\'s nodes');
  await waitForAdmission(client, 'default', 60_000);
  t.same(runner.errors, [], 'every pod ran');
});

t.test('helm upgrade rolls both replicas while clients write every kind: no request fails', async (t) => {
  if (runner === undefined) throw new Error('no install');
  const pods = runner;
  await kubectlApply(plane, [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: STREAM_NS } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'memory-dsn', namespace: STREAM_NS }, stringData: { dsn: 'postgresql://memory@pgvector:5432/memory' } } as KubeObject,
    { apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'base', namespace: STREAM_NS }, spec: { mode: 'Proxy', proxyConfig: { apiBase: 'http://litellm.example:4000' } } },
  ]);
  const old = [...(await podNodes()).keys()];
  const oldContainers = old.map((name) => pods.pods.get(name)?.container);
  const stream = startStream(2);
  // Stopped whatever happens: a worker left running would go on writing for ever.
  try {
    // The stream is under way, through both replicas, before the upgrade starts.
    await eventually('the stream to run', async () => (stream.ok >= 30 ? true : undefined), { timeoutMs: 120_000, intervalMs: 200 });
    for (const o of oldContainers) t.ok(o !== undefined && (await reviews(o)) > 0, `${o?.podName ?? '?'} answers reviews of the stream`);

    const okAtUpgrade = stream.ok;
    const upgrade = await helm(['upgrade', RELEASE, join(ROOT, 'chart'), '--namespace', ROLL_NS, '--reuse-values', '--set-string', `podAnnotations.rollme=${randomBytes(4).toString('hex')}`]);
    t.equal(upgrade.code, 0, `helm upgrade: ${upgrade.stderr}`);
    await rolledOut();
    // Both old pods deleted and their containers gone, drained: only then is the roll over.
    await eventually('both old containers to exit', async () => (old.every((name) => pods.pods.get(name)?.exitCode !== undefined) ? true : undefined), { timeoutMs: 120_000, intervalMs: 200 });
    // And the stream goes on through the new ones.
    const okAfterRoll = stream.ok;
    t.ok(okAfterRoll > okAtUpgrade, `requests went on during the roll (${okAfterRoll - okAtUpgrade} succeeded from helm upgrade until both old containers had exited)`);
    await eventually('the stream to go on', async () => (stream.ok >= okAfterRoll + 30 ? true : undefined), { timeoutMs: 120_000, intervalMs: 200 });
  } finally {
    await stream.stop();
  }

  t.same(stream.failed, [], `no request failed (${stream.ok} succeeded while both replicas were replaced)`);
  for (const name of old) {
    const pod = pods.pods.get(name);
    t.ok(pod?.stopAskedAt !== undefined, `${name} deleted and sent SIGTERM while the stream ran`);
    t.equal(pod?.exitCode, 0, `${name} exited 0: it drained within its grace period`);
  }
  const now = await podNodes();
  t.equal(now.size, 2, 'two pods again');
  t.same([...now.keys()].filter((name) => old.includes(name)), [], `both replaced: ${old.join(', ')} → ${[...now.keys()].join(', ')}`);
  t.equal(new Set(now.values()).size, 2, `the new ones on two nodes too: ${[...now.values()].join(', ')}`);
  for (const name of now.keys()) {
    const o = pods.pods.get(name)?.container;
    t.ok(o !== undefined && (await reviews(o)) > 0, `${name} answers reviews of the stream`);
  }
  t.same(pods.errors, [], 'every pod ran and stopped');
});
