// Every setting of the operator process, parsed and validated in one place (docs/api.md, "Operator configuration"; every variable in docs/configuration.md).
// Each variable is documented in docs/configuration.md's configuration table.
import { CONTAINER_LOG_LEVELS, DEFAULT_CONTAINER_LOG_LEVEL, type ContainerLogLevel } from '../api/enums.ts';
import { REFERENCE_POLICIES, type ReferencePolicy } from '../api/kinds.ts';
import {
  POD_SECURITY_CONTEXTS,
  dns1123LabelProblems,
  parseAffinity,
  parseImagePullSecrets,
  parseNameList,
  parseNodeSelector,
  parseResources,
  parseTolerations,
  type WorkloadDefaults,
} from './workload.ts';
import { parseSecurity, type SecurityConfig } from './security.ts';

export type { SecurityConfig } from './security.ts';
export type { ResourceDefaults, Toleration, WorkloadDefaults, PodSecurityContextMode } from './workload.ts';

export interface ImageDefaults {
  agent: string;
  mcpServer: string;
  mcpPython: string;
  mcpNode: string;
  litellm: string;
  ollama: string;
  memoryService: string;
}

export interface GatewayConfig {
  enabled: boolean;
  name: string;
  namespace: string;
  defaultTimeouts: { agent: string; modelAPI: string; mcpServer: string; memoryStore: string };
}

/** The controller's settings; read by its wiring in main.ts. */
export interface ControllerConfig {
  /**
   * Run the controller at all (CONTROLLER_ENABLED). false makes a webhook-only replica: admission
   * and its cache of the four kinds, no watches of children or Secrets, no Lease, no reconciles.
   */
  enabled: boolean;
  /** Keys reconciled at once (MAX_CONCURRENT_RECONCILES). */
  maxConcurrentReconciles: number;
  /**
   * Every cached object is reconciled again about this often, ±10 % (RESYNC_PERIOD_SECONDS): a
   * safety net against a missed event. 0 = never. A converged object costs no write.
   */
  resyncPeriodSeconds: number;
  /** Namespaces the controller's reflectors watch; empty = all namespaces. */
  watchNamespaces: string[];
  /** Run the controller only while holding the leader-election Lease. */
  leaderElect: boolean;
  /** Leader-election identity; '' = the leader-election module picks host + pid. */
  podName: string;
  /** Namespace of the leader-election Lease. */
  leaderElectionNamespace: string;
}

/** OpenTelemetry defaults of new-shape objects (docs/api.md, "Newer KAOS shapes"). */
export interface TelemetryDefaults {
  /** `enabled` of objects without a telemetry block (DEFAULT_TELEMETRY_ENABLED). */
  enabled: boolean;
  /** OTLP endpoint of objects whose block names none (DEFAULT_TELEMETRY_ENDPOINT); '' = none. */
  endpoint: string;
}

export interface Config {
  images: ImageDefaults;
  /** Defaults for every generated pod, applied before spec.container and spec.podSpec. */
  workload: WorkloadDefaults;
  controller: ControllerConfig;
  /**
   * The operator's own namespace (POD_NAMESPACE): where it reads the MCP runtime registry,
   * ConfigMap kaos-mcp-runtimes (docs/api.md, "Newer KAOS shapes").
   */
  operatorNamespace: string;
  /**
   * KAOS's system namespace (SYSTEM_NAMESPACE): where the operator reads the harness runtime
   * registry, ConfigMap kaos-harness-runtimes (docs/api.md, "Agent harness"). The chart: its release namespace.
   */
  systemNamespace: string;
  defaultModelName: string;
  telemetry: TelemetryDefaults;
  /** Warn (admission, lint) about original-shape fields the newer KAOS shapes replace. */
  deprecationWarnings: boolean;
  /** LOG_LEVEL / LITELLM_LOG / OLLAMA_DEBUG of new-shape objects' containers, unless they set it. */
  defaultLogLevel: ContainerLogLevel;
  gateway: GatewayConfig;
  /**
   * The security plane (docs/api.md, "Security settings"): agent identity, the
   * PDP and ext_authz, the user plane, the policy projection. What follows from them is asked of
   * security.ts's functions (securityEnabled, serviceAccountIdentity, …), never worked out again.
   */
  security: SecurityConfig;
  /** Operator-wide reference policy; a namespace label or object annotation may override it. */
  referencePolicy: ReferencePolicy;
  webhook: {
    /** Serve the admission webhooks (WEBHOOKS_ENABLED); false: controller only, no HTTPS server and no certificate. */
    enabled: boolean;
    /**
     * Serve them from a thread of their own (WEBHOOK_THREAD), with its own event loop and heap, so
     * the controller's work never delays them, once the cache holds `threadFromObjects` KAOS
     * objects; false: always on the main thread.
     */
    thread: boolean;
    /**
     * How many KAOS objects the cache holds when the webhooks move to their thread
     * (WEBHOOK_THREAD_OBJECTS, default 500); 0: from the start. Below it the main thread serves
     * them: a thread costs a second V8 isolate (22 MiB at the peak of a bulk apply of 100 Agents),
     * and while 300 Agents converge beside 300 more the main thread answered admission as fast as
     * the thread did; in a relist, or at 1,000 Agents, the thread is faster (docs/benchmarks.md,
     * "The thread for a small cluster").
     */
    threadFromObjects: number;
    host: string;
    port: number;
    /** Directory holding tls.crt and tls.key (the layout of a kubernetes.io/tls Secret mount). */
    certDir: string;
    /** Seconds between periodic certificate checks (a file watch also triggers a reload). */
    certCheckIntervalSeconds: number;
    /** Open connections beyond this are closed at once, before the TLS handshake. */
    maxConnections: number;
    /** Seconds a request's body may take after its headers; then 408 and the connection is closed. */
    bodyTimeoutSeconds: number;
  };
  /** Plain-HTTP port for /healthz, /readyz and /metrics. */
  metricsPort: number;
  metricsHost: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
  /**
   * On SIGTERM, seconds to keep serving while /readyz already fails, so that the Service stops
   * sending admission requests here before the listener closes (a rollout never refuses one).
   */
  shutdownDelaySeconds: number;
  /** Path to a kubeconfig; empty means in-cluster configuration. */
  kubeconfig: string;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** The webhook server's bounds when neither the environment nor a caller sets them. */
export const WEBHOOK_DEFAULTS = {
  maxConnections: 1000,
  bodyTimeoutSeconds: 10,
  threadFromObjects: 500,
} as const;

/**
 * The default images: each pinned to a tag that contains what the rendered command runs, never a
 * moving tag for something the command depends on. docs/configuration.md's table says why each tag.
 */
export const DEFAULT_IMAGES: Readonly<ImageDefaults> = {
  // The v0.1.x agent runtime reads the env the Agent renderer writes (docs/api.md, "Agent").
  agent: 'axsauze/kaos-agent:0.1.3',
  // `python -m mcptools.server` (fromString/fromSecretKeyRef): KAOS removed mcptools/server.py
  // from the agent image with the runtime registry, after v0.1.3; 0.1.3 is the last to carry it.
  mcpServer: 'axsauze/kaos-agent:0.1.3',
  // pip and python (fromPackage, python-runtime): any 3.12 patch release.
  mcpPython: 'python:3.12-slim',
  // npx (fromPackage, node-runtime): any Node 22 release.
  mcpNode: 'node:22-slim',
  // `litellm --config … --port 8000`: a released stable build, not the main branch's latest.
  litellm: 'ghcr.io/berriai/litellm:main-v1.74.3-stable',
  // `ollama serve` and `ollama pull` from /bin/sh: a released Ollama.
  ollama: 'ollama/ollama:0.11.4',
  // The KAOS_MEMORY_* env of a MemoryStore (docs/api.md, "MemoryStore"): the tag KAOS's own chart
  // deploys beside the MemoryStore this API describes; KAOS pushes `latest` from every commit.
  memoryService: 'axsauze/kaos-memory-service:0.4.8-dev',
};

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
const DURATION = /^([0-9]+(h|m|s|ms)){1,4}$/;

/** Parses the environment. Throws ConfigError listing every problem at once. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string): string => {
    const v = env[name];
    return v === undefined || v === '' ? fallback : v;
  };
  const port = (name: string, fallback: number): number => {
    const raw = str(name, String(fallback));
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      problems.push(`${name}: must be a port number 0-65535, got "${raw}"`);
      return fallback;
    }
    return n;
  };
  // A timer's interval must be above 0 (`zero: false`); above ~24.8 days setInterval overflows and
  // fires every 1 ms, hence the day-long default maximum.
  const seconds = (name: string, fallback: number, { max = 86_400, zero = false }: { max?: number; zero?: boolean } = {}): number => {
    const raw = str(name, String(fallback));
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0 || (n === 0 && !zero) || n > max) {
      const range = zero ? `from 0 to ${max}` : `above 0 and at most ${max}`;
      problems.push(`${name}: must be a number of seconds ${range}, got "${raw}"`);
      return fallback;
    }
    return n;
  };
  const count = (name: string, fallback: number, max: number): number => {
    const raw = str(name, String(fallback));
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > max) {
      problems.push(`${name}: must be a whole number from 1 to ${max}, got "${raw}"`);
      return fallback;
    }
    return n;
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = str(name, fallback);
    if (!(allowed as readonly string[]).includes(raw)) {
      problems.push(`${name}: must be one of ${allowed.join(', ')}, got "${raw}"`);
      return fallback;
    }
    return raw as T;
  };
  const duration = (name: string, fallback: string): string => {
    const raw = str(name, fallback);
    if (!DURATION.test(raw)) {
      problems.push(`${name}: must be a duration such as 30s or 2m, got "${raw}"`);
      return fallback;
    }
    return raw;
  };

  const json = <T>(name: string, parse: (name: string, raw: string, problems: string[]) => T | undefined): T | undefined => {
    const raw = str(name, '').trim();
    return raw === '' ? undefined : parse(name, raw, problems);
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = str(name, String(fallback));
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name}: must be an integer from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return n;
  };
  /**
   * The one boolean parser. Our own variables are "true" or "false" and refuse anything else; a
   * variable of the KAOS contract (`contract: true`) keeps KAOS's rule, "true" enables and
   * anything else disables, so that an environment that works with KAOS works here.
   */
  const bool = (name: string, fallback: boolean, { contract = false }: { contract?: boolean } = {}): boolean =>
    contract ? str(name, String(fallback)) === 'true' : oneOf(name, ['true', 'false'], String(fallback) as 'true' | 'false') === 'true';

  const config: Config = {
    images: {
      agent: str('DEFAULT_AGENT_IMAGE', DEFAULT_IMAGES.agent),
      mcpServer: str('DEFAULT_MCP_SERVER_IMAGE', DEFAULT_IMAGES.mcpServer),
      mcpPython: str('DEFAULT_MCP_PYTHON_IMAGE', DEFAULT_IMAGES.mcpPython),
      mcpNode: str('DEFAULT_MCP_NODE_IMAGE', DEFAULT_IMAGES.mcpNode),
      litellm: str('DEFAULT_LITELLM_IMAGE', DEFAULT_IMAGES.litellm),
      ollama: str('DEFAULT_OLLAMA_IMAGE', DEFAULT_IMAGES.ollama),
      memoryService: str('DEFAULT_MEMORY_SERVICE_IMAGE', DEFAULT_IMAGES.memoryService),
    },
    defaultModelName: str('DEFAULT_MODEL_NAME', 'smollm2:135m'),
    telemetry: {
      enabled: bool('DEFAULT_TELEMETRY_ENABLED', false),
      endpoint: str('DEFAULT_TELEMETRY_ENDPOINT', ''),
    },
    deprecationWarnings: bool('DEPRECATION_WARNINGS', false),
    defaultLogLevel: oneOf('DEFAULT_LOG_LEVEL', CONTAINER_LOG_LEVELS, DEFAULT_CONTAINER_LOG_LEVEL),
    operatorNamespace: str('POD_NAMESPACE', 'kaos-system'),
    systemNamespace: str('SYSTEM_NAMESPACE', 'kaos'),
    workload: {
      imagePullSecrets: parseImagePullSecrets('IMAGE_PULL_SECRETS', str('IMAGE_PULL_SECRETS', ''), problems),
      resources: {
        agent: json('DEFAULT_AGENT_RESOURCES', parseResources),
        modelAPI: json('DEFAULT_MODELAPI_RESOURCES', parseResources),
        mcpServer: json('DEFAULT_MCP_RESOURCES', parseResources),
        memoryStore: json('DEFAULT_MEMORYSTORE_RESOURCES', parseResources),
      },
      nodeSelector: json('DEFAULT_NODE_SELECTOR', parseNodeSelector),
      tolerations: json('DEFAULT_TOLERATIONS', parseTolerations),
      affinity: json('DEFAULT_AFFINITY', parseAffinity),
      securityContext: oneOf('POD_SECURITY_CONTEXT', POD_SECURITY_CONTEXTS, 'hardened'),
    },
    controller: {
      enabled: bool('CONTROLLER_ENABLED', true),
      maxConcurrentReconciles: integer('MAX_CONCURRENT_RECONCILES', 4, 1, 64),
      // At most 14 days: with the jitter, within Node's timer range (24.8 days).
      resyncPeriodSeconds: integer('RESYNC_PERIOD_SECONDS', 36_000, 0, 1_209_600),
      watchNamespaces: parseNameList('WATCH_NAMESPACES', str('WATCH_NAMESPACES', ''), problems, dns1123LabelProblems),
      leaderElect: bool('LEADER_ELECT', true),
      podName: str('POD_NAME', ''),
      leaderElectionNamespace: str('LEADER_ELECTION_NAMESPACE', str('POD_NAMESPACE', 'kaos-system')),
    },
    gateway: {
      enabled: bool('GATEWAY_API_ENABLED', false, { contract: true }),
      name: str('GATEWAY_NAME', ''),
      namespace: str('GATEWAY_NAMESPACE', ''),
      defaultTimeouts: {
        agent: duration('GATEWAY_DEFAULT_AGENT_TIMEOUT', '120s'),
        modelAPI: duration('GATEWAY_DEFAULT_MODELAPI_TIMEOUT', '120s'),
        mcpServer: duration('GATEWAY_DEFAULT_MCP_TIMEOUT', '30s'),
        memoryStore: duration('GATEWAY_DEFAULT_MEMORYSTORE_TIMEOUT', '60s'),
      },
    },
    security: parseSecurity(env, problems),
    referencePolicy: oneOf('REFERENCE_POLICY', REFERENCE_POLICIES, 'Enforce'),
    webhook: {
      enabled: bool('WEBHOOKS_ENABLED', true),
      thread: bool('WEBHOOK_THREAD', true),
      threadFromObjects: integer('WEBHOOK_THREAD_OBJECTS', WEBHOOK_DEFAULTS.threadFromObjects, 0, 10_000_000),
      host: str('WEBHOOK_HOST', '0.0.0.0'),
      port: port('WEBHOOK_PORT', 9443),
      certDir: str('WEBHOOK_CERT_DIR', '/tmp/k8s-webhook-server/serving-certs'),
      certCheckIntervalSeconds: seconds('WEBHOOK_CERT_CHECK_INTERVAL_SECONDS', 10),
      maxConnections: count('WEBHOOK_MAX_CONNECTIONS', WEBHOOK_DEFAULTS.maxConnections, 100_000),
      // Below the 32 s header timeout: the API server sends a body at once, right after its headers.
      bodyTimeoutSeconds: seconds('WEBHOOK_BODY_TIMEOUT_SECONDS', WEBHOOK_DEFAULTS.bodyTimeoutSeconds, { max: 60 }),
    },
    metricsPort: port('METRICS_PORT', 8080),
    metricsHost: str('METRICS_HOST', '0.0.0.0'),
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    shutdownDelaySeconds: seconds('SHUTDOWN_DELAY_SECONDS', 5, { max: 300, zero: true }),
    kubeconfig: str('KUBECONFIG', ''),
  };
  if (config.gateway.enabled && (config.gateway.name === '' || config.gateway.namespace === '')) {
    problems.push('GATEWAY_NAME and GATEWAY_NAMESPACE: required when GATEWAY_API_ENABLED is "true"');
  }
  if (!config.controller.enabled && !config.webhook.enabled) {
    problems.push('CONTROLLER_ENABLED and WEBHOOKS_ENABLED: both "false" leaves the operator nothing to do');
  }
  const leaseNamespace = config.controller.leaderElectionNamespace;
  if (dns1123LabelProblems(leaseNamespace).length > 0) {
    const from = env['LEADER_ELECTION_NAMESPACE'] ? 'LEADER_ELECTION_NAMESPACE' : 'POD_NAMESPACE';
    problems.push(`${from}: must be a namespace name (a DNS-1123 label), got "${leaseNamespace}"`);
  }
  if (env['LEADER_ELECTION_NAMESPACE'] && dns1123LabelProblems(config.operatorNamespace).length > 0) {
    problems.push(`POD_NAMESPACE: must be a namespace name (a DNS-1123 label), got "${config.operatorNamespace}"`);
  }
  if (dns1123LabelProblems(config.systemNamespace).length > 0) {
    problems.push(`SYSTEM_NAMESPACE: must be a namespace name (a DNS-1123 label), got "${config.systemNamespace}"`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

