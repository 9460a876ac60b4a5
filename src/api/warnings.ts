// Admission warnings, bounded as the API server counts them. admission/v1 asks for at most 120
// characters; k8s.io/apiserver (pkg/endpoints/filters/warning.go) counts and truncates warnings in
// runes (code points), and net.NewWarningHeader drops a warning with any unicode.IsControl rune
// (tab included), since it travels as an HTTP Warning header.
import { goQuote } from './go-format.ts';
import { KINDS, type KaosKind } from './kinds.ts';

/** Code points (Go's runes) per warning. */
export const MAX_WARNING_LENGTH = 120;

// unicode.IsControl: C0, DEL and C1.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const ELLIPSIS = '...';

/**
 * A warning the API server passes on whole: well-formed, control characters as spaces, at most
 * MAX_WARNING_LENGTH code points (a surrogate pair is never split), ending in "..." when cut.
 */
export function clampWarning(warning: string): string {
  let text = warning;
  if (!text.isWellFormed()) text = text.toWellFormed();
  CONTROL.lastIndex = 0;
  if (CONTROL.test(text)) text = text.replace(CONTROL, ' ');
  // UTF-16 length bounds the code-point count from above: most warnings stop here.
  if (text.length <= MAX_WARNING_LENGTH) return text;
  const codePoints = [...text];
  if (codePoints.length <= MAX_WARNING_LENGTH) return text;
  return codePoints.slice(0, MAX_WARNING_LENGTH - ELLIPSIS.length).join('') + ELLIPSIS;
}

const codePointLength = (text: string): number => [...text].length;

/**
 * Deleting an object others still name: `ModelAPI "m" is still referenced by Agents: a1, a2`, and
 * a second warning `... by MemoryStores: s1` when stores name it too (namingWarnings).
 */
export function stillReferencedWarnings(kind: KaosKind, name: string, referrers: readonly NamedObject[]): string[] {
  return namingWarnings(referrers, (referrerKind) => `${kind} ${goQuote(name)} ${STILL_USED[kind]} ${plural(referrerKind)}: `);
}

/** How an object of each kind is used by the objects that name it. */
const STILL_USED: Readonly<Record<KaosKind, string>> = {
  Agent: 'is still listed as a peer by',
  ModelAPI: 'is still referenced by',
  MCPServer: 'is still referenced by',
  MemoryStore: 'is still bound by',
  AccessGrant: 'is still referenced by',
};

/** `Agents`, `MemoryStores`: every kind's plural is its name and an s. */
export const plural = (kind: KaosKind): string => `${kind}s`;

/** An object by kind and name, as a warning names it. */
export interface NamedObject {
  readonly kind: KaosKind;
  readonly name: string;
}

/**
 * One warning per kind of the objects named, in the order of KINDS: `head(kind)` and their
 * distinct names, sorted (namingWarning). None for no objects.
 */
export function namingWarnings(objects: readonly NamedObject[], head: (kind: KaosKind) => string): string[] {
  return KINDS.flatMap((kind) => {
    const names = [...new Set(objects.filter((o) => o.kind === kind).map((o) => o.name))].sort();
    return names.length === 0 ? [] : [namingWarning(head(kind), names, kind)];
  });
}

/**
 * `<head><a1>, <a2> and 12 more`: as many names of objects of `kind` as fit in one warning, the
 * rest counted; just the count (`<head>14 Agents`, `<head>1 Agent`) when not even one name fits.
 */
export function namingWarning(head: string, names: readonly string[], kind: KaosKind): string {
  // Each name shown costs at least one code point and a ", ": no more than this many can fit. Trying
  // every count down from all the names joined all of them each time: deleting a ModelAPI 10,000
  // Agents use held the event loop for 6.9 s (npm run bench:fan-in).
  const fitting = Math.max(0, Math.floor((MAX_WARNING_LENGTH - codePointLength(head) + 2) / 3));
  for (let shown = Math.min(names.length, fitting); shown > 0; shown--) {
    const rest = names.length - shown;
    const text = head + names.slice(0, shown).join(', ') + (rest > 0 ? ` and ${rest} more` : '');
    if (codePointLength(text) <= MAX_WARNING_LENGTH) return text;
  }
  return clampWarning(`${head}${names.length} ${names.length === 1 ? kind : plural(kind)}`);
}
