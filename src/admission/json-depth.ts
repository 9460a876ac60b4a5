// How deep a JSON text nests, how many members its widest object has and how large each member
// of the review's request is, found by one pass over its bytes without recursion, so that a body
// nested deeper than MAX_JSON_DEPTH, with an object of more than MAX_JSON_MEMBERS members, or
// whose object (or oldObject) is larger than any object the API server can store, is refused
// before anything walks it. Every recursive walk of an object (cloneJson, goJSON's key sorting,
// the patch diff, the podSpec merge, ajv) then works on at most MAX_JSON_DEPTH levels, far below
// what the stack holds (thousands); every object stays small enough that reading it costs what
// the same bytes cost in small objects; and no object costs more to judge than the largest one
// that can exist (docs/limits.md).

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

/**
 * Bytes of JSON one object or array at level 3 of the body may span: the review's `object` and
 * `oldObject` (and `userInfo`, `options`, …). The API server stores an object only when etcd
 * takes it, and its etcd client sends at most 2 MiB in one request (etcd's own default is
 * 1.5 MiB); the review carries the object in the same JSON, escapes and all, as it would be
 * stored. A larger object is one that no write can store: docs/limits.md says how this was
 * derived and measured.
 */
export const MAX_OBJECT_BYTES = 2 * 1024 * 1024;

/**
 * Values one object or array at level 3 of the body may hold, counted as the scan sees them:
 * each object and array in it (itself included), and each member or item after the first of
 * each (a comma). What a review costs is mostly what its values cost (each one parsed, walked,
 * copied, collected): 2 MiB of values of a few bytes each (`[[{"x":1}]]`, numbers, short strings)
 * is half a million of them, four times what the work budget holds. Real objects hold a few
 * thousand (a podSpec of a few containers with their env and volumes, the labels, annotations,
 * and managedFields of it all): docs/limits.md.
 */
export const MAX_OBJECT_VALUES = 50_000;

/**
 * Values a whole body may hold, counted the same way: an object and its old version at
 * MAX_OBJECT_VALUES each, and room for the rest of the review (the user's groups, the options).
 * Without it, many objects of the request, each under MAX_OBJECT_VALUES, could add up to millions.
 */
export const MAX_BODY_VALUES = 2 * MAX_OBJECT_VALUES + 10_000;

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
/** The level whose objects and arrays are sized: a member of the request (review → request → member). */
const SIZED_LEVEL = 3;
/** 1 for the bytes the scan acts on outside strings, 0 for every other. */
const STRUCTURAL = new Uint8Array(256);
for (const byte of [QUOTE, COMMA, COLON, OPEN_OBJECT, OPEN_ARRAY, CLOSE_OBJECT, CLOSE_ARRAY]) STRUCTURAL[byte] = 1;
/** Bytes of a string read one by one before the rest is found by indexOf (memchr): short strings are cheaper in the loop. */
const SHORT_STRING = 32;
/** A key longer than this (as written) is not decoded for a message: no name the API server writes is near it. */
const NAMED_KEY_BYTES = 128;

export interface ShapeLimits {
  /** Deepest level an object or array may be at: a bare scalar is level 0, `{}` and `[]` are level 1. */
  maxDepth: number;
  /** Most members of one object. */
  maxMembers: number;
  /** Most bytes an object or array at level 3 may span, brackets included (default: no limit). */
  maxMemberBytes?: number;
  /** Most values an object or array at level 3 may hold, counted as MAX_OBJECT_VALUES says (default: no limit). */
  maxMemberValues?: number;
  /** Most values the whole text may hold, counted alike (default: no limit). */
  maxValues?: number;
}

/**
 * What makes a JSON text too costly to read: nested too deep, an object too wide, or a member of
 * the request too large (its bytes) or holding too many values (more than `values`).
 */
export type JsonShapeProblem =
  | { kind: 'depth' }
  | { kind: 'members' }
  /** `member`: where the object or array is, as `request.object` (or `request[…]` in an array). */
  | { kind: 'size'; member: string; bytes: number }
  | { kind: 'values'; member: string; values: number }
  | { kind: 'body-values'; values: number };

/**
 * The first way `text` exceeds `limits`, or undefined when it does not. Brackets, commas and
 * colons inside strings do not count. Linear in the length, and stops at the first problem. Meant to run before JSON.parse: on text that is not JSON the answer means
 * nothing, and the parse that follows reports that.
 */
export function jsonShapeProblem(text: Buffer, limits: ShapeLimits): JsonShapeProblem | undefined {
  const { maxDepth, maxMembers } = limits;
  const maxMemberBytes = limits.maxMemberBytes ?? Number.POSITIVE_INFINITY;
  const maxMemberValues = limits.maxMemberValues ?? Number.POSITIVE_INFINITY;
  const maxValues = limits.maxValues ?? Number.POSITIVE_INFINITY;
  let values = 0;
  const length = text.length;
  // Per open level: -1 for an array, else the commas seen so far in that object (members - 1).
  const commas = new Int32Array(Math.min(maxDepth, length) + 2);
  let depth = 0;
  // The names of levels 1 and 2 (for a message): the span of the last key read in each, and
  // whether a string there would be a key (after `{` or `,` in an object) or a value.
  const keyStart = [0, 0, 0];
  const keyEnd = [0, 0, 0];
  let awaitingKey = false;
  let sizedStart = -1;
  let sizedValues = 0;
  for (let i = 0; i < length; i++) {
    const byte = text[i] as number;
    // Most bytes of a body are none of the six below: one lookup passes them.
    if (STRUCTURAL[byte] === 0) continue;
    if (byte === QUOTE) {
      const start = i;
      i = stringEnd(text, i);
      if (i < 0) return undefined; // unterminated: not JSON, which the parse reports
      if (awaitingKey && depth <= 2) {
        keyStart[depth] = start;
        keyEnd[depth] = i;
      }
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > maxDepth) return { kind: 'depth' };
      if (++values > maxValues) return { kind: 'body-values', values: maxValues };
      commas[depth] = byte === OPEN_OBJECT ? 0 : -1;
      awaitingKey = byte === OPEN_OBJECT;
      if (depth === SIZED_LEVEL) {
        sizedStart = i;
        sizedValues = 0;
      }
      if (depth >= SIZED_LEVEL && ++sizedValues > maxMemberValues) return tooMany(text, commas, keyStart, keyEnd, maxMemberValues);
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      if (depth === SIZED_LEVEL && i - sizedStart + 1 > maxMemberBytes) {
        return { kind: 'size', member: memberName(text, commas, keyStart, keyEnd), bytes: i - sizedStart + 1 };
      }
      if (depth > 0) depth--;
      awaitingKey = false;
    } else if (byte === COMMA) {
      const count = commas[depth] as number;
      awaitingKey = count >= 0 && depth > 0;
      if (awaitingKey && (commas[depth] = count + 1) >= maxMembers) return { kind: 'members' };
      if (depth > 0 && ++values > maxValues) return { kind: 'body-values', values: maxValues };
      if (depth >= SIZED_LEVEL && ++sizedValues > maxMemberValues) return tooMany(text, commas, keyStart, keyEnd, maxMemberValues);
    } else {
      awaitingKey = false;
    }
  }
  // An object left open at the end (not JSON, but its size is known already).
  if (depth >= SIZED_LEVEL && length - sizedStart > maxMemberBytes) {
    return { kind: 'size', member: memberName(text, commas, keyStart, keyEnd), bytes: length - sizedStart };
  }
  return undefined;
}

/**
 * The index of the quote that closes the string opened at `open`, or -1 when none does. A short
 * string is read byte by byte; the rest of a long one is found by indexOf (memchr, about thirty
 * times faster per byte), falling back to the bytes once an escaped quote shows up, so that a
 * string of `\"` costs what the loop costs and no more.
 */
function stringEnd(text: Buffer, open: number): number {
  const length = text.length;
  let i = open + 1;
  const shortEnd = Math.min(length, i + SHORT_STRING);
  for (; i < shortEnd; i++) {
    const byte = text[i];
    if (byte === BACKSLASH) i++;
    else if (byte === QUOTE) return i;
  }
  if (i >= length) return -1;
  // Every byte before `i` is read: `i` starts a character, never the byte an escape consumes.
  const quote = text.indexOf(QUOTE, i);
  if (quote < 0) return -1;
  if (text[quote - 1] !== BACKSLASH) return quote;
  for (; i < length; i++) {
    const byte = text[i];
    if (byte === BACKSLASH) i++;
    else if (byte === QUOTE) return i;
  }
  return -1;
}

function tooMany(text: Buffer, commas: Int32Array, keyStart: number[], keyEnd: number[], values: number): JsonShapeProblem {
  return { kind: 'values', member: memberName(text, commas, keyStart, keyEnd), values };
}

/** `request.object`: the keys of levels 1 and 2 that lead to the level-3 object or array just read. */
function memberName(text: Buffer, commas: Int32Array, keyStart: number[], keyEnd: number[]): string {
  const step = (level: number): string => {
    if ((commas[level] ?? -1) < 0) return '[…]';
    const start = keyStart[level] ?? 0;
    const end = keyEnd[level] ?? 0;
    if (end <= start || end - start + 1 > NAMED_KEY_BYTES) return '.…';
    try {
      return `.${String(JSON.parse(text.toString('utf8', start, end + 1)))}`;
    } catch {
      return '.…';
    }
  };
  return `${step(1)}${step(2)}`.replace(/^\./, '');
}

/** True when some object or array in `text` is nested more than `limit` levels deep (see jsonShapeProblem). */
export function nestsDeeperThan(text: Buffer, limit: number): boolean {
  return jsonShapeProblem(text, { maxDepth: limit, maxMembers: Number.POSITIVE_INFINITY })?.kind === 'depth';
}
