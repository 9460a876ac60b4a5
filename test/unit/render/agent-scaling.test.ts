// An Agent's replicas, HorizontalPodAutoscaler and PodDisruptionBudget (docs/api.md, "Agent
// replicas, kubectl scale and autoscaling"), the expected objects written out from the contract.
import t from 'tap';
import { renderAgent } from '../../../src/render/agent.ts';
import type { AgentDeps, AgentInput } from '../../../src/render/inputs.ts';
import { childrenOf } from '../../../src/render/rendered.ts';
import { config } from './helpers.ts';

const deps: AgentDeps = { modelAPI: { endpoint: 'http://modelapi-llm.team.svc.cluster.local:8000' }, mcpServers: [], peers: [] };

const agent = (extra: Record<string, unknown>): AgentInput => ({
  metadata: { name: 'helper', namespace: 'team', uid: 'uid-h' },
  spec: { modelAPI: 'llm', config: { memory: { memoryStore: 'shared' } }, ...extra } as AgentInput['spec'],
});

/** §1's child metadata: the two selector labels, managed-by, and the controller owner reference. */
const META = {
  name: 'agent-helper',
  namespace: 'team',
  labels: { app: 'agent', agent: 'helper', 'app.kubernetes.io/managed-by': 'kaos-operator' },
  ownerReferences: [{ apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', name: 'helper', uid: 'uid-h', controller: true, blockOwnerDeletion: true }],
};

const PDB = {
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: META,
  spec: { minAvailable: 1, selector: { matchLabels: { app: 'agent', agent: 'helper' } } },
};

const hpa = (minReplicas: number, maxReplicas: number, metrics: { name: string; percent: number }[]) => ({
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: META,
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'agent-helper' },
    minReplicas,
    maxReplicas,
    metrics: metrics.map(({ name, percent }) => ({ type: 'Resource', resource: { name, target: { type: 'Utilization', averageUtilization: percent } } })),
  },
});

const kinds = (extra: Record<string, unknown>): string[] => childrenOf(renderAgent(agent(extra), deps, config)).map((c) => c.kind);

t.test('without replicas or autoscaling: one replica, no HPA, no PDB (as before)', async (t) => {
  const rendered = renderAgent(agent({}), deps, config);
  t.equal(rendered.deployment.spec.replicas, 1);
  t.equal(rendered.horizontalPodAutoscaler, undefined);
  t.equal(rendered.podDisruptionBudget, undefined);
  t.same(kinds({}), ['Deployment', 'Service']);
});

t.test('spec.replicas: the Deployment runs that many; a PDB from two up', async (t) => {
  const three = renderAgent(agent({ replicas: 3 }), deps, config);
  t.equal(three.deployment.spec.replicas, 3);
  t.strictSame(three.podDisruptionBudget, PDB);
  t.equal(three.horizontalPodAutoscaler, undefined);
  t.same(kinds({ replicas: 3 }), ['Deployment', 'Service', 'PodDisruptionBudget']);
  t.equal(renderAgent(agent({ replicas: 2 }), deps, config).podDisruptionBudget?.spec.minAvailable, 1, 'two replicas: a PDB');
  t.equal(renderAgent(agent({ replicas: 1 }), deps, config).podDisruptionBudget, undefined, 'one replica: none');
  const zero = renderAgent(agent({ replicas: 0 }), deps, config);
  t.equal(zero.deployment.spec.replicas, 0, 'zero is applied');
  t.equal(zero.podDisruptionBudget, undefined, 'zero replicas: none');
  t.ok(zero.service, 'the Service stays while scaled to zero');
});

t.test('spec.autoscaling: an autoscaling/v2 HPA aimed at the Deployment; creation at minReplicas', async (t) => {
  const scaled = renderAgent(agent({ autoscaling: { maxReplicas: 5 } }), deps, config);
  t.strictSame(scaled.horizontalPodAutoscaler, hpa(1, 5, [{ name: 'cpu', percent: 80 }]), 'minReplicas default 1, CPU 80 when no memory target');
  t.equal(scaled.deployment.spec.replicas, 1);
  t.equal(scaled.podDisruptionBudget, undefined, 'minReplicas 1: no PDB');
  t.same(kinds({ autoscaling: { maxReplicas: 5 } }), ['Deployment', 'HorizontalPodAutoscaler', 'Service'], 'the HPA right after the Deployment it aims at');

  const both = renderAgent(agent({ autoscaling: { minReplicas: 2, maxReplicas: 10, targetCPUUtilizationPercentage: 60, targetMemoryUtilizationPercentage: 70 } }), deps, config);
  t.strictSame(both.horizontalPodAutoscaler, hpa(2, 10, [{ name: 'cpu', percent: 60 }, { name: 'memory', percent: 70 }]));
  t.equal(both.deployment.spec.replicas, 2, 'creation starts at minReplicas');
  t.strictSame(both.podDisruptionBudget, PDB, 'minReplicas 2: a PDB');

  const memoryOnly = renderAgent(agent({ autoscaling: { minReplicas: 1, maxReplicas: 3, targetMemoryUtilizationPercentage: 75 } }), deps, config);
  t.strictSame(memoryOnly.horizontalPodAutoscaler, hpa(1, 3, [{ name: 'memory', percent: 75 }]), 'a memory target alone: no default CPU target');
});

t.test('an unexposed Agent keeps its HPA and PDB', async (t) => {
  const extra = { replicas: 2, agentNetwork: { expose: false } };
  t.same(kinds(extra), ['Deployment', 'PodDisruptionBudget']);
});
