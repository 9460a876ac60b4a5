// The seam between the reconcilers and the process: everything a reconcile reads comes from the
// shared cache through `reads`, everything it writes goes through `writes`, each a function it is
// given (as admission is given its dry run). controller.ts binds them to the cache and the API
// client; unit tests bind them to memory and count the calls.
import type { KaosKind } from '../../api/kinds.ts';
import type { KubeObject } from '../../api/meta.ts';
import type { KaosObjects } from '../../api/schema/index.ts';
import type { HarnessRegistryState } from '../../api/harness-runtimes.ts';
import type { RegistryState } from '../../api/mcp-runtimes.ts';
import type { EnsureResult, ObjectLike, PruneResult } from '../../kube/apply.ts';
import type { EventInput } from '../../kube/events.ts';
import type { Logger } from '../../leaves/logger.ts';
import type { Child, RenderConfig } from '../../render/index.ts';
import type { ReconcileResult } from '../queue.ts';
import type { KaosStatus } from '../status.ts';
import type { ChildKind } from '../../cluster/kind-table.ts';
import type { ObjectRef } from '../../cluster/object-ref.ts';


/** Reads, all from the shared cache: a reconcile never reads the API server. */
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
  /** The harness runtime registry (docs/api.md, "Agent harness"), from its one-ConfigMap watch (controller/runtime-registry.ts). */
  harnessRuntimes(): HarnessRegistryState;
}

/** Writes, each one request to the API server (or none when nothing would change). */
export interface ReconcileWrites {
  /**
   * Server-side apply of `desired` unless `live` already holds every applied field (kube/apply.ts);
   * `applyReplicas`: a Deployment's replicas is the parent's to apply (the kind table's `replicas: 'spec'`).
   */
  ensureChild(desired: Child, live: ObjectLike | undefined, signal: AbortSignal, options?: { applyReplicas?: boolean }): Promise<EnsureResult<ObjectLike>>;
  /** Deletes the children of `existing` controlled by `ownerUid` that `desired` lacks (uid precondition). */
  pruneChildren(existing: readonly ObjectLike[], ownerUid: string, desired: readonly Child[], signal: AbortSignal): Promise<PruneResult<ObjectLike>>;
  /**
   * Replaces `object`'s status through the status subresource, guarded by the resourceVersion
   * read from the cache (a 409 is thrown, and the queue retries on a fresher cache).
   */
  writeStatus(kind: KaosKind, object: KubeObject, status: KaosStatus, signal: AbortSignal): Promise<void>;
  /** Removes `finalizers` from an object being deleted (a JSON patch guarded by the resourceVersion). */
  removeFinalizers(kind: KaosKind, object: KubeObject, finalizers: readonly string[], signal: AbortSignal): Promise<void>;
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

/** The KAOS finalizers of the Go operator, removed from objects being deleted (docs/api.md, "Common behaviour"). */
export const LEGACY_FINALIZERS: Readonly<Record<KaosKind, string>> = {
  Agent: 'kaos.tools/agent-finalizer',
  ModelAPI: 'kaos.tools/modelapi-finalizer',
  MCPServer: 'kaos.tools/mcpserver-finalizer',
  MemoryStore: 'kaos.tools/memorystore-finalizer',
};

/** One reconcile of one object of a kind: what the WorkQueue runs for a key of that kind. */
export type KindReconciler = (ctx: ReconcileContext, key: ObjectRef, signal: AbortSignal) => Promise<ReconcileResult>;
