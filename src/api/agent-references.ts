// The names an Agent references (docs/api.md, "Agent"): its ModelAPI, its MCPServers, its peer Agents
// and the MemoryStore its memory binds to (docs/api.md, "Agent remote memory"); and the name of its
// own ServiceAccount under agent identity.
import { asArray, getIn } from './json.ts';

/** The ServiceAccount an Agent runs under with ServiceAccount identity: `kaos-agent-<name>`. */
export function agentServiceAccountName(agentName: string): string {
  return `kaos-agent-${agentName}`;
}

export interface ReferencedNames {
  modelAPIs: string[];
  mcpServers: string[];
  agents: string[];
  memoryStores: string[];
}

/** Where a spec lists the names of each list of ReferencedNames. */
const NAME_LISTS = { mcpServers: ['mcpServers'], agents: ['agentNetwork', 'access'] } as const;

const names = (value: unknown, max: number): string[] => [
  ...new Set((asArray(value) ?? []).slice(0, max).filter((v): v is string => typeof v === 'string' && v !== '')),
];

/**
 * Every distinct, non-empty name the spec references: what a handler must look up. `max` reads
 * only the first entries of each list (admission passes the schema's maxItems: the rest of an
 * over-long list is refused as "Too many", and deduplicating 242,000 names costs 250 ms).
 */
export function referencedNames(spec: unknown, max = Infinity): ReferencedNames {
  const one = (value: unknown): string[] => (typeof value === 'string' && value !== '' ? [value] : []);
  return {
    modelAPIs: one(getIn(spec, 'modelAPI')),
    mcpServers: names(getIn(spec, ...NAME_LISTS.mcpServers), max),
    agents: names(getIn(spec, ...NAME_LISTS.agents), max),
    memoryStores: one(getIn(spec, 'config', 'memory', 'memoryStore')),
  };
}

/**
 * The strings of `candidates` that `oldSpec`'s list does not hold (all of them when it has none): one
 * pass over the old list, however long, that copies nothing. An old object is whatever the review
 * carries, past the schema's maxItems too: each name looked for in a list of 49,000 (and the list
 * deduplicated first) cost an UPDATE 100 ms.
 */
export function notListedIn(oldSpec: unknown, list: keyof typeof NAME_LISTS, candidates: Iterable<unknown>): Set<string> {
  const absent = new Set<string>();
  for (const name of candidates) if (typeof name === 'string') absent.add(name);
  const previous = asArray(getIn(oldSpec, ...NAME_LISTS[list]));
  for (let i = 0; previous !== undefined && i < previous.length && absent.size > 0; i++) {
    const name = previous[i];
    if (typeof name === 'string') absent.delete(name);
  }
  return absent;
}

