// Operator-wide defaults for every generated pod (config.workload; docs/configuration.md's configuration
// table). They apply to the generated pod before spec.container and spec.podSpec, so the
// user's object always wins: spec.container.resources replaces the default resources whole,
// and spec.podSpec is strategically merged on top of everything here (pod-merge.ts), e.g.
// `nodeSelector: {pool: null}` removes a default key and a container's `securityContext`
// merges into the generated one.
//
// Every value is copied, never shared with the config, so a caller that edits a rendered
// object cannot change the next render.
import type { WorkloadKind } from '../api/kinds.ts';
import type { ResourceDefaults, WorkloadDefaults } from '../config/config.ts';
import type { Container, PodSpec } from './k8s.ts';

/**
 * `hardened` security context of each generated container. Deliberately NOT set:
 * - runAsNonRoot / runAsUser: the KAOS images run as their image's user, which is root for
 *   Ollama (it writes its models under /root/.ollama) and for python:3.12-slim / node:22-slim,
 *   where `pip install` writes the root-owned site-packages and npx its cache under /root;
 *   a non-root default would stop them.
 * - readOnlyRootFilesystem: pip installs into the root filesystem, npx writes its cache under
 *   $HOME, LiteLLM and Ollama write temporary files.
 * What is set costs these images nothing: none of them escalates privileges (setuid, sudo) or
 * needs a capability (every port is above 1024; without CAP_DAC_OVERRIDE root still writes the
 * root-owned image files and the world-writable emptyDir).
 */
const CONTAINER_SECURITY_CONTEXT = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } as const;

/**
 * seccomp at pod level rather than per container: it then also covers the sidecars a podSpec
 * adds (the container-level fields above have no pod-level equivalent). Pod Security's
 * `restricted` profile accepts either place.
 */
const POD_SECURITY_CONTEXT = { seccompProfile: { type: 'RuntimeDefault' } } as const;

const RESOURCES_KEY: Readonly<Record<WorkloadKind, keyof WorkloadDefaults['resources']>> = {
  Agent: 'agent',
  ModelAPI: 'modelAPI',
  MCPServer: 'mcpServer',
  MemoryStore: 'memoryStore',
};

/**
 * The generated main container with the kind's default resources, for spec.container to
 * override. Only the main container: the pod's useful work runs there, and an init container
 * without resources does not add to the pod's requests.
 */
export function withDefaultResources(container: Container, kind: WorkloadKind, defaults: WorkloadDefaults): Container {
  const resources: ResourceDefaults | undefined = defaults.resources[RESOURCES_KEY[kind]];
  if (resources === undefined) return container;
  return { ...container, resources: structuredClone(resources) };
}

/**
 * The generated pod with the pod-level defaults and the container security context on every
 * generated container (main and init). spec.container carries none of these fields, so applying
 * them after it is the same as before it; spec.podSpec must come after this.
 */
export function withPodDefaults(podSpec: PodSpec, defaults: WorkloadDefaults): PodSpec {
  const hardened = defaults.securityContext === 'hardened';
  const harden = (c: Container): Container => (hardened ? { ...c, securityContext: structuredClone(CONTAINER_SECURITY_CONTEXT) } : c);
  const out: PodSpec = { ...podSpec, containers: podSpec.containers.map(harden) };
  if (podSpec.initContainers !== undefined) out.initContainers = podSpec.initContainers.map(harden);
  if (hardened) out['securityContext'] = structuredClone(POD_SECURITY_CONTEXT);
  if (defaults.imagePullSecrets.length > 0) out['imagePullSecrets'] = defaults.imagePullSecrets.map((name) => ({ name }));
  if (defaults.nodeSelector !== undefined) out['nodeSelector'] = structuredClone(defaults.nodeSelector);
  if (defaults.tolerations !== undefined) out['tolerations'] = structuredClone(defaults.tolerations);
  if (defaults.affinity !== undefined) out['affinity'] = structuredClone(defaults.affinity);
  return out;
}
