// How deep a JSON text nests and how many members its widest object has, found by one pass over
// its bytes without recursion, so that a body nested deeper than MAX_JSON_DEPTH, or with an
// object of more than MAX_JSON_MEMBERS members, is refused before anything walks it. Every
// recursive walk of an object (cloneJson, goJSON's key sorting, fast-json-patch's compare, the
// podSpec merge, ajv) then works on at most MAX_JSON_DEPTH levels, far below what the stack holds
// (thousands); and every object stays small enough that reading it costs what the same bytes
// cost in small objects (docs/limits.md).

/**
 * Levels of nesting an AdmissionReview body may have, counting the review itself as 1: the
 * object is at level 3 (review → request → object). The deepest real manifests (a podSpec with
 * node affinity, managedFields of a big spec) stay under 40 levels of the body.
 */
export const MAX_JSON_DEPTH = 100;

/**
 * Members (keys) of one JSON object of an AdmissionReview body. The widest objects of real
 * manifests are maps (labels, annotations, nodeSelector, resources): tens, a few hundred at most;
 * managedFields tracks each map with one member more (`.`), and a keyed list with one per item
 * (at most 513 for an env list). V8 keeps an object of thousands of keys as a hash table, which
 * costs about four times as much per byte to parse, copy, sort and serialize as the same bytes in
 * small objects: a 3.4 MiB map of 200,000 keys took the validating webhook 0.5–1 s, the same
 * keys in maps of 100 under 80 ms.
 */
export const MAX_JSON_MEMBERS = 1024;

const QUOTE = 0x22;
const COMMA = 0x2c;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/** What makes a JSON text too costly to read: nested too deep, or an object too wide. */
export type JsonShapeProblem = 'depth' | 'members';

/**
 * The first way `text` exceeds the limits: an object or array nested more than `maxDepth` levels
 * deep (a bare scalar is level 0, `{}` and `[]` are level 1), or an object with more than
 * `maxMembers` members; undefined when it does neither. Brackets and commas inside strings do
 * not count. Linear in the length and stops at the first problem. Meant to run before
 * JSON.parse: on text that is not JSON the answer means nothing, and the parse that follows
 * reports that.
 */
export function jsonShapeProblem(text: Uint8Array, maxDepth: number, maxMembers: number): JsonShapeProblem | undefined {
  // Per open level: -1 for an array, else the commas seen so far in that object (members - 1).
  const commas = new Int32Array(Math.min(maxDepth, text.length) + 2);
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
      if (++depth > maxDepth) return 'depth';
      commas[depth] = byte === OPEN_OBJECT ? 0 : -1;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      if (depth > 0) depth--;
    } else if (byte === COMMA && depth > 0) {
      const count = commas[depth] ?? -1;
      if (count >= 0 && (commas[depth] = count + 1) >= maxMembers) return 'members';
    }
  }
  return undefined;
}

/** True when some object or array in `text` is nested more than `limit` levels deep (see jsonShapeProblem). */
export function nestsDeeperThan(text: Uint8Array, limit: number): boolean {
  return jsonShapeProblem(text, limit, Number.POSITIVE_INFINITY) === 'depth';
}
