// Admission warnings: kubectl prints each after "Warning: ", and the API server caps them, so each
// stays within 120 characters.
import { goQuote } from './go-format.ts';
import type { KaosKind } from './kinds.ts';

export const MAX_WARNING_LENGTH = 120;

export function truncateWarning(text: string): string {
  return text.length <= MAX_WARNING_LENGTH ? text : `${text.slice(0, MAX_WARNING_LENGTH - 3)}...`;
}

/**
 * `ModelAPI "m" is still referenced by Agents: a1, a2`, listing as many names as fit and counting
 * the rest (`..., a7 and 12 more`), so the warning never exceeds the limit.
 */
export function stillReferencedWarning(kind: KaosKind, name: string, agents: readonly string[]): string {
  const how = kind === 'Agent' ? 'is still listed as a peer by Agents' : 'is still referenced by Agents';
  const head = `${kind} ${goQuote(name)} ${how}: `;
  for (let shown = agents.length; shown > 0; shown--) {
    const rest = agents.length - shown;
    const text = head + agents.slice(0, shown).join(', ') + (rest > 0 ? ` and ${rest} more` : '');
    if (text.length <= MAX_WARNING_LENGTH) return text;
  }
  return truncateWarning(`${head}${agents.length} Agents`);
}
