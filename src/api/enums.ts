// The enumerations of the API, in the order Kubernetes lists them in "supported values".

export const MODEL_API_MODES = ['Hosted', 'Proxy'] as const;
export type ModelAPIMode = (typeof MODEL_API_MODES)[number];

export const MCP_RUNTIMES = ['node-runtime', 'python-runtime'] as const;
export type MCPRuntime = (typeof MCP_RUNTIMES)[number];

/** An Agent's memory: in the agent's own process, or a MemoryStore it binds to (docs/api.md, "Agent remote memory"). */
export const MEMORY_TYPES = ['local', 'remote'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

/**
 * How far a read of remote memory may reach, narrowest first: the order is the ranking an Agent's
 * `maxReadScope` is held to against its MemoryStore's ceiling.
 */
export const MEMORY_READ_SCOPES = ['session', 'agent', 'user'] as const;
export type MemoryReadScope = (typeof MEMORY_READ_SCOPES)[number];

/** What a failed memory write does: the agent carries on (`soft`) or the request fails (`strict`). */
export const MEMORY_FAILURE_MODES = ['soft', 'strict'] as const;
export type MemoryFailureMode = (typeof MEMORY_FAILURE_MODES)[number];

/** The memory tools an Agent bound to a MemoryStore offers its model. */
export const MEMORY_TOOLS = ['all', 'read', 'write'] as const;

/** MemoryStore (docs/api.md, "MemoryStore"): its engine, storage modes and their providers. */
export const MEMORY_ENGINES = ['mem0'] as const;
export const MEMORY_STORAGE_TYPES = ['local', 'external'] as const;
export type MemoryStorageType = (typeof MEMORY_STORAGE_TYPES)[number];
export const MEMORY_LOCAL_PROVIDERS = ['chroma'] as const;
export const MEMORY_EXTERNAL_PROVIDERS = ['pgvector'] as const;
/** The two models a MemoryStore calls, in the order they are resolved and reported. */
export const MEMORY_MODEL_ROLES = ['summarization', 'embedding'] as const;
export type MemoryModelRole = (typeof MEMORY_MODEL_ROLES)[number];

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

/** Who an AccessGrant grants to (docs/api.md, "AccessGrant"): a token's `sub` or `email`, a `groups` entry, or an Agent. */
export const ACCESS_GRANT_SUBJECT_KINDS = ['User', 'Group', 'Agent'] as const;
export type AccessGrantSubjectKind = (typeof ACCESS_GRANT_SUBJECT_KINDS)[number];
/** What an AccessGrant grants access to: the workload kinds, by name or label selector. */
export const ACCESS_GRANT_RESOURCE_KINDS = ['Agent', 'MCPServer', 'ModelAPI', 'MemoryStore'] as const;
export type AccessGrantResourceKind = (typeof ACCESS_GRANT_RESOURCE_KINDS)[number];
/** metav1.LabelSelectorRequirement's operators. */
export const LABEL_SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;
export type LabelSelectorOperator = (typeof LABEL_SELECTOR_OPERATORS)[number];
