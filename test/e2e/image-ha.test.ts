// Two containers of the operator's image, as the chart's two replicas run (test/support/chart-pod.ts:
// leader election on, each its own POD_NAME): one leads — it holds the Lease, reconciles, and says
// so in leader_election_master_status — while both serve the webhooks through the API server.
// `<engine> stop` of the leader releases the Lease, and the other leads and reconciles within
// seconds, not a lease duration. Never skipped: an engine that cannot build or run the image
// fails this file with the engine's own message.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { KubeObject } from '../../src/api/lookup.ts';
import { renderWebhookConfigurations } from '../../src/admission/webhook-configs.ts';
import type { Lease } from '../../src/kube/leader-election.ts';
import { LEASE, resourcePath } from '../../src/kube/paths.ts';
import { applySetupObjects, startLocalStack, tail, waitForAdmission } from '../../scripts/local-stack.ts';
import { eventually } from '../support/poll.ts';
import { CHART_NAMESPACE, CHART_OLLAMA_IMAGE, prepareImage, startContainerOperator, type ContainerOperator } from './support/container.ts';
import { kubectlApply, metricSum, scrape, waitForStatus } from './support/lifecycle.ts';

// `npm run image` waits for another file's build, or builds cold: minutes beyond the usual 10.
t.setTimeout(40 * 60_000);

const log = (line: string): void => t.comment(line);
const { engine, deployment } = await prepareImage(log);
const stack = await startLocalStack({ log, launch: (o) => startContainerOperator(engine, deployment, { ...o, podName: 'kaos-operator-a' }) });
const a = stack.operator as ContainerOperator;
let b: ContainerOperator | undefined;
t.teardown(async () => {
  if (!t.passing()) for (const o of [a, b]) t.comment(`${o?.podName ?? ''} log (tail):\n${tail(o?.log() ?? '', 30)}`);
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
  const asked = Date.now();
  const stopping = a.stop();
  const took = await eventually('kaos-operator-b to lead', async () => ((await leads(follower)) === 1 ? Date.now() - asked : undefined), { timeoutMs: 30_000, intervalMs: 200, retryErrors: true });
  t.comment(`b leads ${took} ms after a was asked to stop`);
  // a renewed the Lease at most 2 s (the retry period) before it was stopped: had it not released
  // it, b would wait out the rest of the 15 s lease duration.
  t.ok(took < 10_000, 'b leads within seconds: a released the Lease');
  t.equal(await holder(), 'kaos-operator-b', 'the Lease names kaos-operator-b');
  t.equal(await stopping, 0, 'a exits 0 once it has drained');
  await kubectlApply(plane, [modelApi('after', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } })]);
  t.ok(ready(await waitForStatus(client, 'ModelAPI', NS, 'after', ready, 'Ready', 60_000)), 'b reconciles a new object to Ready');
});
