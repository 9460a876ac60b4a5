// Builders for the unit tests of src/api and src/admission.
import { loadConfig, type Config } from '../../../src/config/config.ts';
import { referencedNames } from '../../../src/api/agent-references.ts';
import type { KaosKind } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import type { AgentReferences } from '../../../src/api/validation/validation-types.ts';

export const CONFIG: Config = loadConfig({});
export const NS = 'ns';

export function object(kind: KaosKind, name: string, spec: unknown, extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: 'kaos.tools/v1alpha1',
    kind,
    ...extra,
    metadata: { name, namespace: NS, ...extra.metadata },
    spec,
  };
}

export const agent = (name: string, spec: unknown, extra?: Partial<KubeObject>): KubeObject => object('Agent', name, spec, extra);
export const modelAPI = (name: string, spec: unknown, extra?: Partial<KubeObject>): KubeObject => object('ModelAPI', name, spec, extra);
export const mcpServer = (name: string, spec: unknown, extra?: Partial<KubeObject>): KubeObject => object('MCPServer', name, spec, extra);
export const memoryStore = (name: string, spec: unknown, extra?: Partial<KubeObject>): KubeObject => object('MemoryStore', name, spec, extra);

/** A local-mode MemoryStore's spec whose two models `chat` (a Proxy serving `openai/*`) serves. */
export const localStoreSpec = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  storage: { type: 'local' },
  models: { summarization: { modelAPI: 'chat', model: 'openai/gpt-4o-mini' }, embedding: { modelAPI: 'chat', model: 'openai/text-embedding-3-small' } },
  ...extra,
});
export const chatAPI = (ready = true): KubeObject =>
  modelAPI('chat', { mode: 'Proxy', proxyConfig: { models: ['openai/*'], apiBase: 'http://litellm.example:4000' } }, { status: { ready } });
export const store = (name: string, extra: Record<string, unknown> = {}, ready = true): KubeObject =>
  memoryStore(name, localStoreSpec(extra), { status: { ready } });

export const hosted = (name: string, model = 'llama3:8b', ready = true): KubeObject =>
  modelAPI(name, { mode: 'Hosted', hostedConfig: { model } }, { status: { ready } });
export const echoMCP = (name: string, ready = true): KubeObject =>
  mcpServer(name, { type: 'python-runtime', config: { tools: { fromPackage: 'test-mcp-echo-server' } } }, { status: { ready } });

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** An Agent spec's references resolved against a little world of existing objects, as the handler does. */
export function referencesIn(objects: readonly KubeObject[], spec: unknown): AgentReferences {
  const find = (kind: KaosKind, name: string) => objects.find((o) => o.kind === kind && o.metadata?.name === name);
  const names = referencedNames(spec);
  return {
    modelAPIs: new Map(names.modelAPIs.map((n) => [n, find('ModelAPI', n)])),
    mcpServers: new Map(names.mcpServers.map((n) => [n, find('MCPServer', n)])),
    agents: new Map(names.agents.map((n) => [n, find('Agent', n) !== undefined])),
    memoryStores: new Map(names.memoryStores.map((n) => [n, find('MemoryStore', n)])),
  };
}
