// An Agent's HorizontalPodAutoscaler `agent-<name>` (docs/api.md, "Agent replicas, kubectl scale
// and autoscaling"): autoscaling/v2, aimed at the Deployment of the same name, one Resource metric
// per utilization target.
import { isAutoscaled, minReplicas, utilizationTargets } from '../api/agent-scaling.ts';
import { getIn } from '../api/json.ts';
import type { HorizontalPodAutoscaler } from './k8s.ts';
import { childMeta, type ParentIdentity } from './labels.ts';
import { workloadName } from './names.ts';

/** The HPA `spec.autoscaling` asks for, or undefined without it. */
export function renderAutoscaler(parent: ParentIdentity, spec: unknown): HorizontalPodAutoscaler | undefined {
  if (!isAutoscaled(spec)) return undefined;
  const maxReplicas = getIn(spec, 'autoscaling', 'maxReplicas');
  const name = workloadName(parent.kind, parent.name);
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: childMeta(parent, name),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name },
      minReplicas: minReplicas(spec),
      // Required by the schema; the minimum stands in for a spec the webhook has not seen.
      maxReplicas: typeof maxReplicas === 'number' ? maxReplicas : minReplicas(spec),
      metrics: utilizationTargets(spec).map(({ resource, percent }) => ({
        type: 'Resource',
        resource: { name: resource, target: { type: 'Utilization', averageUtilization: percent } },
      })),
    },
  };
}
