// The quiet window's verdict (test/soak/quiet.ts): the operator's writes are counted, Lease
// renewals apart, and a window in which another user changed the cluster is disturbed — but not
// by Leases, node heartbeats, Events or the API server's release of a Service's IPAddress.
import t from 'tap';
import type { AuditEvent } from '../../e2e/support/lifecycle.ts';
import { auditPolicy, WRITE_VERBS } from '../../cluster/control-plane.ts';
import { quietVerdict } from '../../soak/quiet.ts';

const OPERATOR = 'system:serviceaccount:kaos-system:kaos-operator';
const event = (user: string, verb: string, resource: string, subresource?: string): AuditEvent => ({
  stage: 'ResponseComplete', verb, user: { username: user },
  objectRef: { resource, namespace: 'ns', name: 'x', ...(subresource === undefined ? {} : { subresource }) }, responseStatus: { code: 200 },
});

t.test('a window with only the operator\'s Lease renewals and others\' heartbeats is quiet and clean', async (t) => {
  const v = quietVerdict([
    event(OPERATOR, 'update', 'leases'), event(OPERATOR, 'get', 'agents'), event(OPERATOR, 'watch', 'deployments'),
    event('system:kwok', 'update', 'leases'), event('system:kwok', 'patch', 'nodes', 'status'), event('system:kube-controller-manager', 'create', 'events'),
    event('system:apiserver', 'delete', 'ipaddresses'),
  ], OPERATOR);
  t.same(v.disturbedBy, []);
  t.same(v.operatorWrites, []);
  t.equal(v.leaseWrites, 1);
});

t.test('the operator\'s writes are violations of a window nobody else wrote in', async (t) => {
  const v = quietVerdict([event(OPERATOR, 'update', 'agents', 'status'), event(OPERATOR, 'patch', 'deployments'), event(OPERATOR, 'update', 'leases')], OPERATOR);
  t.same(v.disturbedBy, []);
  t.same(v.operatorWrites.map((e) => e.objectRef?.resource), ['agents', 'deployments']);
});

t.test('a claim bound or a Deployment\'s status written by another user disturbs the window', async (t) => {
  const v = quietVerdict([
    event('system:kube-controller-manager', 'update', 'persistentvolumeclaims'),
    event('system:serviceaccount:kube-system:deployment-controller', 'update', 'deployments', 'status'),
    event(OPERATOR, 'update', 'memorystores', 'status'),
  ], OPERATOR);
  t.same(v.disturbedBy.map((e) => e.objectRef?.resource), ['persistentvolumeclaims', 'deployments']);
  t.equal(v.operatorWrites.length, 1, 'the operator\'s write is still seen (the last window counts it)');
});

t.test('the audit policy logs every request of the users named and, asked to, the others\' writes only', async (t) => {
  t.same(auditPolicy([OPERATOR]).rules, [{ level: 'Metadata', users: [OPERATOR] }, { level: 'None' }]);
  t.same(auditPolicy([OPERATOR], true).rules, [{ level: 'Metadata', users: [OPERATOR] }, { level: 'Metadata', verbs: [...WRITE_VERBS] }, { level: 'None' }]);
  t.same(auditPolicy().rules, [{ level: 'Metadata' }]);
});
