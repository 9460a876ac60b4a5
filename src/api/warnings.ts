// Admission warnings, bounded as the API server counts them. admission/v1 asks for at most 120
// characters; k8s.io/apiserver (pkg/endpoints/filters/warning.go) counts and truncates warnings in
// runes (code points), and net.NewWarningHeader drops a warning with any unicode.IsControl rune
// (tab included), since it travels as an HTTP Warning header.
import { goQuote } from './go-format.ts';
import type { KaosKind } from './kinds.ts';

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
 * `ModelAPI "m" is still referenced by Agents: a1, a2`, listing as many names as fit and counting
 * the rest (`..., a7 and 12 more`), so the warning never exceeds the limit.
 */
export function stillReferencedWarning(kind: KaosKind, name: string, agents: readonly string[]): string {
  return namingWarning(`${kind} ${goQuote(name)} ${STILL_USED[kind]}: `, agents);
}

const STILL_USED: Readonly<Record<KaosKind, string>> = {
  Agent: 'is still listed as a peer by Agents',
  ModelAPI: 'is still referenced by Agents',
  MCPServer: 'is still referenced by Agents',
  MemoryStore: 'is still bound by Agents',
};

/**
 * `<head><a1>, <a2> and 12 more`: as many names as fit in one warning, the rest counted; just the
 * count (`<head>14 Agents`) when not even one name fits.
 */
export function namingWarning(head: string, agents: readonly string[]): string {
  for (let shown = agents.length; shown > 0; shown--) {
    const rest = agents.length - shown;
    const text = head + agents.slice(0, shown).join(', ') + (rest > 0 ? ` and ${rest} more` : '');
    if (codePointLength(text) <= MAX_WARNING_LENGTH) return text;
  }
  return clampWarning(`${head}${agents.length} Agents`);
}
