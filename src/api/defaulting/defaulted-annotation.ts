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

export function readDefaulted(object: KubeObject): Set<string> {
  const raw = object.metadata?.annotations?.[DEFAULTED_ANNOTATION];
  if (typeof raw !== 'string') return new Set();
  return new Set(raw.split(',').map((s) => s.trim()).filter((s) => s !== ''));
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
