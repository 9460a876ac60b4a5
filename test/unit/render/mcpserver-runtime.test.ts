// Rendering an MCPServer by runtime (docs/api.md, "MCPServer runtimes"): the container from the registry entry,
// spec.container over it, env in KAOS's order — <paramsEnvVar> = params, spec.container.env, LOG_LEVEL, then the
// OpenTelemetry variables (a runtime MCPServer is new-shape) —, port 8000
// and the probes of "MCPServer children", the pod's service account; `custom` from spec.container alone; an
// original-shape object exactly as before.
import t from 'tap';
import { BUILTIN_RUNTIMES } from '../../../src/api/mcp-runtime-defaults.ts';
import type { MCPServerInput } from '../../../src/render/inputs.ts';
import { renderMCPServer } from '../../../src/render/mcpserver.ts';
import { config, mainContainer } from './helpers.ts';

const meta = { name: 'tools', namespace: 'ns', uid: 'uid-tools' };
const labels = { app: 'mcpserver', mcpserver: 'tools' };
const probes = {
  livenessProbe: { tcpSocket: { port: 8000 }, initialDelaySeconds: 20, periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 },
  readinessProbe: { tcpSocket: { port: 8000 }, initialDelaySeconds: 15, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 2 },
};
const pythonString = BUILTIN_RUNTIMES['python-string'];
const kubernetes = BUILTIN_RUNTIMES.kubernetes;
const mcp = (spec: MCPServerInput['spec']): MCPServerInput => ({ metadata: meta, spec });
/** A runtime MCPServer is new-shape: it gets the operator's default log level unless it sets one. */
const LOG_LEVEL = { name: 'LOG_LEVEL', value: 'INFO' };

t.test('python-string: the entry\'s image, MCP_TOOLS_STRING = params, port 8000 and the probes; names, labels, Service as for a typed MCPServer', async (t) => {
  const source = 'def echo(text: str) -> str:\n    return text\n';
  const r = renderMCPServer(mcp({ runtime: 'python-string', params: source }), config, { runtime: pythonString });
  const d = r.deployment;
  t.equal(d.metadata.name, 'mcpserver-tools');
  t.strictSame(d.spec.selector.matchLabels, labels);
  const c = mainContainer(d);
  t.equal(c.name, 'mcp-server');
  t.equal(c.image, 'axsauze/kaos-mcp-python-string:0.7.7');
  t.notOk('command' in c, 'the image\'s own entrypoint');
  t.notOk('args' in c);
  t.strictSame(c.env, [{ name: 'MCP_TOOLS_STRING', value: source }, LOG_LEVEL], '<paramsEnvVar> first, then the log level');
  t.strictSame(c.ports, [{ name: 'http', containerPort: 8000, protocol: 'TCP' }]);
  t.strictSame(c.livenessProbe, probes.livenessProbe);
  t.strictSame(c.readinessProbe, probes.readinessProbe);
  t.notOk('serviceAccountName' in d.spec.template.spec, 'no service account unless asked');
  t.strictSame(r.service?.spec.ports, [{ name: 'http', port: 8000, targetPort: 8000, protocol: 'TCP' }]);
  t.equal(r.endpoint, 'http://mcpserver-tools.ns.svc.cluster.local:8000');
});

t.test('kubernetes: the entry\'s args, the pod\'s serviceAccountName; no params env without paramsEnvVar', async (t) => {
  const r = renderMCPServer(mcp({ runtime: 'kubernetes', params: 'ignored', serviceAccountName: 'k8s-reader' }), config, { runtime: kubernetes });
  const c = mainContainer(r.deployment);
  t.equal(c.image, 'ghcr.io/manusa/kubernetes-mcp-server:latest');
  t.strictSame(c.args, ['--port', '8000']);
  t.strictSame(c.env, [LOG_LEVEL]);
  t.equal(r.deployment.spec.template.spec.serviceAccountName, 'k8s-reader');
});

t.test('spec.container overrides the entry; its env follows <paramsEnvVar> and wins a clash', async (t) => {
  const entry = { image: 'r/x:1', command: ['python', '-m', 'x'], args: ['--a'], paramsEnvVar: 'TOOLS' };
  const c = mainContainer(
    renderMCPServer(
      mcp({ runtime: 'x', params: 'p', container: { image: 'r/x:2', args: ['--b'], env: [{ name: 'A', value: '1' }, { name: 'TOOLS', value: 'mine' }] } }),
      config,
      { runtime: entry },
    ).deployment,
  );
  t.equal(c.image, 'r/x:2');
  t.strictSame(c.command, ['python', '-m', 'x'], 'the entry\'s command stays when the override has none');
  t.strictSame(c.args, ['--b']);
  t.strictSame(c.env, [{ name: 'A', value: '1' }, { name: 'TOOLS', value: 'mine' }, LOG_LEVEL], "the user's TOOLS in place of <paramsEnvVar>");
  const plain = mainContainer(renderMCPServer(mcp({ runtime: 'x', params: 'p', container: { env: [{ name: 'A', value: '1' }] } }), config, { runtime: entry }).deployment);
  t.strictSame(plain.env, [{ name: 'TOOLS', value: 'p' }, { name: 'A', value: '1' }, LOG_LEVEL], '<paramsEnvVar> first, spec.container.env, then LOG_LEVEL');
});

t.test("KAOS's env order: <paramsEnvVar>, spec.container.env, LOG_LEVEL, then the OpenTelemetry variables", async (t) => {
  const spec = {
    runtime: 'python-string',
    params: 'src',
    telemetry: { enabled: true, endpoint: 'http://otel:4317' },
    container: { env: [{ name: 'B', value: '2' }] },
  };
  const env = mainContainer(renderMCPServer(mcp(spec), config, { runtime: pythonString }).deployment).env;
  t.strictSame(env, [
    { name: 'MCP_TOOLS_STRING', value: 'src' },
    { name: 'B', value: '2' },
    LOG_LEVEL,
    { name: 'OTEL_SDK_DISABLED', value: 'false' },
    { name: 'OTEL_SERVICE_NAME', value: 'tools' },
    { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel:4317' },
    { name: 'OTEL_RESOURCE_ATTRIBUTES', value: 'service.namespace=ns,kaos.resource.name=tools' },
    { name: 'OTEL_PYTHON_FASTAPI_EXCLUDED_URLS', value: '/health,/ready' },
  ]);
  const own = { ...spec, container: { env: [{ name: 'LOG_LEVEL', value: 'DEBUG' }] } };
  const ownEnv = mainContainer(renderMCPServer(mcp(own), config, { runtime: pythonString }).deployment).env ?? [];
  t.strictSame(ownEnv.slice(0, 2), [{ name: 'MCP_TOOLS_STRING', value: 'src' }, { name: 'LOG_LEVEL', value: 'DEBUG' }], "the user's LOG_LEVEL in its place, no second one");
  t.equal(ownEnv.filter((e) => e.name === 'LOG_LEVEL').length, 1);
});

t.test('custom: image, command and args from spec.container only', async (t) => {
  const c = mainContainer(
    renderMCPServer(mcp({ runtime: 'custom', container: { image: 'me/mcp:1', command: ['serve'], args: ['--port', '8000'] } }), config).deployment,
  );
  t.equal(c.image, 'me/mcp:1');
  t.strictSame(c.command, ['serve']);
  t.strictSame(c.args, ['--port', '8000']);
  t.strictSame(c.env, [LOG_LEVEL]);
  t.strictSame(c.livenessProbe, probes.livenessProbe);
});

t.test('an original-shape object ignores any registry entry: rendered exactly as without one', async (t) => {
  const original = mcp({ type: 'python-runtime', config: { tools: { fromString: 'x' } } });
  t.strictSame(renderMCPServer(original, config, { runtime: pythonString }), renderMCPServer(original, config));
  t.equal(mainContainer(renderMCPServer(original, config).deployment).image, 'axsauze/kaos-agent:0.1.3');
});
