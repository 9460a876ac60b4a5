// Telemetry and log-level env of new-shape objects (docs/api.md, "Newer KAOS shapes"). Original-shape objects get
// none of it: they render exactly as docs/api.md's Agent, ModelAPI and MCPServer sections say. Pure.
import type { ContainerLogLevel } from '../api/enums.ts';
import { env, hasEnv } from './container.ts';
import type { EnvVarInput, MetadataInput, RenderConfig, TelemetryInput } from './inputs.ts';
import type { EnvVar } from './k8s.ts';

export interface TelemetrySettings {
  readonly enabled: boolean;
  /** The OTLP endpoint; undefined when neither the object nor the operator names one. */
  readonly endpoint?: string;
}

/** The object's block decides `enabled` (the operator's default without one); endpoint falls back. */
export function telemetrySettings(block: TelemetryInput | undefined, config: Pick<RenderConfig, 'telemetry'>): TelemetrySettings {
  const enabled = block === undefined ? config.telemetry.enabled : block.enabled === true;
  const endpoint = block?.endpoint !== undefined && block.endpoint !== '' ? block.endpoint : config.telemetry.endpoint;
  return endpoint === '' ? { enabled } : { enabled, endpoint };
}

/**
 * Agents, MCPServers and MemoryStores (the KAOS Python images' OpenTelemetry SDK). The service
 * name is the object's, or a MemoryStore's `memorystore-<name>`.
 */
export function agentTelemetryEnv(metadata: MetadataInput | undefined, settings: TelemetrySettings, serviceName = metadata?.name ?? ''): EnvVar[] {
  if (!settings.enabled) return [];
  const name = metadata?.name ?? '';
  return [
    env('OTEL_SDK_DISABLED', 'false'),
    env('OTEL_SERVICE_NAME', serviceName),
    ...(settings.endpoint === undefined ? [] : [env('OTEL_EXPORTER_OTLP_ENDPOINT', settings.endpoint)]),
    env('OTEL_RESOURCE_ATTRIBUTES', `service.namespace=${metadata?.namespace ?? ''},kaos.resource.name=${name}`),
    env('OTEL_PYTHON_FASTAPI_EXCLUDED_URLS', '/health,/ready'),
  ];
}

/** A Proxy ModelAPI (LiteLLM's OpenTelemetry callback). */
export function liteLLMTelemetryEnv(metadata: MetadataInput | undefined, settings: TelemetrySettings): EnvVar[] {
  if (!settings.enabled) return [];
  return [
    env('OTEL_EXPORTER', 'otlp_grpc'),
    ...(settings.endpoint === undefined ? [] : [env('OTEL_EXPORTER_OTLP_ENDPOINT', settings.endpoint)]),
    env('OTEL_SERVICE_NAME', metadata?.name ?? ''),
    env('OTEL_PYTHON_EXCLUDED_URLS', '/health'),
  ];
}

export type LogLevelTarget = 'LOG_LEVEL' | 'LITELLM_LOG' | 'OLLAMA_DEBUG';

/** The variable and its value for `level`; undefined when the target has nothing to say (Ollama at INFO). */
export function logLevelEntry(target: LogLevelTarget, level: ContainerLogLevel): EnvVar | undefined {
  switch (target) {
    case 'LOG_LEVEL':
      return env('LOG_LEVEL', level);
    case 'LITELLM_LOG':
      // LiteLLM has no TRACE.
      return env('LITELLM_LOG', level === 'TRACE' ? 'DEBUG' : level);
    case 'OLLAMA_DEBUG':
      return level === 'DEBUG' ? env('OLLAMA_DEBUG', '1') : level === 'TRACE' ? env('OLLAMA_DEBUG', '2') : undefined;
  }
}

/** The log-level entry, unless one of the user's env lists already sets that variable. */
export function logLevelEnv(target: LogLevelTarget, level: ContainerLogLevel, ...userLists: (readonly EnvVarInput[] | undefined)[]): EnvVar[] {
  if (userLists.some((list) => hasEnv(list, target))) return [];
  const entry = logLevelEntry(target, level);
  return entry === undefined ? [] : [entry];
}
