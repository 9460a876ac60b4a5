// What the controller adds to the shared cache, derived from the kind table (cluster/kind-table.ts):
// a reflector per owned type, selected by the managed-by label so that unrelated Deployments cost
// nothing (a type that needs an optional API only when it is there: HTTPRoutes when the Gateway API
// is enabled and served at start; Envoy Gateway's SecurityPolicies once their CRD, which is
// watched, is established), and a reflector per dependency type, metadata only — never a Secret's
// data. ConfigMaps are both: the owned ones label-selected and whole, and every ConfigMap as
// metadata only (an API key's); two independent reflectors, read apart. Registered before the cache starts, so /readyz waits for every one of them to sync.
import type { Config } from '../config/config.ts';
import type { RegisterOptions } from '../cluster/cache.ts';
import { CUSTOM_RESOURCE_DEFINITION, GATEWAY, HTTP_ROUTE, type ResourceType } from '../kube/paths.ts';
import type { KubeObject } from '../api/meta.ts';
import type { Reflector } from '../kube/reflector.ts';
import { KIND_TABLE, WATCHED_CRDS, type ChildKind, type DependencyTypeKind, type KindTable, type OptionalAPI } from '../cluster/kind-table.ts';
import type { KubeClient } from '../kube/client.ts';
import { FIELD_MANAGER } from '../cluster/child-apply.ts';
import { isServed } from '../kube/discovery.ts';
import type { ReflectorGroup } from '../kube/reflector-group.ts';
import { slimChild } from '../kube/slim.ts';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../render/index.ts';

/** Where the reflectors are registered: the cache (KaosCache.registerGroup, and register for one cluster-scoped object). */
export interface WatchRegistry {
  registerGroup(type: ResourceType, options: Omit<RegisterOptions, 'namespace'>): ReflectorGroup;
  register?(type: ResourceType, options: RegisterOptions): Pick<Reflector, 'on' | 'list'>;
}

/** What the cache keeps of a watched CRD: whether it is Established. */
function crdEstablished(object: KubeObject): KubeObject {
  const conditions = (object as { status?: { conditions?: { type?: string; status?: string }[] } }).status?.conditions ?? [];
  const established = conditions.some((c) => c.type === 'Established' && c.status === 'True');
  return { apiVersion: object.apiVersion, kind: object.kind, metadata: { name: object.metadata?.name ?? '', resourceVersion: object.metadata?.resourceVersion ?? '' }, status: { established } } as KubeObject;
}

/**
 * One optional API watched through its CRD: while the CRD is Established, the reflector of the
 * owned type (registered on first need, kept after) serves `children`; `served()` is true once that
 * reflector has synced. Listeners hear each change of `served()`.
 */
export class OptionalApiWatch {
  readonly #listeners = new Set<() => void>();
  #established = false;
  #group: ReflectorGroup | undefined;
  #served = false;

  constructor(cache: WatchRegistry & Required<Pick<WatchRegistry, 'register'>>, crd: string, register: () => ReflectorGroup, onGroup: (group: ReflectorGroup) => void) {
    const watch = cache.register(CUSTOM_RESOURCE_DEFINITION, { fieldSelector: `metadata.name=${crd}`, transform: crdEstablished });
    watch.on(() => {
      this.#established = watch.list().some((o) => (o as { status?: { established?: boolean } }).status?.established === true);
      if (this.#established && this.#group === undefined) {
        const group = register();
        this.#group = group;
        onGroup(group);
        void group.waitForSync().then(() => this.#update(), () => undefined);
      }
      this.#update();
    });
  }

  served(): boolean {
    return this.#served;
  }

  onChange(listener: () => void): void {
    this.#listeners.add(listener);
  }

  #update(): void {
    const served = this.#established && this.#group?.isSynced() === true;
    if (served === this.#served) return;
    this.#served = served;
    for (const listener of this.#listeners) listener();
  }
}

export const OWNED_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

export interface ControllerWatches<C extends string = ChildKind, D extends string = DependencyTypeKind> {
  /** The owned children by kind; a kind whose optional API is not available is absent (HTTPRoute). */
  readonly children: Readonly<Partial<Record<C, ReflectorGroup>>>;
  /**
   * The dependency types by kind (Secrets, ConfigMaps), as metadata only. `ConfigMap` here is a
   * second reflector of the type, every ConfigMap unselected, apart from `children.ConfigMap`.
   */
  readonly dependencies: Readonly<Record<D, ReflectorGroup>>;
  readonly httpRoutesServed: boolean;
  /** The optional APIs found through their CRD (WATCHED_CRDS), by API. */
  readonly optional: Readonly<Partial<Record<OptionalAPI, OptionalApiWatch>>>;
}

/**
 * Whether to watch HTTPRoutes: GATEWAY_API_ENABLED and `httproutes.gateway.networking.k8s.io`
 * served, checked once here (installing the Gateway API later takes a restart of the operator).
 */
export async function httpRoutesWanted(client: Pick<KubeClient, 'get'>, config: Pick<Config, 'gateway'>): Promise<boolean> {
  return config.gateway.enabled && (await isServed(client, HTTP_ROUTE));
}

/** The address a Gateway reports in its status: the first non-empty `status.addresses[].value`. */
export function gatewayStatusAddress(gateway: KubeObject | undefined): string | undefined {
  const addresses = (gateway as { status?: { addresses?: { value?: unknown }[] } } | undefined)?.status?.addresses ?? [];
  const found = addresses.find((a) => typeof a.value === 'string' && a.value !== '');
  return found === undefined ? undefined : String(found.value);
}

/** What the cache keeps of the Gateway: its identity and addresses. */
function gatewayAddresses(object: KubeObject): KubeObject {
  const address = gatewayStatusAddress(object);
  return { apiVersion: object.apiVersion, kind: object.kind, metadata: { name: object.metadata?.name ?? '', namespace: object.metadata?.namespace ?? '', resourceVersion: object.metadata?.resourceVersion ?? '' }, status: { addresses: address === undefined ? [] : [{ value: address }] } } as KubeObject;
}

/**
 * The Gateway (GATEWAY_NAME in GATEWAY_NAMESPACE) whose status address an Agent's dependency URLs
 * go through with gateway routing (docs/api.md, "Gateway routing"), when nothing else names the
 * host: one object by name. A change of its address calls `onChange`.
 */
export function watchGatewayAddress(cache: Required<Pick<WatchRegistry, 'register'>>, gateway: { namespace: string; name: string }): { address(): string | undefined; onChange(listener: () => void): void } {
  const watch = cache.register(GATEWAY, { namespace: gateway.namespace, fieldSelector: `metadata.name=${gateway.name}`, transform: gatewayAddresses });
  let address: string | undefined;
  const listeners = new Set<() => void>();
  watch.on(() => {
    const next = gatewayStatusAddress(watch.list()[0]);
    if (next === address) return;
    address = next;
    for (const listener of listeners) listener();
  });
  return { address: () => address, onChange: (listener) => void listeners.add(listener) };
}

/** Registers the controller's reflectors on `cache` (before cache.start()), one per type of `table`. */
export function registerControllerWatches(cache: WatchRegistry, options: { httpRoutes: boolean }): ControllerWatches;
export function registerControllerWatches<C extends string, D extends string>(
  cache: WatchRegistry,
  options: { httpRoutes: boolean },
  table: KindTable<C, D>,
): ControllerWatches<C, D>;
export function registerControllerWatches(
  cache: WatchRegistry,
  options: { httpRoutes: boolean },
  table: KindTable = KIND_TABLE,
): ControllerWatches<string, string> {
  const children: Partial<Record<string, ReflectorGroup>> = {};
  const optional: Partial<Record<OptionalAPI, OptionalApiWatch>> = {};
  for (const [kind, owned] of Object.entries(table.owned)) {
    // Stored slim (kube/slim.ts): of managedFields only our own Apply entry, which apply reads.
    const slim = owned.slim ?? slimChild;
    const register = (): ReflectorGroup => cache.registerGroup(owned.type, { labelSelector: OWNED_SELECTOR, transform: (o) => slim(o, FIELD_MANAGER) });
    const crd = owned.requires === undefined ? undefined : WATCHED_CRDS[owned.requires];
    if (owned.requires !== undefined && crd !== undefined) {
      // Registered once its CRD is there; `children` is the same record the reads look in.
      if (cache.register !== undefined) {
        optional[owned.requires] = new OptionalApiWatch(cache as WatchRegistry & Required<Pick<WatchRegistry, 'register'>>, crd, register, (group) => {
          children[kind] = group;
        });
      }
      continue;
    }
    if (owned.requires === 'gatewayAPI' && !options.httpRoutes) continue;
    children[kind] = register();
  }
  const dependencies: Record<string, ReflectorGroup> = {};
  for (const [kind, { type, transform }] of Object.entries(table.dependencyTypes)) {
    dependencies[kind] = cache.registerGroup(type, { metadataOnly: true, ...(transform === undefined ? {} : { transform }) });
  }
  return { children, dependencies, httpRoutesServed: options.httpRoutes, optional };
}
