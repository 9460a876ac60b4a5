// Agent (docs/api.md, "Agent").
import { Type, type Static } from '@sinclair/typebox';
import { AGENT_DEFAULTS } from '../defaults.ts';
import { AGENT_PHASES, MEMORY_FAILURE_MODES, MEMORY_READ_SCOPES, MEMORY_TOOLS, MEMORY_TYPES } from '../enums.ts';
import { MAX_DESCRIPTION_LENGTH, MAX_INLINE_TEXT_LENGTH, MAX_MODEL_LENGTH, MAX_NAME_LENGTH, MAX_REFERENCES } from './limits.ts';
import { ContainerOverride, EnvVarList, GatewayRoute, PodSpecFragment, Telemetry } from './common.ts';
import { Int32, RefusedField, StringEnum, StringMap } from './helpers.ts';
import { StatusSchema } from './status.ts';

const memory = AGENT_DEFAULTS.memory;

/**
 * Two shapes in one block (docs/api.md, "Agent remote memory"): the original one (`contextLimit`,
 * `maxSessions`, `maxSessionEvents`: memory inside the agent) and KAOS's newest (`memoryStore`,
 * `maxReadScope`, `clientParams`, `tools`, `failureMode`: memory in a MemoryStore). The original
 * fields carry no CRD default: the API server would write them into every block, remote ones too,
 * before the webhook could tell them from the user's; the webhook fills them per shape
 * (defaulting/shape-defaults.ts). `type` is derived from `memoryStore` the same way.
 */
export const AgentMemory = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ default: memory.enabled, description: 'Whether the agent keeps memory.' })),
    type: Type.Optional(
      StringEnum(MEMORY_TYPES, { description: 'local (in the agent) or remote (a MemoryStore); unset: remote with memoryStore, else local.' }),
    ),
    contextLimit: Type.Optional(
      Int32({ minimum: 1, maximum: 100, description: `Past events included in the model context (original shape; default ${memory.contextLimit}).` }),
    ),
    maxSessions: Type.Optional(Int32({ minimum: 1, maximum: 100000, description: `Sessions kept (original shape; default ${memory.maxSessions}).` })),
    maxSessionEvents: Type.Optional(
      Int32({ minimum: 1, maximum: 10000, description: `Events kept per session (original shape; default ${memory.maxSessionEvents}).` }),
    ),
    memoryStore: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH, description: 'Name of a MemoryStore in the same namespace.' })),
    maxReadScope: Type.Optional(
      StringEnum(MEMORY_READ_SCOPES, { description: "The widest scope the agent reads; at most its MemoryStore's maxReadScope." }),
    ),
    clientParams: Type.Optional(
      Type.Object(
        {
          tokenBudget: Type.Optional(Int32({ minimum: 0, description: 'Tokens of memory the agent puts in its context (MEMORY_SHORT_TERM_TOKEN_BUDGET).' })),
          rollingSummary: Type.Optional(Type.Boolean({ description: 'Keep a rolling summary of the session (MEMORY_ROLLING_SUMMARY).' })),
        },
        { description: "The agent's side of remote memory." },
      ),
    ),
    tools: Type.Optional(StringEnum(MEMORY_TOOLS, { description: 'The memory tools the model gets; needs memoryStore.' })),
    failureMode: Type.Optional(
      StringEnum(MEMORY_FAILURE_MODES, { description: "What a failed memory write does; unset: the MemoryStore's defaultFailureMode." }),
    ),
    scope: Type.Optional(RefusedField("KAOS's first read-scope field: refused, use maxReadScope.")),
    defaultReadScope: Type.Optional(RefusedField("KAOS's second read-scope form: refused, use maxReadScope.")),
    readScopes: Type.Optional(RefusedField("KAOS's second read-scope form: refused, use maxReadScope.")),
  },
  { description: 'Memory of the agent: in its own process, or in a MemoryStore.' },
);

export const AgentConfig = Type.Object(
  {
    description: Type.Optional(
      Type.String({ maxLength: MAX_DESCRIPTION_LENGTH, description: 'What the agent does (AGENT_DESCRIPTION).' }),
    ),
    instructions: Type.Optional(
      Type.String({ maxLength: MAX_INLINE_TEXT_LENGTH, description: 'System instructions of the agent (AGENT_INSTRUCTIONS).' }),
    ),
    reasoningLoopMaxSteps: Type.Optional(
      Int32({
        minimum: 1,
        maximum: 20,
        default: AGENT_DEFAULTS.reasoningLoopMaxSteps,
        description: 'Most reasoning steps per request (AGENTIC_LOOP_MAX_STEPS).',
      }),
    ),
    memory: Type.Optional(AgentMemory),
    env: Type.Optional(
      EnvVarList('Passed to the agent container verbatim; the webhook adds MODEL_NAME when absent and spec.model is not set.'),
    ),
    telemetry: Type.Optional(Telemetry),
  },
  { description: 'Behaviour of the agent.' },
);

export const AgentNetwork = Type.Object(
  {
    expose: Type.Optional(
      Type.Boolean({ default: AGENT_DEFAULTS.expose, description: 'Create a Service so other agents can reach this one.' }),
    ),
    access: Type.Optional(
      Type.Array(Type.String({ maxLength: MAX_NAME_LENGTH }), {
        maxItems: MAX_REFERENCES,
        description: 'Names of peer Agents in the namespace.',
      }),
    ),
  },
  { default: AGENT_DEFAULTS.agentNetwork },
);

export const AgentSpec = Type.Object({
  modelAPI: Type.String({ maxLength: MAX_NAME_LENGTH, description: 'Name of a ModelAPI in the same namespace.' }),
  model: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_MODEL_LENGTH,
      description: 'The model the agent asks its ModelAPI for (MODEL_NAME); it must be one the ModelAPI serves.',
    }),
  ),
  mcpServers: Type.Optional(
    Type.Array(Type.String({ maxLength: MAX_NAME_LENGTH }), {
      maxItems: MAX_REFERENCES,
      description: 'Names of MCPServers in the same namespace.',
    }),
  ),
  agentNetwork: Type.Optional(AgentNetwork),
  config: Type.Optional(AgentConfig),
  waitForDependencies: Type.Optional(
    Type.Boolean({
      default: AGENT_DEFAULTS.waitForDependencies,
      description: 'Wait for the ModelAPI, MCPServers and MemoryStore to be ready before creating the Deployment.',
    }),
  ),
  gatewayRoute: Type.Optional(GatewayRoute),
  container: Type.Optional(ContainerOverride),
  podSpec: Type.Optional(PodSpecFragment),
});
export type AgentSpec = Static<typeof AgentSpec>;

export const AgentStatus = StatusSchema(AGENT_PHASES, {
  linkedResources: Type.Optional(StringMap({ description: 'Objects this Agent uses: {modelapi: <name>}, and memorystore: <name> when bound.' })),
});
export type AgentStatus = Static<typeof AgentStatus>;
