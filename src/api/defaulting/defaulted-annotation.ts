// The `kaos.tools/defaulted` annotation: which spec fields hold a value the mutating webhook chose
// (and will re-derive when its source changes), as opposed to a value the user wrote.
//
// Format: the field paths, sorted, joined by "," without spaces, e.g.
//   kaos.tools/defaulted: spec.config.env[MODEL_NAME],spec.container.image
// Only derived values are listed (images, MODEL_NAME, a memory block's type and the original
// shape's memory defaults, which depend on the block's shape, a MemoryStore's replicas). Constant
// defaults (waitForDependencies, reasoningLoopMaxSteps, ...) are not: they live in the CRD schema,
// kube-apiserver applies them too, and nothing ever needs re-deriving them.
import { DEFAULTED_ANNOTATION } from '../kinds.ts';
import type { KubeObject } from '../lookup.ts';

/** The fields an annotation lists, asked one at a time. */
export interface DefaultedFields {
  has(path: string): boolean;
}

const NONE: DefaultedFields = { has: () => false };

/**
 * The annotation's list, read only for the paths defaulting asks about (a handful), never split:
 * it is whatever the review carries, and the mutating webhook sees a value the API server refuses
 * afterwards (annotations over 256 KiB): splitting 1 MiB of `1,1,1,…` cost 100 ms. A path is
 * listed when an entry, trimmed, is exactly it.
 */
export function readDefaulted(object: KubeObject | undefined): DefaultedFields {
  const raw = object?.metadata?.annotations?.[DEFAULTED_ANNOTATION];
  if (typeof raw !== 'string') return NONE;
  return { has: (path) => listed(raw, path) };
}

/**
 * Whether some occurrence of `path` in `raw` is a whole entry: only whitespace between it and the
 * commas (or ends) around it. Linear: the whitespace each check walks over ends at a character
 * of the next occurrence, so no two checks walk the same stretch.
 */
function listed(raw: string, path: string): boolean {
  if (path === '') return false;
  for (let at = raw.indexOf(path); at !== -1; at = raw.indexOf(path, at + 1)) {
    if (entryEdge(raw, at - 1, -1) && entryEdge(raw, at + path.length, 1)) return true;
  }
  return false;
}

/** From `i`, stepping by `step`: whitespace only until a comma or an end of the text. */
function entryEdge(raw: string, i: number, step: 1 | -1): boolean {
  for (; i >= 0 && i < raw.length; i += step) {
    const c = raw[i] as string;
    if (c === ',') return true;
    if (c.trim() !== '') return false;
  }
  return true;
}

export function formatDefaulted(fields: Iterable<string>): string {
  return [...new Set(fields)].sort().join(',');
}

/** Sets the annotation to `fields`, or removes it when there are none (in place, on a copy). */
export function writeDefaulted(object: KubeObject, fields: ReadonlySet<string>): void {
  if (fields.size === 0) {
    if (object.metadata?.annotations !== undefined) delete object.metadata.annotations[DEFAULTED_ANNOTATION];
    return;
  }
  object.metadata ??= {};
  object.metadata.annotations = { ...object.metadata.annotations, [DEFAULTED_ANNOTATION]: formatDefaulted(fields) };
}
