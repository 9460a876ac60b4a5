// End-to-end: MCPServers in upstream KAOS's shape (docs/api.md, "MCPServer runtimes") through kubectl,
// against a real kube-apiserver with the operator's real entry point (scripts/local-stack.ts
// installs the registry ConfigMap kaos-mcp-runtimes the chart ships, in the operator's
// namespace). Children are written out from the contract, never computed with the renderer:
// python-string, kubernetes and custom; unknown runtime, custom without image, missing
// requiredEnv and a mixed type+runtime refused; a registry edit re-renders exactly the
// MCPServers whose entry changed.
//
// Run `npm run build` first: the operator process is dist/main.js.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { spawnCli } from '../unit/cli/support.ts';
import { expectDenied, invalid, kaos, kubectl, setup, useAdmissionStack, stack } from './support/admission.ts';
import {
  HARDENED,
  POD_SECURITY,
  at,
  childIdentity,
  deploymentShape,
  expectedIdentity,
  httpPort,
  podSpecHash,
  podSpecOf,
  probe,
  resourceVersionOf,
  serviceShape,
  servicePorts,
  tcpSocket,
  waitForObject,
  waitForPhase,
  type Json,
} from './support/children.ts';
import type { LocalStack } from '../../scripts/local-stack.ts';
import { IMAGES } from './support/stack.ts';
import { eventually } from '../support/poll.ts';

const WAIT = { timeoutMs: 30_000, intervalMs: 250, retryErrors: true } as const;

useAdmissionStack(t);
const s = (): LocalStack => {
  if (stack === undefined) throw new Error('no local stack');
  return stack;
};

// The registry as the chart ships it (chart/values.yaml mcpRuntimes.builtin), written out.
const PYTHON_STRING_IMAGE = 'axsauze/kaos-mcp-python-string:0.7.7';
const KUBERNETES_IMAGE = 'ghcr.io/manusa/kubernetes-mcp-server:latest';
const mcpProbes = {
  livenessProbe: probe(tcpSocket(8000), 20, 10, 3, 3),
  readinessProbe: probe(tcpSocket(8000), 15, 5, 3, 2),
};
const TOOLS = 'def echo(text: str) -> str:\n    return text\n';
/** A runtime MCPServer is new-shape: LOG_LEVEL at the operator's default (INFO) unless it sets one. */
const LOG_LEVEL = { name: 'LOG_LEVEL', value: 'INFO' };

/** The main container as stored: the fields the runtime gives, then what the API server defaults. */
const mcpContainer = (fields: Json): Json => ({
  name: 'mcp-server',
  imagePullPolicy: 'IfNotPresent',
  ports: httpPort(8000),
  resources: {},
  ...mcpProbes,
  securityContext: HARDENED,
  ...fields,
});

t.test('python-string, kubernetes and custom: children as docs/api.md, "MCPServer runtimes", says; printer column Runtime', async (t) => {
  const ns = 'mcp-runtimes';
  await setup(t, ns, [
    kaos('MCPServer', 'py', { runtime: 'python-string', params: TOOLS }),
    kaos('MCPServer', 'k8s', { runtime: 'kubernetes', serviceAccountName: 'k8s-reader' }),
    kaos('MCPServer', 'own', { runtime: 'custom', container: { image: 'e2e.local/my-mcp:1', command: ['my-mcp'], args: ['--port', '8000'], env: [{ name: 'A', value: '1' }] } }),
  ]);
  const py = await waitForObject(s(), 'deployment', ns, 'mcpserver-py');
  const parent = await waitForObject(s(), 'mcpserver', ns, 'py');
  t.strictSame(childIdentity(py), expectedIdentity('MCPServer', parent, 'mcpserver-py'));
  t.strictSame(deploymentShape(py), {
    replicas: 1,
    selector: { matchLabels: { app: 'mcpserver', mcpserver: 'py' } },
    podLabels: { app: 'mcpserver', mcpserver: 'py' },
    podAnnotationKeys: ['kaos.tools/pod-spec-hash', 'kubectl.kubernetes.io/default-container'],
  });
  t.strictSame(podSpecOf(py), {
    containers: [mcpContainer({ image: PYTHON_STRING_IMAGE, env: [{ name: 'MCP_TOOLS_STRING', value: TOOLS }, LOG_LEVEL] })],
    securityContext: POD_SECURITY,
  });
  const service = await waitForObject(s(), 'service', ns, 'mcpserver-py');
  t.strictSame(serviceShape(service), { type: 'ClusterIP', selector: { app: 'mcpserver', mcpserver: 'py' }, ports: servicePorts(8000) });
  const withEndpoint = await waitForObject(s(), 'mcpserver', ns, 'py', (o) => at(o, 'status', 'endpoint') !== undefined);
  t.equal(at(withEndpoint, 'status', 'endpoint'), `http://mcpserver-py.${ns}.svc.cluster.local:8000`);

  const k8s = await waitForObject(s(), 'deployment', ns, 'mcpserver-k8s');
  t.strictSame(podSpecOf(k8s), {
    containers: [mcpContainer({ image: KUBERNETES_IMAGE, args: ['--port', '8000'], env: [LOG_LEVEL] })],
    securityContext: POD_SECURITY,
    serviceAccountName: 'k8s-reader',
    // The API server mirrors serviceAccountName into the deprecated serviceAccount.
    serviceAccount: 'k8s-reader',
  });
  const own = await waitForObject(s(), 'deployment', ns, 'mcpserver-own');
  t.strictSame(podSpecOf(own), {
    // KAOS's order: spec.container.env before LOG_LEVEL.
    containers: [mcpContainer({ image: 'e2e.local/my-mcp:1', command: ['my-mcp'], args: ['--port', '8000'], env: [{ name: 'A', value: '1' }, LOG_LEVEL] })],
    securityContext: POD_SECURITY,
  });
  const stored = await waitForObject(s(), 'mcpserver', ns, 'own');
  t.equal(at(stored, 'spec', 'container', 'image'), 'e2e.local/my-mcp:1', 'the mutating webhook leaves a runtime object\'s image alone');
  t.equal(at(await waitForObject(s(), 'mcpserver', ns, 'py'), 'spec', 'container'), undefined, 'and defaults none for a registry runtime');

  const table = await kubectl(['get', 'mcpservers', '-n', ns]);
  t.match(table.stdout, /^NAME\s+TYPE\s+RUNTIME\s+READY\s+PHASE\s+AGE\n/, 'columns');
  t.match(table.stdout, /\nk8s\s+kubernetes\s+/, 'an empty Type and the Runtime');
  t.match(table.stdout, /\npy\s+python-string\s+/);
});

t.test('refused at admission: unknown runtime, custom without image, missing requiredEnv, type and runtime together', async (t) => {
  const ns = 'mcp-refused';
  await setup(t, ns);
  await expectDenied(t, ns, kaos('MCPServer', 'gone', { runtime: 'discord' }),
    invalid('MCPServer', 'gone', ['spec.runtime: Unsupported value: "discord": supported values: "kubernetes", "python-string", "slack", "custom"']), 'unknown runtime');
  await expectDenied(t, ns, kaos('MCPServer', 'own', { runtime: 'custom' }),
    invalid('MCPServer', 'own', ['spec.container.image: Required value: runtime custom takes its image from spec.container']), 'custom without image');
  await expectDenied(t, ns, kaos('MCPServer', 'chat', { runtime: 'slack', container: { env: [{ name: 'SLACK_BOT_TOKEN', value: 'xoxb' }] } }),
    invalid('MCPServer', 'chat', ['spec.container.env: Required value: runtime slack requires env SLACK_TEAM_ID']), 'missing requiredEnv');
  await expectDenied(t, ns, kaos('MCPServer', 'mixed', { type: 'python-runtime', runtime: 'python-string', params: TOOLS, config: { tools: { fromString: TOOLS } } }),
    invalid('MCPServer', 'mixed', [
      'spec.runtime: Forbidden: may not be set together with spec.type',
      'spec.params: Forbidden: may not be set together with spec.type',
    ]), 'type and runtime together: both fields named');
  await expectDenied(t, ns, kaos('MCPServer', 'neither', {}),
    invalid('MCPServer', 'neither', ['spec: Required value: must specify exactly one of spec.type (with spec.config) or spec.runtime']), 'neither');

  const slack = kaos('MCPServer', 'chat', { runtime: 'slack', container: { env: [{ name: 'SLACK_BOT_TOKEN', value: 'xoxb' }, { name: 'SLACK_TEAM_ID', value: 'T1' }] } });
  const ok = await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify(slack));
  t.strictSame(ok, { code: 0, stdout: 'mcpserver.kaos.tools/chat created\n', stderr: '' }, 'with every requiredEnv it is admitted');
});

t.test('a registry edit re-renders exactly the MCPServers whose entry changed', async (t) => {
  const ns = 'mcp-registry-edit';
  const original = kaos('MCPServer', 'old', { type: 'python-runtime', config: { tools: { fromString: TOOLS } } });
  await setup(t, ns, [
    kaos('MCPServer', 'py', { runtime: 'python-string', params: TOOLS }),
    kaos('MCPServer', 'k8s', { runtime: 'kubernetes' }),
    kaos('MCPServer', 'own', { runtime: 'custom', container: { image: 'e2e.local/my-mcp:1' } }),
    original,
  ]);
  // Rolled out (kwok plays the kubelet): from here on nothing changes these Deployments but a render.
  for (const name of ['py', 'k8s', 'own', 'old']) await waitForPhase(s(), 'mcpserver', ns, name, 'Ready');
  const before = new Map<string, Json>();
  for (const name of ['py', 'k8s', 'own', 'old']) before.set(name, await waitForObject(s(), 'deployment', ns, `mcpserver-${name}`));
  t.equal(at(podSpecOf(before.get('old') ?? {}), 'containers', 0, 'image'), IMAGES.mcpServer, 'the original shape as before');

  const registry = await waitForObject(s(), 'configmap', 'kaos-system', 'kaos-mcp-runtimes');
  const text = String(at(registry, 'data', 'runtimes.yaml'));
  t.ok(text.includes(`image: ${PYTHON_STRING_IMAGE}`), 'the registry the stack installed');
  const edited = text.replace(`image: ${PYTHON_STRING_IMAGE}`, 'image: e2e.local/python-string:v2');
  const patched = await kubectl(['patch', 'configmap', 'kaos-mcp-runtimes', '-n', 'kaos-system', '--type=merge', '-p', JSON.stringify({ data: { 'runtimes.yaml': edited } })]);
  t.equal(patched.code, 0, patched.stderr);

  const py = await waitForObject(s(), 'deployment', ns, 'mcpserver-py', (d) => podSpecHash(d) !== podSpecHash(before.get('py') ?? {}), 'python-string re-rendered');
  t.strictSame(podSpecOf(py), {
    containers: [mcpContainer({ image: 'e2e.local/python-string:v2', env: [{ name: 'MCP_TOOLS_STRING', value: TOOLS }, LOG_LEVEL] })],
    securityContext: POD_SECURITY,
  });
  // The others: untouched. A later reconcile would have written by now (the edit reached py).
  for (const name of ['k8s', 'own', 'old']) {
    const now = await waitForObject(s(), 'deployment', ns, `mcpserver-${name}`);
    t.equal(resourceVersionOf(now), resourceVersionOf(before.get(name) ?? {}), `mcpserver-${name} keeps its resourceVersion`);
  }

  // Back as it was (the stack is shared by the file's tests).
  const restored = await kubectl(['patch', 'configmap', 'kaos-mcp-runtimes', '-n', 'kaos-system', '--type=merge', '-p', JSON.stringify({ data: { 'runtimes.yaml': text } })]);
  t.equal(restored.code, 0, restored.stderr);
  await waitForObject(s(), 'deployment', ns, 'mcpserver-py', (d) => at(podSpecOf(d), 'containers', 0, 'image') === PYTHON_STRING_IMAGE, 'restored');
});

t.test('an unreadable registry: admission warns instead of refusing, and the controller recovers when it is back', async (t) => {
  const ns = 'mcp-registry-broken';
  await setup(t, ns);
  const registry = await waitForObject(s(), 'configmap', 'kaos-system', 'kaos-mcp-runtimes');
  const text = String(at(registry, 'data', 'runtimes.yaml'));
  const broken = await kubectl(['patch', 'configmap', 'kaos-mcp-runtimes', '-n', 'kaos-system', '--type=merge', '-p', JSON.stringify({ data: { 'runtimes.yaml': 'runtimes: [' } })]);
  t.equal(broken.code, 0, broken.stderr);
  const mcp = kaos('MCPServer', 'py', { runtime: 'python-string', params: TOOLS });
  // The webhook reads the registry from its cache: poll until the broken one has arrived there.
  const admitted = await eventually('the broken registry in the webhook\'s cache', async () => {
    const res = await kubectl(['apply', '-n', ns, '--dry-run=server', '-f', '-'], JSON.stringify(mcp));
    return res.stderr.includes('not checked') ? res : undefined;
  }, WAIT);
  t.strictSame(admitted.code, 0, 'admitted');
  t.equal(admitted.stdout, 'mcpserver.kaos.tools/py created (server dry run)\n');
  t.match(admitted.stderr, /^Warning: spec\.runtime "python-string" not checked: ConfigMap kaos-system\/kaos-mcp-runtimes: runtimes\.yaml: not valid YAML/);
  const created = await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify(mcp));
  t.equal(created.code, 0, created.stderr);
  const event = await eventually('a Warning Event on the MCPServer', async () => {
    const res = await kubectl(['get', 'events.events.k8s.io', '-n', ns, '-o', 'json']);
    const items = (JSON.parse(res.stdout) as { items: Json[] }).items;
    return items.find((e) => e.type === 'Warning' && e.reason === 'ReconcileFailed' && at(e, 'regarding', 'name') === 'py');
  }, WAIT);
  t.match(String(event.note), /^MCP runtime "python-string" cannot be resolved: ConfigMap kaos-system\/kaos-mcp-runtimes: runtimes\.yaml: not valid YAML/);
  t.equal(await kubectl(['get', 'deployment', 'mcpserver-py', '-n', ns, '--ignore-not-found', '-o', 'name']).then((r) => r.stdout), '', 'no Deployment while the runtime cannot be resolved');

  const restored = await kubectl(['patch', 'configmap', 'kaos-mcp-runtimes', '-n', 'kaos-system', '--type=merge', '-p', JSON.stringify({ data: { 'runtimes.yaml': text } })]);
  t.equal(restored.code, 0, restored.stderr);
  const py = await waitForObject(s(), 'deployment', ns, 'mcpserver-py', () => true, 'rendered once the registry is readable again');
  t.equal(at(podSpecOf(py), 'containers', 0, 'image'), PYTHON_STRING_IMAGE);
});

t.test('lint --cluster judges runtimes against the cluster\'s registry', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kaos-lint-runtimes-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'mcp.yaml');
  await writeFile(file, [kaos('MCPServer', 'gone', { runtime: 'discord' }), kaos('MCPServer', 'py', { runtime: 'python-string', params: TOOLS })]
    .map((o) => JSON.stringify(o)).join('\n---\n'));
  const env = { PATH: process.env.PATH ?? '', KUBECONFIG: s().plane.kubeconfigPath };
  const out = await spawnCli(['lint', '--cluster', '-n', 'lint-ns', '-o', 'json', file], { env });
  t.equal(out.code, 1, out.stderr);
  const report = JSON.parse(out.stdout) as { findings: { severity: string; message: string }[] };
  t.same(report.findings.map((f) => [f.severity, f.message]), [
    ['error', 'spec.runtime: Unsupported value: "discord": supported values: "kubernetes", "python-string", "slack", "custom"'],
  ]);
});
