// The runtime registry in the controller (src/controller/runtime-registry.ts): a registry change
// wakes exactly the MCPServers whose runtime resolves differently; the reconciler renders from
// the entry, fails an unknown runtime with KAOS's phase, and retries (Warning Event) while the
// registry cannot be read.
import t from 'tap';
import { runtimesYaml, BUILTIN_RUNTIMES } from '../../../src/api/mcp-runtime-defaults.ts';
import { parseRuntimes, type RegistryState } from '../../../src/api/mcp-runtimes.ts';
import type { KubeObject } from '../../../src/api/meta.ts';
import { mcpServerKeysForRegistryChange } from '../../../src/controller/runtime-registry.ts';
import { MemoryReconcileContext } from '../../support/memory-reconcile-context.ts';
import { podSpecOf, reconcile, statusOf } from './reconcile-helpers.ts';

const NS = 'tools';
const mcp = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind: 'MCPServer',
  metadata: { name, namespace: NS, uid: `uid-${name}`, generation: 1 },
  spec,
});
const registry = (runtimes: Record<string, unknown>): RegistryState => parseRuntimes(JSON.stringify({ runtimes }));
const BUILTIN = parseRuntimes(runtimesYaml());
const SERVERS: KubeObject[] = [
  mcp('py', { runtime: 'python-string', params: 'x' }),
  mcp('py2', { runtime: 'python-string' }),
  mcp('k8s', { runtime: 'kubernetes' }),
  mcp('own', { runtime: 'custom', container: { image: 'me/x:1' } }),
  mcp('old', { type: 'python-runtime', config: { tools: { fromString: 'x' } } }),
  mcp('gone', { runtime: 'discord' }),
];

t.test('a registry edit wakes exactly the MCPServers whose entry changed', async (t) => {
  const edited = registry({ ...BUILTIN_RUNTIMES, 'python-string': { ...BUILTIN_RUNTIMES['python-string'], image: 'r/py:2' } });
  t.same(mcpServerKeysForRegistryChange(BUILTIN, edited, SERVERS), ['MCPServer/tools/py', 'MCPServer/tools/py2']);
  t.same(mcpServerKeysForRegistryChange(BUILTIN, BUILTIN, SERVERS), [], 'a relist of the same registry wakes nobody');
  const reformatted = parseRuntimes(`# a comment\n${runtimesYaml()}`);
  t.same(mcpServerKeysForRegistryChange(BUILTIN, reformatted, SERVERS), [], 'nor does a new resourceVersion with the same entries');
  const added = registry({ ...BUILTIN_RUNTIMES, discord: { type: 'nodejs', image: 'r/discord:1' } });
  t.same(mcpServerKeysForRegistryChange(BUILTIN, added, SERVERS), ['MCPServer/tools/gone'], 'an added entry wakes the MCPServers that named it');
  const removed = registry({ 'python-string': BUILTIN_RUNTIMES['python-string'], slack: BUILTIN_RUNTIMES.slack });
  t.same(mcpServerKeysForRegistryChange(BUILTIN, removed, SERVERS), ['MCPServer/tools/k8s'], 'a removed one, those that used it');
});

t.test('the registry becoming unreadable or readable wakes every runtime MCPServer but custom ones', async (t) => {
  const unreadable: RegistryState = { problem: 'ConfigMap kaos-system/kaos-mcp-runtimes not found' };
  const all = ['MCPServer/tools/gone', 'MCPServer/tools/k8s', 'MCPServer/tools/py', 'MCPServer/tools/py2'];
  t.same(mcpServerKeysForRegistryChange(BUILTIN, unreadable, SERVERS), all);
  t.same(mcpServerKeysForRegistryChange(unreadable, BUILTIN, SERVERS), all);
  t.same(mcpServerKeysForRegistryChange(unreadable, { problem: 'ConfigMap kaos-system/kaos-mcp-runtimes: runtimes.yaml: not valid YAML: x' }, SERVERS), [], 'one unreadable state to another: nothing to re-render');
});

t.test('reconcile: rendered from the entry; a registry edit re-renders it', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.mcpRuntimes = BUILTIN;
  ctx.putKaos(mcp('py', { runtime: 'python-string', params: 'def echo(x): return x', serviceAccountName: 'sa' }));
  t.equal(await reconcile(ctx, 'MCPServer', NS, 'py'), undefined);
  let pod = podSpecOf(ctx.child('Deployment', NS, 'mcpserver-py')) as ReturnType<typeof podSpecOf> & { serviceAccountName?: string };
  t.equal(pod.containers[0]?.image, 'axsauze/kaos-mcp-python-string:0.7.7');
  t.same(pod.containers[0]?.env, [{ name: 'MCP_TOOLS_STRING', value: 'def echo(x): return x' }, { name: 'LOG_LEVEL', value: 'INFO' }], 'params, then the log level of a new-shape MCPServer');
  t.equal(pod.serviceAccountName, 'sa');
  ctx.requests.length = 0;
  await reconcile(ctx, 'MCPServer', NS, 'py');
  t.same(ctx.requests, [], 'converged: nothing written');

  ctx.mcpRuntimes = registry({ 'python-string': { ...BUILTIN_RUNTIMES['python-string'], image: 'r/py:2' } });
  await reconcile(ctx, 'MCPServer', NS, 'py');
  pod = podSpecOf(ctx.child('Deployment', NS, 'mcpserver-py'));
  t.equal(pod.containers[0]?.image, 'r/py:2');
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [`apply Deployment/${NS}/mcpserver-py`]);
});

t.test('reconcile: an unknown runtime is Failed (KAOS), with no children', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.mcpRuntimes = BUILTIN;
  ctx.putKaos(mcp('gone', { runtime: 'discord' }));
  t.equal(await reconcile(ctx, 'MCPServer', NS, 'gone'), undefined);
  t.match(statusOf(ctx, 'MCPServer', NS, 'gone'), { phase: 'Failed', ready: false, message: 'runtime "discord" not found in registry ConfigMap kaos-mcp-runtimes' });
  t.equal(ctx.child('Deployment', NS, 'mcpserver-gone'), undefined);
});

t.test('reconcile: an unreadable registry is an error (Warning Event, retried), never a rewrite of the children', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.mcpRuntimes = BUILTIN;
  ctx.putKaos(mcp('py', { runtime: 'python-string', params: 'x' }));
  await reconcile(ctx, 'MCPServer', NS, 'py');
  const before = ctx.child('Deployment', NS, 'mcpserver-py');
  ctx.mcpRuntimes = { problem: 'ConfigMap kaos-system/kaos-mcp-runtimes not found' };
  ctx.requests.length = 0;
  await t.rejects(reconcile(ctx, 'MCPServer', NS, 'py'), /MCP runtime "python-string" cannot be resolved: ConfigMap kaos-system\/kaos-mcp-runtimes not found/);
  t.same(ctx.requests, [], 'nothing written');
  t.same(ctx.child('Deployment', NS, 'mcpserver-py'), before, 'the Deployment stays as it was');
  t.match(ctx.recorded.at(-1), { type: 'Warning', reason: 'ReconcileFailed' });
});

t.test('reconcile: custom renders from spec.container; without an image it is Failed', async (t) => {
  const ctx = new MemoryReconcileContext();
  ctx.mcpRuntimes = { problem: 'not needed for custom' };
  ctx.putKaos(mcp('own', { runtime: 'custom', container: { image: 'me/x:1', args: ['--port', '8000'] } }));
  await reconcile(ctx, 'MCPServer', NS, 'own');
  t.equal(podSpecOf(ctx.child('Deployment', NS, 'mcpserver-own')).containers[0]?.image, 'me/x:1');
  ctx.putKaos(mcp('bare', { runtime: 'custom' }));
  await reconcile(ctx, 'MCPServer', NS, 'bare');
  t.match(statusOf(ctx, 'MCPServer', NS, 'bare'), { phase: 'Failed', message: 'runtime "custom" requires spec.container.image' });
});

// The RuntimeRegistry class against a real API server (one ConfigMap by field selector in the
// operator's namespace, absent → warning, edits → wake-ups): test/e2e/mcp-runtimes.test.ts.
