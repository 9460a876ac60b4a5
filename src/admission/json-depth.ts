// How deep a JSON text nests, found by one pass over its bytes without recursion, so that a body
// nested deeper than MAX_JSON_DEPTH is refused before anything walks it. Every recursive walk of
// an object (cloneJson, goJSON's key sorting, fast-json-patch's compare, the podSpec merge, ajv)
// then works on at most MAX_JSON_DEPTH levels, far below what the stack holds (thousands).

/**
 * Levels of nesting an AdmissionReview body may have, counting the review itself as 1: the
 * object is at level 3 (review → request → object). The deepest real manifests (a podSpec with
 * node affinity, managedFields of a big spec) stay under 40 levels of the body.
 */
export const MAX_JSON_DEPTH = 100;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/**
 * True when some object or array in `text` is nested more than `limit` levels deep (a bare
 * scalar is level 0, `{}` and `[]` are level 1). Brackets inside strings do not count. Linear in
 * the length and stops at the first level over the limit. Meant to run before JSON.parse: on
 * text that is not JSON the answer means nothing, and the parse that follows reports that.
 */
export function nestsDeeperThan(text: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const byte = text[i];
    if (inString) {
      if (byte === BACKSLASH) i++; // the escaped byte is never a closing quote
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}
