// What render reads from the three kinds: a structural subset of Agent, ModelAPI and MCPServer.
// Kept minimal and permissive on purpose, so that the real API types (TypeBox schemas in
// src/api, or client-node classes) are assignable to these without casts:
// - every field the schema does not require is optional;
// - enums are plain strings (an unknown value is handled, never a type error);
// - arrays are readonly (readonly and mutable arrays both fit);
// - user content passed through verbatim is `object` (accepts type literals, interfaces and
//   classes alike) or `unknown` for spec.podSpec (preserve-unknown-fields).
// Anything the webhook defaults is read defensively, with the same default (api.md §2–§4).

import type { Config } from '../config.ts';

export interface MetadataInput {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
}

export interface EnvVarInput {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: object;
}

export interface SecretKeySelectorInput {
  readonly name?: string;
  readonly key: string;
  readonly optional?: boolean;
}

export interface ContainerOverrideInput {
  readonly image?: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly resources?: object;
  readonly env?: readonly EnvVarInput[];
}

export interface GatewayRouteInput {
  readonly timeout?: string;
}

/** The §1 fields every kind shares. */
export interface CommonSpecInput {
  readonly gatewayRoute?: GatewayRouteInput;
  readonly container?: ContainerOverrideInput;
  /** A core/v1 PodSpec fragment; validated by the webhook, merged here. */
  readonly podSpec?: unknown;
}

export interface AgentMemoryInput {
  readonly enabled?: boolean;
  readonly type?: string;
  readonly contextLimit?: number;
  readonly maxSessions?: number;
  readonly maxSessionEvents?: number;
}

export interface AgentSpecInput extends CommonSpecInput {
  readonly modelAPI?: string;
  readonly mcpServers?: readonly string[];
  readonly agentNetwork?: { readonly expose?: boolean; readonly access?: readonly string[] };
  readonly config?: {
    readonly description?: string;
    readonly instructions?: string;
    readonly reasoningLoopMaxSteps?: number;
    readonly memory?: AgentMemoryInput;
    readonly env?: readonly EnvVarInput[];
  };
}

export interface AgentInput {
  readonly metadata?: MetadataInput;
  readonly spec: AgentSpecInput;
}

export interface ModelAPISpecInput extends CommonSpecInput {
  readonly mode: string;
  readonly proxyConfig?: {
    readonly apiBase?: string;
    readonly model?: string;
    readonly configYaml?: {
      readonly fromString?: string;
      readonly fromSecretKeyRef?: SecretKeySelectorInput;
    };
    readonly env?: readonly EnvVarInput[];
  };
  readonly hostedConfig?: {
    readonly model?: string;
    readonly env?: readonly EnvVarInput[];
  };
}

export interface ModelAPIInput {
  readonly metadata?: MetadataInput;
  readonly spec: ModelAPISpecInput;
}

export interface MCPServerSpecInput extends CommonSpecInput {
  /** Original shape (api.md §4); absent on a runtime MCPServer. */
  readonly type?: string;
  /** Upstream KAOS shape (api.md §7.2): a registry runtime or `custom`, its params, the pod's service account. */
  readonly runtime?: string;
  readonly params?: string;
  readonly serviceAccountName?: string;
  readonly config?: {
    readonly tools?: {
      readonly fromPackage?: string;
      readonly fromString?: string;
      readonly fromSecretKeyRef?: SecretKeySelectorInput;
    };
    readonly env?: readonly EnvVarInput[];
  };
}

export interface MCPServerInput {
  readonly metadata?: MetadataInput;
  readonly spec: MCPServerSpecInput;
}

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
export type RenderConfig = Pick<Config, 'images' | 'defaultModelName' | 'gateway' | 'workload'>;
