// Rendering an MCPServer by runtime (docs/api.md, "MCPServer runtimes"): the container from the registry entry,
// spec.container over it, <paramsEnvVar> = params and then LOG_LEVEL (a runtime MCPServer is new-shape), port 8000
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
  t.strictSame(c.env, [LOG_LEVEL, { name: 'A', value: '1' }, { name: 'TOOLS', value: 'mine' }]);
  const plain = mainContainer(renderMCPServer(mcp({ runtime: 'x', params: 'p', container: { env: [{ name: 'A', value: '1' }] } }), config, { runtime: entry }).deployment);
  t.strictSame(plain.env, [{ name: 'TOOLS', value: 'p' }, LOG_LEVEL, { name: 'A', value: '1' }], '<paramsEnvVar> first, LOG_LEVEL, then spec.container.env');
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
