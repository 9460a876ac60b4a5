// What the controller adds to the shared cache (issue 7 item 1): its owned children, selected by
// the managed-by label so that unrelated Deployments cost nothing, HTTPRoutes only when the
// Gateway API is enabled and served, and Secrets' metadata — never their data — for the config
// hash. Registered before the cache starts, so /readyz waits for every one of them to sync.
import type { KubeObject } from '../api/lookup.ts';
import type { Config } from '../config.ts';
import type { KaosCache } from '../kube/cache.ts';
import type { KubeClient } from '../kube/client.ts';
import { FIELD_MANAGER } from '../kube/apply.ts';
import { isServed } from '../kube/discovery.ts';
import { CONFIG_MAP, DEPLOYMENT, HTTP_ROUTE, SECRET, SERVICE } from '../kube/paths.ts';
import type { ReflectorGroup } from '../kube/reflector-group.ts';
import { slimChild, slimDeployment } from '../kube/slim.ts';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../render/index.ts';
import type { ChildKind } from './reconcile/context.ts';

export const OWNED_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

export interface ControllerWatches {
  /** The owned children by kind; HTTPRoute absent when the Gateway API is not watched. */
  readonly children: Readonly<Partial<Record<ChildKind, ReflectorGroup>>>;
  /** Secrets as metadata only (see secretMetadata). */
  readonly secrets: ReflectorGroup;
  readonly httpRoutesServed: boolean;
}

/**
 * Pure: what the cache keeps of a Secret — its identity and resourceVersion. A metadata-only
 * watch already leaves out `data`, but annotations can carry the whole Secret (kubectl apply's
 * last-applied-configuration), so they go too, with labels and managedFields.
 */
export function secretMetadata(object: KubeObject): KubeObject {
  const m = object.metadata ?? {};
  const metadata: Record<string, unknown> = {};
  for (const field of ['name', 'namespace', 'uid', 'resourceVersion', 'deletionTimestamp'] as const) {
    if (m[field] !== undefined) metadata[field] = m[field];
  }
  return { apiVersion: 'v1', kind: 'Secret', metadata } as KubeObject;
}

/**
 * Whether to watch HTTPRoutes: GATEWAY_API_ENABLED and `httproutes.gateway.networking.k8s.io`
 * served, checked once here (installing the Gateway API later takes a restart of the operator).
 */
export async function httpRoutesWanted(client: Pick<KubeClient, 'get'>, config: Pick<Config, 'gateway'>): Promise<boolean> {
  return config.gateway.enabled && (await isServed(client, HTTP_ROUTE));
}

/** Registers the controller's reflectors on `cache` (before cache.start()). */
export function registerControllerWatches(cache: KaosCache, options: { httpRoutes: boolean }): ControllerWatches {
  // Stored slim (kube/slim.ts): of managedFields only our own Apply entry, which apply.ts reads.
  const owned = { labelSelector: OWNED_SELECTOR, transform: (o: KubeObject) => slimChild(o, FIELD_MANAGER) };
  const children: Partial<Record<ChildKind, ReflectorGroup>> = {
    Deployment: cache.registerGroup(DEPLOYMENT, { ...owned, transform: (o: KubeObject) => slimDeployment(o, FIELD_MANAGER) }),
    Service: cache.registerGroup(SERVICE, owned),
    ConfigMap: cache.registerGroup(CONFIG_MAP, owned),
  };
  if (options.httpRoutes) children.HTTPRoute = cache.registerGroup(HTTP_ROUTE, owned);
  const secrets = cache.registerGroup(SECRET, { metadataOnly: true, transform: secretMetadata });
  return { children, secrets, httpRoutesServed: options.httpRoutes };
}
