// The Agent's dependency flow against a real control plane, the operator started through its real
// entry point under its own ServiceAccount: Waiting on a ModelAPI, then on an MCPServer,
// until they are Ready; then a Deployment; Ready when that Deployment reports a ready replica, as
// `kubectl wait --for=condition=Ready` sees it; a missing ModelAPI is Failed until it is created;
// a peer created after its coordinator is wired into the coordinator without touching it.
// Pods run on kwok's fake nodes: each step is held back by a spec whose pods never become ready
// (support/kwok.ts) and released by fixing that spec, which rolls out pods that do.
import t from 'tap';
import type { KubeObject } from '../../src/api/lookup.ts';
import { startLocalStack, tail } from '../../scripts/local-stack.ts';
import {
  condition, containerEnv, getDeployment, getKaos, kubectl, kubectlApply, sleep, statusIs, waitForStatus,
} from './support/lifecycle.ts';
import { NEVER_READY } from './support/kwok.ts';
import { eventually } from '../support/poll.ts';

const stack = await startLocalStack({ log: (line) => t.comment(line) });
t.teardown(async () => {
  if (!t.passing()) t.comment(`operator log (tail):\n${tail(stack.operator.log(), 40)}`);
  await stack.stop();
});
const { plane, client } = stack;

const NS = 'e2e-deps';
const WARN_NS = 'e2e-deps-warn';
const kaos = (kind: string, namespace: string, name: string, spec: Record<string, unknown>): KubeObject =>
  ({ apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name, namespace }, spec });

await kubectlApply(plane, [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
  // Agents here may name a ModelAPI that does not exist yet (a warning, not a denial), as a
  // GitOps tool applying out of order would.
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: WARN_NS, labels: { 'kaos.tools/reference-policy': 'Warn' } } },
]);

// Created first, so that by the time its ModelAPI appears (after the dependency flow below) it
// has been failing for a while and its retry backoff has grown to seconds (5 ms · 2^n).
const orphanCreated = Date.now();
await kubectlApply(plane, [kaos('Agent', WARN_NS, 'y', { modelAPI: 'ghost' })]);

t.test('dependency flow: Waiting on the ModelAPI, then the MCPServer, then a Deployment, then Ready', async (t) => {
  const llm = { mode: 'Proxy', proxyConfig: { model: 'ollama/smollm2:135m', apiBase: 'http://ollama.example:11434' } };
  const tools = { type: 'python-runtime', config: { tools: { fromPackage: 'test-mcp-echo-server' } } };
  const x = { modelAPI: 'llm', mcpServers: ['tools'] };
  // Each starts with pods that never become ready; `kubectl apply` without `container` fixes it.
  await kubectlApply(plane, [kaos('ModelAPI', NS, 'llm', { ...llm, container: NEVER_READY }), kaos('MCPServer', NS, 'tools', { ...tools, container: NEVER_READY })]);
  await kubectlApply(plane, [kaos('Agent', NS, 'x', { ...x, container: NEVER_READY })]);

  const waitingModel = await waitForStatus(client, 'Agent', NS, 'x', (a) => statusIs(a, 'Waiting', 'ModelAPI is not ready'), 'Waiting on the ModelAPI');
  t.equal(waitingModel.status?.ready, false);
  t.match(condition(waitingModel, 'Ready'), { status: 'False', reason: 'ModelAPINotReady', message: 'ModelAPI is not ready' });
  t.match(condition(waitingModel, 'Reconciling'), { status: 'True', reason: 'ModelAPINotReady' });
  t.match(condition(waitingModel, 'Stalled'), { status: 'False' });
  t.equal(await getDeployment(client, NS, 'agent-x'), undefined, 'no Deployment while waiting');

  // The ModelAPI gets its own Deployment, whose pod runs but is not ready: Pending; then fixed.
  await waitForStatus(client, 'ModelAPI', NS, 'llm', (m) => statusIs(m, 'Pending', 'Deployment ready replicas: 0/1 (rolling out)'), 'Pending on its Deployment');
  await kubectlApply(plane, [kaos('ModelAPI', NS, 'llm', llm)]);
  const llmReady = await waitForStatus(client, 'ModelAPI', NS, 'llm', (m) => statusIs(m, 'Ready', 'Deployment ready replicas: 1/1'), 'Ready');
  t.equal(llmReady.status?.endpoint, `http://modelapi-llm.${NS}.svc.cluster.local:8000`);

  const waitingTools = await waitForStatus(client, 'Agent', NS, 'x', (a) => statusIs(a, 'Waiting', 'MCPServer tools is not ready'), 'Waiting on the MCPServer');
  t.match(condition(waitingTools, 'Ready'), { status: 'False', reason: 'MCPServerNotReady' });
  t.match(condition(waitingTools, 'Reconciling'), { status: 'True' });
  t.equal(await getDeployment(client, NS, 'agent-x'), undefined, 'still no Deployment');

  await waitForStatus(client, 'MCPServer', NS, 'tools', (m) => statusIs(m, 'Pending', 'Deployment ready replicas: 0/1 (rolling out)'), 'Pending on its Deployment');
  await kubectlApply(plane, [kaos('MCPServer', NS, 'tools', tools)]);

  const pending = await waitForStatus(client, 'Agent', NS, 'x', (a) => statusIs(a, 'Pending', 'Deployment ready replicas: 0/1 (rolling out)'), 'Pending on its own Deployment');
  const deployment = await getDeployment(client, NS, 'agent-x');
  t.ok(deployment, 'the Agent has its Deployment once both dependencies are Ready');
  const env = containerEnv(deployment, 'agent');
  t.ok(env.includes(`MODEL_API_URL=http://modelapi-llm.${NS}.svc.cluster.local:8000`), 'wired to the ModelAPI');
  t.ok(env.includes(`MCP_SERVER_tools_URL=http://mcpserver-tools.${NS}.svc.cluster.local:8000`), 'wired to the MCPServer');
  // Not ready while its first pod is on its way: one rolling-out state, whatever step it is at.
  t.match(condition(pending, 'Ready'), { status: 'False', reason: 'DeploymentRollingOut' });
  t.match(condition(pending, 'Reconciling'), { status: 'True' });

  // What a user (or a CD pipeline) runs: it must return 0 once the fixed spec's pod is ready.
  const waiting = plane.kubectl(['wait', '--for=condition=Ready', `agent/x`, '-n', NS, '--timeout=60s'], { timeoutMs: 90_000 });
  await sleep(500);
  await kubectlApply(plane, [kaos('Agent', NS, 'x', x)]);
  const waited = await waiting;
  t.equal(waited.code, 0, `kubectl wait returns 0 (${waited.stdout.trim()}${waited.stderr.trim()})`);

  const ready = await waitForStatus(client, 'Agent', NS, 'x', (a) => statusIs(a, 'Ready', 'Deployment ready replicas: 1/1'), 'Ready');
  t.equal(ready.status?.ready, true);
  t.equal(ready.status?.endpoint, `http://agent-x.${NS}.svc.cluster.local:8000`);
  t.same(ready.status?.linkedResources, { modelapi: 'llm' });
  t.match(condition(ready, 'Ready'), { status: 'True', reason: 'DeploymentReady', message: 'Deployment ready replicas: 1/1' });
  t.match(condition(ready, 'Reconciling'), { status: 'False' });
  t.match(condition(ready, 'Stalled'), { status: 'False' });
  // Stalled was False from the first status on: its lastTransitionTime never moved.
  t.equal(condition(ready, 'Stalled')?.lastTransitionTime, condition(waitingModel, 'Stalled')?.lastTransitionTime, 'Stalled kept its lastTransitionTime');
  t.comment(`kubectl get: ${(await kubectl(plane, ['get', 'agents,modelapis,mcpservers', '-n', NS])).trim()}`);
});

t.test('a missing ModelAPI: Failed with the API server\'s words, and the Agent proceeds once it is created', async (t) => {
  const failedMessage = 'Failed to resolve ModelAPI: modelapis.kaos.tools "ghost" not found';
  const failed = await waitForStatus(client, 'Agent', WARN_NS, 'y', (a) => statusIs(a, 'Failed', failedMessage), 'Failed');
  t.equal(failed.status?.ready, false);
  // Not terminal: creating the ModelAPI fixes it, so kstatus tools see "in progress", not "stalled".
  t.match(condition(failed, 'Ready'), { status: 'False', reason: 'ModelAPIUnresolved', message: failedMessage });
  t.match(condition(failed, 'Reconciling'), { status: 'True' });
  t.match(condition(failed, 'Stalled'), { status: 'False' });
  t.equal(await getDeployment(client, WARN_NS, 'agent-y'), undefined, 'no Deployment');

  // Create the ModelAPI inside a gap of the retry schedule that is longer than the deadline
  // below, so that only the ModelAPI's creation (the dependency trigger) can wake the Agent in time.
  const deadlineMs = 5000;
  const goAt = quietStart(Date.now() - orphanCreated, deadlineMs + 2000);
  t.comment(`Agent y created ${Date.now() - orphanCreated} ms ago; creating its ModelAPI at ${goAt} ms, between two backoff retries`);
  await sleep(Math.max(0, orphanCreated + goAt - Date.now()));
  // Its pods never become ready, so Waiting is where the Agent stays: a loaded machine that
  // rolled the ModelAPI out within the deadline would otherwise carry the Agent on to Ready
  // between two polls.
  await kubectlApply(plane, [kaos('ModelAPI', WARN_NS, 'ghost', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' }, container: NEVER_READY })]);
  const created = Date.now();
  const moved = await waitForStatus(client, 'Agent', WARN_NS, 'y', (a) => statusIs(a, 'Waiting', 'ModelAPI is not ready'), 'Waiting after its ModelAPI appeared', deadlineMs);
  t.comment(`the Agent moved from Failed to Waiting ${Date.now() - created} ms after its ModelAPI was created`);
  t.match(condition(moved, 'Reconciling'), { status: 'True', reason: 'ModelAPINotReady' });
  t.equal(failed.metadata.generation, moved.metadata.generation, 'the Agent itself was not changed');
});

t.test('a peer created after its coordinator is wired into its PEER_AGENTS with no change to the coordinator', async (t) => {
  // llm is Ready (first test); the coordinator names a peer that does not exist yet (a warning).
  await kubectlApply(plane, [kaos('Agent', NS, 'coordinator', { modelAPI: 'llm', agentNetwork: { access: ['worker-1'] } })]);
  await waitForStatus(client, 'Agent', NS, 'coordinator', (a) => statusIs(a, 'Ready', 'Deployment ready replicas: 1/1'), 'Ready');
  const before = await getKaos(client, 'Agent', NS, 'coordinator');
  const envBefore = containerEnv(await getDeployment(client, NS, 'agent-coordinator'), 'agent');
  t.notOk(envBefore.some((e) => e.startsWith('PEER_AGENTS=')), 'no PEER_AGENTS while the peer is missing');

  await kubectlApply(plane, [kaos('Agent', NS, 'worker-1', { modelAPI: 'llm' })]);
  const peerEndpoint = `http://agent-worker-1.${NS}.svc.cluster.local:8000`;
  const env = await eventually('PEER_AGENTS=worker-1 in the coordinator\'s Deployment', async () => {
    const e = containerEnv(await getDeployment(client, NS, 'agent-coordinator'), 'agent');
    return e.includes('PEER_AGENTS=worker-1') ? e : undefined;
  }, { timeoutMs: 30_000, intervalMs: 200, retryErrors: true });
  t.ok(env.includes(`PEER_AGENT_WORKER_1_CARD_URL=${peerEndpoint}`), 'the peer\'s card URL, from its spec (wired in as soon as it exists)');
  t.equal(env.indexOf(`PEER_AGENT_WORKER_1_CARD_URL=${peerEndpoint}`), env.indexOf('PEER_AGENTS=worker-1') + 1, 'right after PEER_AGENTS');
  const peer = await waitForStatus(client, 'Agent', NS, 'worker-1', (a) => a.status?.endpoint !== undefined, 'its status.endpoint');
  t.equal(peer.status?.endpoint, peerEndpoint, 'the same URL as the peer\'s status.endpoint');
  const after = await getKaos(client, 'Agent', NS, 'coordinator');
  t.equal(after?.metadata.generation, before?.metadata.generation, 'the coordinator\'s spec was not touched');
});

/**
 * The earliest time (ms after the Agent's creation, not before `elapsedMs`) that starts a window
 * of `windowMs` free of the queue's backoff retries: 5 ms · 2^n after each failure, i.e. the n-th
 * retry at about 5·(2^(n+1) − 1) ms, give or take the first reconcile's delay and each run's time
 * (up to `slackMs` later, never earlier).
 */
function quietStart(elapsedMs: number, windowMs: number, slackMs = 1500): number {
  for (let n = 0; n < 40; n++) {
    const retry = 5 * (2 ** (n + 1) - 1);
    const next = 5 * (2 ** (n + 2) - 1);
    const start = Math.max(elapsedMs, retry + slackMs);
    // A margin before the next retry too: a wake-up by the Agent's own status write counts as one
    // more failure, which moves the schedule a few milliseconds earlier.
    if (start + windowMs <= next - 500) return start;
  }
  throw new Error('no quiet window');
}
