// The relations of the five KAOS kinds, stated once (as controller-runtime's builder states them
// with For/Owns/Watches, and kube-rs's Controller with owns/watches): for each kind, the children
// it owns (their type, how a child's name follows from the parent's, when render desires it) and
// the objects it depends on (which names of its spec, of which kind). A change of a child wakes its
// controller owner; a change of a dependency wakes the objects that name it (dependency-index.ts).
//
// Everything else is derived from this table, so adding a child kind or a dependency is one entry:
// - the cache's reflectors (controller/watches.ts: one per owned type, label-selected, and one per
//   dependency type, metadata only);
// - the types server-side apply and prune address (childTypes, possibleChildren);
// - the operator's RBAC rules (rbac.ts: operatorRules);
// - the triggers: which objects a change wakes (dependency-index.ts, controller/triggers.ts), and
//   the one answer to "which Secret or ConfigMap does this object read" (dependencyNames).
import { slimDeployment } from '../kube/slim.ts';
import { referencedNames } from '../api/agent-references.ts';
import { asRecord, getIn } from '../kube/json.ts';
import type { MemoryModelRole } from '../api/enums.ts';
import type { KaosKind, WorkloadKind } from '../api/kinds.ts';
import type { KubeObject } from '../kube/meta.ts';
import type { ObjectRef } from './object-ref.ts';
import type { MCPServerSpec, MemoryStoreSpec, ModelAPISpec } from '../api/schema/index.ts';
import {
  CONFIG_MAP,
  DEPLOYMENT,
  HORIZONTAL_POD_AUTOSCALER,
  HTTP_ROUTE,
  NETWORK_POLICY,
  PERSISTENT_VOLUME_CLAIM,
  POD_DISRUPTION_BUDGET,
  SECRET,
  SECURITY_POLICY,
  SERVICE,
  SERVICE_ACCOUNT,
  type ResourceType,
} from '../kube/paths.ts';
import { agentServiceAccountName, configMapName, persistentVolumeClaimName, routeName, workloadName } from '../render/names.ts';
import { liteLLMConfigSource, mcpToolsSource } from '../render/sources.ts';

/**
 * An API the cluster may not serve: types that need it are watched and written only when it is.
 * The Gateway API is looked for at start; Envoy Gateway's CRD is watched, so installing it later
 * takes no restart (controller/watches.ts).
 */
export type OptionalAPI = 'gatewayAPI' | 'envoyGateway';

/**
 * The optional APIs found by watching their CRD rather than once at start (the Gateway API's), with
 * the CRD that serves the owned type: a later install heals without a restart, an uninstall is
 * noticed, and an absent CRD is only ever "not served", never an error.
 */
export const WATCHED_CRDS: Readonly<Partial<Record<OptionalAPI, string>>> = {
  envoyGateway: 'securitypolicies.gateway.envoyproxy.io',
};

/** A type the operator owns objects of: watched (by the managed-by label), applied and pruned. */
export interface OwnedType {
  readonly type: ResourceType;
  /** Watched and written only when this API is available; absent: always. */
  readonly requires?: OptionalAPI;
  /**
   * Shrinks each object before the cache stores it, keeping of managedFields only the Apply entry
   * of `fieldManager` (what apply reads to skip a no-op write); absent: kube/slim.ts's slimChild.
   */
  readonly slim?: (object: KubeObject, fieldManager: string) => KubeObject;
}

/**
 * A type KAOS objects depend on without owning it (Secrets, ConfigMaps): watched as metadata only — its
 * data never enters the operator — and never written. Its resourceVersion is what render reads.
 */
export interface DependencyType {
  readonly type: ResourceType;
  /** Shrinks each object before the cache stores it. */
  readonly transform?: (object: KubeObject) => KubeObject;
}

/** A child a parent owns. */
export interface ChildEntry<C extends string = string> {
  /** A key of the table's `owned`. */
  readonly kind: C;
  /** The child's name for a parent named `parent`: the only name prune looks at. */
  readonly name: (parent: string) => string;
  /** When render desires it (render decides; prune looks at the name either way). Absent: always. */
  readonly when?: string;
  /**
   * The sibling this child is applied behind (fail closed): while render desires that sibling,
   * this child is applied only once the sibling's apply succeeded in the same pass. When the
   * sibling cannot be written (its type's API not served) or the API server refuses it, this
   * child is withheld and one from before pruned; a refused sibling is then the parent's status,
   * not a failed reconcile, and the sibling from before is kept. Absent: applied on its own.
   */
  readonly gatedOn?: C;
  /**
   * Render reads only the parent and the settings for it, so it is applied even while the
   * parent's dependencies (or an Agent's harness runtime) do not resolve. Absent: applied only
   * with the rest, once they do.
   */
  readonly beforeDependencies?: true;
}

/** An object in another namespace than the parent's (e.g. one in the operator's namespace). */
export interface NamespacedName {
  readonly namespace: string;
  readonly name: string;
}

/** Objects a parent depends on: a change of any of them wakes the parent. */
export interface DependencyEntry<D extends string = string> {
  /** A KAOS kind, or a key of the table's `dependencyTypes`. */
  readonly kind: KaosKind | D;
  /**
   * What the parent depends on now, exactly what render reads: names in the parent's namespace,
   * or a NamespacedName elsewhere. Reads any object (a malformed spec gives nothing).
   */
  readonly names: (object: KubeObject) => readonly (string | NamespacedName)[];
  /**
   * What the parent asks of the objects it names in this role, when a change of them can leave it
   * unserved: the model it asks a ModelAPI for, the read scope it asks of a MemoryStore. Admission
   * warns when a change of such an object strands its parents (docs/api.md, "Warnings"). Absent,
   * or undefined for an object that asks nothing: nothing to strand.
   */
  readonly asks?: (object: KubeObject) => string | undefined;
}

export interface KindEntry<C extends string = string, D extends string = string> {
  /** In apply order (config before the Deployment that mounts it). */
  readonly children: readonly ChildEntry<C>[];
  /** By role: what the reconciler asks for by name (dependencyNames). */
  readonly dependsOn: Readonly<Record<string, DependencyEntry<D>>>;
  /**
   * Who owns the Deployment's `spec.replicas` once it exists: `creation` (absent) — applied once,
   * then `kubectl scale` and HPAs own it (docs/api.md, "Common behaviour"); `spec` — the parent's
   * own `spec.replicas`, applied on every change (a MemoryStore); `declared` — the parent's
   * `spec.replicas` when it sets one, applied on every change, else as `creation` (an Agent:
   * docs/api.md, "Agent replicas").
   */
  readonly replicas?: 'creation' | 'spec' | 'declared';
}

export interface KindTable<C extends string = string, D extends string = string> {
  readonly owned: Readonly<Record<C, OwnedType>>;
  readonly dependencyTypes: Readonly<Record<D, DependencyType>>;
  readonly kinds: Readonly<Record<KaosKind, KindEntry<C, D>>>;
}

/**
 * Pure: what the cache keeps of a dependency of `kind` (a Secret, a ConfigMap) — its identity and
 * resourceVersion, nothing else. A metadata-only watch already leaves out `data`, but annotations
 * can carry the whole object (kubectl apply's last-applied-configuration), so they go too, with
 * labels and managedFields: every ConfigMap of the watched namespaces is listed, so each costs
 * only these few strings.
 */
function identityOnly(kind: string): (object: KubeObject) => KubeObject {
  return (object) => {
    const m = object.metadata ?? {};
    const metadata: Record<string, unknown> = {};
    for (const field of ['name', 'namespace', 'uid', 'resourceVersion', 'deletionTimestamp'] as const) {
      if (m[field] !== undefined) metadata[field] = m[field];
    }
    return { apiVersion: 'v1', kind, metadata } as KubeObject;
  };
}

/** Pure: what the cache keeps of a Secret (identityOnly). */
export const secretMetadata = identityOnly('Secret');
/** Pure: what the cache keeps of a ConfigMap it does not own (identityOnly). */
export const configMapMetadata = identityOnly('ConfigMap');

const OWNED = {
  Deployment: { type: DEPLOYMENT, slim: slimDeployment },
  Service: { type: SERVICE },
  ConfigMap: { type: CONFIG_MAP },
  HTTPRoute: { type: HTTP_ROUTE, requires: 'gatewayAPI' },
  PersistentVolumeClaim: { type: PERSISTENT_VOLUME_CLAIM },
  PodDisruptionBudget: { type: POD_DISRUPTION_BUDGET },
  HorizontalPodAutoscaler: { type: HORIZONTAL_POD_AUTOSCALER },
  ServiceAccount: { type: SERVICE_ACCOUNT },
  NetworkPolicy: { type: NETWORK_POLICY },
  SecurityPolicy: { type: SECURITY_POLICY, requires: 'envoyGateway' },
} as const satisfies Record<string, OwnedType>;

const DEPENDENCY_TYPES = {
  Secret: { type: SECRET, transform: secretMetadata },
  // Every ConfigMap of the watched namespaces, as metadata only: a second reflector of the type,
  // beside the label-selected one of the ConfigMaps the operator owns (OWNED above).
  ConfigMap: { type: CONFIG_MAP, transform: configMapMetadata },
} as const satisfies Record<string, DependencyType>;

/** The kinds of children the operator owns. */
export type ChildKind = keyof typeof OWNED;
/** The non-KAOS kinds KAOS objects depend on. */
export type DependencyTypeKind = keyof typeof DEPENDENCY_TYPES;

const one = (name: unknown): string[] => (typeof name === 'string' && name !== '' ? [name] : []);

/**
 * The Secret behind a Proxy ModelAPI's `proxyConfig.configYaml.fromSecretKeyRef`, exactly when
 * render uses it (the same source selection): its resourceVersion enters the config hash.
 */
function modelAPIConfigSecret(object: KubeObject): string[] {
  const spec = asRecord(object.spec) as ModelAPISpec | undefined;
  if (spec === undefined || spec.mode !== 'Proxy' || liteLLMConfigSource(spec) !== 'fromSecretKeyRef') return [];
  return one(spec.proxyConfig?.configYaml?.fromSecretKeyRef?.name);
}

/**
 * The Secret behind a Proxy ModelAPI's `proxyConfig.apiKey.valueFrom.secretKeyRef` (docs/api.md,
 * "Newer KAOS shapes"): its resourceVersion enters the config hash (a new key rolls the pods), and
 * its absence is reported.
 */
function modelAPIApiKeySecret(object: KubeObject): string[] {
  const spec = asRecord(object.spec) as ModelAPISpec | undefined;
  if (spec === undefined || spec.mode !== 'Proxy') return [];
  return one(spec.proxyConfig?.apiKey?.valueFrom?.secretKeyRef?.name);
}

/**
 * The ConfigMap behind a Proxy ModelAPI's `proxyConfig.apiKey.valueFrom.configMapKeyRef`: like
 * the Secret's, its resourceVersion enters the config hash (env from a ConfigMap is read only at
 * container start) and its absence is reported.
 */
function modelAPIApiKeyConfigMap(object: KubeObject): string[] {
  const spec = asRecord(object.spec) as ModelAPISpec | undefined;
  if (spec === undefined || spec.mode !== 'Proxy') return [];
  return one(spec.proxyConfig?.apiKey?.valueFrom?.configMapKeyRef?.name);
}

/** The Secret behind an MCPServer's `config.tools.fromSecretKeyRef`, exactly when render uses it. */
function mcpServerToolsSecret(object: KubeObject): string[] {
  const spec = asRecord(object.spec) as MCPServerSpec | undefined;
  if (spec === undefined || mcpToolsSource(spec) !== 'fromSecretKeyRef') return [];
  return one(spec.config?.tools?.fromSecretKeyRef?.name);
}

/**
 * The Secret holding an external-mode MemoryStore's DSN (`storage.external.connectionSecretRef`):
 * the pod reads it only at start, so its resourceVersion enters the config hash, and its absence is
 * reported.
 */
function memoryStoreConnectionSecret(object: KubeObject): string[] {
  const spec = asRecord(object.spec) as MemoryStoreSpec | undefined;
  if (spec?.storage?.type !== 'external') return [];
  return one(spec.storage.external?.connectionSecretRef?.name);
}

/** A non-empty string, else undefined. */
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The binding `{ modelAPI, model }` of one of a MemoryStore's model roles. */
const memoryStoreBinding = (role: MemoryModelRole, object: KubeObject) => (asRecord(object.spec) as MemoryStoreSpec | undefined)?.models?.[role];

/** A MemoryStore's dependency on the ModelAPI of one model role, asking it for that role's model. */
const memoryStoreModelAPI = (role: MemoryModelRole): DependencyEntry<DependencyTypeKind> => ({
  kind: 'ModelAPI',
  names: (object) => one(memoryStoreBinding(role, object)?.modelAPI),
  asks: (object) => text(memoryStoreBinding(role, object)?.model),
});

/**
 * The Deployment, the Service (always, unless `serviceWhen` says when), the HTTPRoute, and with
 * security enabled the NetworkPolicy and SecurityPolicy named as the route (docs/api.md, "Per-route
 * SecurityPolicy and NetworkPolicy"), in apply order: the pods' NetworkPolicy before the pods, the
 * route's SecurityPolicy before the route.
 */
const workload = (kind: WorkloadKind, serviceWhen?: string): ChildEntry<ChildKind>[] => [
  { kind: 'NetworkPolicy', name: (parent) => routeName(kind, parent), when: 'security enabled, NetworkPolicies not disabled (or strict gateway API), and the Service exists' },
  { kind: 'Deployment', name: (parent) => workloadName(kind, parent) },
  { kind: 'Service', name: (parent) => workloadName(kind, parent), ...(serviceWhen === undefined ? {} : { when: serviceWhen }) },
  { kind: 'SecurityPolicy', name: (parent) => routeName(kind, parent), when: "security enabled, Envoy Gateway's CRD served, and the Service exists" },
  { kind: 'HTTPRoute', name: (parent) => routeName(kind, parent), when: 'the gateway is enabled (GATEWAY_API_ENABLED, the Gateway API served), the Service exists, and with security enabled its SecurityPolicy applied', gatedOn: 'SecurityPolicy' },
];

export const KIND_TABLE: KindTable<ChildKind, DependencyTypeKind> = {
  owned: OWNED,
  dependencyTypes: DEPENDENCY_TYPES,
  kinds: {
    Agent: {
      children: [
        // First: a pod naming a ServiceAccount that does not exist yet is refused. The Agent's
        // identity waits on nothing it names (KAOS creates it before its harness step).
        { kind: 'ServiceAccount', name: agentServiceAccountName, when: 'ServiceAccount identity (SECURITY_AGENT_AUTH_IDENTITY_PROVIDER=serviceaccount)', beforeDependencies: true },
        ...workload('Agent', 'agentNetwork.expose is not false'),
        // How the Agent scales (docs/api.md, "Agent replicas"): after the Deployment they aim at.
        { kind: 'HorizontalPodAutoscaler', name: (parent) => workloadName('Agent', parent), when: 'autoscaling set' },
        { kind: 'PodDisruptionBudget', name: (parent) => workloadName('Agent', parent), when: 'replicas (or autoscaling.minReplicas) 2 or more' },
      ],
      dependsOn: {
        modelAPI: { kind: 'ModelAPI', names: (o) => referencedNames(o.spec).modelAPIs, asks: (o) => text(getIn(o.spec, 'model')) },
        mcpServers: { kind: 'MCPServer', names: (o) => referencedNames(o.spec).mcpServers },
        peers: { kind: 'Agent', names: (o) => referencedNames(o.spec).agents },
        memoryStore: {
          kind: 'MemoryStore',
          names: (o) => referencedNames(o.spec).memoryStores,
          asks: (o) => text(getIn(o.spec, 'config', 'memory', 'maxReadScope')),
        },
      },
      replicas: 'declared',
    },
    ModelAPI: {
      children: [{ kind: 'ConfigMap', name: configMapName, when: 'mode Proxy without configYaml.fromSecretKeyRef' }, ...workload('ModelAPI')],
      dependsOn: {
        configSecret: { kind: 'Secret', names: modelAPIConfigSecret },
        apiKeySecret: { kind: 'Secret', names: modelAPIApiKeySecret },
        apiKeyConfigMap: { kind: 'ConfigMap', names: modelAPIApiKeyConfigMap },
      },
    },
    MCPServer: {
      children: workload('MCPServer'),
      dependsOn: {
        configSecret: { kind: 'Secret', names: mcpServerToolsSecret },
      },
    },
    MemoryStore: {
      children: [
        { kind: 'PersistentVolumeClaim', name: persistentVolumeClaimName, when: 'storage.type local' },
        ...workload('MemoryStore'),
        { kind: 'PodDisruptionBudget', name: (parent) => workloadName('MemoryStore', parent), when: 'replicas 2 or more' },
      ],
      dependsOn: {
        summarizationModelAPI: memoryStoreModelAPI('summarization'),
        embeddingModelAPI: memoryStoreModelAPI('embedding'),
        connectionSecret: { kind: 'Secret', names: memoryStoreConnectionSecret },
      },
      replicas: 'spec',
    },
    // Data, not a workload: nothing owned, nothing it waits for. The grants reach the policy
    // ConfigMap through the projection (controller/authz-projection.ts), which reads every kind.
    AccessGrant: { children: [], dependsOn: {} },
  },
};

/** Pure: the resource type of each owned kind (what apply and prune address). */
export function childTypes<C extends string>(table: KindTable<C, string>): Readonly<Record<C, ResourceType>> {
  const out = {} as Record<C, ResourceType>;
  for (const kind of Object.keys(table.owned) as C[]) out[kind] = table.owned[kind].type;
  return out;
}

/**
 * Pure: whether a parent of `kind` with this spec owns its Deployment's `spec.replicas`, applied on
 * every change (KindEntry.replicas), rather than only at creation.
 */
export function appliesReplicas(kind: KaosKind, spec: unknown, table: KindTable<string, string> = KIND_TABLE): boolean {
  const mode = table.kinds[kind].replicas ?? 'creation';
  return mode === 'spec' || (mode === 'declared' && typeof getIn(spec, 'replicas') === 'number');
}

/** Every (kind, name) a parent of `kind` named `name` can own: the only places prune looks. */
export function possibleChildren<C extends string>(kind: KaosKind, name: string, table: KindTable<C, string>): { kind: C; name: string }[] {
  return table.kinds[kind].children.map((child) => ({ kind: child.kind, name: child.name(name) }));
}

/**
 * Pure: `children` of a parent of `kind` in the table's apply order (stable; a kind the table does
 * not list for it goes last).
 */
export function inApplyOrder<T extends { readonly kind: string }>(kind: KaosKind, children: readonly T[], table: KindTable = KIND_TABLE): T[] {
  const order = table.kinds[kind].children.map((c) => c.kind as string);
  const rank = (child: T): number => {
    const at = order.indexOf(child.kind);
    return at === -1 ? order.length : at;
  };
  return [...children].sort((a, b) => rank(a) - rank(b));
}

/** Pure: the child entry of `childKind` under a parent of `kind`, if the table lists one. */
export function childEntry<C extends string>(kind: KaosKind, childKind: string, table: KindTable<C, string>): ChildEntry<C> | undefined {
  return table.kinds[kind].children.find((c) => c.kind === childKind);
}

/** One object a KAOS object depends on; `namespace` only when not the object's own. */
export interface Dependency<D extends string = string> {
  readonly role: string;
  readonly kind: KaosKind | D;
  readonly name: string;
  readonly namespace?: string;
}

/** Pure: what `object` (of `kind`) depends on now, in table order. */
export function dependenciesOf<D extends string>(kind: KaosKind, object: KubeObject, table: KindTable<string, D>): Dependency<D>[] {
  const out: Dependency<D>[] = [];
  for (const [role, entry] of Object.entries(table.kinds[kind].dependsOn)) {
    for (const target of entry.names(object)) {
      out.push(typeof target === 'string' ? { role, kind: entry.kind, name: target } : { role, kind: entry.kind, ...target });
    }
  }
  return out;
}

/** One role in which an object names another, with what it asks of it there (DependencyEntry.asks). */
export interface Binding {
  readonly role: string;
  readonly asks?: string;
}

/**
 * Pure: the roles in which `object` (of `kind`) names the KAOS object `target`, in table order,
 * each with what it asks of it: a MemoryStore naming one ModelAPI for both its models has two.
 */
export function bindingsTo(kind: KaosKind, object: KubeObject, target: ObjectRef, table: KindTable = KIND_TABLE): Binding[] {
  const namespace = object.metadata?.namespace ?? '';
  const out: Binding[] = [];
  for (const [role, entry] of Object.entries(table.kinds[kind].dependsOn)) {
    if (entry.kind !== target.kind) continue;
    const named = entry.names(object).some((t) =>
      typeof t === 'string' ? namespace === target.namespace && t === target.name : t.namespace === target.namespace && t.name === target.name,
    );
    if (!named) continue;
    const asks = entry.asks?.(object);
    out.push(asks === undefined ? { role } : { role, asks });
  }
  return out;
}

/** Pure: the names `object` depends on in one role, in its own namespace (e.g. a ModelAPI's `configSecret`). */
export function dependencyNames(kind: KaosKind, role: string, object: KubeObject, table: KindTable = KIND_TABLE): string[] {
  return (table.kinds[kind].dependsOn[role]?.names(object) ?? []).filter((target): target is string => typeof target === 'string');
}
