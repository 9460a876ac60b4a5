// "Everything the schema says" (docs/api.md, "Validation"): ajv over the same TypeBox schemas the CRDs are
// generated from, plus the list-map uniqueness kube-apiserver checks beside them. The validators
// are compiled once, on first use (importing this module does no work); a request only runs them.
import { Ajv, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import { toFieldError } from './ajv-field-errors.ts';
import { required, type FieldError } from '../field-error.ts';
import { KINDS, type KaosKind } from '../kinds.ts';
import type { KubeObject } from '../lookup.ts';
import { validateListMaps } from './list-maps.ts';
import { clipToSchemaLimits } from './schema-limits.ts';
import { SPEC_SCHEMAS, type KaosObject } from '../schema/index.ts';

/** Builds the ajv instance that understands our schemas: the Kubernetes extensions are annotations. */
export function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true });
  ajv.addVocabulary([
    'x-kubernetes-list-type',
    'x-kubernetes-list-map-keys',
    'x-kubernetes-map-type',
    'x-kubernetes-preserve-unknown-fields',
  ]);
  ajvFormats.default(ajv, ['date-time']);
  // kube-openapi does not range-check int32/int64 formats (only `minimum`/`maximum`), so neither do we.
  ajv.addFormat('int32', { type: 'number', validate: () => true });
  ajv.addFormat('int64', { type: 'number', validate: () => true });
  return ajv;
}

let specValidators: Readonly<Record<KaosKind, ValidateFunction>> | undefined;

/** The compiled validator of a kind's spec; the first call compiles all four. */
export function specValidator(kind: KaosKind): ValidateFunction {
  if (specValidators === undefined) {
    const ajv = createAjv();
    specValidators = Object.fromEntries(KINDS.map((k) => [k, ajv.compile(SPEC_SCHEMAS[k])])) as Record<KaosKind, ValidateFunction>;
  }
  return specValidators[kind];
}

export interface SchemaCheck {
  /** The size limits first, then ajv's errors and the list-map keys, all under `spec`. */
  errors: FieldError[];
  /**
   * The spec with every list and string cut to its schema limit (the spec itself when nothing was
   * over): what the kind's own rules should read, so their work is bounded too.
   */
  spec: unknown;
  /** Paths of the strings that were cut (see clipToSchemaLimits). */
  cutStrings: ReadonlySet<string>;
}

/**
 * Checks the spec against its schema. ajv (with allErrors) sees only the clipped view, so the
 * errors of one request are bounded by the schema's limits, however large the request.
 */
export function checkSchema(kind: KaosKind, object: KubeObject): SchemaCheck {
  if (object.spec === undefined || object.spec === null) return { errors: [required('spec')], spec: object.spec, cutStrings: new Set() };
  const limits = clipToSchemaLimits(SPEC_SCHEMAS[kind], object.spec, 'spec');
  const spec = limits.clipped;
  const validate = specValidator(kind);
  const errors = validate(spec) ? [] : (validate.errors ?? []).map((e) => toFieldError(e, 'spec', spec));
  return {
    errors: [...limits.errors, ...errors, ...validateListMaps(SPEC_SCHEMAS[kind], spec, 'spec')],
    spec,
    cutStrings: limits.cutStrings,
  };
}

/** Schema errors of the object's spec, as field errors under `spec`. */
export function validateSchema(kind: KaosKind, object: KubeObject): FieldError[] {
  return checkSchema(kind, object).errors;
}

/** Whether the spec conforms to its schema: the cheap yes/no, without building errors. */
export function conformsToSchema(kind: KaosKind, object: KubeObject): object is KubeObject & KaosObject {
  // Limits first: ajv's yes/no still walks every item of an over-long list.
  if (clipToSchemaLimits(SPEC_SCHEMAS[kind], object.spec, 'spec').errors.length > 0) return false;
  return specValidator(kind)(object.spec) && validateListMaps(SPEC_SCHEMAS[kind], object.spec, 'spec').length === 0;
}
