// Translates ajv's errors into the field errors kube-apiserver reports for the same schema
// violations (apiextensions-apiserver validation.kubeOpenAPIResultToFieldErrors over kube-openapi's
// messages), so a webhook denial reads like a native one:
//   spec.config.reasoningLoopMaxSteps: Invalid value: 50: spec.config.reasoningLoopMaxSteps in body should be less than or equal to 20
import type { ErrorObject } from 'ajv';
import { child, index, invalid, notSupported, required, tooLong, tooMany, typeInvalid, type FieldError } from '../field-error.ts';
import { goQuote } from '../go-format.ts';
import { isRecord } from '../json.ts';

/** JSON Pointer (ajv's instancePath) to a Kubernetes field path, with [i] for list indexes. */
export function fieldPathOf(root: string, pointer: string, data: unknown): { path: string; value: unknown } {
  let path = root;
  let node = data;
  for (const raw of pointer.split('/').slice(1)) {
    const step = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      path = index(path, Number(step));
      node = node[Number(step)];
    } else {
      path = child(path, step);
      node = isRecord(node) ? node[step] : undefined;
    }
  }
  return { path, value: node };
}

/** The JSON type name kube-openapi reports for a value. */
function jsonType(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

const num = (v: unknown): number => (typeof v === 'number' ? v : Number.NaN);
const str = (v: unknown): string => (typeof v === 'string' ? v : Array.isArray(v) ? v.join(',') : String(v));

export function toFieldError(error: ErrorObject, root: string, data: unknown): FieldError {
  const { path, value } = fieldPathOf(root, error.instancePath, data);
  const p: Record<string, unknown> = error.params;
  const body = `${path} in body`;
  switch (error.keyword) {
    case 'required':
      return required(child(path, str(p.missingProperty)));
    case 'enum':
      return notSupported(path, value, Array.isArray(p.allowedValues) ? p.allowedValues.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))) : []);
    case 'type':
      return typeInvalid(path, jsonType(value), `${body} must be of type ${str(p.type)}: "${jsonType(value)}"`);
    case 'format':
      return typeInvalid(path, value, `${body} must be of type ${str(p.format)}: ${goQuote(str(value))}`);
    case 'maximum':
      return invalid(path, value, `${body} should be less than or equal to ${num(p.limit)}`);
    case 'exclusiveMaximum':
      return invalid(path, value, `${body} should be less than ${num(p.limit)}`);
    case 'minimum':
      return invalid(path, value, `${body} should be greater than or equal to ${num(p.limit)}`);
    case 'exclusiveMinimum':
      return invalid(path, value, `${body} should be greater than ${num(p.limit)}`);
    case 'pattern':
      return invalid(path, value, `${body} should match '${str(p.pattern)}'`);
    case 'minLength':
      return invalid(path, value, `${body} should be at least ${num(p.limit)} chars long`);
    case 'maxLength':
      return tooLong(path, num(p.limit));
    case 'minItems':
      return invalid(path, value, `${body} should have at least ${num(p.limit)} items`);
    case 'maxItems':
      return tooMany(path, Array.isArray(value) ? value.length : -1, num(p.limit));
    case 'maxProperties':
      return tooMany(path, isRecord(value) ? Object.keys(value).length : -1, num(p.limit));
    default:
      return invalid(path, value, `${body} ${error.message ?? 'is invalid'}`);
  }
}
