// MCPServer → Deployment and Service `mcpserver-<name>`, HTTPRoute `mcp-<name>` (docs/api.md, "MCPServer").
import {
  applyContainerOverride,
  copyEnv,
  copySecretKeySelector,
  env,
  httpPort,
  placeUserEnv,
  tcpSocketProbe,
  uniqueEnv,
  withoutEnv,
} from './container.ts';
import { shapeOf } from '../api/shapes.ts';
import { renderHTTPRoute } from './gateway.ts';
import { agentTelemetryEnv, logLevelEnv, telemetrySettings } from './observability.ts';
import { defaultMCPServerImage } from './images.ts';
import { configSourceOfSecret } from './hash.ts';
import type { MCPServerDeps, MCPServerInput, RenderConfig, RuntimeEntryInput } from './inputs.ts';
import type { Container, EnvVar, PodSpec } from './k8s.ts';
import { parentIdentity } from './labels.ts';
import { CONTAINER_NAME, MCP_PORT, serviceURL, workloadName } from './names.ts';
import type { Rendered } from './rendered.ts';
import { mcpToolsSource, packageToolchain } from './sources.ts';
import { withDefaultResources } from './pod-defaults.ts';
import { buildDeployment, buildService } from './workload.ts';

export const MCP_TOOLS_STRING_ENV = 'MCP_TOOLS_STRING';
/** The package spec as the user wrote it (name, optionally with a version pin). */
export const MCP_PACKAGE_ENV = 'MCP_PACKAGE';
/** Console script to run after pip install (the distribution name). */
export const MCP_ENTRYPOINT_ENV = 'MCP_ENTRYPOINT';
/** Module for `python -m` when there is no console script (name with `-` → `_`). */
export const MCP_MODULE_ENV = 'MCP_MODULE';

/**
 * Shell programs for fromPackage. They only ever read the package through the env vars above,
 * double-quoted, so no character of it is parsed by the shell: the validating webhook refuses
 * shell characters, and this makes them harmless even if one gets through. `exec` makes the
 * server PID 1's direct successor so it receives SIGTERM; `"$@"` forwards spec.container.args.
 */
export const PYTHON_PACKAGE_SCRIPT =
  `pip install --no-cache-dir "$${MCP_PACKAGE_ENV}" && ` +
  `if command -v "$${MCP_ENTRYPOINT_ENV}" >/dev/null 2>&1; ` +
  `then exec "$${MCP_ENTRYPOINT_ENV}" "$@"; ` +
  `else exec python -m "$${MCP_MODULE_ENV}" "$@"; fi`;
export const NODE_PACKAGE_SCRIPT = `exec npx -y "$${MCP_PACKAGE_ENV}" "$@"`;
/** $0 of the `sh -c` programs (shows in ps and in shell error messages). */
const SCRIPT_NAME = 'mcp-server';

export const MCP_TOOLS_COMMAND = ['python', '-m', 'mcptools.server'] as const;

/**
 * The distribution name of a pip requirement: `foo-bar==1.2` and `foo-bar[extra]>=1` → `foo-bar`
 * (PEP 508 names start and end with a letter or digit). Falls back to the whole spec.
 */
export function pythonDistributionName(requirement: string): string {
  const match = /^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)/.exec(requirement);
  return match?.[1] ?? requirement.trim();
}

/** `python -m` module of a distribution: `-` → `_` (docs/api.md, "MCPServer"). */
export function pythonModuleName(requirement: string): string {
  return pythonDistributionName(requirement).replaceAll('-', '_');
}

interface ToolsContainer {
  readonly command: string[];
  readonly env: EnvVar[];
}

function toolsContainer(mcp: MCPServerInput): ToolsContainer {
  const tools = mcp.spec.config?.tools;
  switch (mcpToolsSource(mcp.spec)) {
    case 'fromString':
      return { command: [...MCP_TOOLS_COMMAND], env: [env(MCP_TOOLS_STRING_ENV, tools?.fromString ?? '')] };
    case 'fromSecretKeyRef': {
      const ref = tools?.fromSecretKeyRef;
      const valueFrom = ref === undefined ? {} : { secretKeyRef: copySecretKeySelector(ref) };
      return { command: [...MCP_TOOLS_COMMAND], env: [{ name: MCP_TOOLS_STRING_ENV, valueFrom }] };
    }
    case 'fromPackage': {
      const pkg = tools?.fromPackage ?? '';
      if (packageToolchain(mcp.spec) === 'node') {
        return { command: ['/bin/sh', '-c', NODE_PACKAGE_SCRIPT, SCRIPT_NAME], env: [env(MCP_PACKAGE_ENV, pkg)] };
      }
      return {
        command: ['/bin/sh', '-c', PYTHON_PACKAGE_SCRIPT, SCRIPT_NAME],
        env: [
          env(MCP_PACKAGE_ENV, pkg),
          env(MCP_ENTRYPOINT_ENV, pythonDistributionName(pkg)),
          env(MCP_MODULE_ENV, pythonModuleName(pkg)),
        ],
      };
    }
    case 'none':
      return { command: [...MCP_TOOLS_COMMAND], env: [] };
  }
}

/**
 * New shape only (docs/api.md, "Newer KAOS shapes"; api/shapes.ts decides): the OpenTelemetry variables and
 * LOG_LEVEL unless the user set it. spec.container.env still comes last (applyContainerOverride).
 */
export function mcpObservabilityEnv(mcp: MCPServerInput, config: RenderConfig): EnvVar[] {
  if (shapeOf('MCPServer', mcp.spec) !== 'new') return [];
  return [
    ...agentTelemetryEnv(mcp.metadata, telemetrySettings(mcp.spec.telemetry, config)),
    ...logLevelEnv('LOG_LEVEL', config.defaultLogLevel, mcp.spec.config?.env, mcp.spec.container?.env),
  ];
}

const livenessProbe = (): Container['livenessProbe'] =>
  tcpSocketProbe(MCP_PORT, { initialDelaySeconds: 20, periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 });
const readinessProbe = (): Container['readinessProbe'] =>
  tcpSocketProbe(MCP_PORT, { initialDelaySeconds: 15, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 2 });

/** An MCPServer in upstream KAOS's shape (docs/api.md, "Newer KAOS shapes"): spec.runtime and no spec.type. */
export function isRuntimeShape(spec: MCPServerInput['spec']): boolean {
  return spec.runtime !== undefined && spec.runtime !== '' && spec.type === undefined;
}

/**
 * A runtime MCPServer's container (docs/api.md, "MCPServer runtimes"): image, command and args from
 * the registry entry (none for `custom`), then spec.container over them. Env in KAOS's order:
 * `<paramsEnvVar>` = spec.params when both are set, spec.container.env, LOG_LEVEL unless the user
 * set it, then the OpenTelemetry variables (a runtime MCPServer is new-shape).
 */
export function runtimeContainer(mcp: MCPServerInput, entry: RuntimeEntryInput | undefined, config: RenderConfig): Container {
  const params = mcp.spec.params;
  const paramsEnv = entry?.paramsEnvVar;
  const generated: Container = {
    name: CONTAINER_NAME.MCPServer,
    // `custom` (no entry): spec.container.image, which admission requires, replaces this.
    image: entry?.image ?? '',
    imagePullPolicy: 'IfNotPresent',
    ...(entry?.command === undefined || entry.command.length === 0 ? {} : { command: [...entry.command] }),
    ...(entry?.args === undefined || entry.args.length === 0 ? {} : { args: [...entry.args] }),
    ports: [httpPort(MCP_PORT)],
    env: placeUserEnv(
      paramsEnv !== undefined && paramsEnv !== '' && params !== undefined && params !== '' ? [env(paramsEnv, params)] : [],
      copyEnv(mcp.spec.container?.env),
      [
        ...logLevelEnv('LOG_LEVEL', config.defaultLogLevel, mcp.spec.container?.env),
        ...agentTelemetryEnv(mcp.metadata, telemetrySettings(mcp.spec.telemetry, config)),
      ],
    ),
    livenessProbe: livenessProbe(),
    readinessProbe: readinessProbe(),
  };
  // spec.container.env is already in place.
  return applyContainerOverride(withDefaultResources(generated, 'MCPServer', config.workload), withoutEnv(mcp.spec.container));
}

export function mcpServerContainer(mcp: MCPServerInput, config: RenderConfig): Container {
  const tools = toolsContainer(mcp);
  const generated: Container = {
    name: CONTAINER_NAME.MCPServer,
    image: defaultMCPServerImage(mcp.spec, config),
    imagePullPolicy: 'IfNotPresent',
    command: tools.command,
    ports: [httpPort(MCP_PORT)],
    // config.env first, then the generated entries, which win a clash (they are what makes
    // the server run at all).
    env: uniqueEnv([...copyEnv(mcp.spec.config?.env), ...tools.env, ...mcpObservabilityEnv(mcp, config)]),
    livenessProbe: livenessProbe(),
    readinessProbe: readinessProbe(),
  };
  return applyContainerOverride(withDefaultResources(generated, 'MCPServer', config.workload), mcp.spec.container);
}

/**
 * deps.runtime: for a runtime MCPServer (docs/api.md, "Newer KAOS shapes"), its registry entry as the reconciler
 * resolved it; absent for `custom`.
 * deps.secretResourceVersion (optional): the resourceVersion of the Secret named by
 * tools.fromSecretKeyRef, from a metadata-only watch. An env var from a Secret is read only at
 * container start, so a hash of the Secret's version in the pod template is what rolls the pods
 * when the tools change (omitted when unknown; ignored for other tools sources).
 */
export function renderMCPServer(mcp: MCPServerInput, config: RenderConfig, deps: MCPServerDeps = {}): Rendered {
  const parent = parentIdentity('MCPServer', mcp.metadata);
  const byRuntime = isRuntimeShape(mcp.spec);
  const serviceAccountName = mcp.spec.serviceAccountName;
  const podSpec: PodSpec = byRuntime
    ? {
        containers: [runtimeContainer(mcp, deps.runtime, config)],
        ...(serviceAccountName === undefined || serviceAccountName === '' ? {} : { serviceAccountName }),
      }
    : { containers: [mcpServerContainer(mcp, config)] };
  const ref = !byRuntime && mcpToolsSource(mcp.spec) === 'fromSecretKeyRef' ? mcp.spec.config?.tools?.fromSecretKeyRef : undefined;
  const version = deps.secretResourceVersion;
  const deployment = buildDeployment({
    parent,
    podSpec,
    podSpecPatch: mcp.spec.podSpec,
    defaults: config.workload,
    hashPodSpec: config.podSpecHash !== false,
    configSource: ref === undefined || version === undefined ? undefined : configSourceOfSecret(ref.name ?? '', version, ref.key),
  });
  const service = buildService(parent, MCP_PORT);
  const httpRoute = renderHTTPRoute(parent, { name: service.metadata.name, port: MCP_PORT }, mcp.spec.gatewayRoute, config);
  const endpoint = serviceURL(workloadName('MCPServer', parent.name), parent.namespace, MCP_PORT);
  return httpRoute === undefined ? { deployment, service, endpoint } : { deployment, service, httpRoute, endpoint };
}
