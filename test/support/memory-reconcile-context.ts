// An in-memory ReconcileContext for the reconciler tests: one store plays both the cache and the
// API server. Every write request, and the one kind of read a reconcile makes of the API server
// (liveUid), is recorded in `requests`; ensureChild uses kube/apply.ts's
// applyIntent + holdsAppliedFields exactly as the real one does, and an apply stores the applied
// object (fake uid and resourceVersion) so the next reconcile sees the applied state — a
// converged object then costs zero requests.
//
// An apply replaces what the store holds with the applied fields, keeping `status` and a
// `spec.replicas` the apply leaves out: what server-side apply does when kaos-operator is the
// only manager of the other fields. (No managedFields are simulated, so holdsAppliedFields
// compares values only, as it does against a cache that strips them.)
//
// Objects handed to the reconciler are deep-frozen: a reconciler that modifies what the cache
// returns fails loudly.
import { cloneJson } from '../../src/api/json.ts';
import type { KaosKind } from '../../src/api/kinds.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import type { KaosObjects } from '../../src/api/schema/index.ts';
import type { RegistryState } from '../../src/api/mcp-runtimes.ts';
import type { HarnessRegistryState } from '../../src/api/harness-runtimes.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { ChildKind } from '../../src/cluster/kind-table.ts';
import { NO_GRANT_PROJECTION, type GrantProjectionReads, type ReconcileContext, type ReconcileReads, type ReconcileWrites } from '../../src/controller/reconcile/context.ts';
import type { GrantStatus, KaosStatus } from '../../src/controller/status.ts';
import { applyIntent, staleChildren, type EnsureResult, type ObjectLike, type PruneResult } from '../../src/kube/apply.ts';
import { holdsAppliedFields } from '../../src/cluster/child-apply.ts';
import { ApiError } from '../../src/kube/errors.ts';
import type { EventInput } from '../../src/kube/events.ts';
import type { Logger } from '../../src/leaves/logger.ts';
import type { Child, RenderConfig } from '../../src/render/index.ts';
import type { IssuerKeys } from '../../src/render/authz-data.ts';

/** One write request as the API server would have received it, or a `get` past the cache (liveUid). */
export interface WriteRequest {
  verb: 'apply' | 'delete' | 'status' | 'finalizers' | 'get';
  /** `Kind/namespace/name`. */
  target: string;
  /** apply: the object sent; status: the status sent; finalizers: those removed. */
  body?: unknown;
}

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error' | 'fatal';
  fields: Record<string, unknown>;
  msg: string;
}

export interface MemoryReconcileOptions {
  config?: RenderConfig;
  /** Whether the HTTPRoute CRD is served (so the cache holds HTTPRoutes). Default true. */
  routesCrdServed?: boolean;
  now?: () => Date;
}

const id = (kind: string, namespace: string, name: string): string => `${kind}/${namespace}/${name}`;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class MemoryReconcileContext implements ReconcileContext {
  config: RenderConfig;
  /**
   * The HTTPRoute CRD is served, so the cache holds HTTPRoutes even while the gateway is off in
   * the config (which is what lets a disabled gateway's routes be pruned).
   */
  routesCrdServed: boolean;
  now: () => Date;
  /** Every write request, in order. */
  readonly requests: WriteRequest[] = [];
  /** Every Event recorded, in order (before any deduplication: that is the recorder's job). */
  readonly recorded: EventInput[] = [];
  readonly lines: LogLine[] = [];
  /** Whether Envoy Gateway's CRD is served (tests set it). */
  securityPoliciesServed = false;
  /** The discovered ServiceAccount issuer (tests set it). */
  serviceAccountIssuer: IssuerKeys | undefined = undefined;
  /** The discovered URI of the user issuer's keys (tests set it). */
  userJwksUri: string | undefined = undefined;
  /** The Gateway's status address (tests set it). */
  gatewayAddress: string | undefined = undefined;
  /** What AccessGrants read of the policy projection (tests set it). */
  grantProjection: GrantProjectionReads = NO_GRANT_PROJECTION;
  /** The MCP runtime registry the reads answer with (tests set it). */
  mcpRuntimes: RegistryState = { problem: 'no registry in this test' };
  /** The harness runtime registry the reads answer with (tests set it). */
  harnessRuntimes: HarnessRegistryState = { problem: 'no harness registry in this test' };
  /**
   * What liveUid answers for `Kind/namespace/name` when the test plays a cache that is behind the
   * API server (undefined: it has no such object); by default, the uid of the stored object.
   */
  readonly apiServerUids = new Map<string, string | undefined>();
  /** When set, called before each write request; an Error it returns is thrown instead. */
  failWith: ((request: WriteRequest) => Error | undefined) | undefined;

  readonly #kaos = new Map<string, KubeObject>();
  readonly #children = new Map<string, ObjectLike>();
  readonly #secrets = new Map<string, string>();
  /** ConfigMaps the operator does not own (the dependency reflector): resourceVersion by namespace/name. */
  readonly #configMaps = new Map<string, string>();
  #version = 1000;
  #uids = 0;

  constructor(options: MemoryReconcileOptions = {}) {
    this.config = options.config ?? loadConfig({});
    this.routesCrdServed = options.routesCrdServed ?? true;
    this.now = options.now ?? (() => new Date('2026-01-02T03:04:05Z'));
  }

  readonly events = { record: (input: EventInput): void => void this.recorded.push(input) };

  readonly logger: Logger = {
    debug: (fields, msg) => void this.lines.push({ level: 'debug', fields, msg }),
    info: (fields, msg) => void this.lines.push({ level: 'info', fields, msg }),
    warn: (fields, msg) => void this.lines.push({ level: 'warn', fields, msg }),
    error: (fields, msg) => void this.lines.push({ level: 'error', fields, msg }),
    fatal: (fields, msg) => void this.lines.push({ level: 'fatal', fields, msg }),
    isLevelEnabled: () => true,
  };

  readonly reads: ReconcileReads = {
    // Tests seed any object, as the API server would have admitted it: read as its kind's type.
    kaos: <K extends KaosKind>(kind: K, namespace: string, name: string) => this.#kaos.get(id(kind, namespace, name)) as KaosObjects[K] | undefined,
    child: (kind, namespace, name) =>
      (kind === 'HTTPRoute' && !this.routesCrdServed) || (kind === 'SecurityPolicy' && !this.securityPoliciesServed) ? undefined : this.#children.get(id(kind, namespace, name)),
    secretResourceVersion: (namespace, name) => this.#secrets.get(`${namespace}/${name}`),
    configMapResourceVersion: (namespace, name) => this.#configMaps.get(`${namespace}/${name}`),
    httpRoutesServed: () => this.routesCrdServed && this.config.gateway.enabled,
    mcpRuntimes: () => this.mcpRuntimes,
    grantProjection: () => this.grantProjection,
    securityPoliciesServed: () => this.securityPoliciesServed,
    serviceAccountIssuer: () => this.serviceAccountIssuer,
    userJwksUri: () => this.userJwksUri,
    gatewayAddress: () => this.gatewayAddress,
    harnessRuntimes: () => this.harnessRuntimes,
  };

  readonly writes: ReconcileWrites = {
    ensureChild: async (desired: Child, live: ObjectLike | undefined, _signal?: AbortSignal, options?: { applyReplicas?: boolean }): Promise<EnsureResult<ObjectLike>> => {
      const intent = applyIntent(desired, live !== undefined, options?.applyReplicas === true, live);
      if (live !== undefined && holdsAppliedFields(live, intent)) return { action: 'unchanged', object: live };
      const key = id(desired.kind, desired.metadata.namespace, desired.metadata.name);
      this.#request({ verb: 'apply', target: key, body: cloneJson(intent) });
      const stored = this.#children.get(key);
      const next = cloneJson(intent) as ObjectLike & { metadata: NonNullable<ObjectLike['metadata']> };
      next.metadata = { ...next.metadata, uid: stored?.metadata?.uid ?? this.#uid(), resourceVersion: this.#nextVersion() };
      if (stored !== undefined) {
        if (stored.status !== undefined) next.status = cloneJson(stored.status);
        const replicas = isRecord(stored.spec) ? stored.spec.replicas : undefined;
        if (isRecord(next.spec) && next.spec.replicas === undefined && replicas !== undefined) next.spec = { ...next.spec, replicas };
      }
      this.#children.set(key, deepFreeze(next));
      return { action: live === undefined ? 'created' : 'updated', object: next };
    },

    pruneChildren: async (existing, ownerUid, desired): Promise<PruneResult<ObjectLike>> => {
      const result: PruneResult<ObjectLike> = { deleted: [], skipped: [] };
      for (const child of staleChildren(existing, ownerUid, desired)) {
        const key = id(child.kind ?? '', child.metadata?.namespace ?? '', child.metadata?.name ?? '');
        this.#request({ verb: 'delete', target: key });
        const stored = this.#children.get(key);
        if (stored === undefined || stored.metadata?.uid !== child.metadata?.uid) {
          result.skipped.push(child);
          continue;
        }
        this.#children.delete(key);
        result.deleted.push(child);
      }
      return result;
    },

    writeStatus: async (kind: KaosKind, object: KubeObject, status: KaosStatus | GrantStatus): Promise<void> => {
      const key = id(kind, object.metadata?.namespace ?? '', object.metadata?.name ?? '');
      this.#request({ verb: 'status', target: key, body: cloneJson(status) });
      const stored = this.#guard(key, object);
      this.#kaos.set(key, deepFreeze({ ...cloneJson(stored), status: cloneJson(status), metadata: { ...cloneJson(stored.metadata), resourceVersion: this.#nextVersion() } }));
    },

    removeFinalizers: async (kind: KaosKind, object: KubeObject, finalizers: readonly string[]): Promise<void> => {
      const key = id(kind, object.metadata?.namespace ?? '', object.metadata?.name ?? '');
      this.#request({ verb: 'finalizers', target: key, body: [...finalizers] });
      const stored = cloneJson(this.#guard(key, object));
      const rest = (Array.isArray(stored.metadata?.finalizers) ? (stored.metadata.finalizers as string[]) : []).filter((f) => !finalizers.includes(f));
      // The API server deletes an object being deleted once its last finalizer is gone.
      if (rest.length === 0 && stored.metadata?.deletionTimestamp !== undefined) {
        this.#kaos.delete(key);
        return;
      }
      this.#kaos.set(key, deepFreeze({ ...stored, metadata: { ...stored.metadata, finalizers: rest, resourceVersion: this.#nextVersion() } }));
    },

    liveUid: async (kind: KaosKind, namespace: string, name: string): Promise<string | undefined> => {
      const key = id(kind, namespace, name);
      this.#request({ verb: 'get', target: key });
      return this.apiServerUids.has(key) ? this.apiServerUids.get(key) : this.#kaos.get(key)?.metadata?.uid;
    },
  };

  // ---- the test's hands on the "cluster" ---------------------------------------------------

  /**
   * Creates or replaces a KAOS object, as a user would: a uid and generation 1 when new; the
   * generation moves when the spec changes; `status` is kept unless the object carries one.
   */
  putKaos(object: KubeObject & { kind: string; metadata: { name: string; namespace: string } }): KubeObject {
    const kind = object.kind;
    const key = id(kind, object.metadata.namespace, object.metadata.name);
    const stored = this.#kaos.get(key);
    const next = cloneJson(object);
    const sameSpec = stored !== undefined && JSON.stringify(stored.spec) === JSON.stringify(next.spec);
    next.metadata = {
      ...next.metadata,
      uid: stored?.metadata?.uid ?? next.metadata?.uid ?? this.#uid(),
      generation: stored === undefined ? 1 : (stored.metadata?.generation ?? 1) + (sameSpec ? 0 : 1),
      resourceVersion: this.#nextVersion(),
    };
    if (next.status === undefined && stored?.status !== undefined) next.status = cloneJson(stored.status);
    return this.#kaos.set(key, deepFreeze(next)).get(key) as KubeObject;
  }

  /** Changes a KAOS object through `mutate` (on a copy), then stores it as putKaos does. */
  updateKaos(kind: KaosKind, namespace: string, name: string, mutate: (object: KubeObject) => void): KubeObject {
    const stored = this.#kaos.get(id(kind, namespace, name));
    if (stored === undefined) throw new Error(`no ${kind} ${namespace}/${name}`);
    const copy = cloneJson(stored);
    mutate(copy);
    return this.putKaos({ ...copy, kind, metadata: { ...copy.metadata, name, namespace } });
  }

  deleteKaos(kind: KaosKind, namespace: string, name: string): void {
    this.#kaos.delete(id(kind, namespace, name));
  }

  kaos(kind: KaosKind, namespace: string, name: string): KubeObject | undefined {
    return this.#kaos.get(id(kind, namespace, name));
  }

  child(kind: ChildKind, namespace: string, name: string): ObjectLike | undefined {
    return this.#children.get(id(kind, namespace, name));
  }

  /** Every stored child, as `Kind/namespace/name` keys, sorted. */
  childKeys(): string[] {
    return [...this.#children.keys()].sort();
  }

  /** Stores a child as another writer would (a Deployment's status, a stray object). */
  putChild(object: ObjectLike & { kind: ChildKind; metadata: { name: string; namespace: string } }): void {
    const next = cloneJson(object);
    next.metadata = { ...next.metadata, uid: next.metadata.uid ?? this.#uid(), resourceVersion: this.#nextVersion() };
    this.#children.set(id(object.kind, object.metadata.namespace, object.metadata.name), deepFreeze(next));
  }

  /** Removes a child as another writer would (the garbage collector). */
  removeChild(kind: ChildKind, namespace: string, name: string): void {
    this.#children.delete(id(kind, namespace, name));
  }

  /** A Deployment's status as the deployment controller would write it. */
  setDeploymentStatus(namespace: string, name: string, status: Record<string, unknown>): void {
    const stored = this.#children.get(id('Deployment', namespace, name));
    if (stored === undefined) throw new Error(`no Deployment ${namespace}/${name}`);
    this.#children.set(id('Deployment', namespace, name), deepFreeze({ ...cloneJson(stored), status: cloneJson(status), metadata: { ...cloneJson(stored.metadata), resourceVersion: this.#nextVersion() } }));
  }

  setConfigMap(namespace: string, name: string, resourceVersion: string | undefined): void {
    if (resourceVersion === undefined) this.#configMaps.delete(`${namespace}/${name}`);
    else this.#configMaps.set(`${namespace}/${name}`, resourceVersion);
  }

  setSecret(namespace: string, name: string, resourceVersion: string | undefined): void {
    if (resourceVersion === undefined) this.#secrets.delete(`${namespace}/${name}`);
    else this.#secrets.set(`${namespace}/${name}`, resourceVersion);
  }

  /** Forgets the requests, events and log lines so far. */
  clearRecords(): void {
    this.requests.length = 0;
    this.recorded.length = 0;
    this.lines.length = 0;
  }

  // ---- internals ---------------------------------------------------------------------------

  #request(request: WriteRequest): void {
    this.requests.push(request);
    const err = this.failWith?.(request);
    if (err !== undefined) throw err;
  }

  /** The stored object, refusing a write guarded by a stale resourceVersion (409), as the API server does. */
  #guard(key: string, object: KubeObject): KubeObject {
    const stored = this.#kaos.get(key);
    if (stored === undefined) throw new ApiError(404, 'NotFound', `${key} not found`);
    if (stored.metadata?.resourceVersion !== object.metadata?.resourceVersion) {
      throw new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${key}: the object has been modified; please apply your changes to the latest version and try again`);
    }
    return stored;
  }

  #nextVersion(): string {
    this.#version += 1;
    return String(this.#version);
  }

  #uid(): string {
    this.#uids += 1;
    return `uid-${String(this.#uids).padStart(4, '0')}`;
  }
}
