// "Who references X": which Agents name a given ModelAPI, MCPServer or peer Agent. Maintained
// incrementally from cache events (upsert/remove per Agent), so a query never scans.
import type { KaosKind } from '../api/kinds.ts';
import type { KubeObject } from '../api/lookup.ts';
import { referencedNames } from '../api/agent-references.ts';
import { refKey } from '../cluster/object-ref.ts';

/** An object an Agent refers to: always in the Agent's own namespace (api.md). */
export interface Reference {
  kind: KaosKind;
  name: string;
}

/**
 * The references in an Agent's spec: `spec.modelAPI` (ModelAPI), `spec.mcpServers[]`
 * (MCPServer), `spec.agentNetwork.access[]` (Agent), read by api/'s `referencedNames` (tolerant of
 * malformed specs: anything that is not a non-empty string is ignored; deduplicated).
 */
export function agentReferences(agent: KubeObject): Reference[] {
  const names = referencedNames(agent.spec);
  return [
    ...names.modelAPIs.map((name): Reference => ({ kind: 'ModelAPI', name })),
    ...names.mcpServers.map((name): Reference => ({ kind: 'MCPServer', name })),
    ...names.agents.map((name): Reference => ({ kind: 'Agent', name })),
  ];
}

export class ReferenceIndex {
  /** target (its refKey, `Kind/namespace/name`) → names of the Agents (same namespace) that reference it. */
  readonly #byTarget = new Map<string, Set<string>>();
  /** Agent `namespace/name` → the target ids it currently contributes, to undo them on change. */
  readonly #byAgent = new Map<string, string[]>();

  /** Records (or re-records, after a change) an Agent's references. */
  upsert(agent: KubeObject): void {
    const namespace = agent.metadata?.namespace ?? '';
    const name = agent.metadata?.name;
    if (name === undefined || name === '') return;
    const targets = agentReferences(agent).map((ref) => refKey(ref.kind, namespace, ref.name));
    this.#forget(namespace, name);
    if (targets.length === 0) return;
    this.#byAgent.set(`${namespace}/${name}`, targets);
    for (const target of targets) {
      let agents = this.#byTarget.get(target);
      if (agents === undefined) {
        agents = new Set();
        this.#byTarget.set(target, agents);
      }
      agents.add(name);
    }
  }

  remove(agent: KubeObject): void {
    const name = agent.metadata?.name;
    if (name === undefined || name === '') return;
    this.#forget(agent.metadata?.namespace ?? '', name);
  }

  /** Sorted names of the Agents in `namespace` that reference the named object. */
  referencedBy(kind: KaosKind, namespace: string, name: string): string[] {
    const agents = this.#byTarget.get(refKey(kind, namespace, name));
    return agents === undefined ? [] : [...agents].sort();
  }

  /** Number of distinct referenced objects (for tests and metrics). */
  get size(): number {
    return this.#byTarget.size;
  }

  clear(): void {
    this.#byTarget.clear();
    this.#byAgent.clear();
  }

  #forget(namespace: string, name: string): void {
    const agentKey = `${namespace}/${name}`;
    const previous = this.#byAgent.get(agentKey);
    if (previous === undefined) return;
    this.#byAgent.delete(agentKey);
    for (const target of previous) {
      const agents = this.#byTarget.get(target);
      if (agents === undefined) continue;
      agents.delete(name);
      if (agents.size === 0) this.#byTarget.delete(target);
    }
  }
}
