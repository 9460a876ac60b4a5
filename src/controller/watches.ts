// What the controller adds to the shared cache, derived from the kind table (cluster/kind-table.ts):
// a reflector per owned type, selected by the managed-by label so that unrelated Deployments cost
// nothing (a type that needs an optional API — HTTPRoutes, the Gateway API — only when it is
// enabled and served), and a reflector per dependency type, metadata only — never a Secret's
// data. ConfigMaps are both: the owned ones label-selected and whole, and every ConfigMap as
// metadata only (an API key's); two independent reflectors, read apart. Registered before the cache starts, so /readyz waits for every one of them to sync.
import type { Config } from '../config/config.ts';
import type { RegisterOptions } from '../cluster/cache.ts';
import { HTTP_ROUTE, type ResourceType } from '../kube/paths.ts';
import { KIND_TABLE, type ChildKind, type DependencyTypeKind, type KindTable, type OptionalAPI } from '../cluster/kind-table.ts';
import type { KubeClient } from '../kube/client.ts';
import { FIELD_MANAGER } from '../cluster/child-apply.ts';
import { isServed } from '../kube/discovery.ts';
import type { ReflectorGroup } from '../kube/reflector-group.ts';
import { slimChild } from '../kube/slim.ts';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../render/index.ts';

/** Where the reflectors are registered: the cache (KaosCache.registerGroup). */
export interface WatchRegistry {
  registerGroup(type: ResourceType, options: Omit<RegisterOptions, 'namespace'>): ReflectorGroup;
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
}

/**
 * Whether to watch HTTPRoutes: GATEWAY_API_ENABLED and `httproutes.gateway.networking.k8s.io`
 * served, checked once here (installing the Gateway API later takes a restart of the operator).
 */
export async function httpRoutesWanted(client: Pick<KubeClient, 'get'>, config: Pick<Config, 'gateway'>): Promise<boolean> {
  return config.gateway.enabled && (await isServed(client, HTTP_ROUTE));
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
  const available: Readonly<Record<OptionalAPI, boolean>> = { gatewayAPI: options.httpRoutes };
  const children: Partial<Record<string, ReflectorGroup>> = {};
  for (const [kind, owned] of Object.entries(table.owned)) {
    if (owned.requires !== undefined && !available[owned.requires]) continue;
    // Stored slim (kube/slim.ts): of managedFields only our own Apply entry, which apply reads.
    const slim = owned.slim ?? slimChild;
    children[kind] = cache.registerGroup(owned.type, { labelSelector: OWNED_SELECTOR, transform: (o) => slim(o, FIELD_MANAGER) });
  }
  const dependencies: Record<string, ReflectorGroup> = {};
  for (const [kind, { type, transform }] of Object.entries(table.dependencyTypes)) {
    dependencies[kind] = cache.registerGroup(type, { metadataOnly: true, ...(transform === undefined ? {} : { transform }) });
  }
  return { children, dependencies, httpRoutesServed: options.httpRoutes };
}
