// The rules of an Agent's replicas and autoscaling beyond its schema (docs/api.md, "Agent
// replicas, kubectl scale and autoscaling"): the two are exclusive; more than one replica needs
// memory outside the agent's process; maxReplicas at least minReplicas; an autoscaled resource
// without a request on the agent container is warned about. Each rule is an ordinary field error
// on the field it judges. What each reads of the spec:
// - replicas with autoscaling: `spec.replicas`, `spec.autoscaling`;
// - in-process memory: `spec.replicas`, `spec.autoscaling.maxReplicas`, `spec.config.memory`;
// - maxReplicas below minReplicas: `spec.autoscaling`;
// - no request (warning): `spec.autoscaling`, `spec.container.resources`, `spec.podSpec`.
import { AUTOSCALED_RESOURCES, declaredReplicas, inProcessMemory, isAutoscaled, minReplicas, utilizationTargets } from '../agent-scaling.ts';
import { forbidden, invalid, type FieldError } from '../field-error.ts';
import { asArray, asRecord, getIn, type JsonRecord } from '../json.ts';
import { clampWarning } from '../warnings.ts';
import type { ValidationResult } from './validation-types.ts';

const AUTOSCALING = 'spec.autoscaling';

/** KAOS's agent container, which an HPA's Resource metric measures (render/names.ts's CONTAINER_NAME). */
const AGENT_CONTAINER = 'agent';

/** The refusal of more than one replica while the agent keeps its sessions in its own process. */
export const IN_PROCESS_MEMORY_DETAIL =
  'an Agent with in-process memory must run one replica (each replica would keep its own sessions): bind a MemoryStore (config.memory.memoryStore) or disable memory';

/**
 * `defaultRequests`: the resources the operator's own defaults request for the agent container
 * (DEFAULT_AGENT_RESOURCES), which stand when `spec.container.resources` does not replace them.
 */
export function validateAgentScaling(spec: JsonRecord, defaultRequests: readonly string[] = []): ValidationResult {
  const errors: FieldError[] = [];
  const warnings: string[] = [];
  const replicas = declaredReplicas(spec);
  const autoscaled = isAutoscaled(spec);
  if (replicas !== undefined && autoscaled) errors.push(forbidden(AUTOSCALING, 'may not be set together with spec.replicas'));

  const maxReplicas = getIn(spec, 'autoscaling', 'maxReplicas');
  const inProcess = inProcessMemory(spec);
  if (replicas !== undefined && replicas > 1 && inProcess) errors.push(invalid('spec.replicas', replicas, IN_PROCESS_MEMORY_DETAIL));
  if (typeof maxReplicas === 'number' && autoscaled) {
    if (maxReplicas > 1 && inProcess) errors.push(invalid(`${AUTOSCALING}.maxReplicas`, maxReplicas, IN_PROCESS_MEMORY_DETAIL));
    const least = minReplicas(spec);
    if (maxReplicas < least) errors.push(invalid(`${AUTOSCALING}.maxReplicas`, maxReplicas, `must be greater than or equal to minReplicas (${least})`));
  }

  if (autoscaled) {
    const requested = agentRequests(spec, defaultRequests);
    for (const { resource } of utilizationTargets(spec)) {
      if (!requested.has(resource)) {
        warnings.push(clampWarning(`${AUTOSCALING}: the HPA cannot compute ${resource} utilization without a ${resource} request on the agent container`));
      }
    }
  }
  return { errors, warnings };
}

/**
 * The resources the agent container requests once rendered: `spec.container.resources` replaces
 * the operator's defaults whole (render/container.ts), and `spec.podSpec`'s container `agent` is
 * merged onto that key by key.
 */
function agentRequests(spec: JsonRecord, defaultRequests: readonly string[]): Set<string> {
  const override = asRecord(getIn(spec, 'container', 'resources'));
  const base = override === undefined ? defaultRequests : Object.keys(asRecord(override.requests) ?? {});
  const fragment = (asArray(getIn(spec, 'podSpec', 'containers')) ?? []).map(asRecord).find((c) => c?.name === AGENT_CONTAINER);
  const merged = Object.keys(asRecord(getIn(fragment, 'resources', 'requests')) ?? {});
  const known: readonly string[] = AUTOSCALED_RESOURCES.map((r) => r.resource);
  return new Set([...base, ...merged].filter((r) => known.includes(r)));
}
