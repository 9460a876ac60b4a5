import type { KaosKind } from './kinds.ts';
import type { KubeObject } from './meta.ts';
import type { LookupBudget } from './lookup-budget.ts';
import type { HarnessRegistryState } from './harness-runtimes.ts';
import type { RegistryState } from './mcp-runtimes.ts';

export type { KubeObject };

/**
 * The kinds admission reads whole (`get`): the dependencies it checks. Of an Agent it only ever
 * asks whether it exists (a peer in `agentNetwork.access`) and who names it (`referencedBy`), so
 * the admission thread's view of the cache keeps no Agent but its name (cluster/cache-view.ts).
 */
export const READ_KINDS = ['ModelAPI', 'MCPServer', 'MemoryStore'] as const satisfies readonly KaosKind[];
export type ReadKind = (typeof READ_KINDS)[number];

export function isReadKind(kind: KaosKind): kind is ReadKind {
  return (READ_KINDS as readonly KaosKind[]).includes(kind);
}

/** An object that names another in one of its roles (a kind table dependency), with what it asks of it there. */
export interface Referrer {
  readonly kind: KaosKind;
  readonly name: string;
  /** The role, as the kind table names it: `modelAPI`, `peers`, `summarizationModelAPI`, … */
  readonly role: string;
  /** What it asks of the object in that role (the model it asks a ModelAPI for, its read scope of a MemoryStore); absent: nothing. */
  readonly asks?: string;
}

/**
 * How admission (and later the controller) sees existing objects. Implementations answer from
 * an in-memory cache; a cache miss may fall back to one live read before reporting "absent",
 * so the methods that can miss are async. Returned objects are shared: never mutate them.
 */
export interface ObjectLookup {
  /**
   * The object, or undefined when it does not exist. With a `budget` (one per admission request),
   * a cache miss reads live only if the budget allows, and rejects with LookupNotMade otherwise.
   */
  get(kind: ReadKind, namespace: string, name: string, budget?: LookupBudget): Promise<KubeObject | undefined>;
  /**
   * The object as the API server holds it now: one live read (within `budget`), never the cache.
   * For a request through a subresource, which carries none of the object (an Agent's `/scale`
   * carries only the replicas), so that what is judged is the object that request changes.
   * Absent: such a request is not judged.
   */
  current?(kind: KaosKind, namespace: string, name: string, budget?: LookupBudget): Promise<KubeObject | undefined>;
  /** Whether the object exists: answered like `get`, for every kind. */
  exists(kind: KaosKind, namespace: string, name: string, budget?: LookupBudget): Promise<boolean>;
  /**
   * The objects in `namespace` that name the given object, as the kind table's dependencies state
   * it (cluster/kind-table.ts): Agents through `spec.modelAPI`, `spec.mcpServers`,
   * `spec.agentNetwork.access` or `spec.config.memory.memoryStore`, MemoryStores through
   * `spec.models.*.modelAPI`. One entry per role, sorted by kind, then name, then role in table
   * order. Answered from the cache only (used for warnings, never for denials).
   */
  referencedBy(kind: KaosKind, namespace: string, name: string): Referrer[];
  /** The namespace's labels, or undefined when the namespace is unknown. */
  /** Its live read on a miss is not counted against `budget` (one per request) but keeps to its deadline. */
  namespaceLabels(namespace: string, budget?: LookupBudget): Promise<Record<string, string> | undefined>;
  /**
   * The MCP runtime registry (docs/api.md, "MCPServer runtimes"), from the cache only: never a live read, and a
   * registry that cannot be read only ever warns. Absent: not known (runtimes are not checked).
   */
  mcpRuntimes?(): RegistryState;
  /**
   * The harness runtime registry (docs/api.md, "Agent harness"), likewise from the cache only; absent:
   * not known (a harness runtime is not checked, with a warning).
   */
  harnessRuntimes?(): HarnessRegistryState;
}
