// URL paths of API resources and the resource types of the core (Gateway API, Envoy Gateway) kinds the
// operator reads or writes. Pure: the client and the caches build every path through here.

/** Enough of a resource's discovery information to address it. */
export interface ResourceType {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Plural, lower-case resource name as it appears in URLs. */
  readonly plural: string;
  readonly namespaced: boolean;
}

export const NAMESPACE: ResourceType = { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false };
export const CONFIG_MAP: ResourceType = { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
export const SERVICE: ResourceType = { group: '', version: 'v1', kind: 'Service', plural: 'services', namespaced: true };
export const SERVICE_ACCOUNT: ResourceType = { group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true };
export const SECRET: ResourceType = { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true };
export const DEPLOYMENT: ResourceType = { group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', namespaced: true };
export const PERSISTENT_VOLUME_CLAIM: ResourceType = {
  group: '', version: 'v1', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims', namespaced: true,
};
export const POD_DISRUPTION_BUDGET: ResourceType = {
  group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', namespaced: true,
};
export const HORIZONTAL_POD_AUTOSCALER: ResourceType = {
  group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler', plural: 'horizontalpodautoscalers', namespaced: true,
};
export const HTTP_ROUTE: ResourceType = {
  group: 'gateway.networking.k8s.io', version: 'v1', kind: 'HTTPRoute', plural: 'httproutes', namespaced: true,
};
export const GATEWAY: ResourceType = {
  group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway', plural: 'gateways', namespaced: true,
};
export const NETWORK_POLICY: ResourceType = {
  group: 'networking.k8s.io', version: 'v1', kind: 'NetworkPolicy', plural: 'networkpolicies', namespaced: true,
};
/** Envoy Gateway's per-route policy (an optional API: its CRD may not be installed). */
export const SECURITY_POLICY: ResourceType = {
  group: 'gateway.envoyproxy.io', version: 'v1alpha1', kind: 'SecurityPolicy', plural: 'securitypolicies', namespaced: true,
};
export const CUSTOM_RESOURCE_DEFINITION: ResourceType = {
  group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', namespaced: false,
};
export const LEASE: ResourceType = { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', namespaced: true };

export function apiVersionOf(type: ResourceType): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

export interface PathParts {
  /** Omit (or leave empty) for a namespaced type to address all namespaces. */
  namespace?: string;
  name?: string;
  subresource?: string;
}

/**
 * `/api/v1/namespaces/ns/configmaps/x`, `/apis/apps/v1/deployments` (all namespaces), …
 * Segments are percent-encoded so that a hostile name cannot change the path.
 */
export function resourcePath(type: ResourceType, parts: PathParts = {}): string {
  const segments: string[] = type.group === '' ? ['api', type.version] : ['apis', type.group, type.version];
  if (type.namespaced && parts.namespace !== undefined && parts.namespace !== '') {
    segments.push('namespaces', parts.namespace);
  } else if (!type.namespaced && parts.namespace !== undefined && parts.namespace !== '') {
    throw new Error(`${type.kind} is cluster-scoped: no namespace allowed (got "${parts.namespace}")`);
  }
  segments.push(type.plural);
  if (parts.name !== undefined) {
    if (parts.name === '') throw new Error(`empty ${type.kind} name`);
    segments.push(parts.name);
    if (parts.subresource !== undefined) segments.push(parts.subresource);
  } else if (parts.subresource !== undefined) {
    throw new Error('a subresource needs a name');
  }
  return '/' + segments.map(encodeURIComponent).join('/');
}

/** `namespace/name` (or `name` for cluster-scoped objects): the key of the cache's stores. */
export function storeKey(namespace: string | undefined, name: string): string {
  return namespace === undefined || namespace === '' ? name : `${namespace}/${name}`;
}
