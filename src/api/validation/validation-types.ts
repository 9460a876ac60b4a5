// Shapes shared by the per-kind validators.
import type { FieldError } from '../field-error.ts';
import type { KubeObject } from '../lookup.ts';

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
}

export interface ValidationResult {
  /** Every problem, in a stable order; any error denies the request. */
  errors: FieldError[];
  /** Each at most 120 characters. */
  warnings: string[];
}
