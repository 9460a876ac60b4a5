// The harness runtime registry in the controller (docs/api.md, "Agent harness"): a registry change
// wakes exactly the Agents whose entry changed; the reconciler renders from the entry, and a
// runtime that does not resolve is Failed with KAOS's message, Ready=False reason
// HarnessRuntimeUnresolved, Stalled=True, the Deployment left as it was, until the registry heals.
import t from 'tap';
import { BUILTIN_HARNESS_RUNTIMES } from '../../../src/api/harness-runtime-defaults.ts';
import { harnessRegistryFromConfigMap, parseHarnessRuntimes, type HarnessRegistryState } from '../../../src/api/harness-runtimes.ts';
import type { KubeObject } from '../../../src/api/meta.ts';
import { runtimesYaml } from '../../../src/api/mcp-runtime-defaults.ts';
import { harnessAgentKeysForRegistryChange } from '../../../src/controller/runtime-registry.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { MemoryReconcileContext } from '../../support/memory-reconcile-context.ts';
import { deploymentStatus, podSpecOf, reconcile, statusOf } from './reconcile-helpers.ts';

const NS = 'code';
const object = (kind: string, name: string, spec: Record<string, unknown>, status?: Record<string, unknown>) => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind,
  metadata: { name, namespace: NS, uid: `uid-${name}`, generation: 1 },
  spec,
  ...(status === undefined ? {} : { status }),
});
const agent = (name: string, harness?: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  object('Agent', name, { modelAPI: 'llm', model: 'smollm2:135m', ...(harness === undefined ? {} : { harness }), ...extra });
const registry = (runtimes: Record<string, unknown>): HarnessRegistryState => parseHarnessRuntimes(JSON.stringify({ runtimes }));
const BUILTIN = parseHarnessRuntimes(runtimesYaml(BUILTIN_HARNESS_RUNTIMES));
const AGENTS: KubeObject[] = [
  agent('pi1', { runtime: 'pi' }),
  agent('pi2', { runtime: 'pi', workspace: { repoURL: 'https://example.com/r.git' } }),
  agent('claude', { runtime: 'claude' }, { container: { image: 'me/claude:1' } }),
  agent('codex', { runtime: 'codex' }),
  agent('plain'),
];

t.test('a registry edit wakes exactly the Agents whose entry changed', async (t) => {
  const edited = registry({ ...BUILTIN_HARNESS_RUNTIMES, pi: { ...BUILTIN_HARNESS_RUNTIMES.pi, image: 'r/pi:2' } });
  t.same(harnessAgentKeysForRegistryChange(BUILTIN, edited, AGENTS), ['Agent/code/pi1', 'Agent/code/pi2']);
  t.same(harnessAgentKeysForRegistryChange(BUILTIN, BUILTIN, AGENTS), [], 'a relist of the same registry wakes nobody');
  t.same(harnessAgentKeysForRegistryChange(BUILTIN, parseHarnessRuntimes(`# a comment\n${runtimesYaml(BUILTIN_HARNESS_RUNTIMES)}`), AGENTS), [], 'nor a new resourceVersion with the same entries');
  const driver = registry({ ...BUILTIN_HARNESS_RUNTIMES, claude: { ...BUILTIN_HARNESS_RUNTIMES.claude, driver: 'claude-code' } });
  t.same(harnessAgentKeysForRegistryChange(BUILTIN, driver, AGENTS), ['Agent/code/claude'], 'a driver is part of the entry');
  const added = registry({ ...BUILTIN_HARNESS_RUNTIMES, codex: { image: 'r/codex:1', driver: 'codex' } });
  t.same(harnessAgentKeysForRegistryChange(BUILTIN, added, AGENTS), ['Agent/code/codex'], 'an added entry wakes the Agents that named it');
  const removed = registry({ claude: BUILTIN_HARNESS_RUNTIMES.claude });
  t.same(harnessAgentKeysForRegistryChange(BUILTIN, removed, AGENTS), ['Agent/code/pi1', 'Agent/code/pi2'], 'a removed one, those that used it');
});

t.test('the registry becoming unreadable, readable, or unreadable another way wakes every harness Agent (their status says why)', async (t) => {
  const all = ['Agent/code/claude', 'Agent/code/codex', 'Agent/code/pi1', 'Agent/code/pi2'];
  const gone = harnessRegistryFromConfigMap(undefined);
  t.same(harnessAgentKeysForRegistryChange(BUILTIN, gone, AGENTS), all);
  t.same(harnessAgentKeysForRegistryChange(gone, BUILTIN, AGENTS), all);
  t.same(harnessAgentKeysForRegistryChange(gone, harnessRegistryFromConfigMap({ data: {} }), AGENTS), all, 'another message to show');
  t.same(harnessAgentKeysForRegistryChange(gone, harnessRegistryFromConfigMap(undefined), AGENTS), [], 'the same problem again: nothing');
});

/** A context with a Ready ModelAPI `llm` and the chart's harness registry. */
function world(): MemoryReconcileContext {
  const ctx = new MemoryReconcileContext();
  ctx.putKaos(object('ModelAPI', 'llm', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }, { ready: true, phase: 'Ready' }));
  ctx.harnessRuntimes = BUILTIN;
  return ctx;
}
const conditionsOf = (ctx: MemoryReconcileContext, name: string) =>
  (statusOf(ctx, 'Agent', NS, name).conditions as { type: string; status: string; reason: string }[]).map((c) => `${c.type}=${c.status}/${c.reason}`);

t.test('reconcile: rendered from the entry (image, driver); an edit of the entry re-renders it', async (t) => {
  const ctx = world();
  ctx.putKaos(agent('coder', { runtime: 'pi', workspace: { repoURL: 'https://example.com/r.git' } }));
  t.equal(await reconcile(ctx, 'Agent', NS, 'coder'), undefined);
  let pod = podSpecOf(ctx.child('Deployment', NS, 'agent-coder'));
  t.equal(pod.containers[0]?.image, 'ghcr.io/axsaucedo/kaos-harness-pi:0.1.0', 'the pi image the chart pins');
  t.same(pod.containers[0]?.env?.slice(-3), [
    { name: 'HARNESS_DRIVER', value: 'pi' },
    { name: 'HARNESS_WORKSPACE', value: '/workspace' },
    { name: 'HARNESS_STATE_DIR', value: '/state' },
  ]);
  t.same(pod.initContainers?.map((c) => c.name), ['workspace-clone']);
  ctx.requests.length = 0;
  await reconcile(ctx, 'Agent', NS, 'coder');
  t.same(ctx.requests, [], 'converged: nothing written');

  ctx.harnessRuntimes = registry({ ...BUILTIN_HARNESS_RUNTIMES, pi: { image: 'r/pi:2', driver: 'pi2' } });
  await reconcile(ctx, 'Agent', NS, 'coder');
  pod = podSpecOf(ctx.child('Deployment', NS, 'agent-coder'));
  t.equal(pod.containers[0]?.image, 'r/pi:2');
  t.same(pod.containers[0]?.env?.find((e) => e.name === 'HARNESS_DRIVER'), { name: 'HARNESS_DRIVER', value: 'pi2' });
  t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [`apply Deployment/${NS}/agent-coder`]);
});

t.test('reconcile: each way a runtime does not resolve is Failed with KAOS\'s message, terminal, with no Deployment', async (t) => {
  const cases: [string, HarnessRegistryState, Record<string, unknown>, string][] = [
    ['gone', harnessRegistryFromConfigMap(undefined), { runtime: 'pi' },
      'Failed to resolve harness runtime: failed to get harness runtime registry ConfigMap: configmaps "kaos-harness-runtimes" not found'],
    ['nokey', harnessRegistryFromConfigMap({ data: {} }), { runtime: 'pi' }, 'Failed to resolve harness runtime: runtimes.yaml key not found in ConfigMap'],
    ['badyaml', parseHarnessRuntimes('runtimes: {pi: [}'), { runtime: 'pi' }, 'Failed to resolve harness runtime: failed to parse harness runtime registry: not valid YAML: '],
    ['unknown', BUILTIN, { runtime: 'codex' }, 'Failed to resolve harness runtime: unknown harness runtime: codex (not found in registry)'],
    ['byo', BUILTIN, { runtime: 'claude' }, 'Failed to resolve harness runtime: harness runtime claude requires a user-supplied spec.container.image'],
  ];
  for (const [name, state, harness, message] of cases) {
    const ctx = world();
    ctx.harnessRuntimes = state;
    ctx.putKaos(agent(name, harness));
    t.equal(await reconcile(ctx, 'Agent', NS, name), undefined, `${name}: no retry (the registry's change wakes it)`);
    const status = statusOf(ctx, 'Agent', NS, name);
    t.equal(status.phase, 'Failed', name);
    t.equal(status.ready, false);
    t.ok(String(status.message).startsWith(message), `${name}: ${String(status.message)}`);
    t.same(conditionsOf(ctx, name), ['Ready=False/HarnessRuntimeUnresolved', 'Reconciling=False/HarnessRuntimeUnresolved', 'Stalled=True/HarnessRuntimeUnresolved']);
    t.equal(ctx.child('Deployment', NS, `agent-${name}`), undefined, 'nothing applied');
    t.match(ctx.recorded.at(-1), { type: 'Warning', reason: 'HarnessRuntimeUnresolved', note: status.message }, 'one Warning Event');
  }
});

t.test('reconcile: a running harness Agent whose runtime leaves the registry is Failed, its Deployment kept; it heals when the entry is back', async (t) => {
  const ctx = world();
  ctx.putKaos(agent('coder', { runtime: 'pi' }));
  await reconcile(ctx, 'Agent', NS, 'coder');
  ctx.setDeploymentStatus(NS, 'agent-coder', deploymentStatus(1));
  await reconcile(ctx, 'Agent', NS, 'coder');
  t.equal(statusOf(ctx, 'Agent', NS, 'coder').phase, 'Ready');
  const deployment = ctx.child('Deployment', NS, 'agent-coder');

  ctx.harnessRuntimes = registry({ claude: BUILTIN_HARNESS_RUNTIMES.claude });
  ctx.requests.length = 0;
  await reconcile(ctx, 'Agent', NS, 'coder');
  t.match(statusOf(ctx, 'Agent', NS, 'coder'), {
    phase: 'Failed',
    ready: false,
    message: 'Failed to resolve harness runtime: unknown harness runtime: pi (not found in registry)',
    deployment: { readyReplicas: 1 },
  }, 'Failed, the Deployment it still has reported');
  t.same(ctx.requests.map((r) => r.verb), ['status'], 'only the status is written');
  t.same(ctx.child('Deployment', NS, 'agent-coder'), deployment, 'the Deployment stays as it was');

  ctx.harnessRuntimes = BUILTIN;
  ctx.requests.length = 0;
  await reconcile(ctx, 'Agent', NS, 'coder');
  t.match(statusOf(ctx, 'Agent', NS, 'coder'), { phase: 'Ready', ready: true });
  t.same(ctx.requests.map((r) => r.verb), ['status'], 'healed: the same Deployment, only the status written');
});

// The registry's reflector against a real API server (one ConfigMap by field selector in
// SYSTEM_NAMESPACE, edits → wake-ups, a running Agent turned Failed and healed): test/e2e/agent-autonomous.test.ts.

t.test("under ServiceAccount identity an Agent's ServiceAccount is created though its runtime or its ModelAPI does not resolve; the rest waits", async (t) => {
  const identity = loadConfig({ SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount' });
  for (const [name, setup, reason] of [
    ['unknown', (ctx: MemoryReconcileContext) => ctx.putKaos(agent('unknown', { runtime: 'codex' })), 'HarnessRuntimeUnresolved'],
    ['gone', (ctx: MemoryReconcileContext) => { ctx.harnessRuntimes = harnessRegistryFromConfigMap(undefined); ctx.putKaos(agent('gone', { runtime: 'pi' })); }, 'HarnessRuntimeUnresolved'],
    ['nomodel', (ctx: MemoryReconcileContext) => ctx.putKaos(object('Agent', 'nomodel', { modelAPI: 'missing', model: 'x', harness: { runtime: 'pi' } })), 'ModelAPIUnresolved'],
  ] as const) {
    const ctx = new MemoryReconcileContext({ config: identity });
    ctx.putKaos(object('ModelAPI', 'llm', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }, { ready: true, phase: 'Ready' }));
    ctx.harnessRuntimes = BUILTIN;
    setup(ctx);
    await reconcile(ctx, 'Agent', NS, name);
    t.same(ctx.requests.map((r) => `${r.verb} ${r.target}`), [`apply ServiceAccount/${NS}/kaos-agent-${name}`, `status Agent/${NS}/${name}`], `${name}: the ServiceAccount, then the status; no Deployment`);
    t.match(ctx.child('ServiceAccount', NS, `kaos-agent-${name}`), {
      metadata: { labels: { 'kaos.tools/agent': name }, ownerReferences: [{ kind: 'Agent', name, controller: true }] },
      automountServiceAccountToken: false,
    });
    t.match(statusOf(ctx, 'Agent', NS, name), { phase: 'Failed', ready: false });
    t.match(conditionsOf(ctx, name)[0], `Ready=False/${reason}`);
    t.same(ctx.recorded.filter((e) => e.reason === 'Created').map((e) => e.note), [`Created ServiceAccount kaos-agent-${name}`], 'told in a Normal Created Event');
    ctx.requests.length = 0;
    await reconcile(ctx, 'Agent', NS, name);
    t.same(ctx.requests.filter((r) => r.verb !== 'status'), [], `${name}: again, nothing written (the ServiceAccount is unchanged)`);
  }
});
