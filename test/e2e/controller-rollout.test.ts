// The controller in front of real rollouts: the local control plane's Deployment and ReplicaSet
// controllers, scheduler and kwok (test/cluster/) run every pod, and nothing writes a Deployment's
// status by hand. A spec or LiteLLM config change rolls out a new ReplicaSet and the parent goes
// Reconciling → Ready without claiming Ready while old pods still serve; pods that never become
// ready leave it not ready with the Deployment's reason, then Stalled past progressDeadlineSeconds,
// until the spec is fixed; a deleted pod is replaced with a truthful status and no write that
// changes nothing; a dependency going unready moves a Ready Agent back to Waiting, with one Event;
// a new Agent's status is written once per visible state; a bulk create with forward peers
// writes each Agent's Deployment once.
import t, { type Test } from 'tap';
import type { KubeObject } from '../../src/api/lookup.ts';
import { OPERATOR_USER } from '../../src/cluster/rbac.ts';
import { startLocalStack, tail } from '../../scripts/local-stack.ts';
import { NEVER_READY, setPodsReady } from './support/kwok.ts';
import {
  auditMark, auditSince, condition, containerEnv, describeRequest, getDeployment, kubectl, kubectlApply, statusIs, waitForStatus, writesBy,
  type KaosView,
} from './support/lifecycle.ts';
import { watchObject, type Seen } from './support/watch.ts';
import { eventually } from '../support/poll.ts';

const stack = await startLocalStack({ log: (line) => t.comment(line), audit: { users: [OPERATOR_USER] } });
t.teardown(async () => {
  if (!t.passing()) t.comment(`operator log (tail):\n${tail(stack.operator.log(), 40)}`);
  await stack.stop();
});
const { plane, client } = stack;
const auditLog = plane.logs.audit ?? '';

const NS = 'e2e-rollout';
const kaos = (kind: string, name: string, spec: Record<string, unknown>): KubeObject =>
  ({ apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name, namespace: NS }, spec });
const READY = 'Deployment ready replicas: 1/1';
const LONG = 90_000;

await kubectlApply(plane, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }]);

interface PodView { metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string }; status?: { conditions?: { type: string; status: string }[] } }

async function pods(selector: string): Promise<PodView[]> {
  return (JSON.parse(await kubectl(plane, ['get', 'pods', '-n', NS, '-l', selector, '-o', 'json'])) as { items: PodView[] }).items;
}
const podReady = (p: PodView): boolean => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
const hashOf = (p: PodView): string => p.metadata.labels?.['pod-template-hash'] ?? '';
const phaseOf = (s: Seen): string => String(s.status.phase);
const readyCondition = (s: Seen): Record<string, unknown> | undefined =>
  (s.status.conditions as Record<string, unknown>[] | undefined)?.find((c) => c.type === 'Ready');

/**
 * Applies `changed` to a Ready parent whose pods carry `selector`, and follows the rollout: every
 * version of the parent from a watch, and at the first Ready of the new generation, the pods of
 * the old template still serving (ready, not terminating) — there must be none.
 */
async function rollOut(t: Test, resource: string, kind: string, name: string, selector: string, changed: KubeObject): Promise<void> {
  const before = await waitForStatus(client, kind as 'Agent', NS, name, (o) => statusIs(o, 'Ready', READY), 'Ready before the change', LONG);
  const oldHashes = new Set((await pods(selector)).map(hashOf));
  t.equal(oldHashes.size, 1, 'one ReplicaSet\'s pods before the change');
  const watch = watchObject(plane, resource, NS, name);
  try {
    await eventually('the watch to start', () => watch.seen.length > 0, { timeoutMs: 10_000, intervalMs: 50 });
    await kubectlApply(plane, [changed]);
    const generation = (before.metadata.generation ?? 0) + 1;
    const summary = (): string => watch.seen.map((s) => `${s.generation}/${String(s.status.observedGeneration)} ${phaseOf(s)} "${String(s.status.message)}"`).join(' → ');
    const done = await eventually(`${kind} ${name} Ready at generation ${generation}`, async () => {
      const ready = watch.seen.find((s) => s.generation === generation && s.status.observedGeneration === generation && phaseOf(s) === 'Ready');
      if (ready === undefined) return undefined;
      // Read after that status was written: an old pod serving now was serving then.
      const serving = (await pods(selector)).filter((p) => oldHashes.has(hashOf(p)) && podReady(p) && p.metadata.deletionTimestamp === undefined);
      return { ready, serving };
    }, { timeoutMs: LONG, intervalMs: 100 }).catch((err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}; seen: ${summary()}; pods: ${JSON.stringify(pods)}`);
    });
    t.same(done.serving.map((p) => p.metadata.name), [], 'when it is Ready again, no pod of the old template still serves');
    const after = await pods(selector);
    t.ok(after.every((p) => !oldHashes.has(hashOf(p))), `a new ReplicaSet's pods (${after.map((p) => p.metadata.name).join(', ')})`);

    const ofNew = watch.seen.filter((s) => s.status.observedGeneration === generation);
    const reconciling = ofNew.find((s) => phaseOf(s) !== 'Ready');
    t.ok(reconciling, `a status of generation ${generation} before Ready: ${ofNew.map((s) => `${phaseOf(s)} "${String(s.status.message)}"`).join(' → ')}`);
    if (reconciling !== undefined) {
      t.match(reconciling.status, { phase: 'Pending', ready: false }, 'Pending while the new pods roll out');
      t.match((reconciling.status.conditions as unknown[]), [{ type: 'Ready', status: 'False', reason: 'DeploymentRollingOut', observedGeneration: generation }, { type: 'Reconciling', status: 'True', observedGeneration: generation }, { type: 'Stalled', status: 'False' }], 'kstatus: Reconciling, not Ready');
    }
    t.ok(ofNew.indexOf(reconciling ?? done.ready) < ofNew.indexOf(done.ready), 'Reconciling came before Ready');
    t.match(done.ready.status, { phase: 'Ready', ready: true, message: READY, observedGeneration: generation });
    t.match(readyCondition(done.ready), { status: 'True', reason: 'DeploymentReady', observedGeneration: generation });
    // Every Ready of the new generation reports a Deployment with no old replica left.
    const early = ofNew.filter((s) => phaseOf(s) === 'Ready').map((s) => s.status.deployment as { replicas?: number; updatedReplicas?: number } | undefined)
      .filter((d) => (d?.replicas ?? 0) > (d?.updatedReplicas ?? 0));
    t.same(early, [], 'no Ready status of the new generation while its Deployment still had old replicas');
  } finally {
    await watch.stop();
  }
}

t.test('dependencies', async () => {
  await kubectlApply(plane, [
    kaos('ModelAPI', 'llm', { mode: 'Proxy', proxyConfig: { model: 'ollama/smollm2:135m', apiBase: 'http://ollama.example:11434' } }),
    kaos('MCPServer', 'tools', { type: 'python-runtime', config: { tools: { fromPackage: 'test-mcp-echo-server' } } }),
  ]);
});

t.test('a ModelAPI\'s LiteLLM config change rolls out a new ReplicaSet: Reconciling, then Ready, never Ready on old pods', async (t) => {
  const config = async (): Promise<string> => kubectl(plane, ['get', 'configmap', 'litellm-config-llm', '-n', NS, '-o', 'jsonpath={.data}']);
  await waitForStatus(client, 'ModelAPI', NS, 'llm', (o) => statusIs(o, 'Ready', READY), 'Ready', LONG);
  const configBefore = await config();
  await rollOut(t, 'modelapi', 'ModelAPI', 'llm', 'modelapi=llm',
    kaos('ModelAPI', 'llm', { mode: 'Proxy', proxyConfig: { model: 'ollama/smollm2:135m', apiBase: 'http://ollama-2.example:11434' } }));
  t.not(await config(), configBefore, 'the LiteLLM ConfigMap changed');
});

t.test('an Agent spec change rolls out a new ReplicaSet: Reconciling, then Ready, never Ready on old pods', async (t) => {
  await kubectlApply(plane, [kaos('Agent', 'a', { modelAPI: 'llm', mcpServers: ['tools'], config: { instructions: 'Be brief.' } })]);
  await rollOut(t, 'agent', 'Agent', 'a', 'agent=a', kaos('Agent', 'a', { modelAPI: 'llm', mcpServers: ['tools'], config: { instructions: 'Be thorough.' } }));
});

t.test('pods that never become ready: rolling out until the deadline, then Stalled with the Deployment\'s reason, recovered by fixing the spec', async (t) => {
  await kubectlApply(plane, [kaos('Agent', 'stuck', { modelAPI: 'llm', container: NEVER_READY })]);
  const pending = await waitForStatus(client, 'Agent', NS, 'stuck', (o) => statusIs(o, 'Pending', 'Deployment ready replicas: 0/1 (rolling out)'), 'Pending, its pod not ready', LONG);
  t.match(condition(pending, 'Ready'), { status: 'False', reason: 'DeploymentRollingOut' }, 'a first rollout that has not made a pod available yet');
  t.match(condition(pending, 'Reconciling'), { status: 'True' });
  t.match(condition(pending, 'Stalled'), { status: 'False' });
  // The Deployment's default deadline is 600 s; a cluster admin may shorten it. The operator does not
  // own the field (server-side apply), so the change stays.
  await kubectl(plane, ['patch', 'deployment', 'agent-stuck', '-n', NS, '--type=merge', '-p', JSON.stringify({ spec: { progressDeadlineSeconds: 5 } })]);
  const stalled = await waitForStatus(client, 'Agent', NS, 'stuck', (o) => o.status?.phase === 'Failed' && o.status.observedGeneration === o.metadata.generation, 'Failed once the deadline passed', LONG);
  t.match(stalled.status?.message, /^Deployment ready replicas: 0\/1: ReplicaSet "agent-stuck-[a-z0-9]+" has timed out progressing\.$/);
  t.match(condition(stalled, 'Stalled'), { status: 'True', reason: 'ProgressDeadlineExceeded' }, 'kstatus Stalled');
  t.match(condition(stalled, 'Reconciling'), { status: 'False' });
  t.match(condition(stalled, 'Ready'), { status: 'False', reason: 'ProgressDeadlineExceeded' });

  await kubectlApply(plane, [kaos('Agent', 'stuck', { modelAPI: 'llm' })]);
  const fixed = await waitForStatus(client, 'Agent', NS, 'stuck', (o) => statusIs(o, 'Ready', READY), 'Ready once the spec is fixed', LONG);
  t.match(condition(fixed, 'Stalled'), { status: 'False' });
  t.match(condition(fixed, 'Ready'), { status: 'True', reason: 'DeploymentReady' });
});

t.test('a deleted pod is replaced; the parent\'s status stays truthful, and the operator writes nothing that changes nothing', async (t) => {
  await kubectlApply(plane, [kaos('Agent', 'p', { modelAPI: 'llm' })]);
  await waitForStatus(client, 'Agent', NS, 'p', (o) => statusIs(o, 'Ready', READY), 'Ready', LONG);
  const [pod] = await pods('agent=p');
  if (pod === undefined) throw new Error('no pod');
  const watch = watchObject(plane, 'agent', NS, 'p');
  const mark = auditMark(auditLog);
  try {
    await eventually('the watch to start', () => watch.seen.length > 0, { timeoutMs: 10_000, intervalMs: 50 });
    await kubectl(plane, ['delete', 'pod', pod.metadata.name, '-n', NS, '--wait=true']);
    const replacement = await eventually('a replacement pod, ready', async () => (await pods('agent=p')).find((p) => p.metadata.name !== pod.metadata.name && podReady(p)), { timeoutMs: LONG, intervalMs: 200 });
    t.not(replacement.metadata.name, pod.metadata.name, `replaced by ${replacement.metadata.name}`);
    await waitForStatus(client, 'Agent', NS, 'p', (o) => statusIs(o, 'Ready', READY) && (o.status as { deployment?: { readyReplicas?: number } }).deployment?.readyReplicas === 1, 'Ready again', LONG);
    // Let late writes land before counting.
    await eventually('a quiet second', async () => {
      const n = watch.seen.length;
      await new Promise((r) => setTimeout(r, 1000));
      return watch.seen.length === n;
    }, { timeoutMs: 30_000, intervalMs: 0 });
  } finally {
    await watch.stop();
  }
  const changes = watch.seen.slice(1);
  for (const s of changes) {
    const d = s.status.deployment as { replicas: number; readyReplicas: number; updatedReplicas: number };
    const truthful = phaseOf(s) === 'Ready' ? d.readyReplicas > 0 && d.replicas <= d.updatedReplicas : true;
    t.ok(truthful, `${phaseOf(s)} "${String(s.status.message)}" agrees with its Deployment (${JSON.stringify(d)})`);
    t.equal(s.status.message, phaseOf(s) === 'Ready' ? READY : s.status.message, 'Ready says so in api.md\'s words');
  }
  // Writes that went through (a 409 — the cache behind the operator's own previous write — stores
  // nothing and is retried on a fresher cache).
  const statusWrites = writesBy(auditSince(auditLog, mark), OPERATOR_USER)
    .filter((e) => e.objectRef?.resource === 'agents' && e.objectRef.name === 'p' && (e.responseStatus?.code ?? 0) < 300);
  t.same(statusWrites.map((e) => e.objectRef?.subresource), statusWrites.map(() => 'status'), 'only status writes to the Agent');
  t.equal(statusWrites.length, changes.length, `each status write changed the object (${statusWrites.map(describeRequest).join('; ') || 'none'}; ${changes.length} new versions)`);
  t.equal((await getDeployment(client, NS, 'agent-p'))?.metadata.generation, 1, 'the Deployment itself was not touched');
});

t.test('a dependency going unready moves a Ready Agent back to Waiting, with one Event; it recovers', async (t) => {
  // The contract's Agent reconcile says: waitForDependencies and the ModelAPI not ready → Waiting,
  // `ModelAPI is not ready`. It does not say "only before the first Deployment", so it holds on
  // every reconcile, as a user reading the status expects: an Agent whose model cannot answer is
  // not Ready. Its Deployment is left as it is (nothing applied or pruned while waiting).
  await kubectlApply(plane, [kaos('Agent', 'w', { modelAPI: 'llm' })]);
  await waitForStatus(client, 'Agent', NS, 'w', (o) => statusIs(o, 'Ready', READY), 'Ready', LONG);
  const agentDeployment = await getDeployment(client, NS, 'agent-w');

  // The ModelAPI's pod starts failing its readiness probe (a kwok Stage, by annotation).
  await setPodsReady(plane, NS, 'modelapi=llm', false);
  await waitForStatus(client, 'ModelAPI', NS, 'llm', (o) => o.status?.phase === 'Pending', 'Pending, its pod not ready', LONG);
  const waiting: KaosView = await waitForStatus(client, 'Agent', NS, 'w', (o) => statusIs(o, 'Waiting', 'ModelAPI is not ready'), 'Waiting on its ModelAPI', LONG);
  t.match(condition(waiting, 'Reconciling'), { status: 'True', reason: 'ModelAPINotReady' });
  t.equal((waiting.status as { deployment?: { readyReplicas?: number } }).deployment?.readyReplicas, 1, 'its own pod still runs, and the status says so');
  t.equal((await getDeployment(client, NS, 'agent-w'))?.metadata.resourceVersion, agentDeployment?.metadata.resourceVersion, 'its Deployment is left as it is');

  await setPodsReady(plane, NS, 'modelapi=llm', true);
  await waitForStatus(client, 'Agent', NS, 'w', (o) => statusIs(o, 'Ready', READY), 'Ready again', LONG);

  const events = JSON.parse(await kubectl(plane, ['get', 'events', '-n', NS, '--field-selector', 'involvedObject.kind=Agent,involvedObject.name=w', '-o', 'json'])) as { items: { reason?: string; type?: string; message?: string; count?: number; series?: { count?: number } }[] };
  const dependencyEvents = events.items.filter((e) => e.reason === 'ModelAPINotReady');
  t.same(dependencyEvents.map((e) => [e.type, e.message, e.series?.count ?? e.count ?? 1]), [['Normal', 'ModelAPI is not ready', 1]], 'one Normal Event for the one transition to Waiting');
});

t.test('a new Agent\'s status is written once per visible state: rolling out, then Ready', async (t) => {
  await waitForStatus(client, 'ModelAPI', NS, 'llm', (o) => statusIs(o, 'Ready', READY), 'its ModelAPI Ready first', LONG);
  const mark = auditMark(auditLog);
  await kubectlApply(plane, [kaos('Agent', 'once', { modelAPI: 'llm' })]);
  await waitForStatus(client, 'Agent', NS, 'once', (o) => statusIs(o, 'Ready', READY), 'Ready', LONG);
  // The steps between (the template observed, the pod created, scheduled, started) each change the
  // Deployment's status, and none of them is a new visible state of the Agent.
  const statusWrites = writesBy(auditSince(auditLog, mark), OPERATOR_USER)
    .filter((e) => e.objectRef?.resource === 'agents' && e.objectRef.name === 'once' && e.objectRef.subresource === 'status' && (e.responseStatus?.code ?? 0) < 300);
  t.ok(statusWrites.length >= 1 && statusWrites.length <= 2, `one or two status writes (Pending "(rolling out)" unless the pod was ready first, then Ready): ${statusWrites.map(describeRequest).join('; ')}`);
});

t.test('a bulk create with forward peers: every Agent\'s Deployment is written once, with every peer that exists', async (t) => {
  // One List, in order: a ModelAPI whose pods are not ready yet, then Agents each naming the next
  // two in agentNetwork.access, which do not exist yet when it is created. The ModelAPI is made
  // ready only once every Agent exists: "the objects it names exist by the time its dependencies
  // are ready", as in a GitOps apply whose dependencies take longer to start than it takes to
  // create everything.
  const n = 12;
  const name = (i: number): string => `bulk-${i}`;
  const agents = Array.from({ length: n }, (_, i) => kaos('Agent', name(i), {
    modelAPI: 'bulk-llm', mcpServers: ['tools'], waitForDependencies: true, agentNetwork: { access: [name(i + 1), name(i + 2)] },
  }));
  const llm = (spec: Record<string, unknown>): KubeObject => kaos('ModelAPI', 'bulk-llm', { mode: 'Proxy', proxyConfig: { model: 'ollama/smollm2:135m', apiBase: 'http://ollama.example:11434' }, ...spec });
  await kubectlApply(plane, [llm({ container: NEVER_READY }), ...agents]);
  await waitForStatus(client, 'Agent', NS, name(n - 1), (o) => statusIs(o, 'Waiting', 'ModelAPI is not ready'), 'the last Agent Waiting on the ModelAPI', LONG);
  await kubectlApply(plane, [llm({})]);
  for (let i = 0; i < n; i++) {
    await waitForStatus(client, 'Agent', NS, name(i), (o) => statusIs(o, 'Ready', READY), `${name(i)} Ready`, LONG);
  }
  for (let i = 0; i < n; i++) {
    const deployment = await getDeployment(client, NS, `agent-${name(i)}`);
    t.equal(deployment?.metadata.generation, 1, `agent-${name(i)}: one spec write, one rollout`);
    const peers = [name(i + 1), name(i + 2)].filter((p) => Number(p.slice('bulk-'.length)) < n);
    const list = containerEnv(deployment, 'agent').find((e) => e.startsWith('PEER_AGENTS='));
    t.equal(list, peers.length === 0 ? undefined : `PEER_AGENTS=${[...peers].sort().join(',')}`, `agent-${name(i)} wired to ${peers.join(', ') || 'no peer'} (a peer that never exists is left out)`);
  }
});
