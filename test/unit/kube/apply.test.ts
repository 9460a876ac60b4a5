import t from 'tap';
import { applyIntent, defaultsInTheWay, staleChildren, type ObjectLike } from '../../../src/kube/apply.ts';
import { compareQuantities, parseQuantity } from '../../../src/kube/quantity.ts';
import { FIELD_MANAGER, applyChild, childPath, ensureChild, holdsAppliedFields, pruneOwned } from '../../../src/cluster/child-apply.ts';
import type { ApplyOptions, DeleteOptions } from '../../../src/kube/client.ts';
import { ApiError } from '../../../src/kube/errors.ts';

const deployment = (): ObjectLike => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'agent-a',
    namespace: 'ns',
    labels: { app: 'agent', agent: 'a', 'app.kubernetes.io/managed-by': 'kaos-operator' },
    ownerReferences: [{ apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', name: 'a', uid: 'u1', controller: true, blockOwnerDeletion: true }],
  },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'agent', agent: 'a' } },
    template: {
      metadata: { labels: { app: 'agent', agent: 'a' }, annotations: { 'kaos.tools/pod-spec-hash': 'h1' } },
      spec: {
        containers: [
          {
            name: 'agent',
            image: 'img:1',
            imagePullPolicy: 'IfNotPresent',
            command: ['python', '-m', 'agent'],
            env: [{ name: 'A', value: '1' }, { name: 'B', value: '' }, { name: 'C', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }],
            ports: [{ name: 'http', containerPort: 8000, protocol: 'TCP' }],
            resources: { limits: { cpu: '0.5', memory: '1024Mi' }, requests: { cpu: 1 } },
            volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg', readOnly: false }],
          },
        ],
        volumes: [{ name: 'cfg', configMap: { name: 'cfg' } }, { name: 'tmp', emptyDir: { sizeLimit: '1Gi' } }],
      },
    },
  },
});

/** What the API server stores after applying deployment(): defaults added, quantities canonical. */
function stored(desired: ObjectLike): ObjectLike {
  const d = structuredClone(desired) as Record<string, any>;
  d.metadata.uid = 'child-uid';
  d.metadata.resourceVersion = '42';
  d.metadata.annotations = { 'deployment.kubernetes.io/revision': '1' };
  d.spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };
  d.spec.revisionHistoryLimit = 10;
  const pod = d.spec.template.spec;
  pod.restartPolicy = 'Always';
  pod.dnsPolicy = 'ClusterFirst';
  const c = pod.containers[0];
  c.terminationMessagePath = '/dev/termination-log';
  c.env = [{ name: 'A', value: '1' }, { name: 'B' }, { name: 'C', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }];
  c.resources = { limits: { cpu: '500m', memory: '1Gi' }, requests: { cpu: '1' } };
  c.volumeMounts = [{ name: 'cfg', mountPath: '/etc/cfg' }];
  pod.volumes[0].configMap.defaultMode = 420;
  d.status = { replicas: 1 };
  return d;
}

const ownedAll = {
  'f:metadata': { 'f:labels': { 'f:app': {}, 'f:agent': {} }, 'f:ownerReferences': { 'k:{"uid":"u1"}': {} } },
  'f:spec': {
    'f:replicas': {},
    'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"agent"}': { '.': {}, 'f:image': {}, 'f:env': { 'k:{"name":"A"}': { '.': {}, 'f:name': {}, 'f:value': {} } }, 'f:ports': { 'k:{"containerPort":8000,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } } } } } },
  },
};

const withManaged = (o: ObjectLike, fieldsV1: unknown, manager = FIELD_MANAGER, operation = 'Apply'): ObjectLike => ({
  ...o,
  metadata: { ...o.metadata, managedFields: [{ manager, operation, fieldsType: 'FieldsV1', fieldsV1 }] },
});

t.test('holdsAppliedFields: the stored form of what was applied holds it', async (t) => {
  const desired = deployment();
  t.ok(holdsAppliedFields(stored(desired), desired), 'defaults, canonical quantities, omitted zero values');
  t.ok(holdsAppliedFields(withManaged(stored(desired), ownedAll), desired), 'with our managed fields');
  t.notOk(holdsAppliedFields(undefined, desired), 'nothing cached: apply');
});

t.test('holdsAppliedFields: any change of an applied field is seen', async (t) => {
  const desired = deployment();
  const edits: Array<[string, (d: Record<string, any>) => void]> = [
    ['image', (d) => { d.spec.template.spec.containers[0].image = 'img:2'; }],
    ['env value', (d) => { d.spec.template.spec.containers[0].env[0].value = '2'; }],
    ['env entry removed', (d) => { d.spec.template.spec.containers[0].env.splice(2, 1); }],
    ['env order', (d) => { d.spec.template.spec.containers[0].env.reverse(); }],
    ['a label', (d) => { delete d.metadata.labels.agent; }],
    ['a hash annotation', (d) => { d.spec.template.metadata.annotations['kaos.tools/pod-spec-hash'] = 'h0'; }],
    ['an atomic list (command) gained an item', (d) => { d.spec.template.spec.containers[0].command.push('-v'); }],
    ['a quantity', (d) => { d.spec.template.spec.containers[0].resources.limits.cpu = '501m'; }],
    ['a port protocol', (d) => { d.spec.template.spec.containers[0].ports[0].protocol = 'UDP'; }],
    ['a volume source', (d) => { d.spec.template.spec.volumes[0] = { name: 'cfg', emptyDir: {} }; }],
    ['a scalar became an object', (d) => { d.spec.template.spec.containers[0].image = { x: 1 }; }],
    ['another owner', (d) => { d.metadata.ownerReferences[0].uid = 'u2'; }],
  ];
  for (const [what, edit] of edits) {
    const live = stored(desired) as Record<string, any>;
    edit(live);
    t.notOk(holdsAppliedFields(live, desired), what);
  }
});

t.test('holdsAppliedFields: what others add or own does not matter', async (t) => {
  const desired = deployment();
  const live = stored(desired) as Record<string, any>;
  live.spec.replicas = 5; // kubectl scale
  live.metadata.labels.team = 'x';
  live.spec.template.spec.containers[0].env.push({ name: 'INJECTED', value: 'by a webhook' });
  live.spec.template.spec.containers.push({ name: 'sidecar', image: 'mesh' });
  live.spec.template.spec.volumes.unshift({ name: 'istio', emptyDir: {} });
  t.ok(holdsAppliedFields(live, applyIntent(desired, true)), 'replicas left out once it exists; extra items anywhere');
  t.notOk(holdsAppliedFields(live, desired), 'replicas in the intent (creation) would be a change');
});

t.test('holdsAppliedFields: list keys as the API server computes them', async (t) => {
  const svc: ObjectLike = {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'ns' },
    spec: { selector: { app: 'x' }, ports: [{ name: 'http', port: 80, targetPort: 8000 }] },
  };
  const live = structuredClone(svc) as Record<string, any>;
  live.spec.ports = [{ name: 'http', port: 80, targetPort: 8000, protocol: 'TCP' }];
  live.spec.clusterIP = '10.0.0.1';
  live.spec.type = 'ClusterIP';
  t.ok(holdsAppliedFields(live, svc), 'a port without protocol is the TCP one');
  live.spec.ports = [{ name: 'http', port: 80, targetPort: 8000, protocol: 'UDP' }];
  t.notOk(holdsAppliedFields(live, svc), 'not the UDP one');
});

t.test('holdsAppliedFields: ownership', async (t) => {
  const desired = deployment();
  const intent = applyIntent(desired, true);
  t.ok(holdsAppliedFields(withManaged(stored(desired), ownedAll), intent), 'replicas owned since creation is not a reason to write');
  t.notOk(holdsAppliedFields(withManaged(stored(desired), ownedAll, 'kubectl', 'Update'), intent), 'we own nothing yet: apply to take ownership');
  t.notOk(holdsAppliedFields(withManaged(stored(desired), ownedAll, FIELD_MANAGER, 'Update'), intent), 'an Update entry is not an apply');

  // We applied env D once; the desired object no longer has it: an apply would remove it.
  const live = stored(desired) as Record<string, any>;
  live.spec.template.spec.containers[0].env.push({ name: 'D', value: 'old' });
  const owned = structuredClone(ownedAll) as Record<string, any>;
  owned['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"agent"}']['f:env']['k:{"name":"D"}'] = { '.': {}, 'f:name': {}, 'f:value': {} };
  t.notOk(holdsAppliedFields(withManaged(live, owned), intent), 'an owned env entry no longer desired');
  owned['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"agent"}']['f:env'] = {};
  owned['f:metadata']['f:annotations'] = { 'f:gone': {} };
  t.notOk(holdsAppliedFields(withManaged(live, owned), intent), 'an owned annotation no longer desired');
  delete owned['f:metadata']['f:annotations'];
  owned['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"agent"}']['f:ports'] = { 'k:{"containerPort":9000,"protocol":"TCP"}': {} };
  t.notOk(holdsAppliedFields(withManaged(live, owned), intent), 'an owned port no longer desired');
  owned['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"agent"}']['f:ports'] = {};
  owned['f:metadata']['f:finalizers'] = { 'v:"x"': {} };
  t.notOk(holdsAppliedFields(withManaged(live, owned), intent), 'an owned set item no longer desired');
  delete owned['f:metadata']['f:finalizers'];
  t.ok(holdsAppliedFields(withManaged(live, owned), intent), 'owned ⊆ desired again');
  t.ok(holdsAppliedFields(withManaged(stored(desired), ownedAll), intent));
  t.notOk(
    holdsAppliedFields({ ...withManaged(stored(desired), ownedAll), kind: 'StatefulSet' }, { ...intent, kind: 'StatefulSet' }),
    'owned replicas is ignored for Deployments only',
  );
});

t.test('parseQuantity', async (t) => {
  const eq = (a: string | number, b: string | number): boolean => {
    const x = parseQuantity(a);
    const y = parseQuantity(b);
    return x !== undefined && y !== undefined && x.num * y.den === y.num * x.den;
  };
  t.ok(eq('500m', '0.5'));
  t.ok(eq('1Gi', '1024Mi'));
  t.ok(eq('1k', '1000'));
  t.ok(eq('1e3', '1k'));
  t.ok(eq(2, '2000m'));
  t.ok(eq('.5', '500m'));
  t.ok(eq('100u', '0.0001'));
  t.notOk(eq('1G', '1Gi'));
  t.notOk(eq('1', '-1'));
  t.equal(parseQuantity('abc'), undefined);
  t.equal(parseQuantity('1Xi'), undefined);
  t.equal(parseQuantity({}), undefined);
});

t.test('compareQuantities orders by value, whatever the spelling', async (t) => {
  t.equal(compareQuantities('5Gi', '10Gi'), -1);
  t.equal(compareQuantities('1Gi', '1024Mi'), 0);
  t.equal(compareQuantities('1Gi', '1G'), 1, 'Gi is binary, G decimal');
  t.equal(compareQuantities('1.5Gi', '1536Mi'), 0);
  t.equal(compareQuantities('5Gi', 'five'), undefined);
});

t.test('holdsAppliedFields: quantities compare by value only where the API server canonicalizes them', async (t) => {
  const cm: ObjectLike = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns' }, data: { limits: '0.5', sizeLimit: '1' } };
  t.notOk(holdsAppliedFields({ ...cm, data: { limits: '500m', sizeLimit: '1' } }, cm), 'ConfigMap data is text');
  t.notOk(holdsAppliedFields({ ...cm, data: { limits: '0.5', sizeLimit: '1000m' } }, cm));
  t.ok(holdsAppliedFields({ ...cm, data: { limits: '0.5', sizeLimit: '1', extra: 'x' } }, cm));
});

t.test('applyIntent', async (t) => {
  const d = deployment();
  t.equal(applyIntent(d, false), d, 'a new Deployment is applied with replicas');
  const intent = applyIntent(d, true) as Record<string, any>;
  t.notOk('replicas' in intent.spec, 'an existing one without');
  t.equal((d.spec as Record<string, unknown>).replicas, 1, 'desired is not modified');
  t.same(intent.spec.template, (d.spec as Record<string, unknown>).template);
  const svc: ObjectLike = { kind: 'Service', spec: { replicas: 3 } };
  t.equal(applyIntent(svc, true), svc, 'other kinds as they are');
  t.equal(applyIntent(d, true, true), d, 'applyReplicas: an owner that applies its own replicas keeps them in every apply');
});

t.test('applyIntent: an unbound claim keeps its size (its spec cannot change); a bound one grows', async (t) => {
  const claim = (storage: string, phase?: string): ObjectLike => ({
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c', namespace: 'ns' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
    ...(phase === undefined ? {} : { status: { phase } }),
  });
  const desired = claim('6Gi');
  t.equal(applyIntent(desired, false, false, undefined), desired, 'a new claim as rendered');
  t.same(applyIntent(desired, true, false, claim('5Gi', 'Pending')), claim('5Gi'), 'Pending: the size it has');
  t.same(applyIntent(desired, true, false, claim('5Gi')), claim('5Gi'), 'no phase yet: the size it has');
  t.equal(applyIntent(desired, true, false, claim('5Gi', 'Bound')), desired, 'Bound: the new size');
  t.same((desired.spec as Record<string, any>).resources.requests.storage, '6Gi', 'desired is not modified');
});

t.test('defaultsInTheWay: a RollingUpdate Deployment turning Recreate loses the defaulted rollingUpdate first', async (t) => {
  const withStrategy = (strategy: unknown): ObjectLike => ({ ...deployment(), spec: { ...(deployment().spec as object), strategy } });
  const rolling = withStrategy({ type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } });
  t.same(defaultsInTheWay(rolling, withStrategy({ type: 'Recreate' })), [
    { op: 'test', path: '/spec/strategy/type', value: 'RollingUpdate' },
    { op: 'replace', path: '/spec/strategy', value: { type: 'Recreate' } },
  ]);
  t.same(defaultsInTheWay(withStrategy({ type: 'Recreate' }), withStrategy({ type: 'Recreate' })), [], 'already Recreate');
  t.same(defaultsInTheWay(rolling, deployment()), [], 'staying RollingUpdate');
  t.same(defaultsInTheWay({ kind: 'Service', spec: { strategy: { rollingUpdate: {} } } }, { kind: 'Service', spec: { strategy: { type: 'Recreate' } } }), [], 'Deployments only');
});

t.test('childPath', async (t) => {
  t.equal(childPath(deployment()), '/apis/apps/v1/namespaces/ns/deployments/agent-a');
  t.equal(childPath({ kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns' } }), '/api/v1/namespaces/ns/configmaps/c');
  t.equal(childPath({ kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'ns' } }), '/apis/gateway.networking.k8s.io/v1/namespaces/ns/httproutes/r');
  t.throws(() => childPath({ kind: 'Secret', metadata: { name: 'x', namespace: 'ns' } }), /not a child kind/);
  t.throws(() => childPath({ kind: 'Service', metadata: { name: 'x' } }), /without metadata/);
});

t.test('applyChild and ensureChild: one field manager, force, no write when nothing would change', async (t) => {
  const calls: Array<{ path: string; object: unknown; options: ApplyOptions }> = [];
  const client = {
    apply: async <T>(path: string, object: unknown, options: ApplyOptions): Promise<T> => {
      calls.push({ path, object, options });
      return object as T;
    },
    get: async <T>(): Promise<T> => t.fail('no read: the apply drops no element') as never,
    patch: async <T>(): Promise<T> => t.fail('no release: the apply drops no element') as never,
  };
  await applyChild(client, deployment());
  t.equal(calls[0]?.options.fieldManager, 'kaos-operator');
  t.equal(calls[0]?.options.force, true);
  calls.length = 0;

  const desired = deployment();
  t.equal((await ensureChild(client, desired, undefined)).action, 'created');
  t.equal((calls[0]?.object as Record<string, any>).spec.replicas, 1, 'created with replicas');
  const live = stored(desired) as Record<string, any>;
  t.equal((await ensureChild(client, desired, live)).action, 'unchanged');
  t.equal(calls.length, 1, 'no write when the live child holds every field');
  live.spec.template.spec.containers[0].image = 'edited';
  t.equal((await ensureChild(client, desired, live)).action, 'updated');
  t.notOk('replicas' in (calls[1]?.object as Record<string, any>).spec, 'updated without replicas');
});

const child = (kind: string, name: string, uid: string, ownerUid: string, extra: Record<string, unknown> = {}): ObjectLike => ({
  kind,
  metadata: { name, namespace: 'ns', uid, ownerReferences: [{ kind: 'Agent', name: 'a', uid: ownerUid, controller: true }], ...extra },
});

t.test('staleChildren: owned by this parent, not desired, not already going', async (t) => {
  const existing = [
    child('Deployment', 'agent-a', 'd1', 'u1'),
    child('Service', 'agent-a', 's1', 'u1'),
    child('ConfigMap', 'agent-a', 'c1', 'u1'),
    child('ConfigMap', 'agent-b', 'c2', 'u2'),
    child('HTTPRoute', 'agent-a', 'r1', 'u1', { deletionTimestamp: '2026-01-01T00:00:00Z' }),
    { kind: 'Service', metadata: { name: 'agent-c', namespace: 'ns', uid: 's3', ownerReferences: [{ uid: 'u1', controller: false }] } },
  ];
  const stale = staleChildren(existing, 'u1', [{ kind: 'Deployment', metadata: { name: 'agent-a' } }, { kind: 'ConfigMap', metadata: { name: 'agent-a' } }]);
  t.same(stale.map((c) => c.metadata?.uid), ['s1']);
  t.same(staleChildren(existing, '', []), [], 'no owner uid: nothing');
});

t.test('pruneOwned: a uid precondition on every delete; gone or replaced is not an error', async (t) => {
  const calls: Array<{ path: string; options: DeleteOptions }> = [];
  const answers: Record<string, unknown> = {
    '/api/v1/namespaces/ns/services/agent-a': 'ok',
    '/api/v1/namespaces/ns/configmaps/agent-a': new ApiError(409, 'Conflict', 'Precondition failed: UID in precondition: c1, UID in object meta: c9'),
    '/apis/apps/v1/namespaces/ns/deployments/agent-a': new ApiError(404, 'NotFound', 'not found'),
  };
  const client = {
    delete: async <T>(path: string, options: DeleteOptions = {}): Promise<T> => {
      calls.push({ path, options });
      const answer = answers[path];
      if (answer instanceof Error) throw answer;
      return {} as T;
    },
  };
  const existing = [child('Deployment', 'agent-a', 'd1', 'u1'), child('Service', 'agent-a', 's1', 'u1'), child('ConfigMap', 'agent-a', 'c1', 'u1')];
  const result = await pruneOwned(client, existing, 'u1', []);
  t.same(calls.map((c) => c.options.preconditions), [{ uid: 'd1' }, { uid: 's1' }, { uid: 'c1' }]);
  t.ok(calls.every((c) => c.options.propagationPolicy === 'Background'));
  t.same(result.deleted.map((c) => c.metadata?.uid), ['s1']);
  t.same(result.skipped.map((c) => c.metadata?.uid), ['d1', 'c1']);

  answers['/api/v1/namespaces/ns/services/agent-a'] = new ApiError(403, 'Forbidden', 'no');
  await t.rejects(pruneOwned(client, [child('Service', 'agent-a', 's1', 'u1')], 'u1', []), /no/, 'other errors reach the reconcile');
  await t.rejects(pruneOwned(client, [child('Service', 'agent-a', '', 'u1')], 'u1', []), /no metadata.uid/);
});
