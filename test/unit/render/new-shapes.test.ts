// Rendering of the newer KAOS shapes (docs/api.md, "Newer KAOS shapes"), expectations written from the
// contract: MODEL_NAME from spec.model, the LiteLLM config generated from models/provider, the
// PROXY_* env, container.env in the place of the kind's own list, telemetry and log level.
import t from 'tap';
import { parse } from 'yaml';
import { loadConfig } from '../../../src/config/config.ts';
import { renderAgent } from '../../../src/render/agent.ts';
import type { AgentDeps, AgentInput, MCPServerInput, ModelAPIInput } from '../../../src/render/inputs.ts';
import { renderMCPServer } from '../../../src/render/mcpserver.ts';
import { renderModelAPI } from '../../../src/render/modelapi.ts';
import { config, mainContainer, sampleAgent, sampleModelAPI } from './helpers.ts';

const meta = (name: string) => ({ name, namespace: 'ns', uid: `uid-${name}` });
const deps: AgentDeps = {
  modelAPI: { endpoint: 'http://modelapi-m.ns.svc.cluster.local:8000' },
  mcpServers: [{ name: 'echo', endpoint: 'http://mcpserver-echo.ns.svc.cluster.local:8000' }],
  peers: [],
};
const agentEnv = (agent: AgentInput, c = config) => mainContainer(renderAgent(agent, deps, c).deployment).env;
const proxy = (proxyConfig: NonNullable<ModelAPIInput['spec']['proxyConfig']>, extra: Partial<ModelAPIInput['spec']> = {}): ModelAPIInput => ({
  metadata: meta('m'),
  spec: { mode: 'Proxy', proxyConfig, ...extra },
});
const telemetryOn = loadConfig({ DEFAULT_TELEMETRY_ENDPOINT: 'http://otel.obs:4317' });

t.test('Agent with spec.model: MODEL_NAME is spec.model, LOG_LEVEL at the configured level', async (t) => {
  const agent = sampleAgent('kaos-v0.1.3/1-simple-echo-agent.yaml', 'simple-agent');
  const simpleDeps: AgentDeps = {
    modelAPI: { endpoint: 'http://modelapi-simple-modelapi.kaos-simple.svc.cluster.local:11434', model: 'ignored' },
    mcpServers: [{ name: 'simple-echo-mcp', endpoint: 'http://mcpserver-simple-echo-mcp.kaos-simple.svc.cluster.local:8000' }],
    peers: [],
  };
  t.strictSame(mainContainer(renderAgent(agent, simpleDeps, config).deployment).env, [
    { name: 'AGENT_NAME', value: 'simple-agent' },
    { name: 'AGENT_DESCRIPTION', value: 'A simple echo agent for testing' },
    { name: 'AGENT_INSTRUCTIONS', value: agent.spec.config?.instructions },
    { name: 'MODEL_API_URL', value: 'http://modelapi-simple-modelapi.kaos-simple.svc.cluster.local:11434' },
    { name: 'MODEL_NAME', value: 'smollm2:135m' },
    { name: 'AGENTIC_LOOP_MAX_STEPS', value: '5' },
    { name: 'MCP_SERVERS', value: 'simple-echo-mcp' },
    { name: 'MCP_SERVER_simple-echo-mcp_URL', value: 'http://mcpserver-simple-echo-mcp.kaos-simple.svc.cluster.local:8000' },
    { name: 'LOG_LEVEL', value: 'INFO' },
  ]);
  const debug = agentEnv({ metadata: meta('a'), spec: { modelAPI: 'm', model: 'x' } }, loadConfig({ DEFAULT_LOG_LEVEL: 'DEBUG' }));
  t.same(debug?.at(-1), { name: 'LOG_LEVEL', value: 'DEBUG' });
});

t.test("Agent: container.env takes config.env's place, right after AGENT_INSTRUCTIONS, and wins a clash", async (t) => {
  const env = agentEnv({
    metadata: meta('a'),
    spec: { modelAPI: 'm', model: 'x', config: { instructions: 'Be brief.' }, container: { env: [{ name: 'EXTRA', value: '1' }, { name: 'LOG_LEVEL', value: 'WARNING' }] } },
  });
  t.same(env?.map((e) => e.name), ['AGENT_NAME', 'AGENT_INSTRUCTIONS', 'EXTRA', 'LOG_LEVEL', 'MODEL_API_URL', 'MODEL_NAME', 'MCP_SERVERS', 'MCP_SERVER_echo_URL']);
  t.same(env?.find((e) => e.name === 'LOG_LEVEL'), { name: 'LOG_LEVEL', value: 'WARNING' }, "the user's LOG_LEVEL, no generated one");
});

t.test('Agent telemetry: the object decides enabled, the endpoint falls back to the operator default', async (t) => {
  const on = agentEnv({ metadata: meta('a'), spec: { modelAPI: 'm', config: { telemetry: { enabled: true } } } }, telemetryOn);
  t.same(on?.slice(-6), [
    { name: 'OTEL_SDK_DISABLED', value: 'false' },
    { name: 'OTEL_SERVICE_NAME', value: 'a' },
    { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel.obs:4317' },
    { name: 'OTEL_RESOURCE_ATTRIBUTES', value: 'service.namespace=ns,kaos.resource.name=a' },
    { name: 'OTEL_PYTHON_FASTAPI_EXCLUDED_URLS', value: '/health,/ready' },
    { name: 'LOG_LEVEL', value: 'INFO' },
  ]);
  const off = agentEnv({ metadata: meta('a'), spec: { modelAPI: 'm', model: 'x', config: { telemetry: { enabled: false } } } }, loadConfig({ DEFAULT_TELEMETRY_ENABLED: 'true' }));
  t.notOk(off?.some((e) => e.name.startsWith('OTEL_')), "the object's block says no");
  const byDefault = agentEnv({ metadata: meta('a'), spec: { modelAPI: 'm', model: 'x' } }, loadConfig({ DEFAULT_TELEMETRY_ENABLED: 'true' }));
  t.ok(byDefault?.some((e) => e.name === 'OTEL_SDK_DISABLED'), 'no block: the operator default');
  t.notOk(byDefault?.some((e) => e.name === 'OTEL_EXPORTER_OTLP_ENDPOINT'), 'no endpoint anywhere: none rendered');
});

t.test('an original-shape Agent renders exactly as before: no LOG_LEVEL, no OTel, container.env last', async (t) => {
  const env = agentEnv(
    { metadata: meta('a'), spec: { modelAPI: 'm', config: { env: [{ name: 'MODEL_NAME', value: 'x' }] }, container: { env: [{ name: 'EXTRA', value: '1' }] } } },
    loadConfig({ DEFAULT_TELEMETRY_ENABLED: 'true', DEFAULT_LOG_LEVEL: 'DEBUG' }),
  );
  t.same(env?.map((e) => e.name), ['AGENT_NAME', 'MODEL_NAME', 'MODEL_API_URL', 'MCP_SERVERS', 'MCP_SERVER_echo_URL', 'EXTRA']);
});

t.test('Proxy with models (v0.1.3 sample 4): the config from models, PROXY_API_BASE, the user env', async (t) => {
  const rendered = renderModelAPI(sampleModelAPI('kaos-v0.1.3/4-dev-ollama-proxy-agent.yaml', 'dev-ollama-proxy'), {}, config);
  t.same(parse(rendered.configMap?.data['config.yaml'] ?? ''), {
    model_list: [{ model_name: '*', litellm_params: { model: '*', api_base: 'os.environ/PROXY_API_BASE' } }],
    litellm_settings: { drop_params: true },
  });
  t.strictSame(mainContainer(rendered.deployment).env, [
    { name: 'PROXY_API_BASE', value: 'http://host.docker.internal:11434' },
    { name: 'LITELLM_LOG', value: 'INFO' },
  ], "proxyConfig.env's LITELLM_LOG stands; no second one");
});

t.test('Proxy with provider and an apiKey from a Secret; telemetry on', async (t) => {
  const modelAPI = proxy(
    { models: ['gpt-4o', 'gpt-4o-mini'], provider: 'openai', apiKey: { valueFrom: { secretKeyRef: { name: 'openai', key: 'key' } } } },
    { telemetry: { enabled: true, endpoint: 'http://otel:4317' }, container: { env: [{ name: 'A', value: '1' }] } },
  );
  const rendered = renderModelAPI(modelAPI, {}, config);
  t.same(parse(rendered.configMap?.data['config.yaml'] ?? ''), {
    model_list: [
      { model_name: 'gpt-4o', litellm_params: { model: 'openai/gpt-4o', api_key: 'os.environ/PROXY_API_KEY' } },
      { model_name: 'gpt-4o-mini', litellm_params: { model: 'openai/gpt-4o-mini', api_key: 'os.environ/PROXY_API_KEY' } },
    ],
    litellm_settings: { drop_params: true, success_callback: ['otel'], failure_callback: ['otel'] },
  });
  t.strictSame(mainContainer(rendered.deployment).env, [
    { name: 'PROXY_API_KEY', valueFrom: { secretKeyRef: { key: 'key', name: 'openai' } } },
    { name: 'A', value: '1' },
    { name: 'LITELLM_LOG', value: 'INFO' },
    { name: 'OTEL_EXPORTER', value: 'otlp_grpc' },
    { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel:4317' },
    { name: 'OTEL_SERVICE_NAME', value: 'm' },
    { name: 'OTEL_PYTHON_EXCLUDED_URLS', value: '/health' },
  ]);
  t.notOk(JSON.stringify(rendered.configMap).includes('openai"'), 'the key is never in the ConfigMap');
  const inline = mainContainer(renderModelAPI(proxy({ models: ['x'], apiKey: { value: 'sk-1' } }), {}, config).deployment).env;
  t.same(inline?.[0], { name: 'PROXY_API_KEY', value: 'sk-1' });
  const fromConfigMap = mainContainer(renderModelAPI(proxy({ models: ['x'], apiKey: { valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } } }), {}, config).deployment).env;
  t.same(fromConfigMap?.[0], { name: 'PROXY_API_KEY', valueFrom: { configMapKeyRef: { key: 'k', name: 'c' } } });
  // A key from a ConfigMap, like one from a Secret, enters the config hash by its resourceVersion.
  const hash = (deps: Parameters<typeof renderModelAPI>[1]): string | undefined =>
    renderModelAPI(proxy({ models: ['x'], apiKey: { valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } } }), deps, config).deployment.spec?.template?.metadata?.annotations?.['kaos.tools/config-hash'];
  t.not(hash({ apiKeyConfigMapResourceVersion: '1' }), hash({ apiKeyConfigMapResourceVersion: '2' }), 'a new ConfigMap version, a new config hash');
  t.equal(hash({ apiKeySecretResourceVersion: '1' }), hash({}), 'a Secret version does not count for a ConfigMap key');
  const trace = mainContainer(renderModelAPI(proxy({ models: ['x'] }), {}, loadConfig({ DEFAULT_LOG_LEVEL: 'TRACE' })).deployment).env;
  t.same(trace, [{ name: 'LITELLM_LOG', value: 'DEBUG' }], 'LiteLLM has no TRACE');
});

t.test('an original-shape Proxy and Hosted render exactly as before', async (t) => {
  const debug = loadConfig({ DEFAULT_LOG_LEVEL: 'DEBUG', DEFAULT_TELEMETRY_ENABLED: 'true' });
  t.same(mainContainer(renderModelAPI(proxy({ model: 'ollama/x' }), {}, debug).deployment).env, [{ name: 'LITELLM_LOG', value: 'INFO' }]);
  const hosted: ModelAPIInput = { metadata: meta('h'), spec: { mode: 'Hosted', hostedConfig: { model: 'x' } } };
  t.same(mainContainer(renderModelAPI(hosted, {}, debug).deployment).env, []);
});

t.test('a new-shape Hosted gets OLLAMA_DEBUG for DEBUG/TRACE only, unless set, and no OTel', async (t) => {
  const hosted = (extra: Partial<ModelAPIInput['spec']> = {}): ModelAPIInput => ({
    metadata: meta('h'),
    spec: { mode: 'Hosted', hostedConfig: { model: 'x' }, telemetry: { enabled: true, endpoint: 'http://o' }, ...extra },
  });
  const env = (m: ModelAPIInput, level: string) => mainContainer(renderModelAPI(m, {}, loadConfig({ DEFAULT_LOG_LEVEL: level })).deployment).env;
  t.same(env(hosted(), 'DEBUG'), [{ name: 'OLLAMA_DEBUG', value: '1' }]);
  t.same(env(hosted(), 'TRACE'), [{ name: 'OLLAMA_DEBUG', value: '2' }]);
  t.same(env(hosted(), 'INFO'), []);
  t.same(env(hosted({ container: { env: [{ name: 'OLLAMA_DEBUG', value: 'false' }] } }), 'TRACE'), [{ name: 'OLLAMA_DEBUG', value: 'false' }]);
});

t.test('MCPServer with telemetry: OTel and LOG_LEVEL after the tools env; without, as before', async (t) => {
  const mcp = (extra: Partial<MCPServerInput['spec']>): MCPServerInput => ({
    metadata: meta('echo'),
    spec: { type: 'python-runtime', config: { tools: { fromPackage: 'test-mcp-echo-server' } }, ...extra },
  });
  const names = (m: MCPServerInput) => mainContainer(renderMCPServer(m, telemetryOn).deployment).env?.map((e) => e.name);
  t.same(names(mcp({ telemetry: { enabled: true } })), [
    'MCP_PACKAGE', 'MCP_ENTRYPOINT', 'MCP_MODULE',
    'OTEL_SDK_DISABLED', 'OTEL_SERVICE_NAME', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_RESOURCE_ATTRIBUTES', 'OTEL_PYTHON_FASTAPI_EXCLUDED_URLS',
    'LOG_LEVEL',
  ]);
  t.same(names(mcp({})), ['MCP_PACKAGE', 'MCP_ENTRYPOINT', 'MCP_MODULE']);
});
