// JSON exactly as Go's encoding/json writes a decoded document (map[string]any, []any, string,
// float64, bool, nil): object keys sorted byte-wise (UTF-8 order, which is code point order),
// `<`, `>`, `&`, U+2028 and U+2029 escaped as \uXXXX, \b \f \n \r \t by name and other control
// characters as \u00XX, numbers in strconv's shortest form. KAOS writes its policy data with
// json.MarshalIndent(doc, "", "  ") and a SecurityPolicy's inline JWKS with json.Marshal: a PDP
// or a diff tool that compares our output with KAOS's sees the same bytes.

const HEX = '0123456789abcdef';

/** Go's appendString with escapeHTML: a quoted JSON string. */
export function goQuoteJson(text: string): string {
  let out = '"';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let escape: string | undefined;
    if (c < 0x20 || c === 0x22 || c === 0x5c || c === 0x3c || c === 0x3e || c === 0x26) {
      escape =
        c === 0x22 ? '\\"' : c === 0x5c ? '\\\\' : c === 0x08 ? '\\b' : c === 0x0c ? '\\f' : c === 0x0a ? '\\n' : c === 0x0d ? '\\r' : c === 0x09 ? '\\t' : `\\u00${HEX[c >> 4]}${HEX[c & 0xf]}`;
    } else if (c === 0x2028 || c === 0x2029) {
      escape = `\\u${c.toString(16)}`;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      // A lone surrogate is invalid UTF-8 to Go, which writes the replacement character for it.
      const pair = c <= 0xdbff && i + 1 < text.length && text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) <= 0xdfff;
      if (pair) {
        i++;
        continue;
      }
      escape = '\\ufffd';
    }
    if (escape === undefined) continue;
    out += text.slice(start, i) + escape;
    start = i + 1;
  }
  return `${out}${text.slice(start)}"`;
}

/** strconv.FormatFloat(f, 'f' or 'e', -1, 64) as encoding/json picks them. */
function goNumber(n: number): string {
  if (!Number.isFinite(n)) throw new TypeError(`json: unsupported value: ${String(n)}`);
  if (Object.is(n, -0)) return '-0';
  // JavaScript switches to exponents at the same magnitudes (1e21, 1e-6) and writes the shortest
  // digits as strconv does; only the exponent's form differs where Go pads it (e-07 → e-7 already).
  return String(n);
}

/** Byte-wise (UTF-8) order of two strings: code point order, where UTF-16 order differs above U+D7FF. */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // A surrogate (an astral code point) sorts after U+E000–U+FFFF in code point order.
    const rank = (c: number): number => (c >= 0xd800 && c <= 0xdfff ? c + 0x2000 : c >= 0xe000 ? c - 0x800 : c);
    return rank(x) - rank(y);
  }
  return a.length - b.length;
}

function encode(value: unknown, indent: string | undefined, depth: number): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goQuoteJson(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  const open = (items: string[], brackets: '[]' | '{}'): string => {
    if (items.length === 0) return brackets;
    if (indent === undefined) return `${brackets[0]}${items.join(',')}${brackets[1]}`;
    const inner = `\n${indent.repeat(depth + 1)}`;
    return `${brackets[0]}${inner}${items.join(`,${inner}`)}\n${indent.repeat(depth)}${brackets[1]}`;
  };
  if (Array.isArray(value)) return open(value.map((v) => encode(v, indent, depth + 1)), '[]');
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort(compareUtf8);
    const sep = indent === undefined ? ':' : ': ';
    return open(keys.map((k) => `${goQuoteJson(k)}${sep}${encode(record[k], indent, depth + 1)}`), '{}');
  }
  throw new TypeError(`json: unsupported type: ${typeof value}`);
}

/** json.Marshal(value). */
export function goMarshal(value: unknown): string {
  return encode(value, undefined, 0);
}

/** json.MarshalIndent(value, "", indent). */
export function goMarshalIndent(value: unknown, indent = '  '): string {
  return encode(value, indent, 0);
}
