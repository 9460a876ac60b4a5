// What render reads from the four kinds: the API's own object types (TypeBox Static of the
// schemas in src/api/schema), so admission and the controller hand validated objects to render
// without casts, and a field added to a schema reaches render with no second declaration.
// Render still reads anything the webhook defaults defensively, with the same default
// (docs/api.md, each kind's section), and handles an enum value it does not know (an object read before validation).

import type {
  Agent,
  AgentSpec,
  ContainerOverride,
  EnvVar,
  GatewayRoute,
  MCPServer,
  MCPServerSpec,
  MemoryStore,
  ModelAPI,
  ModelAPISpec,
  ObjectMeta,
  SecretKeySelector,
  Telemetry,
} from '../api/schema/index.ts';
import type { Config } from '../config/config.ts';

// The objects render reads are the API's own types (TypeBox Static, src/api/schema): one type
// per kind. The names below are render's words for them, not other types.
export type MetadataInput = ObjectMeta;
export type EnvVarInput = EnvVar;
export type SecretKeySelectorInput = SecretKeySelector;
export type ContainerOverrideInput = ContainerOverride;
export type GatewayRouteInput = GatewayRoute;
export type TelemetryInput = Telemetry;
export type AgentMemoryInput = NonNullable<NonNullable<AgentSpec['config']>['memory']>;
export type AgentHarnessInput = NonNullable<AgentSpec['harness']>;
export type AgentInput = Agent;
export type AgentSpecInput = AgentSpec;
export type ModelAPIInput = ModelAPI;
export type ModelAPISpecInput = ModelAPISpec;
export type MCPServerInput = MCPServer;
export type MCPServerSpecInput = MCPServerSpec;
export type MemoryStoreInput = MemoryStore;

/** Resolved dependencies of an Agent, read by the reconciler from its cache. */
export interface AgentDeps {
  readonly modelAPI: {
    /** The ModelAPI's status.endpoint. */
    readonly endpoint: string;
    /**
     * The ModelAPI's model (hostedConfig.model or proxyConfig.model), when known. Only used
     * for MODEL_NAME when config.env has none; falls back to config.defaultModelName.
     */
    readonly model?: string;
  };
  /** Resolved MCPServers (any order; render sorts by name). */
  readonly mcpServers: readonly { readonly name: string; readonly endpoint: string }[];
  /** Resolved peer Agents (any order; entries without an endpoint are skipped). */
  readonly peers: readonly { readonly name: string; readonly endpoint: string }[];
  /**
   * The MemoryStore `config.memory.memoryStore` names, when it exists (Ready or not: its endpoint
   * follows from its name, so its readiness never changes the pod spec); absent when it does not.
   */
  readonly memoryStore?: {
    readonly endpoint: string;
    /** Its read ceiling (its maxReadScope, `agent` when unset). */
    readonly maxReadScope: string;
  };
  /** What spec.harness resolved to in the harness runtime registry (docs/api.md, "Agent harness"). */
  readonly harness?: HarnessDeps;
}

/** A harness runtime as the reconciler resolved it (api/harness-runtimes.ts resolveHarness). */
export interface HarnessDeps {
  /** spec.container.image, else the registry entry's. */
  readonly image: string;
  readonly driver: string;
}

/** Resolved dependencies of a MemoryStore, read by the reconciler from its cache. */
export interface MemoryStoreDeps {
  /** The summarization ModelAPI's endpoint (from its spec, like an Agent's MODEL_API_URL). */
  readonly summarizationEndpoint: string;
  /** The connection Secret's resourceVersion (external mode), when known: it enters the config hash. */
  readonly connectionSecretResourceVersion?: string;
}

/**
 * What the reconciler knows of the Secret behind configYaml.fromSecretKeyRef (ModelAPI) or
 * tools.fromSecretKeyRef (MCPServer): only its resourceVersion, from a metadata-only watch, so
 * Secret data never enters the operator's memory. A new resourceVersion (any change of the
 * Secret) yields a new config hash, which rolls the pods.
 */
export interface ConfigSourceDeps {
  /** The Secret's metadata.resourceVersion; undefined when unknown or missing (no config hash). */
  readonly secretResourceVersion?: string;
  /**
   * A Proxy ModelAPI whose `apiKey.valueFrom.secretKeyRef` names a Secret: its resourceVersion.
   * An env var from a Secret is read only at container start, so it enters the config hash too.
   */
  readonly apiKeySecretResourceVersion?: string;
  /** The same for `apiKey.valueFrom.configMapKeyRef`: the ConfigMap's resourceVersion. */
  readonly apiKeyConfigMapResourceVersion?: string;
}

/**
 * A runtime registry entry (api/mcp-runtimes.ts RuntimeEntry), resolved by the reconciler for an
 * MCPServer with spec.runtime; absent for `custom`, whose image, command and args come from
 * spec.container alone.
 */
export interface RuntimeEntryInput {
  readonly image: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly paramsEnvVar?: string;
}

export interface MCPServerDeps extends ConfigSourceDeps {
  readonly runtime?: RuntimeEntryInput;
}

/** The part of the operator configuration render reads (so tests need not build a full Config). */
export type RenderConfig = Pick<Config, 'images' | 'defaultModelName' | 'gateway' | 'workload' | 'telemetry' | 'defaultLogLevel' | 'security'> & {
  /**
   * false: the pod template's pod-spec-hash annotation holds a placeholder (POD_SPEC_HASH_PLACEHOLDER),
   * for the pod the validating webhook has the API server judge (renderPodSpec): the verdict
   * does not depend on it, and the hash costs as much as the pod is large.
   */
  readonly podSpecHash?: boolean;
};
