// The webhook configurations' matchConditions (CEL, GA since Kubernetes 1.30): the API server
// skips the call when the answer could not change, so relabelling, annotating, finalizer
// removal and status-free no-op UPDATEs cost the user no round trip to the operator.
//
// What each handler reads on an UPDATE, and so what must still reach it:
// * mutate: `spec` and the `kaos.tools/defaulted` annotation. Defaults re-derive when their source
//   in the spec changes (a new mode, a new modelAPI) — that UPDATE changes spec and is sent; so is
//   one whose apply dropped a value we chose (the value is gone from spec) or touched the
//   annotation. Skipped: UPDATEs that leave both alone. Consequence, chosen: an object stored
//   before the webhook existed (no defaults) is not filled in by a mere relabel — it gets its
//   defaults with its next spec change, and the controller renders absent values from the same
//   configured defaults meanwhile; likewise a changed DEFAULT_*_IMAGE, or a ModelAPI's new model,
//   reaches an Agent's recorded defaults with its next spec change, not with a label.
// * validate: `spec` and the `kaos.tools/reference-policy` annotation. With the spec unchanged the
//   handler refuses nothing about the spec (ratcheting), so only a changed policy annotation can
//   be refused. Skipped also: UPDATEs of an object being deleted, which the handler always allows
//   (it only ever loses finalizers). What a skipped UPDATE loses is warnings only (readiness of
//   dependencies under `waitForDependencies: false`, an invalid namespace label).
// * CREATE always reaches both; DELETE entries have no conditions.
//
// Every expression is guarded so it cannot fail to evaluate (an error would refuse the request
// under failurePolicy Fail): `request.operation != 'UPDATE' ||` short-circuits before oldObject
// is read, and every optional field is read behind has().
import { DEFAULTED_ANNOTATION, REFERENCE_POLICY_KEY } from '../api/kinds.ts';
import type { WebhookType } from './types.ts';

export interface MatchCondition {
  name: string;
  expression: string;
}

/** `spec` differs between the new and the stored object (present on one side only counts). */
const SPEC_CHANGED = 'has(object.spec) != has(oldObject.spec) || (has(object.spec) && object.spec != oldObject.spec)';

/** A one-element list with the annotation's value, or an empty list: absent and "" differ. */
function annotation(object: 'object' | 'oldObject', key: string): string {
  const annotations = `${object}.metadata.annotations`;
  return `(has(${annotations}) && '${key}' in ${annotations} ? [${annotations}['${key}']] : [])`;
}

const annotationChanged = (key: string): string => `${annotation('object', key)} != ${annotation('oldObject', key)}`;

/** Sent unless it is an UPDATE that leaves spec and each of the annotations alone. */
function unlessUnchanged(annotationKeys: readonly string[]): string {
  return [`request.operation != 'UPDATE'`, SPEC_CHANGED, ...annotationKeys.map(annotationChanged)].map((c) => `(${c})`).join(' || ');
}

/** What the handler reads on UPDATE, by webhook type: spec plus these annotations. */
export const ANNOTATIONS_READ: Readonly<Record<WebhookType, readonly string[]>> = {
  mutate: [DEFAULTED_ANNOTATION],
  validate: [REFERENCE_POLICY_KEY],
};

/** The conditions of the CREATE/UPDATE entries of one webhook type; all must hold for a call. */
export function matchConditions(type: WebhookType): MatchCondition[] {
  const changed: MatchCondition = { name: 'create-or-changed-spec-or-annotations', expression: unlessUnchanged(ANNOTATIONS_READ[type]) };
  if (type === 'mutate') return [changed];
  return [changed, { name: 'not-being-deleted', expression: `request.operation != 'UPDATE' || !has(object.metadata.deletionTimestamp)` }];
}
