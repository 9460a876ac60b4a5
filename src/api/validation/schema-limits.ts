// The schema's size limits (maxItems, maxLength), checked before anything else looks at the data.
// ajv with allErrors walks every item of every list, so a 3 MiB list of wrong values costs it
// seconds and millions of errors; it cannot stop early. This pass reports the limits itself, as
// kube-apiserver does, and returns a clipped view of the data — lists cut to maxItems, strings to
// maxLength — that ajv and the kind's own rules then read, so their work is bounded by the schema.
//
// It follows the schema, not the data: only `properties` and `items` are entered, so the depth of
// the walk is the schema's (a handful of levels), whatever the data holds.
import { tooLong, tooMany, child, index, type FieldError } from '../field-error.ts';
import { isRecord } from '../json.ts';
import { codePointPrefix } from '../bounded-text.ts';

/** The schema keywords this pass reads; a TypeBox schema is a plain JSON Schema object. */
interface LimitedSchema {
  type?: unknown;
  properties?: Record<string, LimitedSchema>;
  items?: LimitedSchema;
  maxItems?: number;
  maxLength?: number;
}

export interface ClippedData {
  /** One TooMany or TooLong error per list or string over its limit. */
  errors: FieldError[];
  /** The data with those lists and strings cut to their limits; the input itself where nothing was cut. */
  clipped: unknown;
  /** Field paths of the strings that were cut: other errors about them judge the cut value, not the real one. */
  cutStrings: ReadonlySet<string>;
}

export function clipToSchemaLimits(schema: unknown, data: unknown, root: string): ClippedData {
  const errors: FieldError[] = [];
  const cutStrings = new Set<string>();
  // The path below `root`, as a stack of names and indexes: the field path string is built only
  // for an error, not for every node visited (most requests have none).
  const segments: (string | number)[] = [];
  const here = (): string => {
    let path = root;
    for (const segment of segments) path = typeof segment === 'number' ? index(path, segment) : child(path, segment);
    return path;
  };
  const clip = (s: LimitedSchema, value: unknown): unknown => {
    if (typeof value === 'string') {
      if (s.maxLength === undefined || value.length <= s.maxLength) return value;
      // maxLength counts code points (as kube-openapi counts runes); stop counting at the limit.
      const prefix = codePointPrefix(value, s.maxLength);
      if (prefix.length === value.length) return value;
      const path = here();
      errors.push(tooLong(path, s.maxLength));
      cutStrings.add(path);
      return prefix;
    }
    if (Array.isArray(value)) {
      let list: unknown[] = value;
      if (s.maxItems !== undefined && list.length > s.maxItems) {
        errors.push(tooMany(here(), list.length, s.maxItems));
        list = list.slice(0, s.maxItems);
      }
      const items = s.items;
      if (items === undefined) return list;
      let changed = list !== value;
      const out = list.map((item, i) => {
        segments.push(i);
        const c = clip(items, item);
        segments.pop();
        if (c !== item) changed = true;
        return c;
      });
      return changed ? out : value;
    }
    if (isRecord(value) && s.properties !== undefined) {
      let out: Record<string, unknown> | undefined;
      for (const [name, sub] of propertiesOf(s)) {
        if (!Object.hasOwn(value, name)) continue;
        segments.push(name);
        const c = clip(sub, value[name]);
        segments.pop();
        if (c !== value[name]) (out ??= { ...value })[name] = c;
      }
      return out ?? value;
    }
    return value;
  };
  const clipped = isRecord(schema) ? clip(schema as LimitedSchema, data) : data;
  return { errors, clipped, cutStrings };
}

/** A schema's properties as entries, made once per schema node (the schemas are module constants). */
const propertyEntries = new WeakMap<LimitedSchema, readonly (readonly [string, LimitedSchema])[]>();
function propertiesOf(s: LimitedSchema): readonly (readonly [string, LimitedSchema])[] {
  let entries = propertyEntries.get(s);
  if (entries === undefined) {
    entries = Object.entries(s.properties ?? {});
    propertyEntries.set(s, entries);
  }
  return entries;
}

/** Whether an error's field is a cut string or lies beneath one. */
export function isAboutCutString(field: string, cutStrings: ReadonlySet<string>): boolean {
  if (cutStrings.size === 0) return false;
  for (const path of cutStrings) {
    if (field === path || field.startsWith(`${path}.`) || field.startsWith(`${path}[`)) return true;
  }
  return false;
}
