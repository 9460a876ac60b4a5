// Agent (docs/api.md, "Agent").
import { Type, type Static } from '@sinclair/typebox';
import { AGENT_DEFAULTS } from '../defaults.ts';
import { AGENT_PHASES, MEMORY_TYPES, TOOL_CALL_MODES } from '../enums.ts';
import { MAX_DESCRIPTION_LENGTH, MAX_INLINE_TEXT_LENGTH, MAX_MODEL_LENGTH, MAX_NAME_LENGTH, MAX_REFERENCES } from './limits.ts';
import { ContainerOverride, EnvVarList, GatewayRoute, PodSpecFragment, Telemetry } from './common.ts';
import { AGENT_HARNESS, NOT_SUPPORTED } from '../unsupported-features.ts';
import { AnyValue, Int32, StringEnum, StringMap } from './helpers.ts';
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

/** Autonomous execution (newer shape): a non-blank goal makes the agent loop on its own from start-up. */
export const AgentAutonomous = Type.Object(
  {
    goal: Type.Optional(
      Type.String({
        maxLength: MAX_INLINE_TEXT_LENGTH,
        description: 'What the agent works towards on its own from start-up (AUTONOMOUS_GOAL); a blank goal is refused.',
      }),
    ),
    intervalSeconds: Type.Optional(
      Int32({ minimum: 0, maximum: 3600, description: 'Pause between two iterations (AUTONOMOUS_INTERVAL_SECONDS).' }),
    ),
    maxIterRuntimeSeconds: Type.Optional(
      Int32({ minimum: 0, maximum: 86400, description: 'Most wall-clock time of one iteration (AUTONOMOUS_MAX_ITER_RUNTIME_SECONDS).' }),
    ),
  },
  { description: 'Autonomous (self-looping) execution (newer shape).' },
);

/** Budgets of asynchronous A2A tasks (newer shape); 0 means unlimited. */
export const AgentTaskConfig = Type.Object(
  {
    maxIterations: Type.Optional(
      Int32({ minimum: 0, maximum: 1000, description: 'Most iterations of one task, 0 for unlimited (TASK_MAX_ITERATIONS).' }),
    ),
    maxRuntimeSeconds: Type.Optional(
      Int32({ minimum: 0, maximum: 86400, description: 'Most wall-clock time of one task, 0 for unlimited (TASK_MAX_RUNTIME_SECONDS).' }),
    ),
    maxToolCalls: Type.Optional(
      Int32({ minimum: 0, maximum: 10000, description: 'Most tool calls of one task, 0 for unlimited (TASK_MAX_TOOL_CALLS).' }),
    ),
  },
  { description: 'Budgets of asynchronous A2A tasks (newer shape).' },
);

export const AgentConfig = Type.Object(
  {
    description: Type.Optional(
      Type.String({ maxLength: MAX_DESCRIPTION_LENGTH, description: 'What the agent does (AGENT_DESCRIPTION).' }),
    ),
    instructions: Type.Optional(
      Type.String({ maxLength: MAX_INLINE_TEXT_LENGTH, description: 'System instructions of the agent (AGENT_INSTRUCTIONS).' }),
    ),
    systemPrompt: Type.Optional(
      Type.String({
        maxLength: MAX_INLINE_TEXT_LENGTH,
        description: 'A system prompt kept in the conversation history, unlike instructions (AGENT_SYSTEM_PROMPT; newer shape).',
      }),
    ),
    reasoningLoopMaxSteps: Type.Optional(
      Int32({
        minimum: 1,
        maximum: 20,
        default: AGENT_DEFAULTS.reasoningLoopMaxSteps,
        description: 'Most reasoning steps per request (AGENTIC_LOOP_MAX_STEPS).',
      }),
    ),
    toolCallMode: Type.Optional(
      StringEnum(TOOL_CALL_MODES, {
        description: `How the agent calls tools (TOOL_CALL_MODE; newer shape): the webhook sets ${AGENT_DEFAULTS.toolCallMode} in a newer-shape Agent's config.`,
      }),
    ),
    memory: Type.Optional(AgentMemory),
    env: Type.Optional(
      EnvVarList('Passed to the agent container verbatim; the webhook adds MODEL_NAME when absent and spec.model is not set.'),
    ),
    telemetry: Type.Optional(Telemetry),
    autonomous: Type.Optional(AgentAutonomous),
    taskConfig: Type.Optional(AgentTaskConfig),
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
  // Declared only to be refused by name (api/unsupported-features.ts).
  harness: Type.Optional(AnyValue({ description: `${AGENT_HARNESS.feature} ${NOT_SUPPORTED}: an Agent that sets it is refused.` })),
});
export type AgentSpec = Static<typeof AgentSpec>;

export const AgentStatus = StatusSchema(AGENT_PHASES, {
  linkedResources: Type.Optional(StringMap({ description: 'Objects this Agent uses, e.g. {modelapi: <name>}.' })),
});
export type AgentStatus = Static<typeof AgentStatus>;
