// The soak's fault plan and drift writes, pure: every kind of fault in every plan, at times inside
// the traffic, the same for the same seed; each drift write touches a field the operator owns.
import t from 'tap';
import type { KubeObject } from '../../../src/api/meta.ts';
import { DRIFT_MANAGER, FAULT_KINDS, driftWrite, planFaults } from '../../soak/faults.ts';
import { Random } from '../../soak/random.ts';

t.test('a plan holds every kind, inside the window, about one per interval', async (t) => {
  for (const [window, count] of [[60_000, 6], [1_800_000, 90]] as const) {
    const plan = planFaults(new Random('plan'), window);
    t.equal(plan.length, count, `${window / 1000} s: ${count} faults`);
    t.same([...new Set(plan.map((f) => f.kind))].sort(), [...FAULT_KINDS].sort(), 'every kind');
    t.ok(plan.every((f) => f.atMs >= 3000 && f.atMs <= window - 5000), 'none in the first 3 s or the last 5 s');
    t.same(plan.map((f) => f.atMs), [...plan.map((f) => f.atMs)].sort((a, b) => a - b), 'in time order');
  }
  t.same(planFaults(new Random('x'), 120_000), planFaults(new Random('x'), 120_000), 'the same seed, the same plan');
  t.not(JSON.stringify(planFaults(new Random('x'), 120_000)), JSON.stringify(planFaults(new Random('y'), 120_000)));
});

const deployment: KubeObject = {
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'agent-a', namespace: 'ns', labels: { 'app.kubernetes.io/managed-by': 'kaos-operator' } },
  spec: { template: { spec: { containers: [{ name: 'agent', image: 'img:1', env: [{ name: 'AGENT_NAME', value: 'a' }] }] } } },
};
const service: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'agent-a', namespace: 'ns' }, spec: { selector: { app: 'agent', agent: 'a' }, ports: [{ port: 8000, protocol: 'TCP', targetPort: 8000 }] } };
const configMap: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'litellm-config-m', namespace: 'ns' }, data: { 'config.yaml': 'model_list: []\n' } };

t.test('drift writes change values the operator set, never add fields of their own', async (t) => {
  const seen = new Set<string>();
  const rng = new Random('drift');
  for (let i = 0; i < 200; i++) {
    for (const child of [deployment, service, configMap]) {
      const w = driftWrite(child, rng);
      seen.add(w.what.replace(/^\S+ ns\/\S+ /, `${child.kind ?? ''} `));
      if (w.apply === undefined && w.patch === undefined) t.fail(`${w.what}: no write`);
    }
  }
  t.same([...seen].sort(), [
    'ConfigMap app.kubernetes.io/managed-by changed', 'ConfigMap data changed',
    'Deployment app.kubernetes.io/managed-by changed', 'Deployment env AGENT_NAME changed', 'Deployment image changed',
    'Service app.kubernetes.io/managed-by changed', 'Service selector changed', 'Service targetPort changed',
  ]);
  const selector = driftWrite(service, new Random('s'));
  if (selector.patch !== undefined && selector.what.includes('selector')) t.same(Object.keys((selector.patch as { spec: { selector: object } }).spec.selector), ['app', 'agent'], 'only keys the operator set');
  t.equal(DRIFT_MANAGER, 'soak-drift');
});
