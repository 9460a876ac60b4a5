// What one field manager applied, read back from the object as stored (test/support/extract-applied.ts):
// the fields its Apply entry names, with the object's values, lists kept in their own order.
import t from 'tap';
import { extractApplied, extractFields } from '../../support/extract-applied.ts';

const live = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'agent-a', namespace: 'ns', uid: 'u1', resourceVersion: '7',
    labels: { app: 'agent', 'pod-template-hash': 'x' },
    annotations: { 'deployment.kubernetes.io/revision': '1' },
    managedFields: [
      { manager: 'kaos-operator', operation: 'Apply', fieldsV1: {
        'f:metadata': { 'f:labels': { 'f:app': {} } },
        'f:spec': { 'f:template': { 'f:spec': {
          'f:containers': { 'k:{"name":"agent"}': { '.': {}, 'f:name': {}, 'f:env': { 'k:{"name":"A"}': { '.': {}, 'f:name': {}, 'f:value': {} } }, 'f:args': {} } },
          'f:volumes': { 'k:{"name":"tmp"}': { '.': {}, 'f:name': {}, 'f:emptyDir': {} } },
        } } },
      } },
      { manager: 'kaos-operator', operation: 'Update', subresource: 'status', fieldsV1: { 'f:status': {} } },
      { manager: 'kube-controller-manager', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:annotations': {} } } },
    ],
  },
  spec: {
    replicas: 1,
    template: { spec: {
      containers: [
        { name: 'sidecar', image: 'other' },
        { name: 'agent', image: 'defaulted-by-nobody', env: [{ name: 'B', value: '2' }, { name: 'A', value: '1' }], args: ['--x', '--y'], terminationMessagePath: '/dev/termination-log' },
      ],
      volumes: [{ name: 'tmp', emptyDir: {} }],
    } },
  },
  status: { replicas: 1 },
};

t.test('the Apply entry of the manager: its fields with their values, nothing the API server or others added', async (t) => {
  t.same(extractApplied(live, 'kaos-operator'), {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'agent-a', namespace: 'ns', labels: { app: 'agent' } },
    spec: { template: { spec: {
      containers: [{ name: 'agent', env: [{ name: 'A', value: '1' }], args: ['--x', '--y'] }],
      volumes: [{ name: 'tmp', emptyDir: {} }],
    } } },
  });
});

t.test('no Apply entry of the manager: nothing', async (t) => {
  t.equal(extractApplied(live, 'someone-else'), undefined);
  t.equal(extractApplied({ kind: 'X', metadata: { name: 'x' } }, 'kaos-operator'), undefined);
});

t.test('set elements and a field the object no longer has', async (t) => {
  t.same(extractFields({ finalizers: ['a', 'b', 'c'], gone: null }, { 'f:finalizers': { 'v:"c"': {}, 'v:"a"': {} }, 'f:gone': {} }), { finalizers: ['a', 'c'] });
});
