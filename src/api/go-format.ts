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

const HTML_UNSAFE = /[<>&\u2028\u2029]/g;
const htmlSafe = (json: string): string => json.replace(HTML_UNSAFE, (c) => `\\u${hex(c.charCodeAt(0), 4)}`);

/** An array index as V8 orders an object's keys: such keys come first, in numeric order. */
const isIndexKey = (key: string): boolean => /^(?:0|[1-9]\d*)$/.test(key) && Number(key) < 2 ** 32 - 1;

/**
 * An object's keys in the order goJSON writes them: sorted, then (as the sorted copy it used to
 * build is ordered by V8) the array-index keys first, by number.
 */
function orderedKeys(value: object): string[] {
  const keys = Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const indexes = keys.filter(isIndexKey);
  if (indexes.length === 0) return keys;
  return [...indexes.sort((a, b) => Number(a) - Number(b)), ...keys.filter((k) => !isIndexKey(k))];
}

/** What JSON.stringify leaves out of an object and writes as null in an array. */
const isUnwritten = (value: unknown): boolean => value === undefined || typeof value === 'function' || typeof value === 'symbol';

/** goJSON's text, written until it is longer than `max` characters. */
class BoundedJson {
  text = '';
  private readonly max: number;

  constructor(max: number) {
    this.max = max;
  }

  /** Whether there is room for more. */
  get open(): boolean {
    return this.text.length <= this.max;
  }

  /** Writes `value`, or as much of it as takes the text past `max`. */
  value(value: unknown): void {
    if (typeof value === 'string') this.string(value);
    else if (Array.isArray(value)) {
      this.text += '[';
      for (let i = 0; i < value.length && this.open; i++) {
        if (i > 0) this.text += ',';
        const item: unknown = value[i];
        if (isUnwritten(item)) this.text += 'null';
        else this.value(item);
      }
      if (this.open) this.text += ']';
    } else if (value !== null && typeof value === 'object') {
      this.text += '{';
      let first = true;
      for (const key of orderedKeys(value)) {
        if (!this.open) break;
        const member: unknown = (value as Record<string, unknown>)[key];
        if (isUnwritten(member)) continue;
        if (!first) this.text += ',';
        first = false;
        this.string(key);
        this.text += ':';
        if (this.open) this.value(member);
      }
      if (this.open) this.text += '}';
    } else this.text += JSON.stringify(value) ?? 'null';
  }

  /**
   * A JSON string; when it would take the text past `max`, only as many UTF-16 units of it as
   * there are characters left. Each unit writes at least one character, so the text passes `max`,
   * and its first `max + 1` characters are the whole string's, but for the last unit, which may be
   * half a surrogate pair (written escaped): it lies past `max`.
   */
  private string(value: string): void {
    const room = this.max + 1 - this.text.length;
    if (value.length <= room) this.text += htmlSafe(JSON.stringify(value));
    else this.text += htmlSafe(JSON.stringify(value.slice(0, room)).slice(0, -1));
  }
}

/**
 * Go's json.Marshal: map keys sorted, and <, >, &, U+2028, U+2029 escaped (its HTML-safe default).
 * With `max`: the same text when it has at most `max` characters; otherwise a longer one whose
 * first `max` characters are its own, written no further than that. A field error shows a few
 * hundred characters of a value, and a hostile list of 500 KiB, rendered whole three times for
 * each error that quotes it, cost the validating webhook 200 ms.
 */
export function goJSON(value: unknown, max = Infinity): string {
  if (isUnwritten(value)) return 'null';
  const json = new BoundedJson(max);
  json.value(value);
  return json.text;
}

/**
 * How field.Error prints a bad value: strings quoted, numbers and booleans bare, the rest as JSON
 * (with `max`, as goJSON cuts it).
 */
export function goValue(value: unknown, max = Infinity): string {
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return goJSON(value, max);
}
