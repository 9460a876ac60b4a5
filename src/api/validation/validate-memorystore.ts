// The MemoryStore's rules beyond its schema (docs/api.md, "MemoryStore"): KAOS's CEL rules in its
// words (external mode needs its block, one replica in local mode, the compaction marks), the
// `user` read scope warned about without a user identity, a PersistentVolumeClaim that may grow but never
// shrink, and both model bindings as references under the reference policy: the ModelAPI exists
// and serves the model (the patterns of docs/api.md, "Newer KAOS shapes").
import { forbidden, invalid, invalidOmitValue, notFound, required, type FieldError } from '../field-error.ts';
import { asRecord, getIn, isSet, type JsonRecord } from '../json.ts';
import type { ReferencePolicy } from '../kinds.ts';
import { MEMORY_MODEL_ROLES, type MemoryModelRole } from '../enums.ts';
import type { KubeObject } from '../lookup.ts';
import { COMPACTION_MARKS_MESSAGE, compactionMarksValid, persistentVolumeSize, STORE_USER_CEILING_WARNING, type ReadScopePosture } from '../memory-rules.ts';
import { isModelServed, notServedDetail, servedPatterns } from '../model-patterns.ts';
import { validateDNS1123Subdomain } from '../name-validation.ts';
import { compareQuantities } from '../quantity.ts';
import { clampWarning } from '../warnings.ts';
import { judgeReference } from './reference-policy.ts';
import type { ValidationResult } from './validation-types.ts';

export interface MemoryStoreValidationContext {
  /** The stored object on UPDATE: only bindings it did not already hold are judged. */
  oldObject?: KubeObject;
  policy: ReferencePolicy;
  /** The ModelAPIs the bindings name, looked up by the caller; absent: not judged. */
  modelAPIs?: ReadonlyMap<string, KubeObject | undefined>;
  /** ModelAPIs not looked up (the request's lookup budget ran out), with the reason. */
  unchecked?: ReadonlyMap<string, string>;
  /** The operator's security posture; absent: no user identity. */
  posture?: ReadScopePosture;
}

const SIZE = 'spec.storage.local.persistentVolume.size';

/** A local-mode store's volume size as render applies it; undefined in external mode (no claim). */
function localVolumeSize(spec: unknown): string | undefined {
  return getIn(spec, 'storage', 'type') === 'local' ? persistentVolumeSize(spec) : undefined;
}

export function validateMemoryStore(object: KubeObject, ctx: MemoryStoreValidationContext): ValidationResult {
  const spec: JsonRecord = asRecord(object.spec) ?? {};
  const result: ValidationResult = { errors: [], warnings: [] };
  const { errors, warnings } = result;
  const storage = asRecord(spec.storage) ?? {};
  const mode = storage.type;

  if (mode === 'external' && !isSet(storage.external)) {
    errors.push(required('spec.storage.external', 'storage.external is required when storage.type is external'));
  }
  const secretRef = asRecord(getIn(storage, 'external', 'connectionSecretRef'));
  if (secretRef !== undefined && !isSet(secretRef.name)) errors.push(required('spec.storage.external.connectionSecretRef.name'));
  for (const other of ['local', 'external'] as const) {
    if (mode !== other && (mode === 'local' || mode === 'external') && isSet(storage[other])) {
      warnings.push(clampWarning(`spec.storage.${other}: ignored, storage.type is ${mode}`));
    }
  }
  if (mode === 'local' && typeof spec.replicas === 'number' && spec.replicas !== 1) {
    errors.push(invalid('spec.replicas', spec.replicas, 'replicas must be 1 in local storage mode'));
  }
  if (!compactionMarksValid(spec)) {
    const marks = asRecord(spec.mediumTerm);
    const field = marks !== undefined && (isSet(marks.compactionTrigger) || isSet(marks.compactionTarget)) ? 'spec.mediumTerm' : 'spec.shortTerm.tokenBudget';
    errors.push(invalidOmitValue(field, COMPACTION_MARKS_MESSAGE));
  }
  if (spec.maxReadScope === 'user' && !(ctx.posture ?? { userIdentity: false }).userIdentity) warnings.push(clampWarning(STORE_USER_CEILING_WARNING));
  errors.push(...volumeSizeErrors(spec, ctx.oldObject?.spec));
  warnings.push(...modeSwitchWarnings(spec, ctx.oldObject?.spec));
  for (const role of MEMORY_MODEL_ROLES) modelBinding(role, spec, ctx, result);
  return result;
}

/** A size that is no size (zero or less); a local volume that would shrink (its claim cannot). */
function volumeSizeErrors(spec: JsonRecord, oldSpec: unknown): FieldError[] {
  const size = getIn(spec, 'storage', 'local', 'persistentVolume', 'size');
  const sign = compareQuantities(size, '0');
  if (sign !== undefined && sign <= 0) return [invalid(SIZE, size, 'must be greater than zero')];
  const now = localVolumeSize(spec);
  const before = localVolumeSize(oldSpec);
  if (now === undefined || before === undefined || compareQuantities(now, before) !== -1) return [];
  return [forbidden(SIZE, 'a PersistentVolumeClaim cannot shrink')];
}

/** Leaving local mode deletes the claim, and the memories on it: said before it happens. */
function modeSwitchWarnings(spec: unknown, oldSpec: unknown): string[] {
  if (getIn(oldSpec, 'storage', 'type') !== 'local' || getIn(spec, 'storage', 'type') !== 'external') return [];
  return ['spec.storage.type: leaving local mode deletes the PersistentVolumeClaim of this MemoryStore, and its memories'];
}

/**
 * One model binding: a valid ModelAPI name and, when the binding is new or changed, a ModelAPI
 * that exists and serves the model (a reference error on `.modelAPI` or `.model`).
 */
function modelBinding(role: MemoryModelRole, spec: JsonRecord, ctx: MemoryStoreValidationContext, result: ValidationResult): void {
  const path = `spec.models.${role}`;
  const binding = asRecord(getIn(spec, 'models', role)) ?? {};
  const name = binding.modelAPI;
  const model = binding.model;
  if (typeof name !== 'string') return;
  if (name === '') {
    result.errors.push(required(`${path}.modelAPI`));
    return;
  }
  const nameErrors = validateDNS1123Subdomain(`${path}.modelAPI`, name);
  result.errors.push(...nameErrors);
  const old = asRecord(getIn(ctx.oldObject?.spec, 'models', role));
  const changed = old === undefined || old.modelAPI !== name || old.model !== model;
  if (nameErrors.length > 0 || !changed || ctx.modelAPIs === undefined) return;
  if (!ctx.modelAPIs.has(name)) {
    const why = ctx.unchecked?.get(name);
    if (why !== undefined) judgeReference(ctx.policy, notFound(`${path}.modelAPI`, name, why), result);
    return;
  }
  const target = ctx.modelAPIs.get(name);
  if (target === undefined) {
    judgeReference(ctx.policy, notFound(`${path}.modelAPI`, name), result);
    return;
  }
  const patterns = servedPatterns(target.spec);
  if (typeof model === 'string' && model !== '' && patterns !== undefined && !isModelServed(patterns, model)) {
    judgeReference(ctx.policy, notFound(`${path}.model`, model, notServedDetail(name, patterns)), result);
  }
}
