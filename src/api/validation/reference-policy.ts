// Which reference policy judges an object (docs/api.md, "Reference policy"): the object's annotation, else its
// namespace's label, else the operator's configuration — the most specific wins.
import { notSupported, type FieldError } from '../field-error.ts';
import { clampWarning } from '../warnings.ts';
import type { ValidationResult } from './validation-types.ts';
import { goQuote } from '../go-format.ts';
import { REFERENCE_POLICIES, REFERENCE_POLICY_KEY, type ReferencePolicy } from '../kinds.ts';
import type { KubeObject } from '../lookup.ts';

export interface ResolvedPolicy {
  policy: ReferencePolicy;
  /** An invalid annotation is the object's own error. */
  errors: FieldError[];
  /** An invalid namespace label is not the object's fault: it is ignored, with a warning. */
  warnings: string[];
}

const isPolicy = (v: unknown): v is ReferencePolicy => (REFERENCE_POLICIES as readonly unknown[]).includes(v);

export const REFERENCE_POLICY_FIELD = `metadata.annotations[${REFERENCE_POLICY_KEY}]`;

export function resolveReferencePolicy(
  object: KubeObject,
  namespaceLabels: Readonly<Record<string, string>> | undefined,
  operatorDefault: ReferencePolicy,
): ResolvedPolicy {
  const errors: FieldError[] = [];
  const warnings: string[] = [];
  const annotation = object.metadata?.annotations?.[REFERENCE_POLICY_KEY];
  if (isPolicy(annotation)) return { policy: annotation, errors, warnings };
  if (annotation !== undefined) errors.push(notSupported(REFERENCE_POLICY_FIELD, annotation, REFERENCE_POLICIES));

  const label = namespaceLabels?.[REFERENCE_POLICY_KEY];
  if (isPolicy(label)) return { policy: label, errors, warnings };
  if (label !== undefined) {
    warnings.push(`namespace label ${REFERENCE_POLICY_KEY}=${goQuote(label)} is not Enforce or Warn; using ${operatorDefault}`);
  }
  return { policy: operatorDefault, errors, warnings };
}

/**
 * A reference that does not hold — a missing object, a model its ModelAPI does not serve, a read
 * scope above its MemoryStore's — judged under the policy: a denial under Enforce, a warning under
 * Warn (for pipelines that apply out of order).
 */
export function judgeReference(policy: ReferencePolicy, error: FieldError, result: ValidationResult): void {
  if (policy === 'Enforce') result.errors.push(error);
  else result.warnings.push(clampWarning(`${error.errorString()} (allowed: reference policy Warn)`));
}
