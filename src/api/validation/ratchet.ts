// Ratcheting (docs/api.md, "How updates are judged"), as Kubernetes ratchets a CRD's schema: an
// UPDATE is not refused for what the stored object already was. An error survives unless both
//   - the value at its field is unchanged (deep-equal in the stored and the new object), and
//   - the stored object, judged now by the same rules, has the very same error (field, type,
//     value and detail).
// The second condition is what keeps cross-field rules honest without any rule declaring what it
// reads: `tools requires memoryStore to be set` is reported at an absent, so unchanged,
// memoryStore, but adding `tools` makes an error the stored object did not have, so it is judged.
// Rules that compare the two objects (a volume that shrinks) never fire on the stored object
// alone, so they are never ratcheted, like Kubernetes' transition rules. A field path this cannot
// read is treated as changed. Pure.
import type { FieldError } from '../field-error.ts';
import { jsonEqual } from '../json.ts';

/** The stored object's errors, computed only when some error sits at an unchanged field. */
export type StoredErrors = () => readonly FieldError[];

export function ratchet(errors: readonly FieldError[], object: unknown, oldObject: unknown, storedErrors: StoredErrors): FieldError[] {
  const unchanged = errors.filter((e) => fieldUnchanged(e.field, object, oldObject));
  if (unchanged.length === 0) return [...errors];
  const before = new Set(storedErrors().map(identity));
  const kept = new Set(unchanged.filter((e) => before.has(identity(e))));
  return errors.filter((e) => !kept.has(e));
}

/** Two errors are the same error when kubectl would print the same line. */
const identity = (e: FieldError): string => `${e.type}\u0000${e.errorString()}`;

/** Whether the value at `field` (a Kubernetes field path) is deep-equal in both objects. */
export function fieldUnchanged(field: string, object: unknown, oldObject: unknown): boolean {
  const steps = parseFieldPath(field);
  if (steps === undefined) return false;
  return jsonEqual(valueAt(object, steps), valueAt(oldObject, steps));
}

type Step = string | number;

/**
 * `spec.a[2].b` → ['spec', 'a', 2, 'b']; `metadata.annotations[kaos.tools/x]` → [..., 'kaos.tools/x']:
 * field.Path.String()'s form (api/field-error.ts child, index, key). Undefined when it is not one.
 */
export function parseFieldPath(field: string): Step[] | undefined {
  const steps: Step[] = [];
  let i = 0;
  while (i < field.length) {
    if (field[i] === '[') {
      const end = field.indexOf(']', i);
      if (end < 0) return undefined;
      const inner = field.slice(i + 1, end);
      steps.push(/^(0|[1-9]\d*)$/.test(inner) ? Number(inner) : inner);
      i = end + 1;
      if (field[i] === '.') i++;
      continue;
    }
    let end = i;
    while (end < field.length && field[end] !== '.' && field[end] !== '[') end++;
    if (end === i) return undefined;
    steps.push(field.slice(i, end));
    i = field[end] === '.' ? end + 1 : end;
  }
  return steps.length > 0 && !field.endsWith('.') ? steps : undefined;
}

/** The value at `steps`; a numeric step reads a list, and a key a map (an env list by name is neither). */
function valueAt(root: unknown, steps: readonly Step[]): unknown {
  let value = root;
  for (const step of steps) {
    if (typeof step === 'number') value = Array.isArray(value) ? value[step] : undefined;
    else value = value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, step) ? (value as Record<string, unknown>)[step] : undefined;
    if (value === undefined) return undefined;
  }
  return value;
}
