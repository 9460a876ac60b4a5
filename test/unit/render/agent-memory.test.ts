// An Agent's remote memory env (docs/api.md, "Agent remote memory"), written out from the contract:
// only with the newest form of the memory block, in KAOS's place (after AGENTIC_LOOP_MAX_STEPS),
// each optional variable only when set, AGENT_IDENTITY last; the original form keeps its five.
import t from 'tap';
import { agentEnv } from '../../../src/render/agent.ts';
import type { AgentDeps, AgentInput } from '../../../src/render/inputs.ts';
import { config } from './helpers.ts';

const BASE: AgentDeps = { modelAPI: { endpoint: 'http://modelapi-chat.team.svc.cluster.local:8000' }, mcpServers: [], peers: [] };
const STORE: AgentDeps = { ...BASE, memoryStore: { endpoint: 'http://memorystore-shared.team.svc.cluster.local:8080', maxReadScope: 'agent' } };

const agent = (memory: NonNullable<NonNullable<AgentInput['spec']['config']>['memory']>): AgentInput => ({
  metadata: { name: 'helper', namespace: 'team' },
  spec: { modelAPI: 'chat', model: 'gpt-4o-mini', config: { reasoningLoopMaxSteps: 5, memory } },
});
const lines = (agentInput: AgentInput, deps: AgentDeps) => agentEnv(agentInput, deps, config).map((e) => `${e.name}=${e.value ?? ''}`);

t.test('bound to a MemoryStore: every variable, in order, after AGENTIC_LOOP_MAX_STEPS', async (t) => {
  const memory = { type: 'remote', enabled: true, memoryStore: 'shared', maxReadScope: 'session', tools: 'read', failureMode: 'strict', clientParams: { tokenBudget: 64, rollingSummary: true } } as const;
  t.same(lines(agent(memory), STORE), [
    'AGENT_NAME=helper',
    'MODEL_API_URL=http://modelapi-chat.team.svc.cluster.local:8000',
    'MODEL_NAME=gpt-4o-mini',
    'AGENTIC_LOOP_MAX_STEPS=5',
    'MEMORY_ENABLED=true',
    'MEMORY_TYPE=remote',
    'MEMORY_STORE_ENDPOINT=http://memorystore-shared.team.svc.cluster.local:8080',
    'MEMORY_MAX_READ_SCOPE=session',
    'MEMORY_TOOLS=read',
    'MEMORY_FAILURE_MODE=strict',
    'MEMORY_SHORT_TERM_TOKEN_BUDGET=64',
    'MEMORY_ROLLING_SUMMARY=true',
    'AGENT_IDENTITY=kaos://agent/team/helper',
    'LOG_LEVEL=INFO',
  ]);
});

t.test("the read scope: the Agent's, else the store's ceiling, else agent when bound, else session", async (t) => {
  const scope = (memory: Parameters<typeof agent>[0], deps: AgentDeps) => lines(agent(memory), deps).find((l) => l.startsWith('MEMORY_MAX_READ_SCOPE='));
  t.equal(scope({ memoryStore: 'shared' }, { ...BASE, memoryStore: { endpoint: 'x', maxReadScope: 'session' } }), 'MEMORY_MAX_READ_SCOPE=session');
  t.equal(scope({ memoryStore: 'shared' }, BASE), 'MEMORY_MAX_READ_SCOPE=agent', 'a store not known yet');
  t.equal(scope({ type: 'local', maxReadScope: undefined, failureMode: 'soft' }, BASE), 'MEMORY_MAX_READ_SCOPE=session', 'local memory in the newest form');
});

t.test('without the store (missing): no endpoint, the rest as written; optional variables only when set', async (t) => {
  t.same(lines(agent({ memoryStore: 'shared' }), BASE).slice(4), [
    'MEMORY_ENABLED=true',
    'MEMORY_TYPE=remote',
    'MEMORY_MAX_READ_SCOPE=agent',
    'AGENT_IDENTITY=kaos://agent/team/helper',
    'LOG_LEVEL=INFO',
  ]);
});

t.test('the original memory block keeps its five variables, and no AGENT_IDENTITY', async (t) => {
  t.same(lines(agent({ enabled: true, type: 'local', contextLimit: 6, maxSessions: 1000, maxSessionEvents: 500 }), STORE).slice(4, -1), [
    'MEMORY_ENABLED=true',
    'MEMORY_TYPE=local',
    'MEMORY_CONTEXT_LIMIT=6',
    'MEMORY_MAX_SESSIONS=1000',
    'MEMORY_MAX_SESSION_EVENTS=500',
  ]);
});
