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
    mcpServers: names(getIn(spec, 'mcpServers'), max),
    agents: names(getIn(spec, 'agentNetwork', 'access'), max),
    memoryStores: one(getIn(spec, 'config', 'memory', 'memoryStore')),
  };
}

