// The status the benchmarks' rollout stand-in writes (test/bench/rollout-stand-in.ts) must mean to
// the operator exactly what the Deployment controller's means after a finished rollout: Ready,
// and nothing left to roll out, for any replica count; and a later generation is rolled out again.
import t from 'tap';
import type { KubeObject } from '../../../src/api/meta.ts';
import { deploymentProgress, rolloutState, mirrorDeployment } from '../../../src/controller/status.ts';
import { needsRollout, rolledOutStatus } from '../../bench/rollout-stand-in.ts';

const deployment = (generation: number, replicas?: number, status?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'agent-a', namespace: 'bench', generation },
  spec: { ...(replicas === undefined ? {} : { replicas }), template: {} },
  ...(status === undefined ? {} : { status }),
});

t.test('a new Deployment needs a rollout; once its status is written the operator reads it as Ready', async (t) => {
  for (const replicas of [undefined, 1, 3]) {
    const fresh = deployment(1, replicas);
    t.ok(needsRollout(fresh), `replicas ${String(replicas)}: no status yet, so a rollout is due`);
    t.equal(deploymentProgress(fresh).phase, 'Pending', 'and the operator waits for it');
    const done = deployment(1, replicas, rolledOutStatus(fresh, new Date(Date.UTC(2026, 10, 25))));
    t.notOk(needsRollout(done), 'the written status has observed the generation');
    const progress = deploymentProgress(done);
    t.equal(progress.phase, 'Ready', 'the operator reads the written status as Ready');
    t.equal(progress.reason, 'DeploymentReady');
    t.equal(rolloutState(done, mirrorDeployment(done), replicas ?? 1), undefined, 'no rollout left, as kubectl rollout status would say');
  }
});

t.test('a later generation is due again and reads as rolling out until written', async (t) => {
  const first = deployment(1, 1, rolledOutStatus(deployment(1, 1), new Date()));
  const changed = { ...first, metadata: { ...first.metadata, generation: 2 } };
  t.ok(needsRollout(changed), 'observedGeneration 1 is behind generation 2');
  t.equal(deploymentProgress(changed).phase, 'Pending', 'the operator sees the new template rolling out');
  const status = rolledOutStatus(changed, new Date());
  t.equal(status.observedGeneration, 2, 'the new status observes generation 2');
  t.equal(deploymentProgress({ ...changed, status }).phase, 'Ready');
});
