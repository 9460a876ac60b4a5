// What the operator may do in the API, written once: the chart's ClusterRole and the e2e
// tests (which run the operator under exactly this role, to prove it is enough) both render it.
// Least privilege: every verb here is used by a named part of the operator. The rules for the
// children and the dependencies follow the kind table (kind-table.ts): a new entry there is
// granted here with no second edit.
import { KINDS, KIND_NAMES } from '../api/kinds.ts';
import { HARNESS_RUNTIMES_CONFIG_MAP } from '../api/harness-runtimes.ts';
import { RUNTIMES_CONFIG_MAP } from '../api/mcp-runtimes.ts';
import { API_SERVER_JWKS_PATH, OPENID_CONFIGURATION_PATH } from '../kube/oidc-discovery.ts';
import type { ResourceType } from '../kube/paths.ts';
import { KIND_TABLE, WATCHED_CRDS, type KindTable } from './kind-table.ts';

/**
 * Where a rule is granted. `watched` (the default, so a new rule needs no thought unless it is
 * special): the namespaces the operator serves — a ClusterRole when it serves all of them, one
 * Role per namespace when WATCH_NAMESPACES limits it. `cluster`: always a ClusterRole
 * (cluster-scoped resources, or lists across namespaces). `operator`: a Role in the operator's
 * own namespace (its leader Lease).
 */
export type RuleScope = 'watched' | 'cluster' | 'operator';

export interface PolicyRule {
  /** Empty in a rule of non-resource URLs. */
  apiGroups: string[];
  /** Empty in a rule of non-resource URLs. */
  resources: string[];
  /** Paths that are not resources (`get` only; a ClusterRole only, so scope `cluster`). */
  nonResourceURLs?: string[];
  /** Only these objects (a list or watch qualifies when it selects one by `metadata.name`). */
  resourceNames?: string[];
  verbs: string[];
  scope?: RuleScope;
}

/** The rules granted at `scope`, without the scope field (as a Role or ClusterRole lists them). */
export function rulesFor(scope: RuleScope, rules: readonly PolicyRule[] = OPERATOR_RULES): PolicyRule[] {
  return rules
    .filter((r) => (r.scope ?? 'watched') === scope)
    .map((r) => ({
      apiGroups: [...r.apiGroups],
      resources: [...r.resources],
      ...(r.resourceNames === undefined ? {} : { resourceNames: [...r.resourceNames] }),
      ...(r.nonResourceURLs === undefined ? {} : { nonResourceURLs: [...r.nonResourceURLs] }),
      verbs: [...r.verbs],
    }));
}

/** Pure: one rule per API group (in order of first appearance) granting `verbs` on `types`. */
function rulesByGroup(types: readonly ResourceType[], verbs: readonly string[]): PolicyRule[] {
  const byGroup = new Map<string, string[]>();
  for (const type of types) {
    const resources = byGroup.get(type.group) ?? [];
    if (!resources.includes(type.plural)) resources.push(type.plural);
    byGroup.set(type.group, resources);
  }
  return [...byGroup].map(([group, resources]) => ({ apiGroups: [group], resources, verbs: [...verbs] }));
}

/** Pure: the operator's rules for the kinds, children and dependencies of `table`. */
export function operatorRules(table: KindTable = KIND_TABLE): PolicyRule[] {
  const plurals = KINDS.map((kind) => KIND_NAMES[kind].plural);
  return [
    // The cache: list+watch of the four kinds, and the one live read on a miss. `patch`: the
    // controller removes the Go operator's finalizers from objects being deleted (a JSON patch).
    { apiGroups: ['kaos.tools'], resources: plurals, verbs: ['get', 'list', 'watch', 'patch'] },
    // The controller's status writes: a PUT of the status subresource, guarded by resourceVersion.
    { apiGroups: ['kaos.tools'], resources: plurals.map((p) => `${p}/status`), verbs: ['update'] },
    // The reference policy's namespace label, from the same cache.
    { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'], scope: 'cluster' },
    // Owned children: list+watch (the cache, selected by app.kubernetes.io/managed-by), patch and
    // create (server-side apply is a PATCH, and one that creates the object is also authorized as
    // `create`: without it kube-apiserver answers 403), delete (pruning a child no longer desired).
    // get: the controller reads children from its cache, but before an apply that drops an element
    // of a keyed list it reads the child once for the other managers' field sets, which the cache
    // does not keep (kube/fields-v1.ts); list grants as much already. Deployments' `create` is also
    // the podSpec check's server-side dry run. A type that needs an optional API (HTTPRoutes: used
    // only with GATEWAY_API_ENABLED=true and the Gateway API installed) is granted all the same:
    // a ClusterRole is static.
    ...rulesByGroup(Object.values(table.owned).map((owned) => owned.type), ['get', 'create', 'list', 'watch', 'patch', 'delete']),
    // Dependencies (Secrets behind configYaml/tools.fromSecretKeyRef, the Secret or ConfigMap of a
    // Proxy's apiKey.valueFrom: their resourceVersion enters the config hash; ConfigMaps are also
    // an owned type, the two rules overlap harmlessly). The watch is metadata-only
    // (PartialObjectMetadata), which still needs list+watch: RBAC cannot tell a metadata request
    // from a full one. Never get.
    ...rulesByGroup(Object.values(table.dependencyTypes).map((dependency) => dependency.type), ['list', 'watch']),
    // Leader election (kube/leader-election.ts): read the Lease, create it once, renew and release it.
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'], scope: 'operator' },
    // The runtime registries (controller/runtime-registry.ts): each one ConfigMap, listed and watched
    // by name (a field selector), so no other ConfigMap there is read. The MCP registry is in the
    // operator's namespace; the harness registry in SYSTEM_NAMESPACE, which the chart sets to the
    // same namespace (another one needs this rule in a Role there: docs/configuration.md).
    {
      apiGroups: [''],
      resources: ['configmaps'],
      resourceNames: [RUNTIMES_CONFIG_MAP, HARNESS_RUNTIMES_CONFIG_MAP],
      verbs: ['list', 'watch'],
      scope: 'operator',
    },
    // The optional APIs watched through their CRD (kind-table.ts WATCHED_CRDS: Envoy Gateway's
    // SecurityPolicy), so that installing one later takes no restart: each CRD by name, nothing else.
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: Object.values(WATCHED_CRDS), verbs: ['list', 'watch'], scope: 'cluster' },
    // Gateway routing (docs/api.md, "Gateway routing"): the Gateway's status address, read only, in
    // GATEWAY_NAMESPACE, which need not be a watched namespace.
    { apiGroups: ['gateway.networking.k8s.io'], resources: ['gateways'], verbs: ['list', 'watch'], scope: 'cluster' },
    // The AccessGrant projection's policy ConfigMap and the Rego it copies, in the operator's
    // namespace (where KAOS's chart puts the PDP), also when WATCH_NAMESPACES leaves it out: server-side
    // apply creates and patches it, each is listed and watched by name. (A ClusterRole already grants
    // ConfigMaps everywhere when every namespace is watched.)
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'patch', 'list', 'watch'], scope: 'operator' },
    // Events about the parents (kube/events.ts): create one, then patch its series on repeats.
    { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    // ServiceAccount issuer discovery (cluster/service-account-issuer.ts): the issuer's OIDC
    // document and its keys. Kubernetes grants them to every ServiceAccount by default
    // (system:service-account-issuer-discovery), but a cluster may have removed that binding.
    { apiGroups: [], resources: [], nonResourceURLs: [OPENID_CONFIGURATION_PATH, API_SERVER_JWKS_PATH], verbs: ['get'], scope: 'cluster' },
  ];
}

export const OPERATOR_RULES: readonly PolicyRule[] = operatorRules();

export const OPERATOR_IDENTITY = { namespace: 'kaos-system', serviceAccount: 'kaos-operator' } as const;
const NAME = 'kaos-operator';
const LABELS = { 'app.kubernetes.io/name': 'kaos-operator' };

/** The username the API server gives a ServiceAccount's tokens. */
export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The operator's username at the API server (audit logs, tokens of the local stack). */
export const OPERATOR_USER = serviceAccountUser(OPERATOR_IDENTITY.namespace, OPERATOR_IDENTITY.serviceAccount);

/**
 * Namespace, ServiceAccount, the ClusterRole (cluster and watched rules: this is the all-namespaces
 * install) and a Role in the operator's namespace (operator rules), with bindings, in apply order.
 */
export function renderRbac(identity: { namespace: string; serviceAccount: string } = OPERATOR_IDENTITY): Record<string, unknown>[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: identity.namespace, labels: LABELS } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: identity.serviceAccount, namespace: identity.namespace, labels: LABELS } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: NAME, labels: LABELS },
      rules: [...rulesFor('cluster'), ...rulesFor('watched')],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: NAME, labels: LABELS },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: NAME },
      subjects: [{ kind: 'ServiceAccount', name: identity.serviceAccount, namespace: identity.namespace }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: NAME, namespace: identity.namespace, labels: LABELS },
      rules: rulesFor('operator'),
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: NAME, namespace: identity.namespace, labels: LABELS },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: NAME },
      subjects: [{ kind: 'ServiceAccount', name: identity.serviceAccount, namespace: identity.namespace }],
    },
  ];
}
