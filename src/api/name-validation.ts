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
