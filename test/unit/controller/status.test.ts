import t from 'tap';
import { INITIAL_STATUS } from '../../../src/api/schema/status.ts';
import {
  deploymentProgress,
  failed,
  mcpServerNotReady,
  mcpServerUnresolved,
  memoryDegraded,
  mirrorDeployment,
  modelAPINotReady,
  modelAPIUnresolved,
  nextStatus,
  notFoundReason,
  statusChanged,
  type KaosStatus,
} from '../../../src/controller/status.ts';
import { jsonEqual } from '../../../src/api/json.ts';
import { formatTime } from '../../../src/leaves/meta-time.ts';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const T1 = T0 + 60_000;
const conditions = (s: KaosStatus) => Object.fromEntries((s.conditions ?? []).map((c) => [c.type, c]));
const statuses = (s: KaosStatus) => (s.conditions ?? []).map((c) => `${c.type}=${c.status}`).join(' ');

t.test("the API's messages", async (t) => {
  t.equal(notFoundReason('ModelAPI', 'gpt'), 'modelapis.kaos.tools "gpt" not found');
  t.same(modelAPIUnresolved(notFoundReason('ModelAPI', 'gpt')), {
    phase: 'Failed',
    reason: 'ModelAPIUnresolved',
    message: 'Failed to resolve ModelAPI: modelapis.kaos.tools "gpt" not found',
  });
  t.same(modelAPINotReady(), { phase: 'Waiting', reason: 'ModelAPINotReady', message: 'ModelAPI is not ready' });
  t.same(mcpServerUnresolved('echo', notFoundReason('MCPServer', 'echo')), {
    phase: 'Failed',
    reason: 'MCPServerUnresolved',
    message: 'Failed to resolve MCPServer echo: mcpservers.kaos.tools "echo" not found',
  });
  t.same(mcpServerNotReady('echo'), { phase: 'Waiting', reason: 'MCPServerNotReady', message: 'MCPServer echo is not ready' });
  t.same(failed('InvalidSpec', 'bad', { terminal: true }), { phase: 'Failed', reason: 'InvalidSpec', message: 'bad', terminal: true });
});

t.test('deploymentProgress: Ready iff readyReplicas > 0; message with the desired replicas', async (t) => {
  const none = deploymentProgress({ spec: { replicas: 1 }, status: {} });
  t.same([none.phase, none.reason, none.message], ['Pending', 'DeploymentRollingOut', 'Deployment ready replicas: 0/1 (rolling out)'], 'nothing updated yet: rolling out');
  t.same(none.deployment, { replicas: 0, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0 }, 'omitted counts are 0');
  const scaled = deploymentProgress({ spec: { replicas: 3 }, status: { replicas: 3, readyReplicas: 2, availableReplicas: 3, updatedReplicas: 3 } });
  t.same([scaled.phase, scaled.message], ['Ready', 'Deployment ready replicas: 2/3']);
  const partly = deploymentProgress({ spec: { replicas: 3 }, status: { replicas: 3, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 3 } });
  t.same([partly.phase, partly.message], ['Ready', 'Deployment ready replicas: 2/3'], 'some ready, none of an older template left: Ready (readyReplicas > 0), the count says the rest');
  t.equal(deploymentProgress({}).message, 'Deployment ready replicas: 0/1 (rolling out)', 'no spec.replicas: the default 1');
  t.equal(deploymentProgress({ spec: { replicas: 0 }, status: {} }).message, 'Deployment ready replicas: 0/0', 'scaled to zero');
});

t.test('deploymentProgress: not Ready while a rollout is in flight, Stalled past the progress deadline', async (t) => {
  const cond = (type: string, status: string, reason: string, message = '') => ({ type, status, reason, message, lastTransitionTime: '2026-01-01T00:00:00Z' });
  const deployment = (generation: number, status: Record<string, unknown>) => ({ metadata: { generation }, spec: { replicas: 1 }, status });
  const done = { observedGeneration: 2, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 };

  const ready = deploymentProgress(deployment(2, done));
  t.same([ready.phase, ready.reason, ready.message], ['Ready', 'DeploymentReady', 'Deployment ready replicas: 1/1'], 'rollout complete, a pod ready');

  const unobserved = deploymentProgress(deployment(3, done));
  t.same([unobserved.phase, unobserved.reason, unobserved.message],
    ['Pending', 'DeploymentRollingOut', 'Deployment ready replicas: 1/1 (rolling out)'],
    'a new template the Deployment controller has not seen: the ready pod is an old one');

  const surging = deploymentProgress(deployment(3, { ...done, observedGeneration: 3, replicas: 2, updatedReplicas: 1 }));
  t.same([surging.phase, surging.reason, surging.message],
    ['Pending', 'DeploymentRollingOut', 'Deployment ready replicas: 1/1 (rolling out)'],
    'the old pod still serves while the new one starts');

  const unavailable = deploymentProgress(deployment(1, { observedGeneration: 1, replicas: 1, updatedReplicas: 1, conditions: [cond('Available', 'False', 'MinimumReplicasUnavailable', 'Deployment does not have minimum availability.'), cond('Progressing', 'True', 'ReplicaSetUpdated')] }));
  t.same([unavailable.phase, unavailable.reason, unavailable.message], ['Pending', 'DeploymentRollingOut', 'Deployment ready replicas: 0/1 (rolling out)'], 'updated but not available: still rolling out, as kubectl rollout status says');

  // A new Deployment's sub-steps, as the Deployment controller reports them: one visible state.
  const fresh = [
    deployment(1, {}),
    deployment(1, { observedGeneration: 1 }),
    deployment(1, { observedGeneration: 1, replicas: 1 }),
    deployment(1, { observedGeneration: 1, replicas: 1, updatedReplicas: 1, conditions: [cond('Available', 'False', 'MinimumReplicasUnavailable'), cond('Progressing', 'True', 'ReplicaSetUpdated')] }),
  ].map((d) => deploymentProgress(d));
  for (const v of fresh) t.same([v.phase, v.reason, v.message], ['Pending', 'DeploymentRollingOut', 'Deployment ready replicas: 0/1 (rolling out)'], 'a new Deployment rolling out: the same verdict at every sub-step');
  const fromFresh = nextStatus(undefined, 1, fresh[0]!, T0);
  for (const v of fresh.slice(1)) t.notOk(statusChanged(fromFresh, nextStatus(fromFresh, 1, v, T1)), 'a sub-step that only moves the mirror is not news');
  t.ok(statusChanged(fromFresh, nextStatus(fromFresh, 1, ready, T1)), 'Ready is news');
  const oneReady = deploymentProgress({ metadata: { generation: 1 }, spec: { replicas: 2 }, status: { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1 } });
  const noneReady = deploymentProgress({ metadata: { generation: 1 }, spec: { replicas: 2 }, status: { observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 0 } });
  t.ok(statusChanged(nextStatus(undefined, 1, noneReady, T0), nextStatus(undefined, 1, oneReady, T0)), 'a ready count change is news');

  const scaledToZero = deploymentProgress({ metadata: { generation: 1 }, spec: { replicas: 0 }, status: { observedGeneration: 1, conditions: [cond('Available', 'False', 'MinimumReplicasUnavailable')] } });
  t.same([scaledToZero.phase, scaledToZero.reason, scaledToZero.message], ['Pending', 'MinimumReplicasUnavailable', 'Deployment ready replicas: 0/0'], "rolled out, none ready: the Deployment's own reason");

  const stalled = deploymentProgress(deployment(1, { observedGeneration: 1, replicas: 1, updatedReplicas: 1, conditions: [cond('Progressing', 'False', 'ProgressDeadlineExceeded', 'ReplicaSet "agent-a-1" has timed out progressing.')] }));
  t.same([stalled.phase, stalled.reason, stalled.message, stalled.terminal],
    ['Failed', 'ProgressDeadlineExceeded', 'Deployment ready replicas: 0/1: ReplicaSet "agent-a-1" has timed out progressing.', true],
    'past progressDeadlineSeconds: Failed, terminal');
  t.equal(statuses(nextStatus(undefined, 1, stalled, T0)), 'Ready=False Reconciling=False Stalled=True', 'kstatus Stalled');
});

t.test('mirrorDeployment keeps only what the CRD schema keeps, valid', async (t) => {
  const mirror = mirrorDeployment({
    status: {
      replicas: 1,
      readyReplicas: 1,
      observedGeneration: 4,
      collisionCount: 1,
      conditions: [
        { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z', lastUpdateTime: '2026-01-02T00:00:00Z' },
        { type: 'Progressing', status: 'Maybe', lastUpdateTime: '2026-01-02T00:00:00Z' },
        { status: 'True' },
        'junk',
      ],
    },
  });
  t.same(mirror, {
    replicas: 1,
    readyReplicas: 1,
    availableReplicas: 0,
    updatedReplicas: 0,
    conditions: [
      { type: 'Available', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'MinimumReplicasAvailable', message: 'ok' },
      { type: 'Progressing', status: 'Unknown', lastTransitionTime: '2026-01-02T00:00:00Z', reason: 'Unknown', message: '' },
    ],
  });
  t.notOk('conditions' in mirrorDeployment({ status: { conditions: [] } }), 'no empty list');
  t.same(mirrorDeployment({ status: 'nonsense' }).replicas, 0);
});

t.test('first write over the CRD default: every condition transitions now', async (t) => {
  const next = nextStatus(INITIAL_STATUS, 1, { ...modelAPINotReady(), linkedResources: { modelapi: 'gpt' } }, T0);
  t.same(next, {
    phase: 'Waiting',
    ready: false,
    message: 'ModelAPI is not ready',
    linkedResources: { modelapi: 'gpt' },
    observedGeneration: 1,
    conditions: [
      { type: 'Ready', status: 'False', observedGeneration: 1, lastTransitionTime: '2026-01-02T03:04:05Z', reason: 'ModelAPINotReady', message: 'ModelAPI is not ready' },
      { type: 'Reconciling', status: 'True', observedGeneration: 1, lastTransitionTime: '2026-01-02T03:04:05Z', reason: 'ModelAPINotReady', message: 'ModelAPI is not ready' },
      { type: 'Stalled', status: 'False', observedGeneration: 1, lastTransitionTime: '2026-01-02T03:04:05Z', reason: 'ModelAPINotReady', message: 'ModelAPI is not ready' },
    ],
  });
  const { linkedResources: _, ...withoutLinks } = next;
  t.same(nextStatus(undefined, 1, modelAPINotReady(), T0), withoutLinks, 'an absent status reads like the default');
});

t.test('kstatus conditions per phase', async (t) => {
  const progress = (ready: number) => deploymentProgress({ spec: { replicas: 1 }, status: { replicas: 1, updatedReplicas: 1, readyReplicas: ready, availableReplicas: ready } });
  t.equal(statuses(nextStatus(undefined, 1, progress(0), T0)), 'Ready=False Reconciling=True Stalled=False', 'Pending: in progress');
  t.equal(statuses(nextStatus(undefined, 1, progress(1), T0)), 'Ready=True Reconciling=False Stalled=False', 'Ready: done');
  t.equal(statuses(nextStatus(undefined, 1, mcpServerNotReady('m'), T0)), 'Ready=False Reconciling=True Stalled=False', 'Waiting: in progress');
  t.equal(statuses(nextStatus(undefined, 1, modelAPIUnresolved('x'), T0)), 'Ready=False Reconciling=True Stalled=False', 'Failed, retried: in progress');
  t.equal(statuses(nextStatus(undefined, 1, failed('InvalidSpec', 'no', { terminal: true }), T0)), 'Ready=False Reconciling=False Stalled=True', 'Failed, terminal: stalled');
  const ready = nextStatus(undefined, 1, progress(1), T0);
  t.same([ready.phase, ready.ready], ['Ready', true]);
  const pending = nextStatus(undefined, 1, progress(0), T0);
  t.same([pending.phase, pending.ready], ['Pending', false]);
});

t.test('lastTransitionTime moves only when that condition’s status moves', async (t) => {
  const progress = (ready: number) => deploymentProgress({ spec: { replicas: 1 }, status: { replicas: 1, updatedReplicas: 1, readyReplicas: ready, availableReplicas: ready } });
  const s0 = nextStatus(INITIAL_STATUS, 1, progress(0), T0);
  const s1 = nextStatus(s0, 2, modelAPINotReady(), T1);
  t.equal(conditions(s1).Ready?.lastTransitionTime, formatTime(T0), 'Ready stayed False: time kept, though reason and message changed');
  t.equal(conditions(s1).Ready?.reason, 'ModelAPINotReady');
  t.equal(conditions(s1).Ready?.observedGeneration, 2, 'observedGeneration follows the generation');
  const s2 = nextStatus(s1, 2, progress(1), T1 + 1000);
  t.equal(conditions(s2).Ready?.lastTransitionTime, formatTime(T1 + 1000), 'Ready became True: now');
  t.equal(conditions(s2).Reconciling?.lastTransitionTime, formatTime(T1 + 1000), 'Reconciling became False: now');
  t.equal(conditions(s2).Stalled?.lastTransitionTime, formatTime(T0), 'Stalled stayed False since the first write');
  t.equal(s2.message, 'Deployment ready replicas: 1/1');
});

t.test('endpoint is absent when cleared; deployment and linkedResources only when given', async (t) => {
  const exposed = nextStatus(undefined, 1, { ...modelAPINotReady(), endpoint: 'http://agent-a.ns.svc.cluster.local:8000' }, T0);
  t.equal(exposed.endpoint, 'http://agent-a.ns.svc.cluster.local:8000');
  const hidden = nextStatus(exposed, 2, modelAPINotReady(), T1);
  t.notOk('endpoint' in hidden);
  t.notOk('deployment' in hidden);
  t.notOk('linkedResources' in hidden);
  t.ok(statusChanged(exposed, hidden));
  t.notOk('endpoint' in nextStatus(undefined, 1, { ...modelAPINotReady(), endpoint: '' }, T0), 'an empty endpoint is none');
  t.notOk('observedGeneration' in nextStatus(undefined, undefined, modelAPINotReady(), T0), 'no generation, no observedGeneration');
});

t.test('conditions of other types are kept', async (t) => {
  const prev = { conditions: [{ type: 'example.com/Audited', status: 'True', reason: 'Done', message: '', lastTransitionTime: '2025-01-01T00:00:00Z' }] };
  const next = nextStatus(prev, 1, modelAPINotReady(), T0);
  t.same(next.conditions?.map((c) => c.type), ['Ready', 'Reconciling', 'Stalled', 'example.com/Audited']);
});

t.test("MemoryDegraded: the controller's own, written when stated, its time moving with its status, gone when not stated", async (t) => {
  const audited = { type: 'example.com/Audited', status: 'True', reason: 'Done', message: '', lastTransitionTime: '2025-01-01T00:00:00Z' };
  const s0 = nextStatus({ conditions: [audited] }, 1, { ...modelAPINotReady(), extraConditions: [memoryDegraded('shared', 'missing')] }, T0);
  t.same(conditions(s0).MemoryDegraded, {
    type: 'MemoryDegraded', status: 'True', observedGeneration: 1, lastTransitionTime: formatTime(T0), reason: 'MemoryStoreNotReady', message: 'MemoryStore shared not found',
  });
  t.same(s0.conditions?.map((c) => c.type), ['Ready', 'Reconciling', 'Stalled', 'MemoryDegraded', 'example.com/Audited'], "after kstatus's three, before others'");
  const s1 = nextStatus(s0, 1, { ...modelAPINotReady(), extraConditions: [memoryDegraded('shared', 'not-ready')] }, T1);
  t.equal(conditions(s1).MemoryDegraded?.lastTransitionTime, formatTime(T0), 'still True: time kept, message moved');
  t.equal(conditions(s1).MemoryDegraded?.message, 'MemoryStore shared is not ready');
  const s2 = nextStatus(s1, 1, { ...modelAPINotReady(), extraConditions: [memoryDegraded('shared', undefined)] }, T1 + 1000);
  t.match(conditions(s2).MemoryDegraded, { status: 'False', reason: 'MemoryHealthy', message: 'MemoryStore shared is ready', lastTransitionTime: formatTime(T1 + 1000) });
  t.match(memoryDegraded(undefined, undefined), { status: 'False', reason: 'MemoryHealthy', message: 'Memory is healthy' }, 'no store to depend on');
  const s3 = nextStatus(s2, 2, modelAPINotReady(), T1 + 2000);
  t.same(s3.conditions?.map((c) => c.type), ['Ready', 'Reconciling', 'Stalled', 'example.com/Audited'], 'not stated: removed; the foreign one stays');
});

t.test('a reason that the API server would refuse is a programming error', async (t) => {
  t.throws(() => nextStatus(undefined, 1, { phase: 'Failed', reason: 'not camel case', message: '' }, T0), /reason "not camel case" is not CamelCase/);
  const long = nextStatus(undefined, 1, failed('Big', 'x'.repeat(40_000)), T0);
  t.equal(long.conditions?.[0]?.message.length, 32768, 'condition messages fit metav1.Condition');
  t.equal(long.message?.length, 40_000, 'status.message is not limited');
});

t.test('statusChanged: the same status in another key or condition order is no change', async (t) => {
  const progress = deploymentProgress({
    spec: { replicas: 1 },
    status: { readyReplicas: 1, conditions: [{ type: 'Available', status: 'True', reason: 'A', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }, { type: 'Progressing', status: 'True', reason: 'B', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
  });
  const written = nextStatus(INITIAL_STATUS, 3, { ...progress, endpoint: 'http://x', linkedResources: { modelapi: 'm' } }, T0);
  const readBack = JSON.parse(JSON.stringify(written)) as KaosStatus;
  const shuffled: Record<string, unknown> = {};
  for (const key of Object.keys(readBack).reverse()) shuffled[key] = readBack[key as keyof KaosStatus];
  shuffled.conditions = [...(readBack.conditions ?? [])].reverse().map((c) => Object.fromEntries(Object.entries(c).reverse()));
  shuffled.deployment = { ...readBack.deployment, conditions: [...(readBack.deployment?.conditions ?? [])].reverse() };
  t.notOk(statusChanged(shuffled, written));

  const again = nextStatus(readBack, 3, { ...progress, endpoint: 'http://x', linkedResources: { modelapi: 'm' } }, T1);
  t.notOk(statusChanged(readBack, again), 'a reconcile later with the same outcome: nothing to write (idle means idle)');
  t.ok(statusChanged(readBack, nextStatus(readBack, 4, { ...progress, endpoint: 'http://x', linkedResources: { modelapi: 'm' } }, T1)), 'a new generation is a change');
  t.ok(statusChanged(INITIAL_STATUS, written));
  t.ok(statusChanged(undefined, written));
  t.ok(statusChanged({ ...readBack, extra: 1 }, written), 'a field the controller does not write is removed by writing');
});

t.test('jsonEqual', async (t) => {
  t.ok(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }));
  t.ok(jsonEqual({ a: 1, b: undefined }, { a: 1 }), 'undefined is absent');
  t.notOk(jsonEqual([1, 2], [2, 1]), 'arrays keep their order');
  t.notOk(jsonEqual({ a: 1 }, { a: '1' }));
  t.notOk(jsonEqual({ a: 1 }, [1]));
  t.notOk(jsonEqual(null, {}));
  t.notOk(jsonEqual({ a: undefined, b: 1 }, { c: 1 }));
});

t.test('statusChanged: the status.deployment mirror rides along but is not news by itself', async (t) => {
  const rolled = (status: Record<string, unknown>) => deploymentProgress({ metadata: { generation: 1 }, spec: { replicas: 1 }, status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1, ...status } });
  const written = JSON.parse(JSON.stringify(nextStatus(undefined, 1, rolled({}), T0))) as KaosStatus;
  const moved = nextStatus(written, 1, rolled({ conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z' }] }), T1);
  t.notSame(moved.deployment, written.deployment, 'the mirror did move');
  t.notOk(statusChanged(written, moved), 'only the mirror moved: no write (a converged object does not flap on its Deployment)');
  const { deployment: _dropped, ...withoutMirror } = written;
  t.ok(statusChanged(withoutMirror, moved), 'a mirror that appears is news');
  t.ok(statusChanged(written, nextStatus(written, 1, modelAPINotReady(), T1)), 'a mirror that goes is news');
  const notReady = nextStatus(written, 1, rolled({ readyReplicas: 0, availableReplicas: 0 }), T1);
  t.ok(statusChanged(written, notReady), 'a new verdict is news, and carries the fresh mirror');
  t.equal(notReady.deployment?.readyReplicas, 0);
});
