// Agent (docs/api.md, "Agent").
import { Type, type Static, type TInteger } from '@sinclair/typebox';
import { AGENT_DEFAULTS } from '../defaults.ts';
import { AGENT_PHASES, MEMORY_FAILURE_MODES, MEMORY_READ_SCOPES, MEMORY_TOOLS, MEMORY_TYPES, TOOL_CALL_MODES } from '../enums.ts';
import { MAX_DESCRIPTION_LENGTH, MAX_GIT_REF_LENGTH, MAX_INLINE_TEXT_LENGTH, MAX_MODEL_LENGTH, MAX_NAME_LENGTH, MAX_REFERENCES, MAX_URL_LENGTH } from './limits.ts';
import { ContainerOverride, EnvVarList, GatewayRoute, PodSpecFragment, SecretKeySelector, Telemetry } from './common.ts';
import { AnyValue, Int32, StringEnum, StringMap } from './helpers.ts';
import { StatusSchema } from './status.ts';

const memory = AGENT_DEFAULTS.memory;

/**
 * Two shapes in one block (docs/api.md, "Agent remote memory"): the original one (`contextLimit`,
 * `maxSessions`, `maxSessionEvents`: memory inside the agent) and KAOS's newest (`memoryStore`,
 * `maxReadScope`, `clientParams`, `tools`, `failureMode`: memory in a MemoryStore). The original
 * fields carry no CRD default: the API server would write them into every block, remote ones too,
 * before the webhook could tell them from the user's; the webhook fills them per shape
 * (defaulting/default-object.ts). `type` is derived from `memoryStore` the same way.
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
      StringEnum(MEMORY_READ_SCOPES, { description: "The widest scope the agent reads; at most its MemoryStore's maxReadScope. user needs security and the user plane enabled in the operator." }),
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
    scope: Type.Optional(AnyValue({ description: "KAOS's first read-scope field: refused, use maxReadScope." })),
    defaultReadScope: Type.Optional(AnyValue({ description: "KAOS's second read-scope form: refused, use maxReadScope." })),
    readScopes: Type.Optional(AnyValue({ description: "KAOS's second read-scope form: refused, use maxReadScope." })),
  },
  { description: 'Memory of the agent: in its own process, or in a MemoryStore.' },
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

/**
 * KAOS's coding-agent harness (docs/api.md, "Agent harness"): a runtime from the registry ConfigMap
 * kaos-harness-runtimes, and a git workspace cloned into the pod before the agent starts.
 */
export const AgentWorkspace = Type.Object(
  {
    repoURL: Type.String({
      minLength: 1,
      maxLength: MAX_URL_LENGTH,
      description: 'The repository to clone: an https://, http:// or ssh:// URL, or git@<host>:<path>.',
    }),
    branch: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_GIT_REF_LENGTH, default: AGENT_DEFAULTS.workspaceBranch, description: 'The branch to clone (a git ref name).' }),
    ),
    credentialsSecretRef: Type.Optional({
      ...SecretKeySelector,
      description: 'A Secret key holding a git token for an https:// repository (GIT_TOKEN of the clone; passed by reference only).',
    }),
  },
  { description: 'A git repository cloned into /workspace before the agent starts.' },
);

export const AgentHarness = Type.Object(
  {
    runtime: Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH, description: 'A runtime of the registry ConfigMap kaos-harness-runtimes.' }),
    workspace: Type.Optional(AgentWorkspace),
  },
  { description: "A coding-agent harness: the runtime's image and driver, and a workspace." },
);

/** The HPA's bounds (docs/api.md, "Agent replicas"): at most this many replicas. */
export const MAX_AUTOSCALING_REPLICAS = 100;

const utilization = (resource: string, more: string): TInteger =>
  Int32({ minimum: 1, maximum: 100, description: `Average ${resource} utilization the HPA aims for, in percent of the agent container's ${resource} request${more}.` });

export const AgentAutoscaling = Type.Object(
  {
    minReplicas: Type.Optional(
      Int32({ minimum: 1, default: AGENT_DEFAULTS.autoscaling.minReplicas, description: 'The fewest replicas the HPA scales to (and the count at creation).' }),
    ),
    maxReplicas: Int32({ minimum: 1, maximum: MAX_AUTOSCALING_REPLICAS, description: 'The most replicas the HPA scales to; at least minReplicas.' }),
    targetCPUUtilizationPercentage: Type.Optional(utilization('CPU', `; ${AGENT_DEFAULTS.autoscaling.targetCPUUtilizationPercentage} when no memory target is set`)),
    targetMemoryUtilizationPercentage: Type.Optional(utilization('memory', '')),
  },
  { description: 'A HorizontalPodAutoscaler for the agent (never together with replicas).' },
);
export type AgentAutoscaling = Static<typeof AgentAutoscaling>;

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
  harness: Type.Optional(AgentHarness),
  replicas: Type.Optional(
    Int32({
      minimum: 0,
      description: "Pods of the agent, applied on every change (kubectl scale sets it); unset: one at creation, then left to whoever scales the Deployment.",
    }),
  ),
  autoscaling: Type.Optional(AgentAutoscaling),
});
export type AgentSpec = Static<typeof AgentSpec>;

export const AgentStatus = StatusSchema(AGENT_PHASES, {
  linkedResources: Type.Optional(StringMap({ description: 'Objects this Agent uses: {modelapi: <name>}, and memorystore: <name> when bound.' })),
  replicas: Type.Optional(Int32({ description: "The Deployment's status.replicas (the scale subresource's)." })),
  selector: Type.Optional(Type.String({ description: "The Deployment's selector as a string, for the scale subresource (HPA, KEDA)." })),
});
export type AgentStatus = Static<typeof AgentStatus>;
