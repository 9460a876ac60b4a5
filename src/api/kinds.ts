// Names of the kaos.tools/v1alpha1 API: written once, used by the schemas, the CRD generator,
// the webhook paths and the cache.

export const GROUP = 'kaos.tools';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const KINDS = ['Agent', 'ModelAPI', 'MCPServer', 'MemoryStore'] as const;
export type KaosKind = (typeof KINDS)[number];

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
};

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
