// The names an Agent references (api.md §2): its ModelAPI, its MCPServers and its peer Agents.
import { asArray, asString, getIn } from './json.ts';

export interface ReferencedNames {
  modelAPIs: string[];
  mcpServers: string[];
  agents: string[];
}

const names = (value: unknown): string[] => [
  ...new Set((asArray(value) ?? []).filter((v): v is string => typeof v === 'string' && v !== '')),
];

/** Every distinct, non-empty name the spec references: what a handler must look up. */
export function referencedNames(spec: unknown): ReferencedNames {
  const modelAPI = asString(getIn(spec, 'modelAPI'));
  return {
    modelAPIs: modelAPI !== undefined && modelAPI !== '' ? [modelAPI] : [],
    mcpServers: names(getIn(spec, 'mcpServers')),
    agents: names(getIn(spec, 'agentNetwork', 'access')),
  };
}

