import { ApiError } from '../../../src/kube/errors.ts';
import t from 'tap';
import { loadConfig } from '../../../src/config/config.ts';
import { CONFIG_HASH_ANNOTATION, POD_SPEC_HASH_ANNOTATION } from '../../../src/render/index.ts';
import { MemoryReconcileContext } from '../../support/memory-reconcile-context.ts';
import { gatewayConfig } from '../render/helpers.ts';
import { deploymentStatus, owner, podSpecOf, reconcile, sampleObject, statusOf, templateAnnotations } from './reconcile-helpers.ts';

const PROXY = sampleObject('4-dev-ollama-proxy-agent.yaml', 'ModelAPI', 'dev-ollama-proxy');
const HOSTED = sampleObject('1-simple-echo-agent.yaml', 'ModelAPI', 'simple-modelapi');
const NS = 'kaos-dev';
const NAME = 'dev-ollama-proxy';

t.test('Proxy sample: ConfigMap, Deployment and Service, owned and labelled; status Pending; then nothing', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos(PROXY);
  t.equal(await reconcile(ctx, 'ModelAPI', NS, NAME), undefined, 'Pending needs no requeue: the Deployment wakes its parent');

  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [
    `apply ConfigMap/${NS}/litellm-config-${NAME}`,
    `apply Deployment/${NS}/modelapi-${NAME}`,
    `apply Service/${NS}/modelapi-${NAME}`,
    `status ModelAPI/${NS}/${NAME}`,
  ], 'config first, then the workload, then status');

  const labels = { app: 'modelapi', modelapi: NAME, 'app.kubernetes.io/managed-by': 'kaos-operator' };
  for (const kind of ['ConfigMap', 'Deployment', 'Service'] as const) {
    const name = kind === 'ConfigMap' ? `litellm-config-${NAME}` : `modelapi-${NAME}`;
    const child = ctx.child(kind, NS, name);
    t.same(child?.metadata?.labels, labels, `${kind} labels`);
    t.same(child?.metadata?.ownerReferences, [owner('ModelAPI', NAME, `uid-${NAME}`)], `${kind} controller ownerReference carries the parent's uid`);
  }
  const deployment = ctx.child('Deployment', NS, `modelapi-${NAME}`);
  t.equal((deployment?.spec as { replicas?: number }).replicas, 1, 'replicas 1 at creation');
  const main = podSpecOf(deployment).containers[0];
  t.equal(main?.name, 'model-api');
  t.same(main?.args, ['--config', '/etc/litellm/config.yaml', '--port', '8000']);
  t.same(main?.env?.map((e) => e.name), ['OPENAI_API_KEY', 'LITELLM_LOG'], 'proxyConfig.env, LITELLM_LOG not repeated');
  t.match(templateAnnotations(deployment)[CONFIG_HASH_ANNOTATION], /^[0-9a-f]{16}$/, 'the ConfigMap content feeds the config hash');
  t.match(String((ctx.child('ConfigMap', NS, `litellm-config-${NAME}`)?.data as Record<string, string>)['config.yaml']), /api_base: "http:\/\/host\.docker\.internal:11434"/);

  const status = statusOf(ctx, 'ModelAPI', NS, NAME);
  t.match(status, {
    phase: 'Pending',
    ready: false,
    endpoint: `http://modelapi-${NAME}.${NS}.svc.cluster.local:8000`,
    message: 'Deployment ready replicas: 0/1',
    observedGeneration: 1,
    deployment: { replicas: 0, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0 },
  });
  t.same((status.conditions as { type: string; status: string }[]).map((c) => `${c.type}=${c.status}`), ['Ready=False', 'Reconciling=True', 'Stalled=False']);

  t.same(ctx.recorded.map((e) => `${e.type} ${e.reason} ${e.note}`), [
    `Normal Created Created ConfigMap litellm-config-${NAME}, Deployment modelapi-${NAME}, Service modelapi-${NAME}`,
  ], 'one Event naming every child created');
  t.equal(ctx.recorded[0]?.regarding.uid, `uid-${NAME}`, 'events are about the parent');
  const info = ctx.lines.filter((l) => l.level === 'info');
  t.equal(info.length, 1, 'one log line');
  t.match(info[0]?.fields, { kind: 'ModelAPI', namespace: NS, name: NAME, changes: [`created ConfigMap/litellm-config-${NAME}`, `created Deployment/modelapi-${NAME}`, `created Service/modelapi-${NAME}`, 'status'] });
  t.type(info[0]?.fields.durationMs, 'number');
  t.notOk(JSON.stringify(info[0]).includes('host.docker.internal'), "never the object's content");

  ctx.clearRecords();
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  t.same(ctx.requests, [], 'converged: zero write requests');
  t.same(ctx.recorded, [], 'and no events');
  t.same(ctx.lines.filter((l) => l.level === 'info'), [], 'and nothing at info level');
});

t.test('the Deployment becoming ready writes the status alone, once', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos(PROXY);
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  const before = statusOf(ctx, 'ModelAPI', NS, NAME);
  ctx.clearRecords();
  ctx.now = () => new Date('2026-01-02T03:05:00Z');
  ctx.setDeploymentStatus(NS, `modelapi-${NAME}`, deploymentStatus(1));
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  t.same(ctx.requests.map((r) => r.verb), ['status']);
  const status = statusOf(ctx, 'ModelAPI', NS, NAME);
  t.match(status, { phase: 'Ready', ready: true, message: 'Deployment ready replicas: 1/1', deployment: { readyReplicas: 1 } });
  const conditions = status.conditions as { type: string; status: string; lastTransitionTime: string }[];
  const prior = before.conditions as { type: string; lastTransitionTime: string }[];
  t.equal(conditions.find((c) => c.type === 'Ready')?.lastTransitionTime, '2026-01-02T03:05:00Z', 'Ready moved');
  t.equal(conditions.find((c) => c.type === 'Stalled')?.lastTransitionTime, prior.find((c) => c.type === 'Stalled')?.lastTransitionTime, 'Stalled did not');

  ctx.clearRecords();
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  t.same(ctx.requests, [], 'then nothing');
});

t.test('Proxy → Hosted prunes the ConfigMap and re-renders ports; the endpoint follows', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos(PROXY);
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  ctx.clearRecords();
  ctx.updateKaos('ModelAPI', NS, NAME, (o) => {
    o.spec = { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } };
  });
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [
    `apply Deployment/${NS}/modelapi-${NAME}`,
    `apply Service/${NS}/modelapi-${NAME}`,
    `delete ConfigMap/${NS}/litellm-config-${NAME}`,
    `status ModelAPI/${NS}/${NAME}`,
  ]);
  t.equal(ctx.child('ConfigMap', NS, `litellm-config-${NAME}`), undefined);
  const deployment = ctx.child('Deployment', NS, `modelapi-${NAME}`);
  t.same(podSpecOf(deployment).containers[0]?.ports?.map((p) => p.containerPort), [11434]);
  t.equal(templateAnnotations(deployment)[CONFIG_HASH_ANNOTATION], undefined, 'no config file, no config hash');
  t.match(statusOf(ctx, 'ModelAPI', NS, NAME), { endpoint: `http://modelapi-${NAME}.${NS}.svc.cluster.local:11434`, observedGeneration: 2 });
  t.same(ctx.recorded.map((e) => `${e.reason} ${e.action} ${e.note}`), [
    `Updated Apply Updated Deployment modelapi-${NAME}, Service modelapi-${NAME}`,
    `Deleted Prune Deleted ConfigMap litellm-config-${NAME}: no longer desired`,
  ]);
  t.match(ctx.lines.find((l) => l.level === 'info')?.fields.changes, [`updated Deployment/modelapi-${NAME}`, `updated Service/modelapi-${NAME}`, `deleted ConfigMap/litellm-config-${NAME}`, 'status']);

  ctx.clearRecords();
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  t.same(ctx.requests, []);
});

t.test('Hosted sample: pull-model init container, the Ollama port, no ConfigMap', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos(HOSTED);
  await reconcile(ctx, 'ModelAPI', 'kaos-simple', 'simple-modelapi');
  t.same(ctx.childKeys(), ['Deployment/kaos-simple/modelapi-simple-modelapi', 'Service/kaos-simple/modelapi-simple-modelapi']);
  const pod = podSpecOf(ctx.child('Deployment', 'kaos-simple', 'modelapi-simple-modelapi'));
  t.same(pod.initContainers?.map((c) => c.name), ['pull-model']);
  t.same(pod.containers[0]?.env?.map((e) => e.name), ['OLLAMA_DEBUG']);
  t.same(pod.volumes?.map((v) => v.name), ['ollama-data']);
  t.equal(statusOf(ctx, 'ModelAPI', 'kaos-simple', 'simple-modelapi').endpoint, 'http://modelapi-simple-modelapi.kaos-simple.svc.cluster.local:11434');
});

t.test('configYaml.fromSecretKeyRef: the Secret resourceVersion is the config hash input', async (t) => {
  const ctx = new MemoryReconcileContext();
  const withSecret = { ...PROXY, spec: { mode: 'Proxy', proxyConfig: { configYaml: { fromSecretKeyRef: { name: 'litellm', key: 'config.yaml' } } } } };
  ctx.putKaos(withSecret);
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  const deploymentName = `modelapi-${NAME}`;
  t.equal(templateAnnotations(ctx.child('Deployment', NS, deploymentName))[CONFIG_HASH_ANNOTATION], undefined, 'Secret not seen yet: no config hash');
  t.equal(ctx.child('ConfigMap', NS, `litellm-config-${NAME}`), undefined, 'the Secret is mounted, no ConfigMap');

  ctx.setSecret(NS, 'litellm', '501');
  ctx.clearRecords();
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [`apply Deployment/${NS}/${deploymentName}`], 'the Deployment alone changes');
  const first = templateAnnotations(ctx.child('Deployment', NS, deploymentName));
  t.match(first[CONFIG_HASH_ANNOTATION], /^[0-9a-f]{16}$/);

  ctx.clearRecords();
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  t.same(ctx.requests, [], 'same resourceVersion: nothing');

  ctx.setSecret(NS, 'litellm', '777');
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  const second = templateAnnotations(ctx.child('Deployment', NS, deploymentName));
  t.not(second[CONFIG_HASH_ANNOTATION], first[CONFIG_HASH_ANNOTATION], 'a Secret change rolls the pods');
  t.equal(second[POD_SPEC_HASH_ANNOTATION], first[POD_SPEC_HASH_ANNOTATION], 'through the config hash, not the pod spec');
});

t.test('HTTPRoute with the gateway; pruned when the gateway is turned off; never written while its CRD is not served', async (t) => {
  const ctx = new MemoryReconcileContext({ config: gatewayConfig });
  ctx.putKaos(PROXY);
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  t.ok(ctx.child('HTTPRoute', NS, `modelapi-${NAME}`), 'HTTPRoute modelapi-<name>');
  t.same(ctx.child('HTTPRoute', NS, `modelapi-${NAME}`)?.metadata?.ownerReferences, [owner('ModelAPI', NAME, `uid-${NAME}`)]);

  ctx.config = loadConfig({});
  ctx.clearRecords();
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [`delete HTTPRoute/${NS}/modelapi-${NAME}`]);
  t.same(ctx.recorded.map((e) => e.note), [`Deleted HTTPRoute modelapi-${NAME}: no longer desired`]);

  const noCrd = new MemoryReconcileContext({ config: gatewayConfig, routesCrdServed: false });
  noCrd.putKaos(PROXY);
  await reconcile(noCrd, 'ModelAPI', NS, NAME);
  t.notOk(noCrd.requests.some((r) => r.target.startsWith('HTTPRoute/')), 'no HTTPRoute apply');
});

t.test('legacy finalizer: removed (alone) only from an object being deleted', async (t) => {
  const ctx = new MemoryReconcileContext();
  const finalizers = ['example.com/keep', 'kaos.tools/modelapi-finalizer'];
  ctx.putKaos({ ...PROXY, metadata: { ...PROXY.metadata, finalizers } });
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  t.same(ctx.kaos('ModelAPI', NS, NAME)?.metadata?.finalizers, finalizers, 'a live object keeps its finalizers');
  t.notOk(ctx.requests.some((r) => r.verb === 'finalizers'));

  ctx.updateKaos('ModelAPI', NS, NAME, (o) => {
    o.metadata = { ...o.metadata, deletionTimestamp: '2026-01-02T03:04:05Z' };
  });
  ctx.clearRecords();
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  t.same(ctx.requests, [{ verb: 'finalizers', target: `ModelAPI/${NS}/${NAME}`, body: ['kaos.tools/modelapi-finalizer'] }], 'no apply, no prune, no status');
  t.same(ctx.kaos('ModelAPI', NS, NAME)?.metadata?.finalizers, ['example.com/keep']);
  t.match(ctx.lines.find((l) => l.level === 'info')?.fields.changes, ['removed finalizer kaos.tools/modelapi-finalizer']);

  ctx.clearRecords();
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  t.same(ctx.requests, [], 'being deleted without our finalizer: nothing');
});

t.test('absent from the cache: nothing at all', async (t) => {
  const ctx = new MemoryReconcileContext();
  t.equal(await reconcile(ctx, 'ModelAPI', NS, NAME), undefined);
  t.same(ctx.requests, []);
  t.same(ctx.lines, []);
});

t.test('a failed write: one Warning event per reconcile, and the error reaches the queue', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos(PROXY);
  const boom = new Error('etcdserver: request timed out');
  ctx.failWith = (r) => (r.verb === 'apply' && r.target.startsWith('Deployment/') ? boom : undefined);
  await t.rejects(reconcile(ctx, 'ModelAPI', NS, NAME), boom);
  const warnings = ctx.recorded.filter((e) => e.type === 'Warning');
  t.same(warnings.map((e) => `${e.reason} ${e.action} ${e.note}`), ['ReconcileFailed Reconcile etcdserver: request timed out']);
  t.same(ctx.kaos('ModelAPI', NS, NAME)?.status, undefined, 'no status written after a failure');
  t.match(ctx.lines.find((l) => l.level === 'info')?.fields, { changes: [`created ConfigMap/litellm-config-${NAME}`], err: 'etcdserver: request timed out' }, 'writes made before the failure are logged');

  ctx.clearRecords();
  ctx.failWith = undefined;
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  t.same(ctx.requests.map((r) => r.verb), ['apply', 'apply', 'status'], 'the retry picks up where it failed (the ConfigMap is not re-applied)');

  const aborted = new MemoryReconcileContext();
  aborted.putKaos(PROXY);
  const controller = new AbortController();
  aborted.failWith = () => {
    controller.abort();
    return new Error('aborted');
  };
  await t.rejects(reconcile(aborted, 'ModelAPI', NS, NAME, controller.signal));
  t.same(aborted.recorded, [], 'an aborted reconcile (lost lease) records no event');
});

t.test('a status write refused with 409 is retried quietly: the cache was behind, nothing is wrong', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos(PROXY);
  ctx.failWith = (r) => (r.verb === 'status' ? new ApiError(409, 'Conflict', 'the object has been modified') : undefined);
  t.same(await reconcile(ctx, 'ModelAPI', NS, NAME), { requeue: true }, 'back after its backoff, not counted as an error');
  t.equal(ctx.recorded.filter((e) => e.type === 'Warning').length, 0, 'no Warning Event for the user');
});

t.test('apiKey from a Secret: its absence is the status, its version enters the config hash', async (t) => {
  const ctx = new MemoryReconcileContext();
  const withKey = {
    ...PROXY,
    spec: { mode: 'Proxy', proxyConfig: { models: ['openai/*'], apiBase: 'https://api.example', apiKey: { valueFrom: { secretKeyRef: { name: 'openai', key: 'key' } } } } },
  };
  ctx.putKaos(withKey);
  t.equal(await reconcile(ctx, 'ModelAPI', NS, NAME), undefined, "the Secret's creation wakes it: nothing polled");
  t.match(statusOf(ctx, 'ModelAPI', NS, NAME), { phase: 'Failed', message: 'Failed to resolve Secret openai: secrets "openai" not found' });
  t.same(ctx.childKeys(), [], 'no pod that cannot start');

  ctx.setSecret(NS, 'openai', '10');
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  const deploymentName = `modelapi-${NAME}`;
  const first = templateAnnotations(ctx.child('Deployment', NS, deploymentName));
  t.match(statusOf(ctx, 'ModelAPI', NS, NAME), { phase: 'Pending' });
  const env = podSpecOf(ctx.child('Deployment', NS, deploymentName)).containers[0]?.env;
  t.same(env?.slice(0, 2), [
    { name: 'PROXY_API_BASE', value: 'https://api.example' },
    { name: 'PROXY_API_KEY', valueFrom: { secretKeyRef: { key: 'key', name: 'openai' } } },
  ]);

  ctx.setSecret(NS, 'openai', '11');
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  const second = templateAnnotations(ctx.child('Deployment', NS, deploymentName));
  t.not(second[CONFIG_HASH_ANNOTATION], first[CONFIG_HASH_ANNOTATION], 'a new key rolls the pods');
  t.equal(second[POD_SPEC_HASH_ANNOTATION], first[POD_SPEC_HASH_ANNOTATION], 'through the config hash');
});

t.test('apiKey from a ConfigMap: its absence is the status, its version enters the config hash', async (t) => {
  const ctx = new MemoryReconcileContext();
  const withKey = (configMapKeyRef: Record<string, unknown>) => ({
    ...PROXY,
    spec: { mode: 'Proxy', proxyConfig: { models: ['openai/*'], apiBase: 'https://api.example', apiKey: { valueFrom: { configMapKeyRef } } } },
  });
  ctx.putKaos(withKey({ name: 'openai', key: 'key' }));
  ctx.setSecret(NS, 'openai', '5'); // a Secret of the same name is not the ConfigMap
  t.equal(await reconcile(ctx, 'ModelAPI', NS, NAME), undefined, "the ConfigMap's creation wakes it: nothing polled");
  t.match(statusOf(ctx, 'ModelAPI', NS, NAME), { phase: 'Failed', message: 'Failed to resolve ConfigMap openai: configmaps "openai" not found' });
  t.same(ctx.childKeys(), [], 'no pod that cannot start');

  ctx.setConfigMap(NS, 'openai', '10');
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  const deploymentName = `modelapi-${NAME}`;
  const first = templateAnnotations(ctx.child('Deployment', NS, deploymentName));
  t.match(statusOf(ctx, 'ModelAPI', NS, NAME), { phase: 'Pending' });
  const env = podSpecOf(ctx.child('Deployment', NS, deploymentName)).containers[0]?.env;
  t.same(env?.[1], { name: 'PROXY_API_KEY', valueFrom: { configMapKeyRef: { key: 'key', name: 'openai' } } });

  ctx.setConfigMap(NS, 'openai', '11');
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  const second = templateAnnotations(ctx.child('Deployment', NS, deploymentName));
  t.not(second[CONFIG_HASH_ANNOTATION], first[CONFIG_HASH_ANNOTATION], 'a new key rolls the pods');
  t.equal(second[POD_SPEC_HASH_ANNOTATION], first[POD_SPEC_HASH_ANNOTATION], 'through the config hash');

  ctx.setConfigMap(NS, 'openai', undefined);
  ctx.putKaos(withKey({ name: 'openai', key: 'key', optional: true }));
  await reconcile(ctx, 'ModelAPI', NS, NAME);
  t.match(statusOf(ctx, 'ModelAPI', NS, NAME), { phase: 'Pending' }, 'optional: a missing ConfigMap is no failure');
});
