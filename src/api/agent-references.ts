// The names an Agent references (docs/api.md, "Agent"): its ModelAPI, its MCPServers and its peer Agents.
import { asArray, asString, getIn } from './json.ts';

export interface ReferencedNames {
  modelAPIs: string[];
  mcpServers: string[];
  agents: string[];
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
  const modelAPI = asString(getIn(spec, 'modelAPI'));
  return {
    modelAPIs: modelAPI !== undefined && modelAPI !== '' ? [modelAPI] : [],
    mcpServers: names(getIn(spec, 'mcpServers'), max),
    agents: names(getIn(spec, 'agentNetwork', 'access'), max),
  };
}

