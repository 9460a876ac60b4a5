// Agent → Deployment `agent-<name>`, Service and HTTPRoute when exposed (docs/api.md, "Agent").
import { AGENT_DEFAULTS } from '../api/defaults.ts';
import { effectiveReadScope } from '../api/memory-rules.ts';
import { memoryShapeOf, shapeOf } from '../api/shapes.ts';
import { applyContainerOverride, copyEnv, env, hasEnv, httpGetProbe, httpPort, uniqueEnv, withoutEnv } from './container.ts';
import { agentTelemetryEnv, logLevelEnv, telemetrySettings } from './observability.ts';
import { renderHTTPRoute } from './gateway.ts';
import { defaultAgentImage } from './images.ts';
import type { AgentDeps, AgentInput, RenderConfig } from './inputs.ts';
import type { Container, EnvVar, PodSpec } from './k8s.ts';
import { parentIdentity } from './labels.ts';
import { AGENT_PORT, CONTAINER_NAME, serviceURL, workloadName } from './names.ts';
import type { Rendered } from './rendered.ts';
import { withDefaultResources } from './pod-defaults.ts';
import { buildDeployment, buildService } from './workload.ts';

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

/** What one step of the Agent's env reads. */
interface EnvContext {
  readonly agent: AgentInput;
  readonly deps: AgentDeps;
  readonly config: RenderConfig;
  /** docs/api.md, "Newer KAOS shapes": the Agent is in the new shape (api/shapes.ts decides). */
  readonly newShape: boolean;
}

/** One step of the Agent's env: the variables it contributes, each only when it has something to say. */
type EnvStep = (c: EnvContext) => EnvVar[];

const when = (name: string, value: string | number | boolean | undefined): EnvVar[] =>
  value === undefined || value === '' ? [] : [env(name, String(value))];

/** Before the user's env list (docs/api.md, "Agent environment" steps 1–2). */
const HEAD_STEPS: readonly EnvStep[] = [
  (c) => [env('AGENT_NAME', c.agent.metadata?.name ?? '')],
  (c) => when('AGENT_DESCRIPTION', c.agent.spec.config?.description),
  (c) => when('AGENT_INSTRUCTIONS', c.agent.spec.config?.instructions),
];

/**
 * After the user's env list, in KAOS's order (docs/api.md, "Agent environment" steps 4–9; the
 * newer shapes' variables at their places): a new variable is one more step here.
 */
const GENERATED_STEPS: readonly EnvStep[] = [
  (c) => [env('MODEL_API_URL', c.deps.modelAPI.endpoint)],
  modelNameEnv,
  (c) => when('AGENTIC_LOOP_MAX_STEPS', c.agent.spec.config?.reasoningLoopMaxSteps),
  (c) => memoryEnv(c.agent, c.deps),
  (c) => namedEndpointsEnv('MCP_SERVERS', c.deps.mcpServers, mcpServerEnvName),
  (c) => namedEndpointsEnv('PEER_AGENTS', c.deps.peers.filter((p) => p.endpoint !== ''), peerEnvName),
  (c) => (c.newShape ? agentTelemetryEnv(c.agent.metadata, telemetrySettings(c.agent.spec.config?.telemetry, c.config)) : []),
  (c) => (c.newShape ? logLevelEnv('LOG_LEVEL', c.config.defaultLogLevel, c.agent.spec.config?.env, c.agent.spec.container?.env) : []),
];

/**
 * MODEL_NAME: `spec.model` (new shape), else, when config.env names none, the ModelAPI's model or
 * DEFAULT_MODEL_NAME — the webhook's own choice, which it normally wrote into config.env already.
 */
function modelNameEnv(c: EnvContext): EnvVar[] {
  const { spec } = c.agent;
  if (spec.model !== undefined && spec.model !== '') return [env('MODEL_NAME', spec.model)];
  if (hasEnv(spec.config?.env, 'MODEL_NAME')) return [];
  return [env('MODEL_NAME', c.deps.modelAPI.model || c.config.defaultModelName)];
}

/**
 * The generated env of the `agent` container, in the order of docs/api.md, "Agent environment".
 * Original shape: config.env after AGENT_INSTRUCTIONS, and a generated entry wins a clash (the
 * kubelet's last-one-wins, kept where it stands); step 10, spec.container.env, is applied by
 * applyContainerOverride. New shape (docs/api.md, "Newer KAOS shapes"): the user's list
 * (config.env, or container.env in its place) at that spot wins a clash with a generated entry,
 * and the OpenTelemetry variables and LOG_LEVEL (unless the user set it) come last.
 */
export function agentEnv(agent: AgentInput, deps: AgentDeps, config: RenderConfig): EnvVar[] {
  const c: EnvContext = { agent, deps, config, newShape: isNewShapeAgent(agent) };
  const head = [...HEAD_STEPS.flatMap((step) => step(c)), ...copyEnv(agent.spec.config?.env)];
  const generated = GENERATED_STEPS.flatMap((step) => step(c));
  if (!c.newShape) return uniqueEnv([...head, ...generated]);
  const user = copyEnv(agent.spec.container?.env);
  const userNames = new Set(user.map((e) => e.name));
  return uniqueEnv([...head, ...user, ...generated.filter((e) => !userNames.has(e.name))]);
}

/** docs/api.md, "Newer KAOS shapes": `spec.model` or a telemetry block make an Agent new-shape (api/shapes.ts decides). */
export function isNewShapeAgent(agent: AgentInput): boolean {
  return shapeOf('Agent', agent.spec) === 'new';
}

/** The memory block's env: the original shape's five variables, or remote memory's (docs/api.md, "Agent remote memory"). */
function memoryEnv(agent: AgentInput, deps: AgentDeps): EnvVar[] {
  const memory = agent.spec.config?.memory;
  if (memory === undefined) return [];
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
  const store = type === 'remote' ? deps.memoryStore : undefined;
  const metadata = agent.metadata;
  return [
    env('MEMORY_ENABLED', String(memory.enabled ?? MEMORY_DEFAULTS.enabled)),
    env('MEMORY_TYPE', type),
    ...when('MEMORY_STORE_ENDPOINT', store?.endpoint),
    env('MEMORY_MAX_READ_SCOPE', effectiveReadScope(memory, store?.maxReadScope)),
    ...when('MEMORY_TOOLS', memory.tools),
    ...when('MEMORY_FAILURE_MODE', memory.failureMode),
    ...when('MEMORY_SHORT_TERM_TOKEN_BUDGET', memory.clientParams?.tokenBudget),
    ...when('MEMORY_ROLLING_SUMMARY', memory.clientParams?.rollingSummary),
    env('AGENT_IDENTITY', `kaos://agent/${metadata?.namespace ?? ''}/${metadata?.name ?? ''}`),
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

export function agentContainer(agent: AgentInput, deps: AgentDeps, config: RenderConfig): Container {
  const generated: Container = {
    name: CONTAINER_NAME.Agent,
    image: defaultAgentImage(config),
    imagePullPolicy: 'IfNotPresent',
    ports: [httpPort(AGENT_PORT)],
    env: agentEnv(agent, deps, config),
    livenessProbe: httpGetProbe('/health', AGENT_PORT, { initialDelaySeconds: 30, periodSeconds: 10 }),
    readinessProbe: httpGetProbe('/ready', AGENT_PORT, { initialDelaySeconds: 10, periodSeconds: 5 }),
  };
  // A new-shape Agent's container.env is already in place (agentEnv); the rest of the override applies as docs/api.md, "Common behaviour" says.
  const override = isNewShapeAgent(agent) ? withoutEnv(agent.spec.container) : agent.spec.container;
  return applyContainerOverride(withDefaultResources(generated, 'Agent', config.workload), override);
}

/** expose defaults to true. Takes any Agent's spec (a peer read from the cache is unchecked). */
export function agentExposed(agent: { readonly spec: { readonly agentNetwork?: { readonly expose?: unknown } | undefined } }): boolean {
  return agent.spec.agentNetwork?.expose !== false;
}

export function renderAgent(agent: AgentInput, deps: AgentDeps, config: RenderConfig): Rendered {
  const parent = parentIdentity('Agent', agent.metadata);
  const podSpec: PodSpec = { containers: [agentContainer(agent, deps, config)] };
  const deployment = buildDeployment({ parent, podSpec, podSpecPatch: agent.spec.podSpec, defaults: config.workload });
  if (!agentExposed(agent)) return { deployment };
  // The HTTPRoute's backend is the Service, so an unexposed Agent has neither.
  const service = buildService(parent, AGENT_PORT);
  const httpRoute = renderHTTPRoute(parent, { name: service.metadata.name, port: AGENT_PORT }, agent.spec.gatewayRoute, config);
  const endpoint = serviceURL(workloadName('Agent', parent.name), parent.namespace, AGENT_PORT);
  return httpRoute === undefined ? { deployment, service, endpoint } : { deployment, service, httpRoute, endpoint };
}
