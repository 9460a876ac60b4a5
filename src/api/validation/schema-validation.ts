// "Everything the schema says" (api.md §5): ajv over the same TypeBox schemas the CRDs are
// generated from, plus the list-map uniqueness kube-apiserver checks beside them. The validators
// are compiled once, at module load; a request only runs them.
import { Ajv, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import { toFieldError } from './ajv-field-errors.ts';
import { required, type FieldError } from '../field-error.ts';
import { KINDS, type KaosKind } from '../kinds.ts';
import type { KubeObject } from '../lookup.ts';
import { validateListMaps } from './list-maps.ts';
import { SPEC_SCHEMAS } from '../schema/index.ts';

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

const ajv = createAjv();
const SPEC_VALIDATORS = Object.fromEntries(KINDS.map((k) => [k, ajv.compile(SPEC_SCHEMAS[k])])) as Record<
  KaosKind,
  ValidateFunction
>;

/** Schema errors of the object's spec, as field errors under `spec`. */
export function validateSchema(kind: KaosKind, object: KubeObject): FieldError[] {
  if (object.spec === undefined || object.spec === null) return [required('spec')];
  const validate = SPEC_VALIDATORS[kind];
  const errors = validate(object.spec) ? [] : (validate.errors ?? []).map((e) => toFieldError(e, 'spec', object.spec));
  return [...errors, ...validateListMaps(SPEC_SCHEMAS[kind], object.spec, 'spec')];
}

/** Whether the spec conforms to its schema: the cheap yes/no, without building errors. */
export function conformsToSchema(kind: KaosKind, object: KubeObject): boolean {
  return SPEC_VALIDATORS[kind](object.spec) && validateListMaps(SPEC_SCHEMAS[kind], object.spec, 'spec').length === 0;
}
