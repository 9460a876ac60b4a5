// Shapes shared by the per-kind validators.
import type { FieldError } from '../field-error.ts';
import type { HarnessRegistryState } from '../harness-runtimes.ts';
import type { ReferencePolicy } from '../kinds.ts';
import type { KubeObject } from '../lookup.ts';
import type { ReadScopePosture } from '../memory-rules.ts';

/**
 * The objects an Agent references, resolved by the caller (the handler reads its cache). Every
 * name from referencedNames() is a key; the value is the object, or undefined when it does not
 * exist. A name missing from a map was not looked up and is not judged.
 */
export interface AgentReferences {
  modelAPIs: ReadonlyMap<string, KubeObject | undefined>;
  mcpServers: ReadonlyMap<string, KubeObject | undefined>;
  /** Peer Agents: whether each exists. */
  agents: ReadonlyMap<string, boolean>;
  /** The MemoryStore `config.memory.memoryStore` names (absent: not looked up). */
  memoryStores?: ReadonlyMap<string, KubeObject | undefined>;
  /**
   * Dependencies that were not looked up because the request's lookup budget ran out
   * (lookup-budget.ts), each with the reason as a field-error detail. Unknown is not known to
   * exist: judged like a missing one (denied under Enforce, warned under Warn), with that reason.
   */
  unchecked?: {
    modelAPIs: ReadonlyMap<string, string>;
    mcpServers: ReadonlyMap<string, string>;
    memoryStores?: ReadonlyMap<string, string>;
  };
}

export interface AgentValidationContext {
  /** The stored object on UPDATE: only references it did not already hold are checked. */
  oldObject?: KubeObject;
  references?: AgentReferences;
  policy: ReferencePolicy;
  /** The operator's security posture; absent: no user identity, no ServiceAccount identity. */
  posture?: ValidationPosture;
  /** The harness runtime registry as the cache holds it (docs/api.md, "Agent harness"); absent: not known here. */
  harnessRuntimes?: HarnessRegistryState;
  /** The resources the operator's defaults request for the agent container (DEFAULT_AGENT_RESOURCES); absent: none. */
  agentDefaultRequests?: readonly string[];
}

/** What the validating rules read of the operator's security settings (the caller derives it). */
export interface ValidationPosture extends ReadScopePosture {
  /** ServiceAccount identity: the policy data maps only an Agent's own ServiceAccount. */
  readonly serviceAccountIdentity: boolean;
}

export interface ValidationResult {
  /** Every problem, in a stable order; any error denies the request. */
  errors: FieldError[];
  /** Each at most 120 characters. */
  warnings: string[];
}
