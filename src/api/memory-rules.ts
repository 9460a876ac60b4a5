// The rules of remote memory that more than one layer reads (docs/api.md, "MemoryStore" and
// "Agent remote memory"): the read-scope ceiling an Agent is held to (the validating webhook at
// apply time, the controller while it runs, render for MEMORY_MAX_READ_SCOPE), when the `user`
// scope is refused (without a user identity), and the compaction marks of a MemoryStore's
// short-term window. Pure.
import { AGENT_DEFAULTS, MEMORY_STORE_DEFAULTS } from './defaults.ts';
import { MEMORY_READ_SCOPES, type MemoryReadScope } from './enums.ts';
import { goQuote } from './go-format.ts';
import { asRecord, asString, getIn } from './json.ts';

/**
 * KAOS's message for an Agent's own `maxReadScope: user` while the cluster enforces no user
 * identity (security enabled with the user plane): the admission error and the Failed status.
 */
export const USER_SCOPE_WITHOUT_IDENTITY = 'config.memory.maxReadScope references user scope, but cluster security posture has no user identity';

/** The warning for a MemoryStore whose ceiling is `user` while no user identity is enforced. */
export const STORE_USER_CEILING_WARNING = 'spec.maxReadScope: no Agent reads at "user" scope without a user identity (security and the user plane on)';

/**
 * The security posture the read-scope rules need, from the operator's settings (the caller
 * derives it: config/security.ts's userIdentityEnforced).
 */
export interface ReadScopePosture {
  /** Security enabled with the user plane: an Agent may read at `user` scope. */
  readonly userIdentity: boolean;
}

/** KAOS's message when an Agent's own read scope is `user` and `posture` has no user identity; else undefined. */
export function userScopeRefused(agentScope: unknown, posture: ReadScopePosture): string | undefined {
  return agentScope === 'user' && !posture.userIdentity ? USER_SCOPE_WITHOUT_IDENTITY : undefined;
}

const isScope = (value: unknown): value is MemoryReadScope => (MEMORY_READ_SCOPES as readonly unknown[]).includes(value);

/** A MemoryStore's ceiling: its `maxReadScope`, `agent` when unset. */
export function storeCeiling(storeSpec: unknown): MemoryReadScope {
  const scope = getIn(storeSpec, 'maxReadScope');
  return isScope(scope) ? scope : AGENT_DEFAULTS.memory.storeReadScope;
}

/**
 * KAOS's message when an Agent's `maxReadScope` reaches further than its MemoryStore allows;
 * undefined when it does not, or when the Agent names no scope (it then reads at the store's).
 */
export function ceilingExceeded(agentScope: unknown, store: string, storeSpec: unknown): string | undefined {
  if (!isScope(agentScope)) return undefined;
  const ceiling = storeCeiling(storeSpec);
  if (MEMORY_READ_SCOPES.indexOf(agentScope) <= MEMORY_READ_SCOPES.indexOf(ceiling)) return undefined;
  return `config.memory.maxReadScope ${goQuote(agentScope)} exceeds MemoryStore ${goQuote(store)} maxReadScope ${goQuote(ceiling)}`;
}

/**
 * MEMORY_MAX_READ_SCOPE: the Agent's own, else its MemoryStore's ceiling (`ceiling`, when the store
 * is known), else `agent` when it is bound to a store, else `session`.
 */
export function effectiveReadScope(memory: unknown, ceiling: string | undefined): string {
  const own = asString(getIn(memory, 'maxReadScope'));
  if (own !== undefined && own !== '') return own;
  if (ceiling !== undefined) return ceiling;
  const bound = asString(getIn(memory, 'memoryStore'));
  return bound !== undefined && bound !== '' ? AGENT_DEFAULTS.memory.storeReadScope : AGENT_DEFAULTS.memory.unboundReadScope;
}

/** A MemoryStore's volume size as applied: `storage.local.persistentVolume.size`, else the default. */
export function persistentVolumeSize(storeSpec: unknown): string {
  const size = getIn(storeSpec, 'storage', 'local', 'persistentVolume', 'size');
  return typeof size === 'string' && size !== '' ? size : MEMORY_STORE_DEFAULTS.persistentVolumeSize;
}

/** KAOS's message for short-term compaction marks that cannot work. */
export const COMPACTION_MARKS_MESSAGE =
  'short-term compaction marks must satisfy 0 < compactionTarget < compactionTrigger <= tokenBudget (0 or absent marks derive from the token budget)';

/**
 * Whether a MemoryStore's compaction marks work: with B the token budget (the service's when
 * unset), T the trigger (B when 0 or unset) and G the target (max(1, ⌊B/2⌋) when 0 or unset),
 * 0 < G < T ≤ B.
 */
export function compactionMarksValid(storeSpec: unknown): boolean {
  const positive = (value: unknown): number | undefined => (typeof value === 'number' && value > 0 ? value : undefined);
  const budget = positive(getIn(storeSpec, 'shortTerm', 'tokenBudget')) ?? MEMORY_STORE_DEFAULTS.service.tokenBudget;
  const medium = asRecord(getIn(storeSpec, 'mediumTerm')) ?? {};
  const trigger = positive(medium.compactionTrigger) ?? budget;
  const target = positive(medium.compactionTarget) ?? Math.max(1, Math.floor(budget / 2));
  return target > 0 && target < trigger && trigger <= budget;
}

/**
 * The Agents (name and own `maxReadScope`) a change of a MemoryStore's ceiling strands: within the
 * old ceiling, above the new one. Sorted by name; nothing when the ceiling did not come down.
 */
export function strandedByCeiling(oldStoreSpec: unknown, storeSpec: unknown, agents: readonly { name: string; maxReadScope: string }[]): string[] {
  const rank = (scope: string): number => MEMORY_READ_SCOPES.indexOf(scope as MemoryReadScope);
  const before = rank(storeCeiling(oldStoreSpec));
  const after = rank(storeCeiling(storeSpec));
  if (after >= before) return [];
  return agents
    .filter((a) => rank(a.maxReadScope) > after && rank(a.maxReadScope) <= before)
    .map((a) => a.name)
    .sort();
}
