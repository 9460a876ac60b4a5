// A field-level validation error, modelled on k8s.io/apimachinery/pkg/util/validation/field.Error
// (v0.36) so that the text we return is exactly what Kubernetes prints for its own validation.
import { boundedDetail, boundedValue } from './bounded-text.ts';
import { goQuote } from './go-format.ts';

export const FIELD_ERROR_TYPES = [
  'FieldValueRequired',
  'FieldValueInvalid',
  'FieldValueNotSupported',
  'FieldValueDuplicate',
  'FieldValueForbidden',
  'FieldValueNotFound',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
] as const;
export type FieldErrorType = (typeof FIELD_ERROR_TYPES)[number];

export const TYPE_TEXT: Readonly<Record<FieldErrorType, string>> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueForbidden: 'Forbidden',
  FieldValueNotFound: 'Not found',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTypeInvalid: 'Invalid value',
};

/** Types whose text never includes the bad value (apimachinery prints only the type for these). */
const VALUELESS: ReadonlySet<FieldErrorType> = new Set(['FieldValueRequired', 'FieldValueForbidden', 'FieldValueTooLong']);

export class FieldError {
  readonly type: FieldErrorType;
  /** The field path as Kubernetes prints it, e.g. `spec.mcpServers[1]`. */
  readonly field: string;
  /**
   * The offending value. `undefined` omits it from the text (Go's field.OmitValueType): used where
   * echoing the value would be unhelpful or leak a secret, such as a whole LiteLLM config.
   */
  readonly badValue: unknown;
  readonly detail: string | undefined;

  constructor(type: FieldErrorType, field: string, badValue?: unknown, detail?: string) {
    this.type = type;
    this.field = field;
    this.badValue = badValue;
    this.detail = detail === '' ? undefined : detail;
  }

  /** The message without the field, as in a StatusCause (apimachinery's ErrorBody). */
  errorBody(): string {
    let s = TYPE_TEXT[this.type];
    // Both cut to a readable size (bounded-text.ts): a hostile object must not be echoed back whole.
    if (!VALUELESS.has(this.type) && this.badValue !== undefined) s += `: ${boundedValue(this.badValue)}`;
    if (this.detail !== undefined) s += `: ${boundedDetail(this.detail)}`;
    return s;
  }

  /** `<field>: <body>`, exactly Kubernetes' field.Error.Error(). */
  errorString(): string {
    return `${this.field}: ${this.errorBody()}`;
  }

  toString(): string {
    return this.errorString();
  }
}

export const required = (field: string, detail?: string): FieldError =>
  new FieldError('FieldValueRequired', field, undefined, detail);

export const invalid = (field: string, value: unknown, detail?: string): FieldError =>
  new FieldError('FieldValueInvalid', field, value, detail);

/** Invalid value whose value is not echoed (see FieldError.badValue). */
export const invalidOmitValue = (field: string, detail: string): FieldError =>
  new FieldError('FieldValueInvalid', field, undefined, detail);

export const notSupported = (field: string, value: unknown, supported: readonly unknown[]): FieldError =>
  new FieldError(
    'FieldValueNotSupported',
    field,
    value,
    supported.length > 0 ? `supported values: ${supported.map((v) => goQuote(String(v))).join(', ')}` : undefined,
  );

export const duplicate = (field: string, value: unknown): FieldError =>
  new FieldError('FieldValueDuplicate', field, value);

export const forbidden = (field: string, detail: string): FieldError =>
  new FieldError('FieldValueForbidden', field, undefined, detail);

export const notFound = (field: string, value: unknown, detail?: string): FieldError =>
  new FieldError('FieldValueNotFound', field, value, detail);

export const tooLong = (field: string, maxLength: number): FieldError =>
  new FieldError(
    'FieldValueTooLong',
    field,
    undefined,
    maxLength >= 0 ? `may not be more than ${maxLength} ${maxLength === 1 ? 'byte' : 'bytes'}` : 'value is too long',
  );

export const tooMany = (field: string, actual: number, max: number): FieldError =>
  new FieldError(
    'FieldValueTooMany',
    field,
    actual >= 0 ? actual : undefined,
    max >= 0 ? `must have at most ${max} ${max === 1 ? 'item' : 'items'}` : 'has too many items',
  );

export const typeInvalid = (field: string, value: unknown, detail: string): FieldError =>
  new FieldError('FieldValueTypeInvalid', field, value, detail);

// Field paths, printed like field.Path.String(): children joined by ".", indexes and keys in [].
export const child = (path: string, name: string): string => (path === '' ? name : `${path}.${name}`);
export const index = (path: string, i: number): string => `${path}[${i}]`;
export const key = (path: string, k: string): string => `${path}[${k}]`;
