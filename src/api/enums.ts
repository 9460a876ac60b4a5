// The enumerations of the API, in the order Kubernetes lists them in "supported values".

export const MODEL_API_MODES = ['Hosted', 'Proxy'] as const;
export type ModelAPIMode = (typeof MODEL_API_MODES)[number];

export const MCP_RUNTIMES = ['node-runtime', 'python-runtime'] as const;
export type MCPRuntime = (typeof MCP_RUNTIMES)[number];

export const MEMORY_TYPES = ['local'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

/** How an agent calls its tools (`spec.config.toolCallMode`, TOOL_CALL_MODE; docs/api.md, "Agent `config` from KAOS 2026"). */
export const TOOL_CALL_MODES = ['auto', 'native', 'string'] as const;
export type ToolCallMode = (typeof TOOL_CALL_MODES)[number];

/** `Waiting` exists for Agents only: they wait for their ModelAPI and MCPServers (docs/api.md, "Agent"). */
export const AGENT_PHASES = ['Pending', 'Waiting', 'Ready', 'Failed'] as const;
export const PHASES = ['Pending', 'Ready', 'Failed'] as const;
export type Phase = (typeof AGENT_PHASES)[number];

export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;
export type ConditionStatus = (typeof CONDITION_STATUSES)[number];

/** Log levels of the generated containers (DEFAULT_LOG_LEVEL; docs/api.md, "Newer KAOS shapes"). */
export const CONTAINER_LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARNING', 'ERROR'] as const;
export type ContainerLogLevel = (typeof CONTAINER_LOG_LEVELS)[number];
/** What DEFAULT_LOG_LEVEL defaults to. */
export const DEFAULT_CONTAINER_LOG_LEVEL: ContainerLogLevel = 'INFO';
