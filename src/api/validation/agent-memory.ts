// The rules of an Agent's memory block beyond its schema (docs/api.md, "Agent remote memory"):
// KAOS's earlier read-scope forms refused naming their successor, the binding rules in KAOS's
// words, the `user` scope refused without a user identity (KAOS's message), and — under the reference policy, like a
// missing ModelAPI — the MemoryStore's existence and its read-scope ceiling.
import { notListedIn } from '../agent-references.ts';
import { forbidden, invalidOmitValue, notFound, required } from '../field-error.ts';
import { goQuote } from '../go-format.ts';
import { asRecord, getIn, isSet, type JsonRecord } from '../json.ts';
import { ceilingExceeded, userScopeRefused } from '../memory-rules.ts';
import { validateDNS1123Subdomain } from '../name-validation.ts';
import { clampWarning } from '../warnings.ts';
import { judgeReference } from './reference-policy.ts';
import type { AgentValidationContext, ValidationResult } from './validation-types.ts';

const MEMORY = 'spec.config.memory';

/** KAOS's two earlier forms of the read scope: its CRD no longer has them either. */
export const EARLIER_READ_SCOPE_FIELDS = ['scope', 'defaultReadScope', 'readScopes'] as const;

export function validateAgentMemory(spec: JsonRecord, ctx: AgentValidationContext): ValidationResult {
  const result: ValidationResult = { errors: [], warnings: [] };
  const memory = asRecord(getIn(spec, 'config', 'memory'));
  if (memory === undefined) return result;
  const { errors } = result;

  for (const field of EARLIER_READ_SCOPE_FIELDS) {
    if (memory[field] !== undefined) errors.push(forbidden(`${MEMORY}.${field}`, `an earlier KAOS form of the read scope: use ${MEMORY}.maxReadScope`));
  }
  const bound = isSet(memory.memoryStore);
  if (memory.type === 'remote' && !bound) errors.push(required(`${MEMORY}.memoryStore`, "type 'remote' requires memoryStore to be set"));
  if (memory.type === 'local' && bound) errors.push(forbidden(`${MEMORY}.memoryStore`, "type 'local' must not set memoryStore"));
  if (isSet(memory.tools) && !bound) errors.push(required(`${MEMORY}.memoryStore`, 'tools requires memoryStore to be set'));
  const refused = userScopeRefused(memory.maxReadScope, ctx.posture ?? { userIdentity: false });
  if (refused !== undefined) errors.push(forbidden(`${MEMORY}.maxReadScope`, refused));
  if (typeof memory.memoryStore === 'string' && bound) memoryStoreReference(memory, memory.memoryStore, spec, ctx, result);
  return result;
}

/**
 * The MemoryStore the block names: a valid name; when the binding is new, a store that exists;
 * when the binding or the scope is new, a scope within the store's ceiling (the controller checks
 * it again whenever either changes).
 */
function memoryStoreReference(memory: JsonRecord, store: string, spec: JsonRecord, ctx: AgentValidationContext, result: ValidationResult): void {
  const field = `${MEMORY}.memoryStore`;
  const nameErrors = validateDNS1123Subdomain(field, store);
  result.errors.push(...nameErrors);
  const known = ctx.references?.memoryStores;
  if (nameErrors.length > 0 || known === undefined) return;
  const isNew = notListedIn(ctx.oldObject?.spec, 'memoryStores', [store]).has(store);
  if (!known.has(store)) {
    const why = ctx.references?.unchecked?.memoryStores?.get(store);
    if (why !== undefined && isNew) judgeReference(ctx.policy, notFound(field, store, why), result);
    return;
  }
  const target = known.get(store);
  if (target === undefined) {
    if (isNew) judgeReference(ctx.policy, notFound(field, store), result);
    return;
  }
  const scopeChanged = getIn(ctx.oldObject?.spec, 'config', 'memory', 'maxReadScope') !== memory.maxReadScope;
  // A refused `user` scope is one error already, not two.
  const refused = userScopeRefused(memory.maxReadScope, ctx.posture ?? { userIdentity: false }) !== undefined;
  const exceeded = refused ? undefined : ceilingExceeded(memory.maxReadScope, store, target.spec);
  if (exceeded !== undefined && (isNew || scopeChanged)) judgeReference(ctx.policy, invalidOmitValue(`${MEMORY}.maxReadScope`, exceeded), result);
  if (spec.waitForDependencies === false && getIn(target.status, 'ready') !== true) {
    result.warnings.push(clampWarning(`MemoryStore ${goQuote(store)} is not ready; the Agent starts with short-term memory only`));
  }
}
