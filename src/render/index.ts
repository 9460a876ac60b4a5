// render: pure `(parent, resolved dependencies, operator config) → desired children`
// (src/render/README.md). The reconcilers call renderAgent/renderModelAPI/renderMCPServer/renderMemoryStore; the webhooks
// call defaultImageFor (mutating) and renderPodSpec (validating dry-run of spec.podSpec).
import type { WorkloadKind } from '../api/kinds.ts';
import { renderAgent } from './agent.ts';
import type { AgentDeps, AgentInput, MCPServerDeps, MCPServerInput, MemoryStoreInput, ModelAPIInput, RenderConfig } from './inputs.ts';
import type { Deployment, PodSpec } from './k8s.ts';
import { renderMCPServer } from './mcpserver.ts';
import { renderModelAPI } from './modelapi.ts';
import { renderMemoryStore } from './memorystore.ts';
import { endpointFor } from './names.ts';

export { renderAgent, renderAgentBeforeDependencies, agentEnv, agentExposed, MEMORY_DEFAULTS } from './agent.ts';
export { renderModelAPI } from './modelapi.ts';
export { isRuntimeShape, renderMCPServer } from './mcpserver.ts';
export { renderMemoryStore } from './memorystore.ts';
export { fragmentPath, mergePodSpec } from './pod-merge.ts';
export {
  canonicalJSON,
  podSpecHash,
  configHash,
  configSourceOfSecret,
  POD_SPEC_HASH_ANNOTATION,
  CONFIG_HASH_ANNOTATION,
} from './hash.ts';
export { DEFAULT_CONTAINER_ANNOTATION } from './workload.ts';
export { defaultImageFor } from './images.ts';
export { childrenOf, type Rendered } from './rendered.ts';
export {
  endpointFor,
  workloadName,
  routeName,
  configMapName,
  persistentVolumeClaimName,
  CONTAINER_NAME,
  modelAPIPort,
} from './names.ts';
export { selectorLabels, childLabels, MANAGED_BY_LABEL, MANAGED_BY_VALUE } from './labels.ts';
export type * from './inputs.ts';
export type * from './k8s.ts';

export interface RenderedPod {
  /** The final pod spec: generated, spec.container applied, spec.podSpec merged. */
  readonly podSpec: PodSpec;
  /** The Deployment carrying it, e.g. for a server-side dry-run create. */
  readonly deployment: Deployment;
}

/**
 * The pod an object would run, for the validating webhook to check spec.podSpec (docs/api.md, "Validation"):
 * it can dry-run `deployment` against the API server. The pod's validity does not depend on
 * the dependencies' live state, so for an Agent they default to what the spec names: MCPServer
 * and peer endpoints are computed (they are deterministic), the ModelAPI endpoint is empty
 * (its port depends on a mode only the cache knows). Pass real deps to get the real pod. Its
 * pod-spec-hash annotation is a placeholder (RenderConfig.podSpecHash): the verdict does not
 * depend on it.
 */
export function renderPodSpec(kind: 'Agent', object: AgentInput, config: RenderConfig, deps?: AgentDeps): RenderedPod;
export function renderPodSpec(kind: 'ModelAPI', object: ModelAPIInput, config: RenderConfig): RenderedPod;
export function renderPodSpec(kind: 'MCPServer', object: MCPServerInput, config: RenderConfig, deps?: MCPServerDeps): RenderedPod;
export function renderPodSpec(kind: 'MemoryStore', object: MemoryStoreInput, config: RenderConfig): RenderedPod;
export function renderPodSpec(
  kind: WorkloadKind,
  object: AgentInput | ModelAPIInput | MCPServerInput | MemoryStoreInput,
  config: RenderConfig,
  deps?: AgentDeps | MCPServerDeps,
): RenderedPod;
export function renderPodSpec(
  kind: WorkloadKind,
  object: AgentInput | ModelAPIInput | MCPServerInput | MemoryStoreInput,
  config: RenderConfig,
  deps?: AgentDeps | MCPServerDeps,
): RenderedPod {
  // Judged, never run: the hash of the pod would cost as much as the pod is large, for nothing.
  config = { ...config, podSpecHash: false };
  let deployment: Deployment;
  switch (kind) {
    case 'Agent': {
      const agent = object as AgentInput;
      deployment = renderAgent(agent, deps !== undefined && 'modelAPI' in deps ? deps : placeholderAgentDeps(agent), config).deployment;
      break;
    }
    case 'ModelAPI':
      deployment = renderModelAPI(object as ModelAPIInput, {}, config).deployment;
      break;
    case 'MCPServer':
      deployment = renderMCPServer(object as MCPServerInput, config, deps !== undefined && !('modelAPI' in deps) ? deps : {}).deployment;
      break;
    case 'MemoryStore':
      // The model endpoint only fills an env value: the pod's validity does not depend on it.
      deployment = renderMemoryStore(object as MemoryStoreInput, { summarizationEndpoint: '' }, config).deployment;
      break;
  }
  return { podSpec: deployment.spec.template.spec, deployment };
}

function placeholderAgentDeps(agent: AgentInput): AgentDeps {
  const namespace = agent.metadata?.namespace ?? '';
  return {
    modelAPI: { endpoint: '' },
    mcpServers: (agent.spec.mcpServers ?? []).map((name) => ({ name, endpoint: endpointFor('MCPServer', name, namespace) })),
    peers: (agent.spec.agentNetwork?.access ?? []).map((name) => ({ name, endpoint: endpointFor('Agent', name, namespace) })),
  };
}
