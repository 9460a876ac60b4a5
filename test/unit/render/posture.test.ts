// The posture env (docs/api.md, "Posture env and `maxReadScope: user`"): with security enabled
// memory requires an agent identity, with the user plane too a principal — first in an Agent's
// newest memory block, right after a MemoryStore's KAOS_MEMORY_EMBEDDING_MODEL — and nothing of it
// without security.
import t from 'tap';
import { loadConfig } from '../../../src/config/config.ts';
import { agentEnv } from '../../../src/render/agent.ts';
import { renderMemoryStore } from '../../../src/render/memorystore.ts';
import type { AgentDeps, AgentInput, MemoryStoreInput, RenderConfig } from '../../../src/render/inputs.ts';
import { mainContainer } from './helpers.ts';

const off = loadConfig({});
const userPlaneOnly = loadConfig({ SECURITY_USER_AUTH_ISSUER: 'https://idp.example/realms/kaos' });
const secured = loadConfig({ SECURITY_PDP_ENABLED: 'true' });
const withUsers = loadConfig({ SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: 'authz:9000', SECURITY_USER_AUTH_ISSUER: 'https://idp.example/realms/kaos' });

const deps: AgentDeps = { modelAPI: { endpoint: 'http://m:8000' }, mcpServers: [], peers: [], memoryStore: { endpoint: 'http://memorystore-s.team.svc.cluster.local:8080', maxReadScope: 'agent' } };
const agent = (memory: Record<string, unknown>): AgentInput => ({ metadata: { name: 'a', namespace: 'team', uid: 'u' }, spec: { modelAPI: 'm', model: 'x', config: { memory } } });
const memoryBlock = (config: RenderConfig, memory: Record<string, unknown>) => {
  const names = agentEnv(agent(memory), deps, config).map((e) => `${e.name}=${e.value ?? ''}`);
  return names.slice(names.findIndex((n) => n.startsWith('MEMORY_')), names.findIndex((n) => n.startsWith('AGENT_IDENTITY=')) + 1);
};

t.test('an Agent\'s newest memory block: the posture first', async (t) => {
  const bound = { memoryStore: 's' };
  const rest = ['MEMORY_ENABLED=true', 'MEMORY_TYPE=remote', 'MEMORY_STORE_ENDPOINT=http://memorystore-s.team.svc.cluster.local:8080', 'MEMORY_MAX_READ_SCOPE=agent', 'AGENT_IDENTITY=kaos://agent/team/a'];
  t.same(memoryBlock(off, bound), rest, 'security off: nothing');
  t.same(memoryBlock(userPlaneOnly, bound), rest, 'the user plane without security: nothing');
  t.same(memoryBlock(secured, bound), ['MEMORY_REQUIRE_AGENT_IDENTITY=true', ...rest], 'security: an agent identity');
  t.same(memoryBlock(withUsers, bound), ['MEMORY_REQUIRE_PRINCIPAL=true', 'MEMORY_REQUIRE_AGENT_IDENTITY=true', ...rest], 'and the user plane: a principal too');
  const local = agentEnv(agent({ type: 'local', failureMode: 'soft' }), deps, withUsers).map((e) => e.name);
  t.same(local.slice(local.indexOf('MEMORY_REQUIRE_PRINCIPAL'), local.indexOf('MEMORY_ENABLED') + 1), ['MEMORY_REQUIRE_PRINCIPAL', 'MEMORY_REQUIRE_AGENT_IDENTITY', 'MEMORY_ENABLED'], 'a local newest block too');
  const original = agentEnv({ metadata: { name: 'a', namespace: 'team' }, spec: { modelAPI: 'm', config: { memory: { enabled: true, contextLimit: 6 } } } }, deps, withUsers).map((e) => e.name);
  t.notOk(original.some((n) => n.startsWith('MEMORY_REQUIRE_')), 'the original memory block keeps its five variables');
  t.notOk(agentEnv({ metadata: { name: 'a', namespace: 'team' }, spec: { modelAPI: 'm', model: 'x' } }, deps, withUsers).some((e) => e.name.startsWith('MEMORY_')), 'no memory block, no posture');
});

t.test('a MemoryStore: the posture after KAOS_MEMORY_EMBEDDING_MODEL', async (t) => {
  const store: MemoryStoreInput = {
    metadata: { name: 's', namespace: 'team', uid: 'u' },
    spec: { engine: 'mem0', storage: { type: 'local' }, models: { summarization: { modelAPI: 'chat', model: 'sum' }, embedding: { modelAPI: 'chat', model: 'emb' } }, shortTerm: { tokenBudget: 2048 } },
  } as MemoryStoreInput;
  const env = (config: RenderConfig) => (mainContainer(renderMemoryStore(store, { summarizationEndpoint: 'http://c:8000' }, config).deployment).env ?? []).map((e) => `${e.name}=${e.value ?? ''}`);
  // The whole env, in the contract's order (docs/api.md, "MemoryStore"): storage, models, tiers.
  const head = ['KAOS_MEMORY_STORAGE_TYPE=local', 'KAOS_MEMORY_LOCAL_PATH=/data/memory', 'KAOS_MEMORY_MODEL_BASE_URL=http://c:8000/v1', 'KAOS_MEMORY_SUMMARIZATION_MODEL=sum', 'KAOS_MEMORY_EMBEDDING_MODEL=emb'];
  t.strictSame(env(off), [...head, 'KAOS_MEMORY_TOKEN_BUDGET=2048'], 'security off: nothing between the embedding model and the token budget');
  t.strictSame(env(userPlaneOnly), [...head, 'KAOS_MEMORY_TOKEN_BUDGET=2048'], 'the user plane without security: nothing');
  t.strictSame(env(secured), [...head, 'KAOS_MEMORY_REQUIRE_AGENT_IDENTITY=true', 'KAOS_MEMORY_TOKEN_BUDGET=2048'], 'security: an agent identity');
  t.strictSame(env(withUsers), [...head, 'KAOS_MEMORY_REQUIRE_PRINCIPAL=true', 'KAOS_MEMORY_REQUIRE_AGENT_IDENTITY=true', 'KAOS_MEMORY_TOKEN_BUDGET=2048'], 'and the user plane: a principal too');
});
