// End-to-end: the Agent `config` fields KAOS added in 2026 (docs/api.md, "Agent `config` from KAOS 2026")
// and its coding-agent harness (docs/api.md, "Agent harness"), through kubectl against a real
// kube-apiserver with the operator's real entry point. A manifest of autonomous Agents in KAOS's
// style is applied unchanged and reaches Ready with the env of the contract (written out here,
// never computed with the renderer); a blank goal is refused, by `kubectl apply` and
// `--dry-run=server` alike. A harness Agent with a workspace gets the pod of the contract and runs
// under kwok; an unknown runtime is refused at apply; a registry edit under a running harness
// Agent turns it Failed, and it heals when the entry is back (the stack installs the chart's
// registry kaos-harness-runtimes in kaos-system, its SYSTEM_NAMESPACE).
//
// Run `npm run build` first: the operator process is dist/main.js.
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { agent, expectDenied, hostedModel, invalid, kubectl, setup, stack, useAdmissionStack } from './support/admission.ts';
import {
  HARDENED,
  POD_SECURITY,
  at,
  httpGet,
  httpPort,
  podSpecOf,
  probe,
  waitForObject,
  waitForPhase,
  type Json,
} from './support/children.ts';
import { eventually } from '../support/poll.ts';
import type { LocalStack } from '../../scripts/local-stack.ts';

useAdmissionStack(t);
const s = (): LocalStack => {
  if (stack === undefined) throw new Error('no local stack');
  return stack;
};

const FIXTURE = fileURLToPath(new URL('../fixtures/kaos-2026/autonomous-agents.yaml', import.meta.url));
const NS = 'kaos-autonomous';
const svc = (prefix: string, name: string, port: number): string => `http://${prefix}-${name}.${NS}.svc.cluster.local:${port}`;
const envOf = (deployment: Json): unknown => at(podSpecOf(deployment), 'containers', 0, 'env');

t.test('autonomous Agents in KAOS\'s style apply unchanged and reach Ready with the env of the contract', async (t) => {
  const res = await kubectl(['apply', '-f', FIXTURE]);
  t.strictSame(res, {
    code: 0,
    stdout: [
      `namespace/${NS} created`,
      'modelapi.kaos.tools/monitor-modelapi created',
      'mcpserver.kaos.tools/report-mcp created',
      'agent.kaos.tools/health-watcher created',
      'agent.kaos.tools/quiet-worker created',
      '',
    ].join('\n'),
    stderr: '',
  }, 'applied as written, no warning');
  for (const [resource, name] of [['modelapi', 'monitor-modelapi'], ['mcpserver', 'report-mcp'], ['agent', 'health-watcher'], ['agent', 'quiet-worker']] as const) {
    await waitForPhase(s(), resource, NS, name, 'Ready');
  }

  const watcher = await waitForObject(s(), 'agent', NS, 'health-watcher');
  t.equal(at(watcher, 'spec', 'config', 'toolCallMode'), 'auto', 'toolCallMode defaulted');
  t.equal(at(watcher, 'metadata', 'annotations', 'kaos.tools/defaulted'), 'spec.config.toolCallMode,spec.container.image', 'and recorded');
  const instructions = String(at(watcher, 'spec', 'config', 'instructions'));
  t.strictSame(envOf(await waitForObject(s(), 'deployment', NS, 'agent-health-watcher')), [
    { name: 'AGENT_NAME', value: 'health-watcher' },
    { name: 'AGENT_DESCRIPTION', value: 'Watches the namespace and reports on its health' },
    { name: 'AGENT_INSTRUCTIONS', value: instructions },
    { name: 'AGENT_SYSTEM_PROMPT', value: 'You are a careful operations assistant.' },
    { name: 'MODEL_API_URL', value: svc('modelapi', 'monitor-modelapi', 11434) },
    { name: 'MODEL_NAME', value: 'smollm2:135m' },
    { name: 'AGENTIC_LOOP_MAX_STEPS', value: '10' },
    { name: 'TOOL_CALL_MODE', value: 'auto' },
    { name: 'AUTONOMOUS_GOAL', value: "Watch the namespace's health and write a report every round." },
    { name: 'AUTONOMOUS_INTERVAL_SECONDS', value: '60' },
    { name: 'AUTONOMOUS_MAX_ITER_RUNTIME_SECONDS', value: '120' },
    { name: 'TASK_MAX_ITERATIONS', value: '5' },
    { name: 'TASK_MAX_RUNTIME_SECONDS', value: '300' },
    { name: 'TASK_MAX_TOOL_CALLS', value: '20' },
    { name: 'MCP_SERVERS', value: 'report-mcp' },
    { name: 'MCP_SERVER_report-mcp_URL', value: svc('mcpserver', 'report-mcp', 8000) },
    { name: 'LOG_LEVEL', value: 'INFO' },
  ], "KAOS's order: prompts, model, loop, tool calls, autonomy, task budgets, MCP servers, log level");
  t.ok(await waitForObject(s(), 'service', NS, 'agent-health-watcher'), 'exposed: a Service');

  t.strictSame(envOf(await waitForObject(s(), 'deployment', NS, 'agent-quiet-worker')), [
    { name: 'AGENT_NAME', value: 'quiet-worker' },
    { name: 'MODEL_API_URL', value: svc('modelapi', 'monitor-modelapi', 11434) },
    { name: 'MODEL_NAME', value: 'smollm2:135m' },
    { name: 'AGENTIC_LOOP_MAX_STEPS', value: '5' },
    { name: 'TOOL_CALL_MODE', value: 'string' },
    { name: 'AUTONOMOUS_GOAL', value: "Summarise the day's events." },
    { name: 'LOG_LEVEL', value: 'INFO' },
  ], 'a goal alone, not exposed, no MCPServers: its own toolCallMode, nothing else');
  const quiet = await waitForObject(s(), 'agent', NS, 'quiet-worker');
  t.equal(at(quiet, 'metadata', 'annotations', 'kaos.tools/defaulted'), 'spec.container.image', 'the toolCallMode it wrote is not recorded');
  t.equal(at(quiet, 'status', 'endpoint'), undefined, 'not exposed: no endpoint');
  const services = await kubectl(['get', 'services', '-n', NS, '-o', 'jsonpath={.items[*].metadata.name}']);
  t.notOk(services.stdout.split(' ').includes('agent-quiet-worker'), 'and no Service');

  // The runtime MCPServer of the same manifest, in KAOS's order: params, container.env, LOG_LEVEL.
  t.strictSame(envOf(await waitForObject(s(), 'deployment', NS, 'mcpserver-report-mcp')), [
    { name: 'MCP_TOOLS_STRING', value: String(at(await waitForObject(s(), 'mcpserver', NS, 'report-mcp'), 'spec', 'params')) },
    { name: 'REPORT_TITLE', value: 'Namespace health' },
    { name: 'LOG_LEVEL', value: 'INFO' },
  ]);
});

t.test('a blank goal is refused with kubectl apply and --dry-run=server alike', async (t) => {
  const ns = 'blank-goal';
  await setup(t, ns, [hostedModel('llm', 'smollm2:135m')]);
  for (const goal of ['   ', '']) {
    await expectDenied(
      t, ns,
      agent('idle', { modelAPI: 'llm', model: 'smollm2:135m', config: { autonomous: { goal, intervalSeconds: 30 } } }),
      invalid('Agent', 'idle', ['spec.config.autonomous.goal: Invalid value: the goal is blank']),
      `goal ${JSON.stringify(goal)}`,
    );
  }
  await expectDenied(
    t, ns,
    agent('busy', { modelAPI: 'llm', model: 'smollm2:135m', config: { autonomous: { goal: 'g', intervalSeconds: 3601 } } }),
    invalid('Agent', 'busy', ['spec.config.autonomous.intervalSeconds: Invalid value: 3601: spec.config.autonomous.intervalSeconds in body should be less than or equal to 3600']),
    'a range of the CRD schema, in the API server\'s words',
  );
});

// ---- the harness (docs/api.md, "Agent harness") ------------------------------------------------

/** The registry as the chart ships it (pi's image: the chart's defaultImages.harnessPi), written out. */
const PI_IMAGE = 'ghcr.io/axsaucedo/kaos-harness-pi:0.1.0';
const SYSTEM_NAMESPACE = 'kaos-system';
const HARNESS_NS = 'harness';
const REPO = 'https://github.com/acme/service.git';

async function patchHarnessRegistry(t: Test, runtimesYaml: string): Promise<void> {
  const patched = await kubectl(['patch', 'configmap', 'kaos-harness-runtimes', '-n', SYSTEM_NAMESPACE, '--type=merge', '-p', JSON.stringify({ data: { 'runtimes.yaml': runtimesYaml } })]);
  t.equal(patched.code, 0, patched.stderr);
}

const conditions = (o: Json): string[] =>
  ((at(o, 'status', 'conditions') ?? []) as Json[]).map((c) => `${String(c.type)}=${String(c.status)}/${String(c.reason)}`);

t.test('a harness Agent with a workspace: the pod of the contract, field by field, running under kwok', async (t) => {
  await setup(t, HARNESS_NS, [hostedModel('llm', 'smollm2:135m')]);
  const secret = await kubectl(['create', 'secret', 'generic', 'git-token', '-n', HARNESS_NS, '--from-literal=token=ghp_e2e']);
  t.equal(secret.code, 0, secret.stderr);
  const coder = agent('coder', {
    modelAPI: 'llm',
    model: 'smollm2:135m',
    harness: { runtime: 'pi', workspace: { repoURL: REPO, branch: 'release/2026', credentialsSecretRef: { name: 'git-token', key: 'token' } } },
  });
  const applied = await kubectl(['apply', '-n', HARNESS_NS, '-f', '-'], JSON.stringify(coder));
  t.strictSame(applied, { code: 0, stdout: 'agent.kaos.tools/coder created\n', stderr: '' }, 'admitted as written, no warning');
  await waitForPhase(s(), 'agent', HARNESS_NS, 'coder', 'Ready');
  const stored = await waitForObject(s(), 'agent', HARNESS_NS, 'coder');
  t.equal(at(stored, 'spec', 'container'), undefined, 'the webhook chose no image');

  const pod = podSpecOf(await waitForObject(s(), 'deployment', HARNESS_NS, 'agent-coder'));
  // The clone's script is checked apart, below: the rest of the pod is compared whole.
  const { command, ...clone } = (at(pod, 'initContainers', 0) ?? {}) as Json;
  t.same((command as unknown[]).slice(0, 2), ['sh', '-c'], 'the clone runs sh -c');
  const script = String((command as unknown[])[2]);
  t.strictSame({ ...pod, initContainers: [clone] }, {
    initContainers: [{
      name: 'workspace-clone',
      image: 'alpine/git:2.45.2',
      imagePullPolicy: 'IfNotPresent',
      env: [
        { name: 'WORKSPACE_REPO_URL', value: REPO },
        { name: 'WORKSPACE_BRANCH', value: 'release/2026' },
        { name: 'GIT_TOKEN', valueFrom: { secretKeyRef: { name: 'git-token', key: 'token' } } },
      ],
      volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
      resources: {},
      securityContext: HARDENED,
    }],
    containers: [{
      name: 'agent',
      image: PI_IMAGE,
      imagePullPolicy: 'IfNotPresent',
      ports: httpPort(8000),
      env: [
        { name: 'AGENT_NAME', value: 'coder' },
        { name: 'MODEL_API_URL', value: `http://modelapi-llm.${HARNESS_NS}.svc.cluster.local:11434` },
        { name: 'MODEL_NAME', value: 'smollm2:135m' },
        { name: 'LOG_LEVEL', value: 'INFO' },
        { name: 'HARNESS_DRIVER', value: 'pi' },
        { name: 'HARNESS_WORKSPACE', value: '/workspace' },
        { name: 'HARNESS_STATE_DIR', value: '/state' },
        { name: 'GIT_TOKEN', valueFrom: { secretKeyRef: { name: 'git-token', key: 'token' } } },
      ],
      volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }, { name: 'state', mountPath: '/state' }],
      resources: {},
      // KAOS 2026's probe timings (docs/api.md, "Agent probes in 2026").
      livenessProbe: probe(httpGet('/health', 8000), 5, 10, 3, 3),
      readinessProbe: probe(httpGet('/ready', 8000), 3, 5, 3, 2),
      securityContext: HARDENED,
    }],
    volumes: [{ name: 'workspace', emptyDir: {} }, { name: 'state', emptyDir: {} }],
    securityContext: POD_SECURITY,
  });
  // The clone as the contract says: a shallow clone of the one branch into /workspace, the
  // repository and the branch only through env; the token through a credential helper that
  // reads GIT_TOKEN (user x-access-token, as KAOS's URL has it), never spliced into the URL.
  t.match(script, 'set -- clone --depth 1 --single-branch --branch "$WORKSPACE_BRANCH" -- "$WORKSPACE_REPO_URL" /workspace');
  t.match(script, 'git -c credential.helper="$helper" "$@"');
  t.match(script, 'echo username=x-access-token; echo "password=${GIT_TOKEN}"');
  t.notMatch(script, 'x-access-token:', 'the token is not put into the URL');
  t.notOk(script.includes(REPO) || script.includes('release/2026') || script.includes('ghp_'), 'neither the repository, the branch nor the token is in the script');

  const pods = await kubectl(['get', 'pods', '-n', HARNESS_NS, '-l', 'app=agent,agent=coder', '-o', 'json']);
  const items = (JSON.parse(pods.stdout) as { items: Json[] }).items;
  t.equal(items.length, 1, 'one pod');
  t.equal(at(items[0], 'status', 'phase'), 'Running');
  t.same(((at(items[0], 'status', 'initContainerStatuses') ?? []) as Json[]).map((c) => c.name), ['workspace-clone'], 'its clone ran first');
});

t.test('refused at apply: an unknown runtime, a runtime without an image, a repository and a branch git would not take', async (t) => {
  const ns = 'harness-refused';
  await setup(t, ns, [hostedModel('llm', 'smollm2:135m')]);
  const coder = (name: string, harness: Json, extra: Json = {}) => agent(name, { modelAPI: 'llm', model: 'smollm2:135m', harness, ...extra });
  await expectDenied(t, ns, coder('codex', { runtime: 'codex' }),
    invalid('Agent', 'codex', ['spec.harness.runtime: Unsupported value: "codex": supported values: "claude", "pi"']), 'unknown runtime');
  await expectDenied(t, ns, coder('claude', { runtime: 'claude' }),
    invalid('Agent', 'claude', ['spec.container.image: Required value: harness runtime "claude" has no image']), 'a runtime without an image');
  await expectDenied(t, ns, coder('hostile', { runtime: 'codex', workspace: { repoURL: 'ext::sh', branch: '--upload-pack=touch' } }),
    invalid('Agent', 'hostile', [
      'spec.harness.workspace.repoURL: Invalid value: "ext::sh": must be an https://, http:// or ssh:// URL, or git@<host>:<path>',
      'spec.harness.workspace.branch: Invalid value: "--upload-pack=touch": must be a git branch name: must not start with "-"',
      'spec.harness.runtime: Unsupported value: "codex": supported values: "claude", "pi"',
    ]), 'every problem at once');
  const own = await kubectl(['apply', '-n', ns, '-f', '-'], JSON.stringify(coder('claude', { runtime: 'claude' }, { container: { image: 'e2e.local/claude-code:1' } })));
  t.strictSame(own, { code: 0, stdout: 'agent.kaos.tools/claude created\n', stderr: '' }, 'claude with an image of its own is admitted');
});

t.test('a registry edit under a running harness Agent: Failed with KAOS\'s message, its Deployment kept; healed when the entry is back', async (t) => {
  const ns = 'harness-edit';
  const coder = (name: string, harness: Json, extra: Json = {}) => agent(name, { modelAPI: 'llm', model: 'smollm2:135m', harness, ...extra });
  await setup(t, ns, [hostedModel('llm', 'smollm2:135m'), coder('coder', { runtime: 'pi' }), coder('claude', { runtime: 'claude' }, { container: { image: 'e2e.local/claude-code:1' } })]);
  await waitForPhase(s(), 'agent', ns, 'coder', 'Ready');
  await waitForPhase(s(), 'agent', ns, 'claude', 'Ready');
  // A Deployment's generation moves with its spec only (its status may still settle meanwhile).
  const generation = async (name: string): Promise<unknown> => at(await waitForObject(s(), 'deployment', ns, name), 'metadata', 'generation');
  const before = { coder: await generation('agent-coder'), claude: await generation('agent-claude') };

  const registry = await waitForObject(s(), 'configmap', SYSTEM_NAMESPACE, 'kaos-harness-runtimes');
  const text = String(at(registry, 'data', 'runtimes.yaml'));
  t.ok(text.includes(`image: ${PI_IMAGE}`), 'the registry the stack installed');
  // Back as it was whatever happens: the stack is shared by the file's tests.
  t.teardown(() => kubectl(['patch', 'configmap', 'kaos-harness-runtimes', '-n', SYSTEM_NAMESPACE, '--type=merge', '-p', JSON.stringify({ data: { 'runtimes.yaml': text } })]));
  await patchHarnessRegistry(t, 'runtimes:\n  claude:\n    image: ""\n    driver: claude\n');

  const failed = await waitForPhase(s(), 'agent', ns, 'coder', 'Failed');
  t.equal(at(failed, 'status', 'message'), 'Failed to resolve harness runtime: unknown harness runtime: pi (not found in registry)');
  t.equal(at(failed, 'status', 'ready'), false);
  t.same(conditions(failed), ['Ready=False/HarnessRuntimeUnresolved', 'Reconciling=False/HarnessRuntimeUnresolved', 'Stalled=True/HarnessRuntimeUnresolved']);
  t.equal(await generation('agent-coder'), before.coder, 'its Deployment stays as it was');
  const event = await eventually('a Warning Event on the Agent', async () => {
    const res = await kubectl(['get', 'events.events.k8s.io', '-n', ns, '-o', 'json']);
    return (JSON.parse(res.stdout) as { items: Json[] }).items.find((e) => e.type === 'Warning' && e.reason === 'HarnessRuntimeUnresolved' && at(e, 'regarding', 'name') === 'coder');
  }, { timeoutMs: 30_000, intervalMs: 250 });
  t.equal(event.note, at(failed, 'status', 'message'));
  // The claude entry did not change: its Agent runs on as it was.
  t.equal(at(await waitForObject(s(), 'agent', ns, 'claude'), 'status', 'phase'), 'Ready', 'the claude Agent stays Ready');
  t.equal(await generation('agent-claude'), before.claude, 'with its Deployment as it was');

  await patchHarnessRegistry(t, text);
  const healed = await waitForPhase(s(), 'agent', ns, 'coder', 'Ready');
  t.equal(at(healed, 'status', 'ready'), true);
  t.match(conditions(healed), [/^Ready=True\//, /^Reconciling=False\//, /^Stalled=False\//]);
  t.equal(await generation('agent-coder'), before.coder, 'healed with the same Deployment: no rollout');
});
