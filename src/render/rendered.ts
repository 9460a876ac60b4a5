// The result of rendering one parent: every child it should own right now. A child that is
// absent here (Service after `expose: false`, ConfigMap outside Proxy-with-ConfigMap, HTTPRoute
// with the gateway off, a MemoryStore's claim in external mode or its PodDisruptionBudget with
// one replica, an Agent's HorizontalPodAutoscaler without autoscaling, an Agent's
// ServiceAccount under another identity provider) is one the reconciler
// deletes if it exists (docs/api.md, "Common behaviour").
import type { Child, ConfigMap, Deployment, HorizontalPodAutoscaler, HTTPRoute, PersistentVolumeClaim, PodDisruptionBudget, Service, ServiceAccount } from './k8s.ts';

export interface Rendered {
  /** An Agent's identity, under ServiceAccount identity. */
  readonly serviceAccount?: ServiceAccount;
  readonly deployment: Deployment;
  readonly service?: Service;
  readonly configMap?: ConfigMap;
  readonly persistentVolumeClaim?: PersistentVolumeClaim;
  readonly podDisruptionBudget?: PodDisruptionBudget;
  /** An Agent's, with `spec.autoscaling`: it aims at the Deployment, so it comes after it. */
  readonly horizontalPodAutoscaler?: HorizontalPodAutoscaler;
  readonly httpRoute?: HTTPRoute;
  /** The parent's status.endpoint; undefined when it has no Service. */
  readonly endpoint?: string;
}

/**
 * The desired children in apply order: the pod's ServiceAccount, config and storage first, so
 * pods never start without them (a pod naming a missing ServiceAccount is refused).
 */
export function childrenOf(rendered: Rendered): Child[] {
  const out: Child[] = [];
  if (rendered.serviceAccount !== undefined) out.push(rendered.serviceAccount);
  if (rendered.configMap !== undefined) out.push(rendered.configMap);
  if (rendered.persistentVolumeClaim !== undefined) out.push(rendered.persistentVolumeClaim);
  out.push(rendered.deployment);
  if (rendered.horizontalPodAutoscaler !== undefined) out.push(rendered.horizontalPodAutoscaler);
  if (rendered.service !== undefined) out.push(rendered.service);
  if (rendered.podDisruptionBudget !== undefined) out.push(rendered.podDisruptionBudget);
  if (rendered.httpRoute !== undefined) out.push(rendered.httpRoute);
  return out;
}
