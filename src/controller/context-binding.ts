// Binds the ReconcileContext (reconcile/context.ts) to the process: reads from the shared cache,
// writes through the API client, Events through the recorder.
import type { KaosKind } from '../api/kinds.ts';
import type { KubeObject } from '../api/meta.ts';
import type { KaosObjects } from '../api/schema/index.ts';
import { HARNESS_REGISTRY_NOT_READ, type HarnessRegistryState } from '../api/harness-runtimes.ts';
import type { RegistryState } from '../api/mcp-runtimes.ts';
import { type ObjectLike } from '../kube/apply.ts';
import { ensureChild, FIELD_MANAGER, pruneOwned } from '../cluster/child-apply.ts';
import type { KubeClient } from '../kube/client.ts';
import { ApiError, isNotFound } from '../kube/errors.ts';
import type { EventInput } from '../kube/events.ts';
import { kaosPath } from '../cluster/kaos-resources.ts';
import type { ReflectorGroup } from '../kube/reflector-group.ts';
import type { Logger } from '../leaves/logger.ts';
import type { RenderConfig } from '../render/index.ts';
import type { IssuerKeys } from '../render/authz-data.ts';
import type { ChildKind } from '../cluster/kind-table.ts';
import type { GrantProjectionReads, ReconcileContext, ReconcileReads, ReconcileWrites } from './reconcile/context.ts';
import type { GrantStatus, KaosStatus } from './status.ts';

/** The requests the writes make. */
export type WriteClient = Pick<KubeClient, 'apply' | 'get' | 'delete' | 'replace' | 'patch'>;

/** The cache as the reads see it. */
export interface CacheReads {
  cached<K extends KaosKind>(kind: K, namespace: string, name: string): KaosObjects[K] | undefined;
  mcpRuntimes?(): RegistryState;
  harnessRuntimes?(): HarnessRegistryState;
}

export interface ContextBindingOptions {
  cache: CacheReads;
  children: Readonly<Partial<Record<ChildKind, Pick<ReflectorGroup, 'getByName'>>>>;
  secrets: Pick<ReflectorGroup, 'getByName'>;
  /** Every ConfigMap as metadata only (the dependency reflector), not the owned children's. */
  configMaps: Pick<ReflectorGroup, 'getByName'>;
  httpRoutesServed: boolean;
  /** The policy projection's word on AccessGrants (controller/authz-projection.ts). */
  grantProjection: () => GrantProjectionReads;
  /** Whether SecurityPolicies can be written (controller/watches.ts OptionalApiWatch); absent: never. */
  securityPoliciesServed?: () => boolean;
  /** The discovered ServiceAccount issuer (cluster/service-account-issuer.ts); absent: none. */
  serviceAccountIssuer?: () => IssuerKeys | undefined;
  /** The discovered URI of the user issuer's keys (controller/user-issuer.ts); absent: none. */
  userJwksUri?: () => string | undefined;
  /** The Gateway's status address; absent: none. */
  gatewayAddress?: () => string | undefined;
  client: WriteClient;
  events: { record(input: EventInput): unknown };
  config: RenderConfig;
  logger: Logger;
  now?: () => Date;
}

export function bindReads(
  options: Pick<ContextBindingOptions, 'cache' | 'children' | 'secrets' | 'configMaps' | 'httpRoutesServed' | 'grantProjection' | 'securityPoliciesServed' | 'serviceAccountIssuer' | 'userJwksUri' | 'gatewayAddress'>,
): ReconcileReads {
  const { cache, children, secrets, configMaps, httpRoutesServed, grantProjection } = options;
  return {
    kaos: (kind, namespace, name) => cache.cached(kind, namespace, name),
    child: (kind, namespace, name) => children[kind]?.getByName(namespace, name) as ObjectLike | undefined,
    secretResourceVersion: (namespace, name) => secrets.getByName(namespace, name)?.metadata?.resourceVersion,
    configMapResourceVersion: (namespace, name) => configMaps.getByName(namespace, name)?.metadata?.resourceVersion,
    httpRoutesServed: () => httpRoutesServed,
    mcpRuntimes: () => cache.mcpRuntimes?.() ?? { problem: 'the MCP runtime registry is not watched' },
    grantProjection,
    securityPoliciesServed: () => options.securityPoliciesServed?.() ?? false,
    serviceAccountIssuer: () => options.serviceAccountIssuer?.(),
    userJwksUri: () => options.userJwksUri?.(),
    gatewayAddress: () => options.gatewayAddress?.(),
    harnessRuntimes: () => cache.harnessRuntimes?.() ?? HARNESS_REGISTRY_NOT_READ,
  };
}

/** Pure: the PUT body of a status write — the cached object with `status` replaced. */
export function statusBody(object: KubeObject, status: KaosStatus | GrantStatus): KubeObject {
  const resourceVersion = object.metadata?.resourceVersion;
  if (resourceVersion === undefined || resourceVersion === '') {
    throw new Error(`${object.kind ?? 'object'} ${object.metadata?.name ?? ''}: no resourceVersion to guard the status write`);
  }
  // managedFields left out: the API server keeps them when the body has none (and it is most of
  // the bytes of a cached object).
  const { managedFields: _managedFields, ...metadata } = object.metadata ?? {};
  return { ...object, metadata, status };
}

/**
 * Pure: the JSON patch that removes `finalizers` from `object`, guarded by a `test` of the whole
 * list as the cache saw it (a change since makes the API server refuse the patch, and the queue
 * retries on a fresher cache); undefined when none of them is there.
 */
export function removeFinalizersPatch(object: KubeObject, finalizers: readonly string[]): unknown[] | undefined {
  const current = object.metadata?.finalizers;
  if (!Array.isArray(current)) return undefined;
  const remaining = current.filter((f) => !finalizers.includes(f as string));
  if (remaining.length === current.length) return undefined;
  return [
    { op: 'test', path: '/metadata/finalizers', value: current },
    { op: 'replace', path: '/metadata/finalizers', value: remaining },
  ];
}

function identity(kind: KaosKind, object: KubeObject): { namespace: string; name: string } {
  const namespace = object.metadata?.namespace ?? '';
  const name = object.metadata?.name ?? '';
  if (namespace === '' || name === '') throw new Error(`${kind} without metadata.namespace and metadata.name`);
  return { namespace, name };
}

/**
 * The resourceVersions our own status writes replaced, by object: while the cache still shows
 * one of them, it has not delivered that write yet, and a status write guarded by it is sure to
 * be refused (409). Bounded: the oldest entries go first (an entry is only an optimisation).
 */
class SupersededVersions {
  readonly #byKey = new Map<string, string>();
  readonly #max: number;
  constructor(max = 10_000) {
    this.#max = max;
  }
  /** True when `resourceVersion` is one our last write to `key` replaced (the cache is behind). */
  stale(key: string, resourceVersion: string | undefined): boolean {
    const superseded = this.#byKey.get(key);
    if (superseded === undefined) return false;
    if (superseded === resourceVersion) return true;
    this.#byKey.delete(key); // the cache has moved on
    return false;
  }
  replaced(key: string, resourceVersion: string | undefined): void {
    if (resourceVersion === undefined) return;
    this.#byKey.delete(key);
    this.#byKey.set(key, resourceVersion);
    if (this.#byKey.size > this.#max) {
      const oldest = this.#byKey.keys().next().value;
      if (oldest !== undefined) this.#byKey.delete(oldest);
    }
  }
}

export function bindWrites(options: Pick<ContextBindingOptions, 'client' | 'logger'>): ReconcileWrites {
  const { client, logger } = options;
  const superseded = new SupersededVersions();
  return {
    ensureChild: (desired, live, signal, options) => ensureChild<ObjectLike>(client, desired, live, { signal, ...options }),
    pruneChildren: (existing, ownerUid, desired, signal) => pruneOwned(client, existing, ownerUid, desired, { signal }),
    async writeStatus(kind, object, status, signal) {
      const path = kaosPath(kind, { ...identity(kind, object), subresource: 'status' });
      const resourceVersion = object.metadata?.resourceVersion;
      // A reconcile woken (by a child) before the cache has seen our last status write: the
      // API server would refuse this one. Refused here instead, without a request; the queue
      // retries, and the write's own watch event wakes the object again anyway.
      if (superseded.stale(path, resourceVersion)) {
        throw new ApiError(409, 'Conflict', `${kind} ${object.metadata?.name ?? ''}: the cache has not seen our last status write yet`);
      }
      try {
        await client.replace(path, statusBody(object, status), { signal, fieldManager: FIELD_MANAGER, discardAnswer: true });
        superseded.replaced(path, resourceVersion);
      } catch (err) {
        // Deleted since the cache saw it: there is no status left to write.
        if (!isNotFound(err)) throw err;
        logger.debug({ kind, ...identity(kind, object) }, 'status not written: the object is gone');
      }
    },
    async removeFinalizers(kind, object, finalizers, signal) {
      const patch = removeFinalizersPatch(object, finalizers);
      if (patch === undefined) return;
      try {
        await client.patch(kaosPath(kind, identity(kind, object)), patch, 'json', { signal, fieldManager: FIELD_MANAGER, discardAnswer: true });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
    async liveUid(kind, namespace, name, signal) {
      try {
        const object = await client.get<KubeObject>(kaosPath(kind, { namespace, name }), { signal });
        return object.metadata?.uid;
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
  };
}

export function bindReconcileContext(options: ContextBindingOptions): ReconcileContext {
  return {
    reads: bindReads(options),
    writes: bindWrites(options),
    events: { record: (input) => void options.events.record(input) },
    config: options.config,
    now: options.now ?? (() => new Date()),
    logger: options.logger,
  };
}
