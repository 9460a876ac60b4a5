// What KAOS has that this operator leaves out (docs/api.md, "KAOS features not supported"): an
// object that uses one is refused naming the feature, never admitted with the field silently
// dropped. Each such field is declared in the kind's schema (schema/helpers.ts AnyValue), since the
// API server prunes or refuses a field its CRD does not know before any webhook sees it, and the
// user would learn only that the field is unknown. Pure.
//
// KAOS's ThirdPartyService is a kind, not a field: without a CRD for it the API server answers
// `no matches for kind "ThirdPartyService"` on its own, which already says that this operator does
// not serve it. KAOS's security posture env (AGENT_AUTH_*, MEMORY_REQUIRE_*) is
// rendered by the operator itself now (docs/api.md, "Agent identity by ServiceAccount" and
// "Posture env and `maxReadScope: user`"), so a user's own entries are env like any other.
import { forbidden, type FieldError } from './field-error.ts';
import { getIn } from './json.ts';
import type { WorkloadKind } from './kinds.ts';

export const NOT_SUPPORTED = 'is not supported by this operator';

/** A spec field of a KAOS feature this operator does not implement. */
export interface UnsupportedField {
  /** The field's keys under `spec`. */
  readonly keys: readonly string[];
  /** The feature, as the error names it. */
  readonly feature: string;
}

export const UNSUPPORTED_FIELDS: Readonly<Record<WorkloadKind, readonly UnsupportedField[]>> = {
  Agent: [],
  ModelAPI: [],
  MCPServer: [],
  MemoryStore: [],
};

/** Every use of an unsupported feature in `spec`, in field order. */
export function unsupportedFeatureErrors(kind: WorkloadKind, spec: unknown): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of UNSUPPORTED_FIELDS[kind]) {
    const value = getIn(spec, ...field.keys);
    if (value !== undefined && value !== null) errors.push(forbidden(`spec.${field.keys.join('.')}`, `${field.feature} ${NOT_SUPPORTED}`));
  }
  return errors;
}
