// Agent → Deployment `agent-<name>`, Service and HTTPRoute when exposed (docs/api.md, "Agent").
import { AGENT_DEFAULTS } from '../api/defaults.ts';
import { shapeOf } from '../api/shapes.ts';
import { applyContainerOverride, copyEnv, env, hasEnv, httpGetProbe, httpPort, uniqueEnv, withoutEnv } from './container.ts';
import { agentTelemetryEnv, logLevelEnv, telemetrySettings } from './observability.ts';
import { renderHTTPRoute } from './gateway.ts';
import { defaultAgentImage } from './images.ts';
import type { AgentDeps, AgentInput, AgentMemoryInput, RenderConfig } from './inputs.ts';
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

/**
 * The generated env of the `agent` container, in the order of docs/api.md, "Agent environment", steps 1–9 (step 10,
 * spec.container.env, is applied by applyContainerOverride). Names are unique: a config.env
 * entry that repeats a generated name resolves as the kubelet would (last one wins).
 */
export function agentEnv(agent: AgentInput, deps: AgentDeps, config: RenderConfig): EnvVar[] {
  if (isNewShapeAgent(agent)) return newShapeAgentEnv(agent, deps, config);
  const spec = agent.spec;
  const cfg = spec.config;
  const out: EnvVar[] = [env('AGENT_NAME', agent.metadata?.name ?? '')];
  if (cfg?.description) out.push(env('AGENT_DESCRIPTION', cfg.description));
  if (cfg?.instructions) out.push(env('AGENT_INSTRUCTIONS', cfg.instructions));
  out.push(...copyEnv(cfg?.env));
  out.push(env('MODEL_API_URL', deps.modelAPI.endpoint));
  if (!hasEnv(cfg?.env, 'MODEL_NAME')) {
    // The webhook normally wrote MODEL_NAME into config.env; this is the same choice it makes.
    out.push(env('MODEL_NAME', deps.modelAPI.model || config.defaultModelName));
  }
  if (cfg?.reasoningLoopMaxSteps !== undefined) {
    out.push(env('AGENTIC_LOOP_MAX_STEPS', String(cfg.reasoningLoopMaxSteps)));
  }
  if (cfg?.memory !== undefined) out.push(...memoryEnv(cfg.memory));
  out.push(...namedEndpointsEnv('MCP_SERVERS', deps.mcpServers, mcpServerEnvName));
  const peers = deps.peers.filter((p) => p.endpoint !== '');
  out.push(...namedEndpointsEnv('PEER_AGENTS', peers, peerEnvName));
  return uniqueEnv(out);
}

/** docs/api.md, "Newer KAOS shapes": `spec.model` or a telemetry block make an Agent new-shape (api/shapes.ts decides). */
export function isNewShapeAgent(agent: AgentInput): boolean {
  return shapeOf('Agent', agent.spec) === 'new';
}

/**
 * The new shape (docs/api.md, "Newer KAOS shapes"): the user's env list (config.env, or container.env, which
 * takes its place and wins a clash with a generated entry) right after AGENT_INSTRUCTIONS;
 * MODEL_NAME = spec.model; then docs/api.md, "Agent environment"'s steps 6–9, the OpenTelemetry variables, and LOG_LEVEL
 * unless the user set it.
 */
function newShapeAgentEnv(agent: AgentInput, deps: AgentDeps, config: RenderConfig): EnvVar[] {
  const spec = agent.spec;
  const cfg = spec.config;
  const containerEnv = spec.container?.env;
  const out: EnvVar[] = [env('AGENT_NAME', agent.metadata?.name ?? '')];
  if (cfg?.description) out.push(env('AGENT_DESCRIPTION', cfg.description));
  if (cfg?.instructions) out.push(env('AGENT_INSTRUCTIONS', cfg.instructions));
  out.push(...copyEnv(cfg?.env));
  const userAt = out.length;
  const generated: EnvVar[] = [env('MODEL_API_URL', deps.modelAPI.endpoint)];
  if (spec.model !== undefined && spec.model !== '') generated.push(env('MODEL_NAME', spec.model));
  else if (!hasEnv(cfg?.env, 'MODEL_NAME')) generated.push(env('MODEL_NAME', deps.modelAPI.model || config.defaultModelName));
  if (cfg?.reasoningLoopMaxSteps !== undefined) generated.push(env('AGENTIC_LOOP_MAX_STEPS', String(cfg.reasoningLoopMaxSteps)));
  if (cfg?.memory !== undefined) generated.push(...memoryEnv(cfg.memory));
  generated.push(...namedEndpointsEnv('MCP_SERVERS', deps.mcpServers, mcpServerEnvName));
  generated.push(...namedEndpointsEnv('PEER_AGENTS', deps.peers.filter((p) => p.endpoint !== ''), peerEnvName));
  generated.push(...agentTelemetryEnv(agent.metadata, telemetrySettings(cfg?.telemetry, config)));
  generated.push(...logLevelEnv('LOG_LEVEL', config.defaultLogLevel, cfg?.env, containerEnv));
  const user = copyEnv(containerEnv);
  const userNames = new Set(user.map((e) => e.name));
  return uniqueEnv([...out.slice(0, userAt), ...user, ...generated.filter((e) => !userNames.has(e.name))]);
}

function memoryEnv(memory: AgentMemoryInput): EnvVar[] {
  return [
    env('MEMORY_ENABLED', String(memory.enabled ?? MEMORY_DEFAULTS.enabled)),
    env('MEMORY_TYPE', memory.type || MEMORY_DEFAULTS.type),
    env('MEMORY_CONTEXT_LIMIT', String(memory.contextLimit ?? MEMORY_DEFAULTS.contextLimit)),
    env('MEMORY_MAX_SESSIONS', String(memory.maxSessions ?? MEMORY_DEFAULTS.maxSessions)),
    env('MEMORY_MAX_SESSION_EVENTS', String(memory.maxSessionEvents ?? MEMORY_DEFAULTS.maxSessionEvents)),
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
