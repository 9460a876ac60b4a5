// Server-side apply of rendered children against a real kube-apiserver: what the API server
// stores after an apply holds every applied field (so the controller's next pass makes no write),
// an apply of what is held changes nothing, and holdsAppliedFields sees every change that an
// apply would undo — an edit of an owned field, an owned field no longer desired, a reordered
// list — while what others own (replicas after a scale, a label) is left alone. Pruning never
// deletes a same-named replacement. Never skipped: if the control plane cannot start, this fails.
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { eventually } from '../support/poll.ts';
import { loadConfig } from '../../src/config/config.ts';
import { applyIntent, type ObjectLike } from '../../src/kube/apply.ts';
import { FIELD_MANAGER, applyChild, ensureChild, holdsAppliedFields, pruneOwned } from '../../src/cluster/child-apply.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { isNotFound } from '../../src/kube/errors.ts';
import { DEPLOYMENT, NAMESPACE, SERVICE, resourcePath } from '../../src/kube/paths.ts';
import { kaosPath } from '../../src/cluster/kaos-resources.ts';
import { childrenOf, renderAgent, renderModelAPI, type AgentInput, type Child, type Deployment, type ModelAPIInput } from '../../src/render/index.ts';
import { startControlPlane } from '../cluster/control-plane.ts';

const NS = 'e2e-apply';
const CRDS = fileURLToPath(new URL('../../crds/', import.meta.url));
const config = loadConfig({});

const plane = await startControlPlane({ log: (line) => t.comment(line) });
const client = await KubeClient.fromKubeConfig(plane.kubeconfigPath);
t.teardown(async () => {
  client.close();
  await plane.stop();
});
const crds = await plane.kubectl(['apply', '-f', CRDS]);
if (crds.code !== 0) throw new Error(`installing ${CRDS} failed: ${crds.stderr}`);
const established = await plane.kubectl(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
if (established.code !== 0) throw new Error(`CRDs not established: ${established.stderr}`);
await client.create(resourcePath(NAMESPACE), { metadata: { name: NS } });

/** Objects as the API server returns them, read loosely in assertions. */
type Obj = Record<string, any>;

/** Real parents (the garbage collector runs: children of a missing owner would vanish). */
async function createParent<T extends { metadata?: object }>(kind: 'Agent' | 'ModelAPI', object: T): Promise<T> {
  const created = await client.create<{ metadata: { uid: string } }>(kaosPath(kind, { namespace: NS }), {
    apiVersion: 'kaos.tools/v1alpha1',
    kind,
    ...object,
  });
  return { ...object, metadata: { ...object.metadata, uid: created.metadata.uid } };
}

const read = (child: ObjectLike): Promise<Obj> => client.get<Obj>(childPathOf(child));
/**
 * The child once nothing but us will write it: a Deployment's pods run on the control plane's
 * kwok nodes, so the Deployment controller writes its status until the rollout is complete.
 */
const settled = (child: ObjectLike): Promise<Obj> => child.kind !== 'Deployment' ? read(child) : eventually(`${child.metadata?.name ?? ''} rolled out`, async () => {
  const d = await read(child);
  const progressing = (d.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Progressing');
  return d.status?.observedGeneration === d.metadata.generation && progressing?.reason === 'NewReplicaSetAvailable' && d.status?.availableReplicas === d.spec.replicas ? d : undefined;
}, { timeoutMs: 60_000, intervalMs: 200 });
function childPathOf(child: ObjectLike): string {
  const type = child.kind === 'Deployment' ? DEPLOYMENT : child.kind === 'Service' ? SERVICE : { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
  return resourcePath(type, { namespace: NS, name: child.metadata?.name ?? '' });
}

const modelAPI = await createParent<ModelAPIInput>('ModelAPI', {
  metadata: { name: 'llm', namespace: NS },
  spec: {
    mode: 'Proxy',
    proxyConfig: { apiBase: 'http://ollama.example:11434', model: 'ollama/smollm2:135m', env: [{ name: 'LITELLM_LOG', value: 'INFO' }] },
    container: { resources: { limits: { cpu: '0.5', memory: '1024Mi' }, requests: { cpu: 0.25 } } },
  },
});
const agent = await createParent<AgentInput>('Agent', {
  metadata: { name: 'a1', namespace: NS },
  spec: {
    modelAPI: 'llm',
    agentNetwork: { expose: true },
    config: { description: 'e2e', env: [{ name: 'EMPTY', value: '' }, { name: 'KEY', valueFrom: { secretKeyRef: { name: 'k', key: 'v', optional: true } } }] },
    podSpec: { containers: [{ name: 'agent', ports: [{ containerPort: 9090, name: 'metrics' }], volumeMounts: [{ name: 'scratch', mountPath: '/scratch', readOnly: false }] }], volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '0.5Gi' } }] },
  },
});
const modelAPIChildren = childrenOf(renderModelAPI(modelAPI, {}, config));
const agentChildren = childrenOf(
  renderAgent(agent, { modelAPI: { endpoint: 'http://modelapi-llm.e2e-apply.svc.cluster.local:8000' }, mcpServers: [], peers: [] }, config),
);

t.test('rendered children, applied and read back, hold every applied field; a second apply writes nothing', async (t) => {
  const all: Child[] = [...modelAPIChildren, ...agentChildren];
  t.same(all.map((c) => c.kind).sort(), ['ConfigMap', 'Deployment', 'Deployment', 'Service', 'Service']);
  for (const desired of all) {
    const what = `${desired.kind} ${desired.metadata.name}`;
    const first = await ensureChild<Obj>(client, desired, undefined);
    t.equal(first.action, 'created', `${what} created`);
    const live = await settled(desired);
    t.ok(live.metadata.managedFields.some((e: { manager: string; operation: string }) => e.manager === FIELD_MANAGER && e.operation === 'Apply'), `${what}: applied by kaos-operator`);
    t.ok(holdsAppliedFields(live, applyIntent(desired, true)), `${what}: the next pass would make no write`);
    t.ok(holdsAppliedFields(live, desired), `${what}: holds the creation intent too`);
    t.equal((await ensureChild(client, desired, live)).action, 'unchanged', `${what}: ensureChild skips it`);
    // The premise of skipping: applying what is held changes nothing on the server.
    const again = await applyChild<Obj>(client, desired);
    t.equal(again.metadata.resourceVersion, live.metadata.resourceVersion, `${what}: an apply of what is held is a no-op`);
    if (desired.kind === 'Deployment') {
      // Without replicas, an apply only gives up our ownership of it (holdsAppliedFields does
      // not count that as a reason to write): the object itself stays as it is.
      const released = await applyChild<Obj>(client, applyIntent(desired, true));
      t.same(released.spec, live.spec, `${what}: an apply without replicas changes no field`);
      t.notOk(
        released.metadata.managedFields.some((e: { manager: string; fieldsV1?: { 'f:spec'?: Record<string, unknown> } }) => e.manager === FIELD_MANAGER && e.fieldsV1?.['f:spec']?.['f:replicas'] !== undefined),
        `${what}: …and after it, replicas is no longer ours`,
      );
      t.ok(holdsAppliedFields(released, applyIntent(desired, true)));
      await applyChild(client, desired); // back to the state a creation leaves
    }
  }
  const cpu = (await read(modelAPIChildren.find((c) => c.kind === 'Deployment') as Child)).spec.template.spec.containers[0].resources;
  t.same(cpu, { limits: { cpu: '500m', memory: '1Gi' }, requests: { cpu: '250m' } }, 'quantities are stored canonicalized, and still held');
});

const agentDeployment = agentChildren.find((c): c is Deployment => c.kind === 'Deployment') as Deployment;

t.test('an edit of an owned field by someone else is seen, and one apply puts it back', async (t) => {
  const path = childPathOf(agentDeployment);
  await client.patch(path, { metadata: { labels: { app: 'hijacked' } }, spec: { template: { spec: { containers: [{ name: 'agent', image: 'evil:1' }] } } } }, 'strategic', { fieldManager: 'kubectl-edit' });
  const edited = await read(agentDeployment);
  t.notOk(holdsAppliedFields(edited, applyIntent(agentDeployment, true)));
  const result = await ensureChild<Obj>(client, agentDeployment, edited);
  t.equal(result.action, 'updated');
  const fixed = await read(agentDeployment);
  t.equal(fixed.spec.template.spec.containers[0].image, agentDeployment.spec.template.spec.containers[0]?.image);
  t.equal(fixed.metadata.labels.app, 'agent');
  t.ok(holdsAppliedFields(fixed, applyIntent(agentDeployment, true)), 'held again');
});

t.test('fields others own are left alone: replicas after a scale, an added label', async (t) => {
  const path = childPathOf(agentDeployment);
  await client.patch(`${path}/scale`, { spec: { replicas: 3 } }, 'merge', { fieldManager: 'kubectl-scale' });
  await client.patch(path, { metadata: { labels: { team: 'blue' } } }, 'merge', { fieldManager: 'kubectl-label' });
  const scaled = await read(agentDeployment);
  t.equal(scaled.spec.replicas, 3);
  t.ok(holdsAppliedFields(scaled, applyIntent(agentDeployment, true)), 'no write needed');
  // A real change of the template: applied without replicas, so the scale survives.
  const changed = structuredClone(agentDeployment) as Obj;
  changed.spec.template.metadata.annotations['kaos.tools/pod-spec-hash'] = 'changed';
  t.equal((await ensureChild(client, changed, scaled)).action, 'updated');
  const after = await read(agentDeployment);
  t.equal(after.spec.replicas, 3, 'replicas kept');
  t.equal(after.metadata.labels.team, 'blue', 'their label kept');
  t.ok(holdsAppliedFields(after, applyIntent(changed, true)));
});

t.test('an owned field no longer desired is seen (an apply would remove it), and a reordered list', async (t) => {
  const base = structuredClone(agentDeployment) as Obj;
  const withExtra = structuredClone(base);
  withExtra.spec.template.spec.containers[0].env.push({ name: 'EXTRA', value: 'x' });
  await applyChild(client, applyIntent(withExtra, true));
  const live = await read(base);
  t.ok(holdsAppliedFields(live, applyIntent(withExtra, true)));
  t.notOk(holdsAppliedFields(live, applyIntent(base, true)), 'EXTRA is ours and no longer desired');
  await ensureChild(client, base, live);
  const removed = await read(base);
  t.notOk(removed.spec.template.spec.containers[0].env.some((e: { name: string }) => e.name === 'EXTRA'), 'the apply removed it');
  t.ok(holdsAppliedFields(removed, applyIntent(base, true)));

  const reordered = structuredClone(base);
  reordered.spec.template.spec.containers[0].env.reverse();
  t.notOk(holdsAppliedFields(removed, applyIntent(reordered, true)), 'another order is a change');
  await ensureChild(client, reordered, removed);
  const now = await read(base);
  t.same(
    now.spec.template.spec.containers[0].env.map((e: { name: string }) => e.name),
    reordered.spec.template.spec.containers[0].env.map((e: { name: string }) => e.name),
    'the API server takes the applied order',
  );
  t.ok(holdsAppliedFields(now, applyIntent(reordered, true)), 'so the order check cannot loop');
});

t.test('pruneOwned deletes what is no longer desired, never a same-named replacement', async (t) => {
  const service = agentChildren.find((c) => c.kind === 'Service') as Child;
  const cachedService = await read(service);
  const uid = agent.metadata?.uid ?? '';
  const desired = agentChildren.filter((c) => c.kind !== 'Service'); // expose: false
  const existing = [await read(agentDeployment), cachedService];
  const result = await pruneOwned(client, existing, uid, desired);
  t.same(result.deleted.map((c) => c.kind), ['Service']);
  t.ok(await read(service).then(() => false, (err: unknown) => isNotFound(err)), 'the Service is gone');

  // A same-named Service appears (another owner, or recreated) while the cache still holds the old one.
  await applyChild(client, service);
  const replacement = await read(service);
  t.not(replacement.metadata.uid, cachedService.metadata.uid);
  const again = await pruneOwned(client, existing, uid, desired);
  t.same(again.deleted, [], 'nothing deleted');
  t.same(again.skipped.map((c) => c.metadata?.uid), [cachedService.metadata.uid], 'the stale entry is skipped (uid precondition)');
  t.equal((await read(service)).metadata.uid, replacement.metadata.uid, 'the replacement lives');
});
