// An Agent's replicas and autoscaling (docs/api.md, "Agent replicas, kubectl scale and
// autoscaling"): what render, admission and the status read of them, stated once. Pure.
import { AGENT_DEFAULTS } from './defaults.ts';
import { asRecord, getIn } from './json.ts';

/** The resources an HPA can aim at, by their `spec.autoscaling` field. */
export const AUTOSCALED_RESOURCES = [
  { resource: 'cpu', field: 'targetCPUUtilizationPercentage' },
  { resource: 'memory', field: 'targetMemoryUtilizationPercentage' },
] as const;

export type AutoscaledResource = (typeof AUTOSCALED_RESOURCES)[number]['resource'];

/** A utilization target of the HPA: a resource and its average utilization in percent. */
export interface UtilizationTarget {
  readonly resource: AutoscaledResource;
  readonly percent: number;
}

const int = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) ? value : undefined);

/** `spec.replicas` when declared (a number), else undefined: the Deployment's count is then not the Agent's. */
export function declaredReplicas(spec: unknown): number | undefined {
  return int(getIn(spec, 'replicas'));
}

/** Whether `spec.autoscaling` is set (an HPA is desired). */
export function isAutoscaled(spec: unknown): boolean {
  return asRecord(getIn(spec, 'autoscaling')) !== undefined;
}

/** `spec.autoscaling.minReplicas`, else its default. */
export function minReplicas(spec: unknown): number {
  return int(getIn(spec, 'autoscaling', 'minReplicas')) ?? AGENT_DEFAULTS.autoscaling.minReplicas;
}

/**
 * The HPA's targets in the order of AUTOSCALED_RESOURCES: each one set, and CPU at its default
 * when no memory target is set either.
 */
export function utilizationTargets(spec: unknown): UtilizationTarget[] {
  const autoscaling = asRecord(getIn(spec, 'autoscaling'));
  if (autoscaling === undefined) return [];
  const set = AUTOSCALED_RESOURCES.flatMap(({ resource, field }) => {
    const percent = int(autoscaling[field]);
    return percent === undefined ? [] : [{ resource, percent }];
  });
  return set.length > 0 ? set : [{ resource: 'cpu', percent: AGENT_DEFAULTS.autoscaling.targetCPUUtilizationPercentage }];
}

/**
 * The count the Agent declares: `spec.replicas`, else the HPA's minimum, else 1. The Deployment
 * starts at it (docs/api.md, "Common behaviour"), and from two up the Agent gets a
 * PodDisruptionBudget.
 */
export function baseReplicas(spec: unknown): number {
  return declaredReplicas(spec) ?? (isAutoscaled(spec) ? minReplicas(spec) : 1);
}

/**
 * Whether the agent keeps its memory in its own process: no MemoryStore bound and memory not
 * disabled (an absent `config.memory` counts as enabled: KAOS's agent image keeps session memory
 * in its process by default).
 */
export function inProcessMemory(spec: unknown): boolean {
  const memory = asRecord(getIn(spec, 'config', 'memory'));
  if (memory === undefined) return true;
  if (memory.enabled === false) return false;
  return typeof memory.memoryStore !== 'string' || memory.memoryStore === '';
}
