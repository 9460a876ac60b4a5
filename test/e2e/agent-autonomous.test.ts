// End-to-end: the Agent `config` fields KAOS added in 2026 (docs/api.md, "Agent `config` from KAOS 2026") and
// the KAOS features this operator refuses by name (docs/api.md, "KAOS features not supported"), through
// kubectl against a real kube-apiserver with the operator's real entry point. A manifest of
// autonomous Agents in KAOS's style is applied unchanged and reaches Ready with the env of the
// contract (written out here, never computed with the renderer); a blank goal and a harness are
// refused, by `kubectl apply` and `--dry-run=server` alike.
//
// Run `npm run build` first: the operator process is dist/main.js.
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { agent, expectDenied, hostedModel, invalid, kubectl, setup, stack, useAdmissionStack } from './support/admission.ts';
import { at, podSpecOf, waitForObject, waitForPhase, type Json } from './support/children.ts';
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

t.test('a harness is refused naming the feature, not pruned or called unknown', async (t) => {
  const ns = 'unsupported';
  await setup(t, ns, [hostedModel('llm', 'smollm2:135m')]);
  await expectDenied(
    t, ns,
    agent('coder', { modelAPI: 'llm', model: 'smollm2:135m', harness: { runtime: 'pi', workspace: { repoURL: 'https://example.com/repo.git' } } }),
    invalid('Agent', 'coder', ["spec.harness: Forbidden: KAOS's coding-agent harness (runtimes from the ConfigMap kaos-harness-runtimes) is not supported by this operator"]),
    'harness',
  );
});
