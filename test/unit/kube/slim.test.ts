import { execFileSync } from 'node:child_process';
import t from 'tap';
import type { KubeObject } from '../../../src/api/lookup.ts';
import type { ObjectLike } from '../../../src/kube/apply.ts';
import { FIELD_MANAGER, holdsAppliedFields } from '../../../src/cluster/child-apply.ts';
import { KaosCache } from '../../../src/cluster/cache.ts';
import { KAOS_TYPES } from '../../../src/cluster/kaos-resources.ts';
import { KubeClient } from '../../../src/kube/client.ts';
import { DEPLOYMENT, NAMESPACE } from '../../../src/kube/paths.ts';
import { LAST_APPLIED_ANNOTATION, slimChild, slimDeployment, slimObject } from '../../../src/kube/slim.ts';
import { deploymentProgress } from '../../../src/controller/status.ts';
import { FakeApiServer } from '../../support/fake-apiserver.ts';

const ours = { manager: FIELD_MANAGER, operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:paused': {} } } };
const ourStatus = { manager: FIELD_MANAGER, operation: 'Update', subresource: 'status', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': {} } };
const theirs = { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:replicas': {} } } };
const kubectl = { manager: 'kubectl-client-side-apply', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } };

const agent = (): KubeObject => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind: 'Agent',
  metadata: {
    name: 'a', namespace: 'ns', uid: 'u', resourceVersion: '7', generation: 2,
    labels: { team: 'x' },
    annotations: { [LAST_APPLIED_ANNOTATION]: '{"apiVersion":"kaos.tools/v1alpha1","kind":"Agent"}', 'kaos.tools/defaulted': 'spec.waitForDependencies' },
    managedFields: [kubectl, ourStatus],
  },
  spec: { modelAPI: 'm' },
  status: { phase: 'Ready', ready: true, endpoint: 'http://agent-a.ns.svc.cluster.local:8000', observedGeneration: 2 },
});

t.test('a KAOS object: no managedFields, no last-applied-configuration; spec, status, labels and other annotations kept', async (t) => {
  const slim = slimObject(agent());
  const { managedFields: _m, annotations: _a, ...metadata } = agent().metadata ?? {};
  t.same(slim, { ...agent(), metadata: { ...metadata, annotations: { 'kaos.tools/defaulted': 'spec.waitForDependencies' } } });
  const bare = slimObject({ metadata: { name: 'b', annotations: { [LAST_APPLIED_ANNOTATION]: '{}' }, managedFields: [] } });
  t.same(bare, { metadata: { name: 'b' } }, 'emptied annotations go too');
});

t.test('a child keeps only our own Apply entry of managedFields, which holdsAppliedFields reads', async (t) => {
  const service = (): ObjectLike => ({ kind: 'Service', metadata: { name: 's', namespace: 'ns', managedFields: [theirs, ours, ourStatus, kubectl] }, spec: { paused: true } });
  const slim = slimChild(service() as KubeObject, FIELD_MANAGER) as ObjectLike;
  t.same(slim.metadata?.managedFields, [{ ...ours, fieldsV1: JSON.stringify(ours.fieldsV1).split(',') }], 'its field set as pieces of its JSON text');
  const desired: ObjectLike = { kind: 'Service', spec: { paused: true } };
  t.equal(holdsAppliedFields(slim, desired), holdsAppliedFields(service(), desired), 'the same answer as on the full object');
  t.equal(holdsAppliedFields(slim, desired), true);
  t.equal(holdsAppliedFields(slim, { kind: 'Service', spec: {} }), false, 'a field we own but no longer apply is still seen');
  t.same(slimChild({ metadata: { name: 'x', managedFields: [theirs] } }, FIELD_MANAGER), { metadata: { name: 'x' } }, 'nothing of ours: no managedFields at all');
});

t.test("our field set is kept as shared pieces of its text, the owner's uid a placeholder, read back as each child's own", async (t) => {
  const ownerKey = (uid: string): string => `k:{"uid":"${uid}"}`;
  const child = (uid: string): ObjectLike => ({
    kind: 'Service',
    metadata: {
      name: `s-${uid}`,
      namespace: 'ns',
      ownerReferences: [{ apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', name: `a-${uid}`, uid, controller: true }],
      managedFields: [{ ...ours, fieldsV1: { 'f:metadata': { 'f:ownerReferences': { [ownerKey(uid)]: {} } }, 'f:spec': { 'f:paused': {} } } }],
    },
    spec: { paused: true },
  });
  const [a, b] = ['0b4f-aa', '9c1e-bb'].map((uid) => slimChild(child(uid) as KubeObject, FIELD_MANAGER) as ObjectLike);
  const stored = (o: ObjectLike | undefined): unknown => o?.metadata?.managedFields?.[0]?.fieldsV1;
  t.ok(Array.isArray(stored(a)), 'pieces of its JSON text');
  t.same(stored(a), stored(b), 'the same pieces for both (each interned: one string in the heap)');
  t.notMatch(JSON.stringify(stored(a)), /0b4f-aa/, 'no uid of its own in them');
  const desired = (uid: string): ObjectLike => ({ kind: 'Service', metadata: { ownerReferences: child(uid).metadata?.ownerReferences }, spec: { paused: true } });
  for (const [slim, uid] of [[a, '0b4f-aa'], [b, '9c1e-bb']] as const) {
    t.equal(holdsAppliedFields(slim, desired(uid)), true, `${uid}: holds what it applied, its own owner among it`);
    t.equal(holdsAppliedFields(slim, desired(uid)), holdsAppliedFields(child(uid), desired(uid)), `${uid}: the same answer as on the full object`);
  }
  t.equal(holdsAppliedFields(a, desired('9c1e-bb')), false, "another owner's reference: ours is owned and no longer applied, as on the full object");
  t.equal(holdsAppliedFields(child('0b4f-aa'), desired('9c1e-bb')), false);
  const unrelated = slimChild({ ...child('0b4f-aa'), metadata: { ...child('0b4f-aa').metadata, ownerReferences: [] } } as KubeObject, FIELD_MANAGER) as ObjectLike;
  t.match(JSON.stringify(stored(unrelated)), /0b4f-aa/, 'a key of an owner the object does not name stays as it is');
  t.equal(holdsAppliedFields(unrelated, desired('0b4f-aa')), holdsAppliedFields({ ...child('0b4f-aa'), metadata: { ...child('0b4f-aa').metadata, ownerReferences: [] } }, desired('0b4f-aa')), 'and reads back as it was');
});

t.test("a Deployment's status keeps only what the controller's status reads", async (t) => {
  const conditions = [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'ok', lastUpdateTime: 't', lastTransitionTime: 't' }];
  const full = (): KubeObject => ({
    metadata: { name: 'd', generation: 4, managedFields: [ours, theirs] },
    spec: { replicas: 1 },
    status: { observedGeneration: 3, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1, unavailableReplicas: 0, collisionCount: 2, conditions },
  });
  const slim = slimDeployment(full(), FIELD_MANAGER);
  t.same(slim, { metadata: { name: 'd', generation: 4, managedFields: [{ ...ours, fieldsV1: JSON.stringify(ours.fieldsV1).split(',') }] }, spec: { replicas: 1 }, status: { observedGeneration: 3, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1, conditions } });
  // The verdict read from the slim object is the one read from the full object: here a rollout
  // whose new template the Deployment controller has not observed yet (generation 4, observed 3).
  t.same(deploymentProgress(slim), deploymentProgress(full()), 'the same verdict as on the full object');
  t.equal(deploymentProgress(slim).reason, 'DeploymentRollingOut');
});

t.test('the cache stores KAOS objects and Namespaces slim as they arrive', async (t) => {
  const fake = await new FakeApiServer().listen();
  for (const type of [...Object.values(KAOS_TYPES), NAMESPACE, DEPLOYMENT]) fake.serve(type);
  fake.put(KAOS_TYPES.Agent, agent());
  fake.put(NAMESPACE, { metadata: { name: 'ns', labels: { l: 'v' }, managedFields: [kubectl] } });
  const client = new KubeClient({ server: fake.url });
  const cache = new KaosCache({ client, reflector: { backoff: { initialMs: 10, maxMs: 50 } } });
  t.teardown(async () => { await cache.stop(); client.close(); await fake.close(); });
  cache.start();
  await cache.waitForSync();
  const cached = cache.cached('Agent', 'ns', 'a');
  t.equal(cached?.metadata?.managedFields, undefined, 'no managedFields');
  t.same(cached?.metadata?.annotations, { 'kaos.tools/defaulted': 'spec.waitForDependencies' }, 'no last-applied-configuration');
  t.same(cached?.status, agent().status, 'status whole');
  t.equal(cache.namespaces.getByName(undefined, 'ns')?.metadata?.managedFields, undefined);
  t.same(await cache.namespaceLabels('ns'), { l: 'v' });
});

t.test('slimObject shares its strings with every other object: values unchanged, one copy per string in the heap', async (t) => {
  const parse = (): KubeObject => JSON.parse(JSON.stringify(agent())) as KubeObject;
  t.same(slimObject(parse()), slimObject(agent()), 'interning changes no value');
  // Whether two equal strings are one object cannot be seen from JavaScript: a child process
  // holds many parsed copies of one Agent, plain or slimmed, and reports its heap after a GC.
  const heldHeap = (slim: boolean): number => {
    const script = `
      import { slimObject } from ${JSON.stringify(new URL('../../../src/kube/slim.ts', import.meta.url).href)};
      const text = JSON.stringify({ apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent',
        metadata: { name: 'agent-with-a-long-name', namespace: 'a-long-namespace', labels: { 'app.kubernetes.io/managed-by': 'kaos-operator' } },
        spec: { modelAPI: 'a-model-api-name', config: { env: [{ name: 'MODEL_NAME', value: 'openai/gpt-4o-mini-latest' }] } },
        status: { phase: 'Ready', endpoint: 'http://agent-with-a-long-name.a-long-namespace.svc.cluster.local:8000', conditions: [{ type: 'Ready', reason: 'DeploymentAvailable', message: 'the Deployment has its ready replicas' }] } });
      const held = [];
      globalThis.gc(); const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < 5000; i++) held.push(${slim ? 'slimObject(JSON.parse(text))' : 'JSON.parse(text)'});
      globalThis.gc(); process.stdout.write(String(process.memoryUsage().heapUsed - before) + ' ' + held.length);`;
    const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
    return Number(out.split(' ')[0]);
  };
  const plain = heldHeap(false);
  const interned = heldHeap(true);
  t.ok(interned < plain * 0.75, `5,000 slimmed Agents hold less heap than 5,000 parsed ones (${interned} < 0.75 × ${plain} bytes)`);
});
