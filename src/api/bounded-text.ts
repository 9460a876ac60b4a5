// Bad values and details as a field error prints them, cut to a size a person can read: a value
// is echoed so the user can find it, and 256 characters find anything (the API server cuts each
// admission warning to 256 characters too). The cut is marked, so nobody takes it for the value.
import { goQuote, goValue } from './go-format.ts';

/** Characters of a quoted bad value; longer values are cut and marked. */
export const MAX_VALUE_LENGTH = 256;
/** Characters of an error's detail (which may itself quote what the user wrote). */
export const MAX_DETAIL_LENGTH = 1024;

export const TRUNCATED = '...(truncated)';

/** A value as a field error prints it, cut to MAX_VALUE_LENGTH characters and marked when longer. */
export function boundedValue(value: unknown): string {
  if (typeof value === 'string') {
    // Cut before quoting: quoting a 5 MiB string only to throw it away costs real time.
    return value.length <= MAX_VALUE_LENGTH ? goQuote(value) : `${goQuote(cut(value, MAX_VALUE_LENGTH))}${TRUNCATED}`;
  }
  // Rendered no further than the cut: a hostile list of 500 KiB is echoed in 256 characters too.
  const text = goValue(value, MAX_VALUE_LENGTH);
  return text.length <= MAX_VALUE_LENGTH ? text : `${cut(text, MAX_VALUE_LENGTH)}${TRUNCATED}`;
}

/** A detail text cut to MAX_DETAIL_LENGTH characters and marked when longer. */
export function boundedDetail(detail: string): string {
  return detail.length <= MAX_DETAIL_LENGTH ? detail : `${cut(detail, MAX_DETAIL_LENGTH)}${TRUNCATED}`;
}

/** The first `n` UTF-16 units of `s`, never splitting a surrogate pair. */
export function cut(s: string, n: number): string {
  if (s.length <= n) return s;
  const last = s.charCodeAt(n - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? n - 1 : n);
}

/** The first `max` code points of `s` (all of it when it has no more): maxLength counts code points, as kube-openapi counts runes. */
export function codePointPrefix(s: string, max: number): string {
  if (s.length <= max) return s;
  let units = 0;
  let points = 0;
  while (units < s.length && points < max) {
    const code = s.charCodeAt(units);
    const next = s.charCodeAt(units + 1);
    units += code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
    points++;
  }
  return s.slice(0, units);
}

/** Whether `s` has more than `max` code points; counts no further than `max`. */
export function longerThan(s: string, max: number): boolean {
  return codePointPrefix(s, max).length < s.length;
}

/** `text` cut to `max` characters with "..." appended when longer: for log lines and short messages. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${cut(text, max)}...`;
}
