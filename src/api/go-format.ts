// Renders values the way Kubernetes' Go code prints them in field errors (strconv.Quote for
// strings, %v for numbers and booleans, encoding/json for everything else), so that our messages
// are byte-for-byte what kube-apiserver itself would say.

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '\u0007': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

/** Go's strconv.Quote (what `%q` prints). */
export function goQuote(value: string): string {
  let out = '"';
  // for…of walks code points, as Go walks runes. A lone surrogate cannot come from JSON that Go
  // decoded (it would have become U+FFFD), so it is printed as that replacement character.
  for (const ch of value) {
    const short = SHORT_ESCAPES[ch];
    const cp = ch.codePointAt(0) ?? 0;
    if (short !== undefined) out += short;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd';
    else if (PRINTABLE.test(ch)) out += ch;
    else if (cp < 0x80) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return `${out}"`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([k, v]) => [k, sortKeys(v)]));
  }
  return value;
}

/** Go's json.Marshal: map keys sorted, and <, >, &, U+2028, U+2029 escaped (its HTML-safe default). */
export function goJSON(value: unknown): string {
  const json = JSON.stringify(sortKeys(value)) ?? 'null';
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${hex(c.charCodeAt(0), 4)}`);
}

/** How field.Error prints a bad value: strings quoted, numbers and booleans bare, the rest as JSON. */
export function goValue(value: unknown): string {
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return goJSON(value);
}
