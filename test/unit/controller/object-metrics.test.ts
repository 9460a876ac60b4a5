// kaos_operator_objects and kaos_operator_object_not_ready_seconds: computed from the cache's
// objects at each scrape (docs/metrics.md).
import t from 'tap';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { objectSeries, readinessCondition, registerObjectMetrics } from '../../../src/controller/object-metrics.ts';
import { createRegistry } from '../../../src/leaves/prometheus.ts';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const object = (name: string, status: Record<string, unknown> | undefined, created = '2026-01-01T11:00:00Z'): KubeObject => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind: 'Agent',
  metadata: { name, namespace: 'ns', creationTimestamp: created },
  ...(status === undefined ? {} : { status }),
});
const ready = (type: string, status: string, reason: string, at: string) => ({ conditions: [{ type, status, reason, message: '', lastTransitionTime: at }] });

t.test('the readiness condition is the one of the kind\'s initial status: Ready, an AccessGrant\'s Enforced', async (t) => {
  t.equal(readinessCondition('Agent'), 'Ready');
  t.equal(readinessCondition('ModelAPI'), 'Ready');
  t.equal(readinessCondition('AccessGrant'), 'Enforced');
});

t.test('counts per phase, every phase present; one not-ready series per object whose condition is not True', async (t) => {
  const { counts, notReady } = objectSeries('Agent', [
    object('a', { phase: 'Ready', ...ready('Ready', 'True', 'DeploymentReady', '2026-01-01T11:50:00Z') }),
    object('b', { phase: 'Pending', ...ready('Ready', 'False', 'ModelAPINotFound', '2026-01-01T11:45:00Z') }),
    object('c', { phase: 'Waiting', ...ready('Ready', 'False', 'ModelAPINotReady', '2026-01-01T11:59:30Z') }),
    object('d', undefined, '2026-01-01T11:58:00Z'),
    object('e', ready('Ready', 'Unknown', 'Pending', '1970-01-01T00:00:00Z'), '2026-01-01T11:55:00Z'),
  ], NOW);
  t.same(counts, [
    { value: 1, labels: { kind: 'Agent', phase: 'Pending' } },
    { value: 1, labels: { kind: 'Agent', phase: 'Waiting' } },
    { value: 1, labels: { kind: 'Agent', phase: 'Ready' } },
    { value: 0, labels: { kind: 'Agent', phase: 'Failed' } },
    { value: 2, labels: { kind: 'Agent', phase: 'Unknown' } },
  ]);
  t.same(notReady, [
    { value: 900, labels: { kind: 'Agent', object_namespace: 'ns', name: 'b', reason: 'ModelAPINotFound' } },
    { value: 30, labels: { kind: 'Agent', object_namespace: 'ns', name: 'c', reason: 'ModelAPINotReady' } },
    { value: 120, labels: { kind: 'Agent', object_namespace: 'ns', name: 'd', reason: 'NoCondition' } },
    { value: 300, labels: { kind: 'Agent', object_namespace: 'ns', name: 'e', reason: 'Pending' } },
  ], 'seconds since the transition; since creation while the condition is missing or still the initial epoch');
});

t.test('rendered at each scrape from what the store holds then, for every kind', async (t) => {
  const registry = createRegistry({ defaultMetrics: false });
  const held: KubeObject[] = [object('b', { phase: 'Failed', ...ready('Ready', 'False', 'ImagePullBackOff', '2026-01-01T11:59:00Z') })];
  registerObjectMetrics(registry, (kind) => (kind === 'Agent' ? held : []), () => NOW);
  let text = await registry.metrics();
  t.match(text, 'kaos_operator_objects{kind="Agent",phase="Failed"} 1');
  t.match(text, 'kaos_operator_objects{kind="AccessGrant",phase="Ready"} 0');
  t.match(text, 'kaos_operator_object_not_ready_seconds{kind="Agent",object_namespace="ns",name="b",reason="ImagePullBackOff"} 60');
  held.length = 0;
  text = await registry.metrics();
  t.match(text, 'kaos_operator_objects{kind="Agent",phase="Failed"} 0');
  t.notMatch(text, /kaos_operator_object_not_ready_seconds\{/, 'no series once every object is ready (or gone)');
  t.match(text, '# TYPE kaos_operator_object_not_ready_seconds gauge', 'the family is still declared');
});
