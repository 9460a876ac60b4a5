// The Deployment and Service every kind owns (docs/api.md, "Common behaviour"): one replica at creation, selector =
// the two selector labels, the operator's pod defaults, then the user's spec.podSpec merged
// last, then the hashes that roll the pods whenever the pod spec or the config file changes.
import type { WorkloadDefaults } from '../config/config.ts';
import { childMeta, selectorLabels, type ParentIdentity } from './labels.ts';
import type { Deployment, PodDisruptionBudget, PodSpec, Service } from './k8s.ts';
import { CONFIG_HASH_ANNOTATION, POD_SPEC_HASH_ANNOTATION, configHash, podSpecHash } from './hash.ts';
import { CONTAINER_NAME, workloadName } from './names.ts';
import { mergePodSpec } from './pod-merge.ts';
import { withPodDefaults } from './pod-defaults.ts';

/** Read by `kubectl logs` / `exec` / `attach` when no `-c` is given (kubectl ≥ 1.21). */
export const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';

export interface WorkloadInput {
  readonly parent: ParentIdentity;
  /** The generated pod spec, spec.container already applied. */
  readonly podSpec: PodSpec;
  /** spec.podSpec, merged onto podSpec. */
  readonly podSpecPatch: unknown;
  /** config.workload: applied to podSpec before podSpecPatch. */
  readonly defaults: WorkloadDefaults;
  /**
   * What identifies the config file a ConfigMap or Secret mounts into the pod: the ConfigMap's
   * content, or a Secret's identity and resourceVersion (see configSourceOfSecret). Its hash
   * goes into the pod template because a changed ConfigMap/Secret alone does not restart pods.
   * Undefined: no such file, or nothing is known of it (annotation omitted).
   */
  readonly configSource?: string | undefined;
  /** Default 1 (an Agent without replicas or autoscaling, a ModelAPI and an MCPServer start at one and leave it to `kubectl scale`). */
  readonly replicas?: number;
  /** Recreate: a pod holding a ReadWriteOnce volume must be gone before its successor mounts it. */
  readonly recreate?: boolean;
  /** false: POD_SPEC_HASH_PLACEHOLDER instead of the pod spec's hash (RenderConfig.podSpecHash). */
  readonly hashPodSpec?: boolean;
}

/** The pod-spec-hash of a pod rendered to be judged, never run (RenderConfig.podSpecHash). */
export const POD_SPEC_HASH_PLACEHOLDER = 'not-hashed';

/**
 * replicas is 1 unless given; docs/api.md ("Common behaviour") says it is never reconciled afterwards, so the reconciler
 * leaves spec.replicas out of what it applies to an existing Deployment (with server-side apply
 * and force, applying it would fight `kubectl scale` and HPAs) — except a MemoryStore's, whose
 * `spec.replicas` owns it (the kind table's `replicas: 'spec'`), and an Agent's that declares
 * `spec.replicas` (`replicas: 'declared'`).
 */
export function buildDeployment(input: WorkloadInput): Deployment {
  const { parent } = input;
  const podSpec = mergePodSpec(withPodDefaults(input.podSpec, input.defaults), input.podSpecPatch);
  // The main container by name, so kubectl picks it even when spec.podSpec adds sidecars.
  const annotations: Record<string, string> = {
    [DEFAULT_CONTAINER_ANNOTATION]: CONTAINER_NAME[parent.kind],
    [POD_SPEC_HASH_ANNOTATION]: input.hashPodSpec === false ? POD_SPEC_HASH_PLACEHOLDER : podSpecHash(podSpec),
  };
  if (input.configSource !== undefined) annotations[CONFIG_HASH_ANNOTATION] = configHash(input.configSource);
  const selector = selectorLabels(parent.kind, parent.name);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: childMeta(parent, workloadName(parent.kind, parent.name)),
    spec: {
      replicas: input.replicas ?? 1,
      selector: { matchLabels: selector },
      ...(input.recreate === true ? { strategy: { type: 'Recreate' as const } } : {}),
      template: {
        // Pods carry only the selector labels: managed-by describes the operator's own
        // children, and pods belong to their ReplicaSet.
        metadata: { labels: { ...selector }, annotations },
        spec: podSpec,
      },
    },
  };
}

/** ClusterIP Service with one TCP port named http, port = targetPort. */
export function buildService(parent: ParentIdentity, port: number): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMeta(parent, workloadName(parent.kind, parent.name)),
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(parent.kind, parent.name),
      ports: [{ name: 'http', port, targetPort: port, protocol: 'TCP' }],
    },
  };
}

/**
 * The PodDisruptionBudget `<kind>-<name>` of a workload run with two or more replicas
 * (docs/api.md, "MemoryStore" and "Agent replicas"): one pod always stays through a voluntary
 * disruption such as a node drain.
 */
export function buildDisruptionBudget(parent: ParentIdentity): PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: childMeta(parent, workloadName(parent.kind, parent.name)),
    spec: { minAvailable: 1, selector: { matchLabels: selectorLabels(parent.kind, parent.name) } },
  };
}
