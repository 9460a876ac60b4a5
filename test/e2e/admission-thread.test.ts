// The webhooks on a thread of their own (src/admission-thread/thread.ts), through the real entry
// point and a real kube-apiserver: /metrics reports both threads' event-loop delay and GC pauses
// under prom-client's names, the admission thread's view of the cache follows it (a new object is
// known, a deleted one is not), with WEBHOOK_THREAD=false a replica answers the same requests
// with the very same AdmissionReview answers — patches, warnings and denials — from the main
// thread, and a replica that starts on the main thread moves admission to its thread once the
// cluster holds WEBHOOK_THREAD_OBJECTS objects, refusing no call on the way.
//
// Run `npm run build` first: the operator process is dist/main.js (and dist/admission-worker.js).
import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applySetupObjects, startOperator, waitForAdmission, type OperatorProcess } from '../../scripts/local-stack.ts';
import { renderWebhookConfigurations } from '../../src/admission/webhook-configs.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { ApiError } from '../../src/kube/errors.ts';
import { eventually } from '../support/poll.ts';
import { OPERATOR_ENV, useStack } from './support/stack.ts';

type Json = Record<string, unknown>;

// The stack's operator serves admission from its thread from the start.
const live = useStack(t, { ...OPERATOR_ENV, WEBHOOK_THREAD_OBJECTS: '0' });

/**
 * A second replica of the operator (controller off) with `env` over the stack's, the webhooks
 * registered at it until the test ends, then back at the stack's operator.
 */
async function replica(t: Test, tag: string, env: Record<string, string>): Promise<OperatorProcess> {
  const { plane, client, operatorKubeconfig, certDir, operator } = live();
  const started = await startOperator({
    kubeconfig: operatorKubeconfig,
    certDir,
    logFile: join(plane.dir, `operator-${tag}.log`),
    env: { ...OPERATOR_ENV, CONTROLLER_ENABLED: 'false', ...env },
  });
  const register = (port: number): Promise<void> =>
    applySetupObjects(client, renderWebhookConfigurations({ url: `https://127.0.0.1:${port}`, caBundle: readFileSync(join(certDir, 'ca.crt'), 'utf8') }));
  t.teardown(async () => {
    await register(operator.webhookPort);
    await started.stop();
  });
  await register(started.webhookPort);
  await waitForAdmission(client);
  return started;
}

const kaos = (kind: string, name: string, namespace: string, spec: Json, metadata: Json = {}): Json =>
  ({ apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name, namespace, ...metadata }, spec });
const path = (plural: string, namespace: string): string => `/apis/kaos.tools/v1alpha1/namespaces/${namespace}/${plural}`;

async function scrape(operator: OperatorProcess): Promise<string> {
  return (await fetch(`http://127.0.0.1:${operator.metricsPort}/metrics`)).text();
}

async function namespace(name: string): Promise<void> {
  await live().client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

t.test('/metrics: both threads\' event-loop delay and GC pauses, the webhook metrics from the admission thread', async (t) => {
  const { client, operator } = live();
  await namespace('metrics');
  await client.create(path('modelapis', 'metrics'), kaos('ModelAPI', 'm', 'metrics', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }));
  // Two scrapes: prom-client measures nodejs_eventloop_lag_seconds at a scrape for the next one.
  await scrape(operator);
  const text = await scrape(operator);
  for (const name of ['nodejs_eventloop_lag_p50_seconds', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_eventloop_lag_max_seconds', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
    t.match(text, new RegExp(`^${name} \\S+$`, 'm'), `${name}: the main thread's`);
    t.match(text, new RegExp(`^${name}\\{thread="admission"\\} \\S+$`, 'm'), `${name}: the admission thread's`);
    t.equal(text.match(new RegExp(`^# TYPE ${name} `, 'gm'))?.length, 1, `${name}: one family`);
  }
  t.match(text, /^nodejs_gc_duration_seconds_bucket\{le="0\.002",kind="\w+"\} \d+$/m, 'GC pauses of the main thread, in fine buckets');
  t.match(text, /^nodejs_gc_duration_seconds_count\{kind="\w+",thread="admission"\} \d+$/m, 'GC pauses of the admission thread');
  t.match(text, /^controller_runtime_webhook_requests_total\{webhook="\/mutate-kaos-tools-v1alpha1-modelapi",code="200"\} [1-9]\d*$/m, 'the webhook metrics count what the thread served');
  t.match(text, /^kaos_operator_webhook_certificate_expiry_seconds \d+$/m, 'the certificate the thread serves');
  t.match(text, /^process_resident_memory_bytes \d+$/m, 'process-wide metrics once, from the main thread');
  t.notMatch(text, /^process_resident_memory_bytes\{thread/m);
});

t.test('the admission thread\'s view follows the cache: a new ModelAPI is known, a deleted one is not', async (t) => {
  const { client } = live();
  await namespace('view');
  const agent = (name: string): Json => kaos('Agent', name, 'view', { modelAPI: 'm' });
  await client.create(path('modelapis', 'view'), kaos('ModelAPI', 'm', 'view', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }));
  await client.create(path('agents', 'view'), agent('a'));
  await client.delete(`${path('modelapis', 'view')}/m`);
  // The deletion reaches the view through the main thread's watch; then the reference is refused.
  const refused = await eventually('an Agent naming the deleted ModelAPI is refused', async () => {
    try {
      await client.create(path('agents', 'view'), agent('b'), { dryRun: true });
      return undefined;
    } catch (err) {
      return err instanceof ApiError && err.code === 422 ? err : undefined;
    }
  }, { timeoutMs: 30_000, intervalMs: 200 });
  t.match(refused.message, /spec\.modelAPI: Not found: "m"/, 'refused for the missing ModelAPI');
});

t.test('WEBHOOK_THREAD=false: the same answers, served from the main thread', async (t) => {
  const { plane, client } = live();
  // An admin client of its own, to see the warnings the API server passes on from the webhooks.
  let warned: string[] = [];
  const warnedClient = await KubeClient.fromKubeConfig(plane.kubeconfigPath, { onWarning: (warning) => warned.push(warning) });
  t.teardown(() => warnedClient.close());
  await namespace('same');
  await client.create(path('modelapis', 'same'), kaos('ModelAPI', 'm', 'same', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }));
  const requests: Array<[string, Json]> = [
    ['agents', kaos('Agent', 'plain', 'same', { modelAPI: 'm', config: { memory: {} } })],
    ['agents', kaos('Agent', 'peer', 'same', { modelAPI: 'm', agentNetwork: { access: ['not-yet'] } })],
    ['agents', kaos('Agent', 'warned', 'same', { modelAPI: 'nope' }, { annotations: { 'kaos.tools/reference-policy': 'Warn' } })],
    ['agents', kaos('Agent', 'refused', 'same', { modelAPI: 'nope' })],
    ['modelapis', kaos('ModelAPI', 'p', 'same', { mode: 'Proxy', proxyConfig: { apiBase: 'http://ollama:11434', model: 'ollama/llama3.2' } })],
    ['mcpservers', kaos('MCPServer', 's', 'same', { type: 'python-runtime', config: { tools: { fromPackage: 'mcp-server-fetch' } } })],
    ['mcpservers', kaos('MCPServer', 'bad', 'same', { type: 'python-runtime', config: { tools: {} } })],
  ];
  // What a user sees of each: the stored object (defaults, annotations) or the error, and the warnings.
  const answers = async (): Promise<unknown[]> => {
    const out: unknown[] = [];
    for (const [plural, object] of requests) {
      warned = [];
      try {
        const made = await warnedClient.create<Json>(path(plural, 'same'), object, { dryRun: true });
        const { metadata, ...rest } = made;
        // What each dry run stamps anew: its uid and times.
        const { uid: _uid, creationTimestamp: _created, managedFields: _fields, ...meta } = metadata as Json;
        out.push({ object: { ...rest, metadata: meta }, warned });
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        out.push({ code: err.code, message: err.message, warned });
      }
    }
    return out;
  };
  const threaded = await answers();

  const onMain = await replica(t, 'main-thread', { WEBHOOK_THREAD: 'false' });
  const served = async (): Promise<number> => Number(/^controller_runtime_webhook_requests_total\{webhook="\/validate-kaos-tools-v1alpha1-agent",code="200"\} (\d+)$/m.exec(await scrape(onMain))?.[1] ?? 0);
  const before = await served();
  t.same(await answers(), threaded, 'every answer the same');
  t.ok((await served()) > before, 'and the main-thread replica is the one that answered');
  t.notMatch(await scrape(onMain), /thread="admission"/, 'no admission thread to report');
});

t.test('WEBHOOK_THREAD_OBJECTS: admission starts on the main thread and moves to its thread at the threshold, every call answered', async (t) => {
  const { client } = live();
  await namespace('grow');
  await client.create(path('modelapis', 'grow'), kaos('ModelAPI', 'base', 'grow', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }));
  // Every KAOS object the cluster holds now; the replica below moves once three more exist.
  let objects = 0;
  for (const plural of ['agents', 'modelapis', 'mcpservers', 'memorystores']) {
    objects += (await client.list(`/apis/kaos.tools/v1alpha1/${plural}`)).items.length;
  }
  const grown = await replica(t, 'grow', { WEBHOOK_THREAD_OBJECTS: String(objects + 3) });
  t.notMatch(await scrape(grown), /thread="admission"/, 'below the threshold: the main thread serves');
  t.match(await scrape(grown), /^controller_runtime_webhook_requests_total\{webhook="\/mutate-kaos-tools-v1alpha1-modelapi",code="200"\} [1-9]\d*$/m, 'and counts what it serves');

  // Calls all through the move: a dry-run create of an Agent, one after another.
  let calling = true;
  const answers: string[] = [];
  const caller = (async () => {
    while (calling) {
      try {
        const made = await client.create<Json>(path('agents', 'grow'), kaos('Agent', 'probe', 'grow', { modelAPI: 'base' }), { dryRun: true });
        answers.push((made.spec as Json | undefined)?.waitForDependencies === undefined ? 'not defaulted' : 'ok');
      } catch (err) {
        answers.push(err instanceof ApiError ? `${err.code} ${err.message}` : String(err));
      }
    }
  })();
  for (let i = 0; i < 3; i++) {
    await client.create(path('modelapis', 'grow'), kaos('ModelAPI', `m${i}`, 'grow', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }));
  }
  await eventually('admission moved to its thread', () => /"admission moved to its own thread"/.test(grown.log()), { timeoutMs: 30_000, intervalMs: 100 });
  const served = answers.length;
  await eventually('calls answered from the thread', () => answers.length >= served + 20, { timeoutMs: 30_000, intervalMs: 100 });
  calling = false;
  await caller;
  t.same([...new Set(answers)], ['ok'], `every one of ${answers.length} calls answered and defaulted, before, during and after the move`);
  const text = await scrape(grown);
  t.match(text, /^nodejs_heap_size_used_bytes\{thread="admission"\} \S+$/m, 'the thread reports its metrics');
  t.match(text, /^controller_runtime_webhook_requests_total\{webhook="\/validate-kaos-tools-v1alpha1-agent",code="200"\} [1-9]\d*$/m, 'and counts what it serves');
  t.equal(text.match(/^# TYPE controller_runtime_webhook_requests_total /gm)?.length, 1, 'one family of webhook metrics, the thread\'s');
});
