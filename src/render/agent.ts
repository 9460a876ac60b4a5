// Agent → Deployment `agent-<name>`, Service and HTTPRoute when exposed (docs/api.md, "Agent"),
// the HorizontalPodAutoscaler with autoscaling and the PodDisruptionBudget from two replicas up
// (docs/api.md, "Agent replicas, kubectl scale and autoscaling").
import { AGENT_DEFAULTS } from '../api/defaults.ts';
import { effectiveReadScope } from '../api/memory-rules.ts';
import { isSet, getIn } from '../api/json.ts';
import { memoryShapeOf, shapeOf } from '../api/shapes.ts';
import { agentAuthEnv, agentIdentityURI, renderAgentServiceAccount, withAgentIdentity } from './agent-identity.ts';
import { memoryPostureEnv } from './posture.ts';
import { applyContainerOverride, copyEnv, env, hasEnv, httpGetProbe, httpPort, placeUserEnv, uniqueEnv, withoutEnv } from './container.ts';
import { agentTelemetryEnv, logLevelEnv, telemetrySettings } from './observability.ts';
import { renderHTTPRoute } from './gateway.ts';
import { harnessEnv, workspaceParts, workspaceTokenEnv, type WorkspaceParts } from './harness.ts';
import { defaultAgentImage } from './images.ts';
import type { AgentDeps, AgentInput, AgentMemoryInput, RenderConfig } from './inputs.ts';
import type { Child, Container, EnvVar, PodSpec, Probe } from './k8s.ts';
import { parentIdentity } from './labels.ts';
import { AGENT_PORT, CONTAINER_NAME, serviceURL, workloadName } from './names.ts';
import type { Rendered } from './rendered.ts';
import { withDefaultResources } from './pod-defaults.ts';
import { buildDeployment, buildDisruptionBudget, buildService } from './workload.ts';
import { renderAutoscaler } from './autoscaler.ts';
import { baseReplicas } from '../api/agent-scaling.ts';

/** Schema defaults of spec.config.memory (docs/api.md, "Agent spec"), for input the webhook has not seen. */
export const MEMORY_DEFAULTS = AGENT_DEFAULTS.memory;

/** The `<NAME>` of PEER_AGENT_<NAME>_CARD_URL: upper case, `-` → `_`. */
export function peerEnvName(name: string): string {
  return `PEER_AGENT_${name.toUpperCase().replaceAll('-', '_')}_CARD_URL`;
}

/** MCP_SERVER_<name>_URL keeps the raw resource name: agent images read exactly that. */
export function mcpServerEnvName(name: string): string {
  return `MCP_SERVER_${name}_URL`;
}

/** What the env steps read: the Agent, its resolved dependencies, the operator's settings. */
interface AgentEnvInput {
  readonly agent: AgentInput;
  readonly deps: AgentDeps;
  readonly config: RenderConfig;
}

/** One run of entries of the `agent` container's env. */
type EnvStep = (input: AgentEnvInput) => EnvVar[];

/** Where the user's own list goes in a step list (spec.config.env, or container.env in its place). */
const USER_ENV = 'user env';

const cfgOf = (input: AgentEnvInput) => input.agent.spec.config;
/** A variable when its value is a non-empty string. */
const text = (name: string, value: string | undefined): EnvVar[] => (value ? [env(name, value)] : []);
/** A variable when its value is set, in decimal or as written. */
const when = (name: string, value: number | string | undefined): EnvVar[] => (value === undefined ? [] : [env(name, String(value))]);

const agentName: EnvStep = ({ agent }) => [env('AGENT_NAME', agent.metadata?.name ?? '')];
const description: EnvStep = (i) => text('AGENT_DESCRIPTION', cfgOf(i)?.description);
const instructions: EnvStep = (i) => text('AGENT_INSTRUCTIONS', cfgOf(i)?.instructions);
const systemPrompt: EnvStep = (i) => text('AGENT_SYSTEM_PROMPT', cfgOf(i)?.systemPrompt);
const configEnv: EnvStep = (i) => copyEnv(cfgOf(i)?.env);
const modelAPIURL: EnvStep = ({ deps }) => [env('MODEL_API_URL', deps.modelAPI.endpoint)];
/** The webhook normally wrote MODEL_NAME into config.env; this is the same choice it makes. */
const defaultedModelName: EnvStep = (i) =>
  hasEnv(cfgOf(i)?.env, 'MODEL_NAME') ? [] : [env('MODEL_NAME', i.deps.modelAPI.model || i.config.defaultModelName)];
/** The newer shape names its model in spec.model; without it, the original rule. */
const modelName: EnvStep = (i) => (i.agent.spec.model ? [env('MODEL_NAME', i.agent.spec.model)] : defaultedModelName(i));
const loopMaxSteps: EnvStep = (i) => when('AGENTIC_LOOP_MAX_STEPS', cfgOf(i)?.reasoningLoopMaxSteps);
const toolCallMode: EnvStep = (i) => when('TOOL_CALL_MODE', cfgOf(i)?.toolCallMode);
const memory: EnvStep = (i) => {
  const block = cfgOf(i)?.memory;
  return block === undefined ? [] : memoryEnv(block, i);
};
const autonomous: EnvStep = (i) => {
  const a = cfgOf(i)?.autonomous;
  return [
    ...text('AUTONOMOUS_GOAL', a?.goal),
    ...when('AUTONOMOUS_INTERVAL_SECONDS', a?.intervalSeconds),
    ...when('AUTONOMOUS_MAX_ITER_RUNTIME_SECONDS', a?.maxIterRuntimeSeconds),
  ];
};
const taskBudgets: EnvStep = (i) => {
  const task = cfgOf(i)?.taskConfig;
  return [
    ...when('TASK_MAX_ITERATIONS', task?.maxIterations),
    ...when('TASK_MAX_RUNTIME_SECONDS', task?.maxRuntimeSeconds),
    ...when('TASK_MAX_TOOL_CALLS', task?.maxToolCalls),
  ];
};
const mcpServers: EnvStep = ({ deps }) => namedEndpointsEnv('MCP_SERVERS', deps.mcpServers, mcpServerEnvName);
const peers: EnvStep = ({ deps }) => namedEndpointsEnv('PEER_AGENTS', deps.peers.filter((p) => p.endpoint !== ''), peerEnvName);
const telemetry: EnvStep = (i) => agentTelemetryEnv(i.agent.metadata, telemetrySettings(cfgOf(i)?.telemetry, i.config));
const logLevel: EnvStep = (i) => logLevelEnv('LOG_LEVEL', i.config.defaultLogLevel, cfgOf(i)?.env, i.agent.spec.container?.env);
/** Who the agent is and where its token is: the last generated entries, under ServiceAccount identity. */
const agentAuth: EnvStep = ({ agent, config }) => agentAuthEnv({ name: agent.metadata?.name ?? '', namespace: agent.metadata?.namespace ?? '' }, config.security);
/** HARNESS_*, then a workspace's GIT_TOKEN for the credential helper the clone stores (a harness that pushes). */
const harness: EnvStep = ({ agent, deps }) => (agent.spec.harness === undefined ? [] : [...harnessEnv(deps.harness?.driver ?? ''), ...workspaceTokenEnv(agent.spec.harness)]);

/**
 * The original shape (docs/api.md, "Agent environment"), steps 1–9, then agent identity's (none
 * without ServiceAccount identity); step 10, spec.container.env, is appended by
 * applyContainerOverride.
 */
const ORIGINAL_AGENT_ENV: readonly EnvStep[] = [
  agentName,
  description,
  instructions,
  configEnv,
  modelAPIURL,
  defaultedModelName,
  loopMaxSteps,
  memory,
  mcpServers,
  peers,
  agentAuth,
];

/**
 * The newer shape, in KAOS's order (docs/api.md, "Env order"): the user's list (config.env, or
 * container.env in its place) right after the prompts; then the model, the loop and tool-call
 * settings, memory, autonomy and task budgets, the MCP servers and peers, OpenTelemetry,
 * LOG_LEVEL unless the user set it, a harness's HARNESS_*, then agent identity's. A block of KAOS's added later takes
 * its place in this list.
 */
const NEWER_AGENT_ENV: readonly (EnvStep | typeof USER_ENV)[] = [
  agentName,
  description,
  instructions,
  systemPrompt,
  configEnv,
  USER_ENV,
  modelAPIURL,
  modelName,
  loopMaxSteps,
  toolCallMode,
  memory,
  autonomous,
  taskBudgets,
  mcpServers,
  peers,
  telemetry,
  logLevel,
  harness,
  agentAuth,
];

/**
 * The generated env of the `agent` container, by shape. Names are unique: an entry that repeats
 * a generated name resolves as the kubelet would (last one wins); in the newer shape the user's
 * container.env wins a clash wherever it stands.
 */
export function agentEnv(agent: AgentInput, deps: AgentDeps, config: RenderConfig): EnvVar[] {
  const input: AgentEnvInput = { agent, deps, config };
  const run = (steps: readonly (EnvStep | typeof USER_ENV)[]): EnvVar[] => steps.flatMap((s) => (s === USER_ENV ? [] : s(input)));
  if (!isNewShapeAgent(agent)) return uniqueEnv(run(ORIGINAL_AGENT_ENV));
  const at = NEWER_AGENT_ENV.indexOf(USER_ENV);
  return placeUserEnv(run(NEWER_AGENT_ENV.slice(0, at)), copyEnv(agent.spec.container?.env), run(NEWER_AGENT_ENV.slice(at + 1)));
}

/** docs/api.md, "Newer KAOS shapes": api/shapes.ts decides (spec.model, telemetry, the KAOS 2026 config fields). */
export function isNewShapeAgent(agent: AgentInput): boolean {
  return shapeOf('Agent', agent.spec) === 'new';
}

/** The memory block's env: the original shape's five variables, or remote memory's (docs/api.md, "Agent remote memory"). */
function memoryEnv(memory: AgentMemoryInput, { agent, deps, config }: AgentEnvInput): EnvVar[] {
  if (memoryShapeOf(memory) === 'original') {
    return [
      env('MEMORY_ENABLED', String(memory.enabled ?? MEMORY_DEFAULTS.enabled)),
      env('MEMORY_TYPE', memory.type || MEMORY_DEFAULTS.type),
      env('MEMORY_CONTEXT_LIMIT', String(memory.contextLimit ?? MEMORY_DEFAULTS.contextLimit)),
      env('MEMORY_MAX_SESSIONS', String(memory.maxSessions ?? MEMORY_DEFAULTS.maxSessions)),
      env('MEMORY_MAX_SESSION_EVENTS', String(memory.maxSessionEvents ?? MEMORY_DEFAULTS.maxSessionEvents)),
    ];
  }
  const bound = memory.memoryStore !== undefined && memory.memoryStore !== '';
  const type = memory.type ?? (bound ? 'remote' : MEMORY_DEFAULTS.type);
  // The store's endpoint whenever it exists (its name gives it): its readiness changes no pod spec.
  const store = type === 'remote' ? deps.memoryStore : undefined;
  const rollingSummary = memory.clientParams?.rollingSummary;
  return [
    // First in its block, as KAOS writes it: what the memory service requires of callers.
    ...memoryPostureEnv('', config.security),
    env('MEMORY_ENABLED', String(memory.enabled ?? MEMORY_DEFAULTS.enabled)),
    env('MEMORY_TYPE', type),
    ...text('MEMORY_STORE_ENDPOINT', store?.endpoint),
    env('MEMORY_MAX_READ_SCOPE', effectiveReadScope(memory, store?.maxReadScope)),
    ...text('MEMORY_TOOLS', memory.tools),
    ...text('MEMORY_FAILURE_MODE', memory.failureMode),
    ...when('MEMORY_SHORT_TERM_TOKEN_BUDGET', memory.clientParams?.tokenBudget),
    ...when('MEMORY_ROLLING_SUMMARY', rollingSummary === undefined ? undefined : String(rollingSummary)),
    env('AGENT_IDENTITY', agentIdentityURI(agent.metadata?.namespace ?? '', agent.metadata?.name ?? '')),
  ];
}

/**
 * `<LIST>` = names sorted and comma-joined, then one URL entry per name in that order. Sorted
 * so that the order of spec lists or cache iteration never changes the pod spec.
 */
function namedEndpointsEnv(
  listName: string,
  entries: readonly { readonly name: string; readonly endpoint: string }[],
  entryName: (name: string) => string,
): EnvVar[] {
  if (entries.length === 0) return [];
  const byName = new Map<string, string>();
  for (const e of entries) byName.set(e.name, e.endpoint);
  const names = [...byName.keys()].sort(compareCodeUnits);
  return [env(listName, names.join(',')), ...names.map((n) => env(entryName(n), byName.get(n) ?? ''))];
}

/** Plain code-unit order (Go's sort.Strings for ASCII names), independent of locale. */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The `agent` container's probes. The original shape keeps docs/api.md's "Agent" timings, so that
 * upgrading the operator rolls no existing Agent; an Agent that uses anything of KAOS 2026 — the
 * newer shape, the newest memory block, a harness — gets KAOS 2026's (docs/api.md, "Agent probes
 * in 2026"), with KAOS's liveness failureThreshold of 3 written out (the API server's default too).
 */
export function agentProbes(agent: AgentInput): { livenessProbe: Probe; readinessProbe: Probe } {
  const kaos2026 = isNewShapeAgent(agent) || memoryShapeOf(agent.spec.config?.memory) === 'new' || isSet(getIn(agent.spec, 'harness'));
  if (!kaos2026) {
    return {
      livenessProbe: httpGetProbe('/health', AGENT_PORT, { initialDelaySeconds: 30, periodSeconds: 10 }),
      readinessProbe: httpGetProbe('/ready', AGENT_PORT, { initialDelaySeconds: 10, periodSeconds: 5 }),
    };
  }
  return {
    livenessProbe: httpGetProbe('/health', AGENT_PORT, { initialDelaySeconds: 5, periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 }),
    readinessProbe: httpGetProbe('/ready', AGENT_PORT, { initialDelaySeconds: 3, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 2 }),
  };
}

export function agentContainer(agent: AgentInput, deps: AgentDeps, config: RenderConfig, workspace?: WorkspaceParts): Container {
  const generated: Container = {
    name: CONTAINER_NAME.Agent,
    // A harness Agent runs its runtime's image (docs/api.md, "Agent harness").
    image: deps.harness?.image || defaultAgentImage(config),
    imagePullPolicy: 'IfNotPresent',
    ports: [httpPort(AGENT_PORT)],
    env: agentEnv(agent, deps, config),
    ...(workspace === undefined ? {} : { volumeMounts: workspace.mounts }),
    ...agentProbes(agent),
  };
  // A new-shape Agent's container.env is already in place (agentEnv); the rest of the override applies as docs/api.md, "Common behaviour" says.
  const override = isNewShapeAgent(agent) ? withoutEnv(agent.spec.container) : agent.spec.container;
  return applyContainerOverride(withDefaultResources(generated, 'Agent', config.workload), override);
}

/** expose defaults to true. Takes any Agent's spec (a peer read from the cache is unchecked). */
export function agentExposed(agent: { readonly spec: { readonly agentNetwork?: { readonly expose?: unknown } | undefined } }): boolean {
  return agent.spec.agentNetwork?.expose !== false;
}

/**
 * The children render gives from the Agent and the settings alone, with no dependency resolved:
 * its ServiceAccount under ServiceAccount identity (the kind table's `beforeDependencies`).
 */
export function renderAgentBeforeDependencies(agent: Pick<AgentInput, 'metadata'>, config: RenderConfig): Child[] {
  const serviceAccount = renderAgentServiceAccount(parentIdentity('Agent', agent.metadata), config.security);
  return serviceAccount === undefined ? [] : [serviceAccount];
}

export function renderAgent(agent: AgentInput, deps: AgentDeps, config: RenderConfig): Rendered {
  const parent = parentIdentity('Agent', agent.metadata);
  const workspace = workspaceParts(agent.spec.harness);
  const generated: PodSpec = {
    ...(workspace === undefined ? {} : { initContainers: workspace.initContainers }),
    containers: [agentContainer(agent, deps, config, workspace)],
    ...(workspace === undefined ? {} : { volumes: workspace.volumes }),
  };
  // The identity's token volume goes before the harness's (docs/api.md, "Agent identity by ServiceAccount").
  const podSpec = withAgentIdentity(generated, parent, CONTAINER_NAME.Agent, config.security);
  const replicas = baseReplicas(agent.spec);
  const deployment = buildDeployment({ parent, podSpec, podSpecPatch: agent.spec.podSpec, defaults: config.workload, hashPodSpec: config.podSpecHash !== false, replicas });
  const serviceAccount = renderAgentServiceAccount(parent, config.security);
  const autoscaler = renderAutoscaler(parent, agent.spec);
  const owned = {
    ...(serviceAccount === undefined ? {} : { serviceAccount }),
    ...(autoscaler === undefined ? {} : { horizontalPodAutoscaler: autoscaler }),
    ...(replicas >= 2 ? { podDisruptionBudget: buildDisruptionBudget(parent) } : {}),
  };
  if (!agentExposed(agent)) return { ...owned, deployment };
  // The HTTPRoute's backend is the Service, so an unexposed Agent has neither.
  const service = buildService(parent, AGENT_PORT);
  const httpRoute = renderHTTPRoute(parent, { name: service.metadata.name, port: AGENT_PORT }, agent.spec.gatewayRoute, config);
  const endpoint = serviceURL(workloadName('Agent', parent.name), parent.namespace, AGENT_PORT);
  return httpRoute === undefined ? { ...owned, deployment, service, endpoint } : { ...owned, deployment, service, httpRoute, endpoint };
}
