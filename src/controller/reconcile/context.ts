// The seam between the reconcilers and the process: everything a reconcile reads comes from the
// shared cache through `reads`, everything it writes goes through `writes`, each a function it is
// given (as admission is given its dry run). controller.ts binds them to the cache and the API
// client; unit tests bind them to memory and count the calls.
import type { GrantGateFacts } from '../../api/access-grants.ts';
import type { KaosKind, WorkloadKind } from '../../api/kinds.ts';
import type { KubeObject } from '../../api/meta.ts';
import type { KaosObjects } from '../../api/schema/index.ts';
import type { HarnessRegistryState } from '../../api/harness-runtimes.ts';
import type { RegistryState } from '../../api/mcp-runtimes.ts';
import type { EnsureResult, ObjectLike, PruneResult } from '../../kube/apply.ts';
import type { EventInput } from '../../kube/events.ts';
import type { Logger } from '../../leaves/logger.ts';
import type { Child, RenderConfig } from '../../render/index.ts';
import type { IssuerKeys } from '../../render/authz-data.ts';
import type { ReconcileResult } from '../queue.ts';
import type { GrantStatus, KaosStatus } from '../status.ts';
import type { ChildKind } from '../../cluster/kind-table.ts';
import type { ObjectRef } from '../../cluster/object-ref.ts';


/** Reads, all from the shared cache: a reconcile reads the API server only through `writes.liveUid`, in one rare case. */
export interface ReconcileReads {
  /**
   * A KAOS object (the parent itself, or a dependency) as its kind's schema type, or undefined
   * when the cache has none.
   */
  kaos<K extends KaosKind>(kind: K, namespace: string, name: string): KaosObjects[K] | undefined;
  /**
   * An owned child by kind and name (the cache holds only objects labelled
   * `app.kubernetes.io/managed-by=kaos-operator`); undefined when absent, or for HTTPRoute when
   * the Gateway API is not watched.
   */
  child(kind: ChildKind, namespace: string, name: string): ObjectLike | undefined;
  /**
   * metadata.resourceVersion of a Secret (from a metadata-only watch: Secret data never enters
   * the operator); undefined when the Secret does not exist.
   */
  secretResourceVersion(namespace: string, name: string): string | undefined;
  /**
   * metadata.resourceVersion of any ConfigMap (from a metadata-only watch of every ConfigMap,
   * not the owned children's); undefined when the ConfigMap does not exist.
   */
  configMapResourceVersion(namespace: string, name: string): string | undefined;
  /** Whether HTTPRoutes can be written: gateway enabled in the config and its CRD served. */
  httpRoutesServed(): boolean;
  /** The MCP runtime registry (docs/api.md, "MCPServer runtimes"), from its one-ConfigMap watch (controller/runtime-registry.ts). */
  mcpRuntimes(): RegistryState;
  /** What the policy projection (controller/authz-projection.ts) made of the AccessGrants. */
  grantProjection(): GrantProjectionReads;
  /** Whether SecurityPolicies can be written: Envoy Gateway's CRD established and its objects watched. */
  securityPoliciesServed(): boolean;
  /** The ServiceAccount issuer and its keys as last discovered (the SecurityPolicies' agent JWT provider). */
  serviceAccountIssuer(): IssuerKeys | undefined;
  /** The URI of the user issuer's keys as last discovered (the SecurityPolicies' user JWT provider); undefined before. */
  userJwksUri(): string | undefined;
  /** The address the Gateway (GATEWAY_NAME) reports in its status, when it reports one (gateway routing). */
  gatewayAddress(): string | undefined;
  /** The harness runtime registry (docs/api.md, "Agent harness"), from its one-ConfigMap watch (controller/runtime-registry.ts). */
  harnessRuntimes(): HarnessRegistryState;
}

/** The projection's word on one AccessGrant, from its last pass. */
export type GrantProjection =
  /** Its namespace is not projected (AUTHZ_PROJECTION_NAMESPACES): the projection does not judge it. */
  | { readonly state: 'unprojected' }
  /** No pass has read it (at this generation) yet. */
  | { readonly state: 'pending' }
  /** The last pass read it at `generation` and wrote the policy data holding it. */
  | { readonly state: 'projected'; readonly generation: number | undefined }
  /** The last pass failed. */
  | { readonly state: 'failed' };

export interface GrantProjectionReads {
  /** What the operator's settings make of every grant. */
  readonly gates: GrantGateFacts;
  of(namespace: string, name: string, generation: number | undefined): GrantProjection;
}

/** No projection, and settings whose first gate fails (security off): what a controller without one reads. */
export const NO_GRANT_PROJECTION: GrantProjectionReads = {
  gates: { securityEnabled: false, userPlaneEnabled: false, projectionActive: false },
  of: () => ({ state: 'pending' }),
};

/** Writes, each one request to the API server (or none when nothing would change). */
export interface ReconcileWrites {
  /**
   * Server-side apply of `desired` unless `live` already holds every applied field (kube/apply.ts);
   * `applyReplicas`: a Deployment's replicas is the parent's to apply (the kind table's `appliesReplicas`).
   */
  ensureChild(desired: Child, live: ObjectLike | undefined, signal: AbortSignal, options?: { applyReplicas?: boolean }): Promise<EnsureResult<ObjectLike>>;
  /** Deletes the children of `existing` controlled by `ownerUid` that `desired` lacks (uid precondition). */
  pruneChildren(existing: readonly ObjectLike[], ownerUid: string, desired: readonly Child[], signal: AbortSignal): Promise<PruneResult<ObjectLike>>;
  /**
   * Replaces `object`'s status through the status subresource, guarded by the resourceVersion
   * read from the cache (a 409 is thrown, and the queue retries on a fresher cache).
   */
  writeStatus(kind: KaosKind, object: KubeObject, status: KaosStatus | GrantStatus, signal: AbortSignal): Promise<void>;
  /** Removes `finalizers` from an object being deleted (a JSON patch guarded by the resourceVersion). */
  removeFinalizers(kind: KaosKind, object: KubeObject, finalizers: readonly string[], signal: AbortSignal): Promise<void>;
  /**
   * The uid the API server has now for the KAOS object `kind` `namespace/name` (a GET past the
   * cache), undefined when it has none. The one read a reconcile makes of the API server, and only
   * when the cache holds a child of a same-named object with another uid (earlier-children.ts):
   * the cache alone cannot tell a leftover of a deleted owner from a later owner's child.
   */
  liveUid(kind: KaosKind, namespace: string, name: string, signal: AbortSignal): Promise<string | undefined>;
}

export interface ReconcileContext {
  readonly reads: ReconcileReads;
  readonly writes: ReconcileWrites;
  /** Kubernetes Events on the parent; deduplicated by the recorder, never awaited by a reconcile. */
  readonly events: { record(input: EventInput): void };
  readonly config: RenderConfig;
  readonly now: () => Date;
  readonly logger: Logger;
}

/**
 * The KAOS finalizers of the Go operator, removed from objects being deleted (docs/api.md,
 * "Common behaviour"); an Agent from a KAOS install with `oidc` identity also carries KAOS's
 * OIDC client finalizer, whose client this operator never made.
 */
export const LEGACY_FINALIZERS: Readonly<Record<WorkloadKind, readonly string[]>> = {
  Agent: ['kaos.tools/agent-finalizer', 'kaos.tools/oidc-client-finalizer'],
  ModelAPI: ['kaos.tools/modelapi-finalizer'],
  MCPServer: ['kaos.tools/mcpserver-finalizer'],
  MemoryStore: ['kaos.tools/memorystore-finalizer'],
};

/** One reconcile of one object of a kind: what the WorkQueue runs for a key of that kind. */
export type KindReconciler = (ctx: ReconcileContext, key: ObjectRef, signal: AbortSignal) => Promise<ReconcileResult>;
