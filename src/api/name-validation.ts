// Object names as Kubernetes validates them (apimachinery util/validation.IsDNS1123Subdomain),
// with its exact messages: references must be names an object could actually have.
import { invalid, type FieldError } from './field-error.ts';

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', " +
  "and must start and end with an alphanumeric character (e.g. 'example.com', " +
  `regex used for validation is '${DNS1123_SUBDOMAIN_FMT}')`;

/** The problems IsDNS1123Subdomain reports, in its order; empty when the name is valid. */
export function dns1123SubdomainProblems(value: string): string[] {
  const problems: string[] = [];
  if (value.length > DNS1123_SUBDOMAIN_MAX_LENGTH) problems.push(`must be no more than ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`);
  if (!DNS1123_SUBDOMAIN.test(value)) problems.push(SUBDOMAIN_MESSAGE);
  return problems;
}

export function validateDNS1123Subdomain(field: string, value: string): FieldError[] {
  return dns1123SubdomainProblems(value).map((problem) => invalid(field, value, problem));
}

// Label keys and values as apimachinery's util/validation.IsQualifiedName and IsValidLabelValue
// judge them, with their messages (label selectors: api/label-selector.ts).
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const QUALIFIED_NAME_MAX_LENGTH = 63;
export const LABEL_VALUE_MAX_LENGTH = 63;

/** apimachinery's RegexError: the message, its examples and the regex. */
function regexError(message: string, format: string, ...examples: string[]): string {
  return `${message} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${format}')`;
}

const QUALIFIED_NAME_MESSAGE = regexError(
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  QUALIFIED_NAME_FMT,
  'MyName',
  'my.name',
  '123-abc',
);

/** The problems IsQualifiedName reports (a label key: an optional DNS-1123 prefix and `/`, then a name), in its order. */
export function qualifiedNameProblems(value: string): string[] {
  const parts = value.split('/');
  if (parts.length > 2) {
    return [`a qualified name ${QUALIFIED_NAME_MESSAGE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  const problems: string[] = [];
  const name = parts.length === 2 ? (parts[1] as string) : value;
  if (parts.length === 2) {
    const prefix = parts[0] as string;
    if (prefix === '') problems.push('prefix part must be non-empty');
    else problems.push(...dns1123SubdomainProblems(prefix).map((p) => `prefix part ${p}`));
  }
  if (name === '') problems.push('name part must be non-empty');
  else if (name.length > QUALIFIED_NAME_MAX_LENGTH) problems.push(`name part must be no more than ${QUALIFIED_NAME_MAX_LENGTH} characters`);
  if (!QUALIFIED_NAME.test(name)) problems.push(`name part ${QUALIFIED_NAME_MESSAGE}`);
  return problems;
}

/** The problems IsValidLabelValue reports, in its order. */
export function labelValueProblems(value: string): string[] {
  const problems: string[] = [];
  if (value.length > LABEL_VALUE_MAX_LENGTH) problems.push(`must be no more than ${LABEL_VALUE_MAX_LENGTH} characters`);
  if (!LABEL_VALUE.test(value)) {
    problems.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return problems;
}
