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

/** Where a spec names what each list of ReferencedNames holds: one name, or a list of names. */
const NAME_PATHS = {
  modelAPIs: { path: ['modelAPI'], list: false },
  mcpServers: { path: ['mcpServers'], list: true },
  agents: { path: ['agentNetwork', 'access'], list: true },
  memoryStores: { path: ['config', 'memory', 'memoryStore'], list: false },
} as const;

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
    modelAPIs: one(getIn(spec, ...NAME_PATHS.modelAPIs.path)),
    mcpServers: names(getIn(spec, ...NAME_PATHS.mcpServers.path), max),
    agents: names(getIn(spec, ...NAME_PATHS.agents.path), max),
    memoryStores: one(getIn(spec, ...NAME_PATHS.memoryStores.path)),
  };
}

/**
 * The strings of `candidates` that `oldSpec` does not name there (all of them when it names none):
 * one pass over an old list, however long, that copies nothing. An old object is whatever the review
 * carries, past the schema's maxItems too: each name looked for in a list of 49,000 (and the list
 * deduplicated first) cost an UPDATE 100 ms.
 */
export function notListedIn(oldSpec: unknown, names: keyof ReferencedNames, candidates: Iterable<unknown>): Set<string> {
  const absent = new Set<string>();
  for (const name of candidates) if (typeof name === 'string') absent.add(name);
  const { path, list } = NAME_PATHS[names];
  const old = getIn(oldSpec, ...path);
  const previous = list ? asArray(old) : [old];
  for (let i = 0; previous !== undefined && i < previous.length && absent.size > 0; i++) {
    const name = previous[i];
    if (typeof name === 'string') absent.delete(name);
  }
  return absent;
}

