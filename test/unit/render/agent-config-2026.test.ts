// The env of the Agent `config` fields KAOS added in 2026 (docs/api.md, "Agent `config` from KAOS 2026"),
// expectations written from the contract: KAOS's order, each variable only when its field is set,
// integers in decimal, and the user's list winning a clash where it stands.
import t from 'tap';
import { renderAgent } from '../../../src/render/agent.ts';
import type { AgentDeps, AgentInput } from '../../../src/render/inputs.ts';
import { config, mainContainer } from './helpers.ts';

const meta = { name: 'watcher', namespace: 'ns', uid: 'uid-watcher' };
const deps: AgentDeps = {
  modelAPI: { endpoint: 'http://modelapi-m.ns.svc.cluster.local:11434' },
  mcpServers: [{ name: 'tools', endpoint: 'http://mcpserver-tools.ns.svc.cluster.local:8000' }],
  peers: [],
};
const withPeer: AgentDeps = { ...deps, peers: [{ name: 'helper', endpoint: 'http://agent-helper.ns.svc.cluster.local:8000' }] };
const envOf = (spec: AgentInput['spec'], c = config, d = deps) => mainContainer(renderAgent({ metadata: meta, spec }, d, c).deployment).env ?? [];

t.test("every field set: KAOS's order, from AGENT_NAME to LOG_LEVEL", async (t) => {
  const env = envOf(
    {
      modelAPI: 'm',
      model: 'smollm2:135m',
      mcpServers: ['tools'],
      agentNetwork: { access: ['helper'] },
      config: {
        description: 'Watches',
        instructions: 'Report.',
        systemPrompt: 'You are careful.',
        reasoningLoopMaxSteps: 10,
        toolCallMode: 'native',
        memory: { enabled: true },
        autonomous: { goal: 'Watch the namespace.', intervalSeconds: 60, maxIterRuntimeSeconds: 120 },
        taskConfig: { maxIterations: 5, maxRuntimeSeconds: 300, maxToolCalls: 20 },
        telemetry: { enabled: true, endpoint: 'http://otel:4317' },
      },
      container: { env: [{ name: 'EXTRA', value: '1' }] },
    },
    config,
    withPeer,
  );
  t.strictSame(env, [
    { name: 'AGENT_NAME', value: 'watcher' },
    { name: 'AGENT_DESCRIPTION', value: 'Watches' },
    { name: 'AGENT_INSTRUCTIONS', value: 'Report.' },
    { name: 'AGENT_SYSTEM_PROMPT', value: 'You are careful.' },
    { name: 'EXTRA', value: '1' },
    { name: 'MODEL_API_URL', value: 'http://modelapi-m.ns.svc.cluster.local:11434' },
    { name: 'MODEL_NAME', value: 'smollm2:135m' },
    { name: 'AGENTIC_LOOP_MAX_STEPS', value: '10' },
    { name: 'TOOL_CALL_MODE', value: 'native' },
    { name: 'MEMORY_ENABLED', value: 'true' },
    { name: 'MEMORY_TYPE', value: 'local' },
    { name: 'MEMORY_CONTEXT_LIMIT', value: '6' },
    { name: 'MEMORY_MAX_SESSIONS', value: '1000' },
    { name: 'MEMORY_MAX_SESSION_EVENTS', value: '500' },
    { name: 'AUTONOMOUS_GOAL', value: 'Watch the namespace.' },
    { name: 'AUTONOMOUS_INTERVAL_SECONDS', value: '60' },
    { name: 'AUTONOMOUS_MAX_ITER_RUNTIME_SECONDS', value: '120' },
    { name: 'TASK_MAX_ITERATIONS', value: '5' },
    { name: 'TASK_MAX_RUNTIME_SECONDS', value: '300' },
    { name: 'TASK_MAX_TOOL_CALLS', value: '20' },
    { name: 'MCP_SERVERS', value: 'tools' },
    { name: 'MCP_SERVER_tools_URL', value: 'http://mcpserver-tools.ns.svc.cluster.local:8000' },
    { name: 'PEER_AGENTS', value: 'helper' },
    { name: 'PEER_AGENT_HELPER_CARD_URL', value: 'http://agent-helper.ns.svc.cluster.local:8000' },
    { name: 'OTEL_SDK_DISABLED', value: 'false' },
    { name: 'OTEL_SERVICE_NAME', value: 'watcher' },
    { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel:4317' },
    { name: 'OTEL_RESOURCE_ATTRIBUTES', value: 'service.namespace=ns,kaos.resource.name=watcher' },
    { name: 'OTEL_PYTHON_FASTAPI_EXCLUDED_URLS', value: '/health,/ready' },
    { name: 'LOG_LEVEL', value: 'INFO' },
  ]);
});

t.test('each variable only when its field is set; 0 is set', async (t) => {
  const names = (c: NonNullable<AgentInput['spec']['config']>) => envOf({ modelAPI: 'm', model: 'x', config: c }).map((e) => e.name);
  const generic = ['AGENT_NAME', 'MODEL_API_URL', 'MODEL_NAME', 'MCP_SERVERS', 'MCP_SERVER_tools_URL', 'LOG_LEVEL'];
  t.same(names({ systemPrompt: '', autonomous: {}, taskConfig: {} }), generic, 'empty prompt and blocks: nothing');
  const env = envOf({ modelAPI: 'm', model: 'x', config: { autonomous: { intervalSeconds: 0 }, taskConfig: { maxToolCalls: 0 } } });
  t.same(
    env.filter((e) => /^(AUTONOMOUS|TASK)_/.test(e.name)),
    [{ name: 'AUTONOMOUS_INTERVAL_SECONDS', value: '0' }, { name: 'TASK_MAX_TOOL_CALLS', value: '0' }],
    'no AUTONOMOUS_GOAL without a goal',
  );
  t.same(names({ toolCallMode: 'auto' }), ['AGENT_NAME', 'MODEL_API_URL', 'MODEL_NAME', 'TOOL_CALL_MODE', 'MCP_SERVERS', 'MCP_SERVER_tools_URL', 'LOG_LEVEL']);
});

t.test("container.env stands in config.env's place, right after AGENT_SYSTEM_PROMPT, and wins a clash with a later variable", async (t) => {
  const env = envOf({
    modelAPI: 'm',
    model: 'x',
    config: { systemPrompt: 'p', toolCallMode: 'auto' },
    container: { env: [{ name: 'TOOL_CALL_MODE', value: 'string' }] },
  });
  t.same(env.map((e) => `${e.name}=${e.value ?? ''}`), [
    'AGENT_NAME=watcher',
    'AGENT_SYSTEM_PROMPT=p',
    'TOOL_CALL_MODE=string',
    'MODEL_API_URL=http://modelapi-m.ns.svc.cluster.local:11434',
    'MODEL_NAME=x',
    'MCP_SERVERS=tools',
    'MCP_SERVER_tools_URL=http://mcpserver-tools.ns.svc.cluster.local:8000',
    'LOG_LEVEL=INFO',
  ]);
});
