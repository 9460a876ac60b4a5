// What KAOS has that this operator leaves out (docs/api.md, "KAOS features not supported"): an
// object that uses one is refused naming the feature, never admitted with the field silently
// dropped. Each such field is declared in the kind's schema (schema/helpers.ts AnyValue), since the
// API server prunes or refuses a field its CRD does not know before any webhook sees it, and the
// user would learn only that the field is unknown. Pure.
//
// KAOS's AccessGrant and ThirdPartyService are kinds, not fields: without a CRD for them the API
// server answers `no matches for kind "AccessGrant"` on its own, which already says that this
// operator does not serve them.
import { forbidden, index, invalid, type FieldError } from './field-error.ts';
import { asArray, getIn, isRecord } from './json.ts';
import type { KaosKind } from './kinds.ts';
import { ownEnvPath } from './shapes.ts';

export const NOT_SUPPORTED = 'is not supported by this operator';

/** A spec field of a KAOS feature this operator does not implement. */
export interface UnsupportedField {
  /** The field's keys under `spec`. */
  readonly keys: readonly string[];
  /** The feature, as the error names it. */
  readonly feature: string;
}

export const UNSUPPORTED_FIELDS: Readonly<Record<KaosKind, readonly UnsupportedField[]>> = {
  Agent: [],
  ModelAPI: [],
  MCPServer: [],
  MemoryStore: [],
};

/**
 * KAOS's security posture reaches pods as env (end-user and agent authentication, memory access
 * that requires an identity); this operator has no identity provider to back it, so a variable of
 * it written into an object's env would promise a protection nothing enforces.
 */
export const SECURITY_POSTURE_ENV = {
  prefixes: ['AGENT_AUTH_', 'MEMORY_REQUIRE_'],
  feature: "KAOS's security posture (AGENT_AUTH_*, MEMORY_REQUIRE_*)",
  // The memory service enforces MEMORY_REQUIRE_* itself: a MemoryStore's env would promise it too.
  kinds: ['Agent', 'MemoryStore'] as readonly KaosKind[],
} as const;

/** The env lists of a kind's spec that reach its container: its own list (a MemoryStore has none) and `container.env`. */
function envLists(kind: KaosKind, spec: unknown): { path: string; keys: readonly string[] }[] {
  const own = ownEnvPath(kind, spec);
  return [...(own === undefined ? [] : [own]), { path: 'spec.container.env', keys: ['container', 'env'] }];
}

/** Every use of an unsupported feature in `spec`, in field order. */
export function unsupportedFeatureErrors(kind: KaosKind, spec: unknown): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of UNSUPPORTED_FIELDS[kind]) {
    const value = getIn(spec, ...field.keys);
    if (value !== undefined && value !== null) errors.push(forbidden(`spec.${field.keys.join('.')}`, `${field.feature} ${NOT_SUPPORTED}`));
  }
  if (SECURITY_POSTURE_ENV.kinds.includes(kind)) {
    for (const list of envLists(kind, spec)) {
      (asArray(getIn(spec, ...list.keys)) ?? []).forEach((entry, i) => {
        const name = isRecord(entry) ? entry.name : undefined;
        if (typeof name === 'string' && SECURITY_POSTURE_ENV.prefixes.some((p) => name.startsWith(p))) {
          errors.push(invalid(`${index(list.path, i)}.name`, name, `${SECURITY_POSTURE_ENV.feature} ${NOT_SUPPORTED}`));
        }
      });
    }
  }
  return errors;
}
