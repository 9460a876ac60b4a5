// Two operator processes against one control plane, both with LEADER_ELECT=true and distinct
// POD_NAMEs, with the real Lease timings (15 s lease, 10 s renew deadline, 2 s retry): both
// serve the webhooks, only the Lease holder reconciles (and its leader_election_master_status
// says so), and when the leader is SIGKILLed (no release) the other takes over once the Lease
// expires. How long that takes past the 15 s is printed, not asserted: it is the loaded machine's
// retry scheduling, cache sync and rollout as much as ours.
import { readFile } from 'node:fs/promises';
import https from 'node:https';
import { join } from 'node:path';
import t from 'tap';
import type { KubeObject } from '../../src/api/lookup.ts';
import { webhookPath } from '../../src/admission/webhook-paths.ts';
import { renderWebhookConfigurations } from '../../src/admission/webhook-configs.ts';
import { LEASE, resourcePath } from '../../src/kube/paths.ts';
import type { Lease } from '../../src/kube/leader-election.ts';
import { OPERATOR_IDENTITY } from '../../src/cluster/rbac.ts';
import { applySetupObjects, startLocalStack, tail, waitForAdmission, type OperatorProcess } from '../../scripts/local-stack.ts';
import { admissionReview } from '../bench/reviews.ts';
import {
  getDeployment, killHard, kubectlApply, metricSum, scrape, startAnotherOperator, waitForStatus, type KaosView,
} from './support/lifecycle.ts';
import { eventually } from '../support/poll.ts';

const stack = await startLocalStack({ log: (line) => t.comment(line), operatorEnv: { LEADER_ELECT: 'true', POD_NAME: 'replica-a' } });
const { plane, client } = stack;
const a = stack.operator;
let b: OperatorProcess | undefined;
t.teardown(async () => {
  if (!t.passing()) {
    t.comment(`replica-a log (tail):\n${tail(a.log(), 30)}`);
    t.comment(`replica-b log (tail):\n${tail(b?.log() ?? '', 30)}`);
  }
  await b?.stop();
  await stack.stop();
});

const NS = 'e2e-ha';
const kaos = (kind: string, name: string, spec: Record<string, unknown>): KubeObject =>
  ({ apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name, namespace: NS }, spec });
const leaderStatus = async (operator: OperatorProcess): Promise<number | undefined> => metricSum(await scrape(operator.metricsPort), 'leader_election_master_status');
const reconciles = async (operator: OperatorProcess): Promise<number> => metricSum(await scrape(operator.metricsPort), 'controller_runtime_reconcile_total') ?? 0;
const leaseHolder = async (): Promise<string | undefined> =>
  (await client.get<Lease>(resourcePath(LEASE, { namespace: OPERATOR_IDENTITY.namespace, name: 'kaos-operator' }))).spec?.holderIdentity;

// replica-a started first and holds the Lease; replica-b joins. The webhooks are pointed at
// replica-b, as a Service would send them to any ready replica: the objects created below are
// admitted by the follower, and keep being admitted once the leader is gone.
await eventually('replica-a to lead', async () => (await leaderStatus(a)) === 1, { timeoutMs: 30_000, intervalMs: 200, retryErrors: true });
b = await startAnotherOperator(stack, 'b', { LEADER_ELECT: 'true', POD_NAME: 'replica-b' });
const follower = b;
const ca = await readFile(join(stack.certDir, 'ca.crt'), 'utf8');
await applySetupObjects(client, renderWebhookConfigurations({ url: `https://127.0.0.1:${follower.webhookPort}`, caBundle: ca }));
await waitForAdmission(client);
await kubectlApply(plane, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }]);

/** One AdmissionReview straight to a replica's webhook server. */
function review(operator: OperatorProcess, path: string, body: string): Promise<{ status: number; response: { allowed?: boolean; patchType?: string; status?: { code?: number } } }> {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port: operator.webhookPort, path, method: 'POST', ca, servername: 'localhost',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, timeout: 10_000,
    }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => { text += c; });
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, response: (JSON.parse(text) as { response: never }).response });
        } catch (err) {
          reject(new Error(`${path} on :${operator.webhookPort} answered ${res.statusCode}: ${text.slice(0, 200)} (${String(err)})`));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

t.test('both replicas answer the webhooks, leader or not', async (t) => {
  const good = kaos('ModelAPI', 'probe', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } });
  const bad = kaos('ModelAPI', 'probe', { mode: 'Hosted' });
  for (const [name, operator] of [['replica-a (leader)', a], ['replica-b (follower)', follower]] as const) {
    const mutated = await review(operator, webhookPath('mutate', 'ModelAPI'), admissionReview('ModelAPI', good, 1));
    t.equal(mutated.status, 200, `${name}: mutating webhook answers`);
    t.equal(mutated.response.allowed, true);
    t.equal(mutated.response.patchType, 'JSONPatch', `${name}: with its defaults as a patch`);
    const refused = await review(operator, webhookPath('validate', 'ModelAPI'), admissionReview('ModelAPI', bad, 2));
    t.equal(refused.status, 200, `${name}: validating webhook answers`);
    t.equal(refused.response.allowed, false, `${name}: refuses a Hosted ModelAPI without a model`);
    t.equal(refused.response.status?.code, 422);
  }
});

/** A status from the Deployment at the current generation: Pending until its pod (on a kwok node) is ready, then Ready. */
const reconciled = (o: KaosView): boolean =>
  o.status?.observedGeneration === o.metadata.generation && (o.status?.phase === 'Pending' || o.status?.phase === 'Ready') && o.status.message?.startsWith('Deployment ready replicas: ') === true;

t.test('only the leader reconciles, and its metric says so', async (t) => {
  t.equal(await leaderStatus(a), 1, 'leader_election_master_status 1 on replica-a');
  t.equal(await leaderStatus(follower), 0, '0 on replica-b');
  t.equal(await leaseHolder(), 'replica-a', 'the Lease names replica-a');
  await kubectlApply(plane, [kaos('ModelAPI', 'first', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } })]);
  await waitForStatus(client, 'ModelAPI', NS, 'first', reconciled, 'reconciled');
  t.ok(await getDeployment(client, NS, 'modelapi-first'), 'its Deployment exists');
  t.ok((await reconciles(a)) >= 1, `replica-a reconciled (${await reconciles(a)} reconciles)`);
  t.equal(await reconciles(follower), 0, 'replica-b reconciled nothing');
});

t.test('SIGKILL the leader: the other takes over once the Lease expires and reconciles a new object', async (t) => {
  await killHard(a);
  const killed = Date.now();
  // Admitted by replica-b, which still only follows: the Lease has up to 15 s left.
  await kubectlApply(plane, [kaos('ModelAPI', 'second', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } })]);
  // A bound for a takeover that never comes (four lease durations), not a benchmark.
  const deadline = killed + 60_000;
  await waitForStatus(client, 'ModelAPI', NS, 'second', reconciled, 'reconciled by the new leader', Math.max(0, deadline - Date.now()));
  t.comment(`replica-b reconciled the new object ${Date.now() - killed} ms after the leader was killed (lease 15 s, retry 2 s)`);
  t.ok(await getDeployment(client, NS, 'modelapi-second'), 'its Deployment exists');
  t.equal(await leaderStatus(follower), 1, 'leader_election_master_status 1 on replica-b');
  t.equal(await leaseHolder(), 'replica-b', 'the Lease names replica-b');
  t.ok((await reconciles(follower)) >= 1, 'replica-b reconciles now');
});
