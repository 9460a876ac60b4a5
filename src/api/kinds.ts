// Names of the kaos.tools/v1alpha1 API: written once, used by the schemas, the CRD generator,
// the webhook paths and the cache.

export const GROUP = 'kaos.tools';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const KINDS = ['Agent', 'ModelAPI', 'MCPServer', 'MemoryStore', 'AccessGrant'] as const;
export type KaosKind = (typeof KINDS)[number];

/**
 * The kinds that run a workload: each gets a Deployment, a Service, a route and the rest of
 * docs/api.md's children. AccessGrant, the fifth kind, runs nothing: it is data the operator
 * projects into the policy of a PDP (docs/api.md, "AccessGrant").
 */
export const WORKLOAD_KINDS = ['Agent', 'ModelAPI', 'MCPServer', 'MemoryStore'] as const;
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number];

export function isWorkloadKind(value: unknown): value is WorkloadKind {
  return typeof value === 'string' && (WORKLOAD_KINDS as readonly string[]).includes(value);
}

export interface KindNames {
  readonly kind: KaosKind;
  /** Plural resource name as it appears in URLs and AdmissionReview.request.resource. */
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
}

export const KIND_NAMES: Readonly<Record<KaosKind, KindNames>> = {
  Agent: { kind: 'Agent', plural: 'agents', singular: 'agent', shortNames: ['agent', 'agents'] },
  ModelAPI: { kind: 'ModelAPI', plural: 'modelapis', singular: 'modelapi', shortNames: ['api', 'apis'] },
  MCPServer: { kind: 'MCPServer', plural: 'mcpservers', singular: 'mcpserver', shortNames: ['mcp', 'mcps'] },
  MemoryStore: { kind: 'MemoryStore', plural: 'memorystores', singular: 'memorystore', shortNames: ['memstore', 'memstores'] },
  AccessGrant: { kind: 'AccessGrant', plural: 'accessgrants', singular: 'accessgrant', shortNames: ['grant', 'grants'] },
};

/** The scale subresource (`kubectl scale`, an HPA or a KEDA ScaledObject aimed at the object). */
export interface ScaleSubresource {
  readonly specReplicasPath: string;
  readonly statusReplicasPath: string;
  readonly labelSelectorPath: string;
}

/**
 * The kinds that scale like a Deployment (docs/api.md, "Agent replicas, kubectl scale and
 * autoscaling"): their CRD serves `<plural>/scale`, whose updates the validating webhook judges.
 */
export const SCALE_SUBRESOURCES: Readonly<Partial<Record<KaosKind, ScaleSubresource>>> = {
  Agent: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
};

/** The name of the scale subresource, and the group, version and kind of what the API server sends for it. */
export const SCALE = { subresource: 'scale', group: 'autoscaling', version: 'v1', kind: 'Scale' } as const;

export function isKaosKind(value: unknown): value is KaosKind {
  return typeof value === 'string' && (KINDS as readonly string[]).includes(value);
}

export function kindForPlural(plural: string): KaosKind | undefined {
  return KINDS.find((k) => KIND_NAMES[k].plural === plural);
}

/** Annotation listing the spec fields whose values the mutating webhook chose (docs/api.md, "Defaulting"). */
export const DEFAULTED_ANNOTATION = 'kaos.tools/defaulted';
/** Label (namespace) or annotation (object) that selects the reference policy (docs/api.md, "Reference policy"). */
export const REFERENCE_POLICY_KEY = 'kaos.tools/reference-policy';
export const REFERENCE_POLICIES = ['Enforce', 'Warn'] as const;
export type ReferencePolicy = (typeof REFERENCE_POLICIES)[number];
