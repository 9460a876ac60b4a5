// Bounds on what one denial may say, however much is wrong with the object. Kubernetes' own
// precedents: the API server truncates admission warnings to 4 KiB in all and 256 characters
// each (apiserver/pkg/endpoints/filters/warning.go), and ends an over-long error list with a
// sentinel "too many errors, the list is truncated" (apiserver/pkg/storage/etcd3); its field
// errors themselves are unbounded, which a hostile object turns into a 470 MB answer.
import { cut, TRUNCATED } from '../bounded-text.ts';
import { FieldError } from '../field-error.ts';

/** Causes listed in one denial; the rest are counted in one last cause. */
export const MAX_CAUSES = 100;
/** Bytes of all causes' text together: with the message, keeps the AdmissionReview within ~24 KiB. */
export const MAX_CAUSES_BYTES = 16 * 1024;
/** Bytes of the denial's `message` (the one line kubectl prints when it names the webhook). */
export const MAX_MESSAGE_BYTES = 4 * 1024;
/** Warnings in one answer: what fits the API server's 4 KiB at 120 characters each. */
export const MAX_WARNINGS = 30;

const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/**
 * The errors a denial lists: at most MAX_CAUSES, within MAX_CAUSES_BYTES, and when some are left
 * out, one more error in their place saying how many, on the deepest field they all share.
 */
export function boundedErrors(errors: readonly FieldError[]): FieldError[] {
  let bytes = 0;
  let shown = 0;
  for (const error of errors) {
    if (shown === MAX_CAUSES) break;
    const size = utf8Bytes(error.errorString());
    if (shown > 0 && bytes + size > MAX_CAUSES_BYTES) break;
    bytes += size;
    shown++;
  }
  if (shown === errors.length) return [...errors];
  const rest = errors.slice(shown);
  return [...errors.slice(0, shown), truncatedList(commonField(rest.map((e) => e.field)), rest.length)];
}

/** The error that ends a cut list: `<field>: Too many: 414: further errors not shown, the list is truncated`. */
function truncatedList(field: string, more: number): FieldError {
  return new FieldError('FieldValueTooMany', field, more, 'further errors not shown, the list is truncated');
}

/** The deepest path every field lies under (`spec.config.env` for its items), or `spec`/'' at worst. */
export function commonField(fields: readonly string[]): string {
  let prefix = fields[0] ?? '';
  for (const f of fields) {
    let i = 0;
    while (i < prefix.length && i < f.length && prefix[i] === f[i]) i++;
    prefix = prefix.slice(0, i);
    if (prefix === '') break;
  }
  // Back to a whole path: every field either is the prefix, or continues it with "." or "[".
  if (fields.every((f) => f === prefix || f[prefix.length] === '.' || f[prefix.length] === '[')) return prefix;
  const boundary = Math.max(prefix.lastIndexOf('.'), prefix.lastIndexOf('['));
  return boundary > 0 ? prefix.slice(0, boundary) : '';
}

/** Room kept for the sentinel that ends a cut list ("too many errors, …: 12345 more errors not shown"). */
const SENTINEL_BYTES = 80;

/**
 * The error strings of a denial's `message`, within `budget` bytes once joined with ", " (the
 * caller takes what its own wrapper costs off MAX_MESSAGE_BYTES): as many as fit, then one
 * saying how many more (the causes list them, up to MAX_CAUSES).
 */
export function boundedMessageParts(strings: readonly string[], budget: number = MAX_MESSAGE_BYTES): string[] {
  const room = Math.max(budget - SENTINEL_BYTES, 256);
  const parts: string[] = [];
  let bytes = 0;
  for (const s of strings) {
    const size = utf8Bytes(s) + 2;
    if (parts.length > 0 && bytes + size > room) break;
    // A single error over the limit is cut rather than dropped.
    parts.push(size > room ? `${cut(s, Math.floor(room / 2))}${TRUNCATED}` : s);
    bytes += size;
  }
  const more = strings.length - parts.length;
  if (more > 0) parts.push(`too many errors, the list is truncated: ${more} more ${more === 1 ? 'error' : 'errors'} not shown`);
  return parts;
}

export { utf8Bytes };

/** At most MAX_WARNINGS warnings, the last of them counting the ones left out. */
export function boundedWarnings(warnings: readonly string[]): string[] {
  if (warnings.length <= MAX_WARNINGS) return [...warnings];
  const more = warnings.length - (MAX_WARNINGS - 1);
  return [...warnings.slice(0, MAX_WARNINGS - 1), `${more} more warnings not shown`];
}
