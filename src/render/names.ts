// Child names, ports and endpoints (docs/api.md: "Common behaviour", each kind's section, "Gateway API routes"). Existing KAOS manifests, agent images
// and dashboards depend on these exact strings, so they are written once, here.
import type { WorkloadKind } from '../api/kinds.ts';
import type { ModelAPIMode } from '../api/enums.ts';

/** Name of an Agent's ServiceAccount (docs/api.md, "Agent identity by ServiceAccount"). */
export { agentServiceAccountName } from '../api/agent-references.ts';

/** The value of the `app` label and the key of the per-object selector label. */
export const APP_LABEL: Readonly<Record<WorkloadKind, string>> = {
  Agent: 'agent',
  ModelAPI: 'modelapi',
  MCPServer: 'mcpserver',
  MemoryStore: 'memorystore',
};

/** Prefix of the Deployment and Service names. */
const CHILD_PREFIX: Readonly<Record<WorkloadKind, string>> = {
  Agent: 'agent',
  ModelAPI: 'modelapi',
  MCPServer: 'mcpserver',
  MemoryStore: 'memorystore',
};

/** Segment used by HTTPRoute names and gateway paths (MCPServer is `mcp`, not `mcpserver`). */
export const ROUTE_SEGMENT: Readonly<Record<WorkloadKind, string>> = {
  Agent: 'agent',
  ModelAPI: 'modelapi',
  MCPServer: 'mcp',
  MemoryStore: 'memorystore',
};

/** Generated main container names; spec.podSpec addresses them by these names. */
export const CONTAINER_NAME: Readonly<Record<WorkloadKind, string>> = {
  Agent: 'agent',
  ModelAPI: 'model-api',
  MCPServer: 'mcp-server',
  MemoryStore: 'memory',
};

export const AGENT_PORT = 8000;
export const MCP_PORT = 8000;
export const LITELLM_PORT = 8000;
export const OLLAMA_PORT = 11434;
export const MEMORY_STORE_PORT = 8080;

/**
 * Normalises spec.mode: only the exact string `Hosted` selects Ollama; anything else renders
 * as Proxy (the schema allows nothing else, so this only matters for hand-made input).
 */
export function modelAPIMode(mode: string): ModelAPIMode {
  return mode === 'Hosted' ? 'Hosted' : 'Proxy';
}

/** The port a ModelAPI serves on, which depends on its mode. */
export function modelAPIPort(mode: string): number {
  return modelAPIMode(mode) === 'Hosted' ? OLLAMA_PORT : LITELLM_PORT;
}

/** Name of the Deployment and the Service (and a MemoryStore's PodDisruptionBudget): `agent-<name>`, `modelapi-<name>`, `mcpserver-<name>`, `memorystore-<name>`. */
export function workloadName(kind: WorkloadKind, name: string): string {
  return `${CHILD_PREFIX[kind]}-${name}`;
}

/** Name of the HTTPRoute: `agent-<name>`, `modelapi-<name>`, `mcp-<name>`, `memorystore-<name>`. */
export function routeName(kind: WorkloadKind, name: string): string {
  return `${ROUTE_SEGMENT[kind]}-${name}`;
}

/** Name of the LiteLLM ConfigMap of a Proxy ModelAPI. */
export function configMapName(modelAPIName: string): string {
  return `litellm-config-${modelAPIName}`;
}

/** Name of a local-mode MemoryStore's PersistentVolumeClaim. */
export function persistentVolumeClaimName(memoryStoreName: string): string {
  return `${workloadName('MemoryStore', memoryStoreName)}-data`;
}

/** In-cluster base URL of a child Service. */
export function serviceURL(serviceName: string, namespace: string, port: number): string {
  return `http://${serviceName}.${namespace}.svc.cluster.local:${port}`;
}

/**
 * The endpoint a parent publishes in status.endpoint. A ModelAPI's port depends on its mode,
 * so for ModelAPI the mode is required.
 */
export function endpointFor(kind: 'Agent' | 'MCPServer' | 'MemoryStore', name: string, namespace: string): string;
export function endpointFor(kind: 'ModelAPI', name: string, namespace: string, mode: string): string;
export function endpointFor(kind: WorkloadKind, name: string, namespace: string, mode?: string): string;
export function endpointFor(kind: WorkloadKind, name: string, namespace: string, mode?: string): string {
  return serviceURL(workloadName(kind, name), namespace, servicePort(kind, mode));
}

/** The port of a kind's Service (a ModelAPI's follows its mode). */
function servicePort(kind: WorkloadKind, mode: string | undefined): number {
  switch (kind) {
    case 'Agent':
      return AGENT_PORT;
    case 'MCPServer':
      return MCP_PORT;
    case 'ModelAPI':
      return modelAPIPort(mode ?? 'Proxy');
    case 'MemoryStore':
      return MEMORY_STORE_PORT;
  }
}
