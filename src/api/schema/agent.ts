// Agent (docs/api.md, "Agent").
import { Type, type Static } from '@sinclair/typebox';
import { AGENT_DEFAULTS } from '../defaults.ts';
import { AGENT_PHASES, MEMORY_TYPES } from '../enums.ts';
import { MAX_DESCRIPTION_LENGTH, MAX_INLINE_TEXT_LENGTH, MAX_MODEL_LENGTH, MAX_NAME_LENGTH, MAX_REFERENCES } from './limits.ts';
import { ContainerOverride, EnvVarList, GatewayRoute, PodSpecFragment, Telemetry } from './common.ts';
import { Int32, StringEnum, StringMap } from './helpers.ts';
import { StatusSchema } from './status.ts';

const memory = AGENT_DEFAULTS.memory;

export const AgentMemory = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ default: memory.enabled, description: 'Whether the agent keeps session memory.' })),
    type: Type.Optional(StringEnum(MEMORY_TYPES, { default: memory.type, description: 'Memory backend.' })),
    contextLimit: Type.Optional(
      Int32({ minimum: 1, maximum: 100, default: memory.contextLimit, description: 'Past events included in the model context.' }),
    ),
    maxSessions: Type.Optional(Int32({ minimum: 1, maximum: 100000, default: memory.maxSessions, description: 'Sessions kept.' })),
    maxSessionEvents: Type.Optional(
      Int32({ minimum: 1, maximum: 10000, default: memory.maxSessionEvents, description: 'Events kept per session.' }),
    ),
  },
  { description: 'Conversation memory of the agent.' },
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
      description: 'Wait for the ModelAPI and MCPServers to be ready before creating the Deployment.',
    }),
  ),
  gatewayRoute: Type.Optional(GatewayRoute),
  container: Type.Optional(ContainerOverride),
  podSpec: Type.Optional(PodSpecFragment),
});
export type AgentSpec = Static<typeof AgentSpec>;

export const AgentStatus = StatusSchema(AGENT_PHASES, {
  linkedResources: Type.Optional(StringMap({ description: 'Objects this Agent uses, e.g. {modelapi: <name>}.' })),
});
export type AgentStatus = Static<typeof AgentStatus>;
