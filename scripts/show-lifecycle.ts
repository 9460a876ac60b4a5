// `npm run docs:lifecycle`: what a user sees with kubectl as a ModelAPI, an MCPServer and an Agent
// go from created to Ready — the Agent waiting on its ModelAPI first — as a spec change rolls out,
// and as an Agent fails on a missing ModelAPI; written as Markdown to docs/lifecycle.md, from a
// real control plane whose pods run on kwok's fake nodes (scheduled, Running, Ready: nothing
// writes a status by hand) and the operator started through its real entry point. Progress goes
// to stderr; exit 1 (with the operator's log tail, docs/lifecycle.md untouched) when a state is not
// reached within 60 s.
//
// The controller is held back at first (its Lease lives in a namespace that does not exist yet),
// so the transcript can show the objects as the API server stores them before any reconcile. The
// ModelAPI starts with pods that never become ready (kwok's never-ready marker, see
// test/cluster/kwok/stages/), so the Agent's wait on it shows whatever the machine's speed; the
// fix is an ordinary `kubectl apply`.
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { KaosKind } from '../src/api/kinds.ts';
import type { KubeObject } from '../src/api/lookup.ts';
import { kaosPath } from '../src/cluster/kaos-resources.ts';
import { OPERATOR_IDENTITY } from '../src/cluster/rbac.ts';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../src/render/index.ts';
import { eventually } from '../test/support/poll.ts';
import { NEVER_READY_ENV } from '../test/cluster/control-plane.ts';
import { ROOT, startLocalStack, tail, type LocalStack } from './local-stack.ts';

const NS = 'default';
const LEASE_NAMESPACE = 'kaos-docs-leases';
const MANAGED = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

const kaos = (kind: KaosKind, name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind,
  metadata: { name, ...(annotations === undefined ? {} : { annotations }) },
  spec,
});

const LLM_SPEC = { mode: 'Proxy', proxyConfig: { model: 'ollama/smollm2:135m', apiBase: 'http://ollama.ollama.svc:11434' } };
const MANIFEST = [
  kaos('ModelAPI', 'llm', { ...LLM_SPEC, container: { env: [{ name: NEVER_READY_ENV, value: 'true' }] } }),
  kaos('MCPServer', 'echo', { type: 'python-runtime', config: { tools: { fromPackage: 'test-mcp-echo-server' } } }),
  kaos('Agent', 'assistant', { modelAPI: 'llm', mcpServers: ['echo'] }),
];
// Names a ModelAPI that does not exist; the annotation lets the webhook admit it with a warning
// (as under a GitOps tool applying out of order) instead of refusing it.
const ORPHAN = kaos('Agent', 'orphan', { modelAPI: 'ghost' }, { 'kaos.tools/reference-policy': 'Warn' });
const GHOST = kaos('ModelAPI', 'ghost', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } });

/** An argument as a user would type it in a POSIX shell. */
function shellQuote(arg: string): string {
  return /^[-\w.,/=:]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

const progress = (line: string): void => { process.stderr.write(`[lifecycle] ${line}\n`); };

interface Status { phase?: string; message?: string }

async function main(stack: LocalStack): Promise<string> {
  const { plane, client } = stack;
  // One transcript per section, printed at the end: the three kinds progress at once, but the
  // docs/lifecycle.md tells each kind's story on its own.
  const sections = new Map<string, string[]>();
  const write = (section: string, text: string): void => {
    const lines = sections.get(section) ?? [];
    if (!sections.has(section)) sections.set(section, lines);
    lines.push(text);
  };
  const comment = (section: string, text: string): void => write(section, `# ${text}\n`);

  /**
   * Runs kubectl and records it as a user sees it in a terminal (`display`: the command as typed,
   * e.g. `-f kaos.yaml` for what goes in on stdin; `from`: print the output from the first line
   * starting with it, after a `...`); throws on failure.
   */
  const shown = async (
    section: string, args: readonly string[], options: { input?: string; display?: readonly string[]; from?: string } = {},
  ): Promise<void> => {
    const result = await plane.kubectl(args, { timeoutMs: 120_000, ...(options.input === undefined ? {} : { input: options.input }) });
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    let text = `${result.stdout}${result.stderr}`;
    if (options.from !== undefined) {
      const at = text.split('\n').findIndex((l) => l.startsWith(options.from ?? ''));
      if (at < 0) throw new Error(`kubectl ${args.join(' ')}: no line starts with "${options.from}":\n${text}`);
      text = `...\n${text.split('\n').slice(at).join('\n')}`;
    }
    write(section, `$ kubectl ${(options.display ?? args).map(shellQuote).join(' ')}\n${text}`);
  };
  const waitFor = async (kind: KaosKind, name: string, phase: string, message?: string): Promise<void> => {
    let last: Status | undefined;
    try {
      await eventually(`${kind} ${name}: ${phase}`, async () => {
        last = (await client.get<{ status?: Status }>(kaosPath(kind, { namespace: NS, name }))).status;
        return last?.phase === phase && (message === undefined || last.message === message);
      }, { timeoutMs: 60_000, intervalMs: 100 });
    } catch (err) {
      throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last)}`);
    }
  };
  /** `kubectl get … -w` in the background, as a user leaves it running in another terminal. */
  const watching = (args: readonly string[]): { stop: () => Promise<string> } => {
    const child = spawn(join(plane.binDir, 'kubectl'), ['--kubeconfig', plane.kubeconfigPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => { text += c; });
    child.stderr.setEncoding('utf8').on('data', (c: string) => { text += c; });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    return {
      stop: async () => {
        // A moment for the last events to print, as a user glancing at the terminal would see them.
        await new Promise((resolve) => setTimeout(resolve, 1500));
        child.kill('SIGTERM');
        await exited;
        return text;
      },
    };
  };
  const conditions = (section: string, resource: string): Promise<void> =>
    shown(section, ['get', resource, '-o', 'jsonpath={range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\\n"}{end}']);
  const statusColumns = (section: string, resource: string): Promise<void> => shown(section, [
    'get', resource, '-o', 'custom-columns=PHASE:.status.phase,MESSAGE:.status.message,ENDPOINT:.status.endpoint',
  ]);
  const manifest = MANIFEST.map((o) => stringify(o)).join('---\n');
  const apply = (section: string, name: string, yaml: string): Promise<void> =>
    shown(section, ['apply', '-f', '-'], { input: yaml, display: ['apply', '-f', name] });

  // 1. Stored, not reconciled yet (the controller waits for its Lease's namespace).
  progress('applying while the controller is held back');
  write('Created, before the first reconcile', `\`\`\`yaml\n# kaos.yaml\n${manifest}\`\`\`\n`);
  write('Created, before the first reconcile', '\n```\n');
  await apply('Created, before the first reconcile', 'kaos.yaml', manifest);
  await shown('Created, before the first reconcile', ['get', 'modelapis,mcpservers,agents']);
  write('Created, before the first reconcile', '```\n');

  // 2. The controller starts, with a watch running: children, pods, the Agent waiting.
  progress('the controller starts');
  const W = 'The Agent waits for its ModelAPI, then turns Ready';
  const watchAgents = watching(['get', 'agents', '-w']);
  const watchPods = watching(['get', 'pods', '-w']);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  // The namespace, and the Lease rights the chart grants in the operator's own namespace.
  const serviceAccount = { kind: 'ServiceAccount', name: OPERATOR_IDENTITY.serviceAccount, namespace: OPERATOR_IDENTITY.namespace };
  await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: LEASE_NAMESPACE } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'kaos-docs-lease', namespace: LEASE_NAMESPACE }, rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'kaos-docs-lease', namespace: LEASE_NAMESPACE }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kaos-docs-lease' }, subjects: [serviceAccount] },
  ] }) }).then((r) => { if (r.code !== 0) throw new Error(`kubectl apply of the Lease namespace failed: ${r.stderr}`); });
  await waitFor('MCPServer', 'echo', 'Ready');
  await waitFor('ModelAPI', 'llm', 'Pending');
  await waitFor('Agent', 'assistant', 'Waiting', 'ModelAPI is not ready');
  comment(W, 'the controller starts: the MCPServer\'s pod runs and is ready; the ModelAPI\'s pod runs but is not ready');
  await shown(W, ['get', 'modelapis,mcpservers,agents']);
  await statusColumns(W, 'agent/assistant');
  await conditions(W, 'agent/assistant');
  await shown(W, ['describe', 'agent/assistant'], { from: 'Events:' });
  await statusColumns(W, 'modelapi/llm');
  await conditions(W, 'modelapi/llm');

  progress('the ModelAPI is fixed');
  comment(W, 'the ModelAPI fixed (its pods become ready): the Agent gets its Deployment and turns Ready');
  await apply(W, 'llm.yaml', stringify(kaos('ModelAPI', 'llm', LLM_SPEC)));
  const waitArgs = ['wait', '--for=condition=Ready', 'agent/assistant', '--timeout=60s'];
  const waited = await plane.kubectl(waitArgs, { timeoutMs: 90_000 });
  if (waited.code !== 0) throw new Error(`kubectl wait exited ${waited.code}: ${waited.stderr}`);
  write(W, `$ kubectl ${waitArgs.join(' ')}\n${waited.stdout}${waited.stderr}`);
  await waitFor('ModelAPI', 'llm', 'Ready');
  const [agents, pods] = [await watchAgents.stop(), await watchPods.stop()];
  write(W, `# meanwhile, in two other terminals (kubectl watches one resource type at a time):\n$ kubectl get agents -w\n${agents}$ kubectl get pods -w\n${pods}`);
  await shown(W, ['get', 'modelapis,mcpservers,agents']);
  await statusColumns(W, 'agent/assistant');
  await conditions(W, 'agent/assistant');
  await shown(W, ['get', 'deployments,replicasets,services', '-l', MANAGED]);
  await shown(W, ['get', 'pods', '-o', 'wide']);
  await shown(W, ['events', '--for', 'agent/assistant']);

  // 3. A spec change rolls out: Pending (rolling out) until the old pod is gone, then Ready.
  progress('an Agent spec change rolls out');
  const R = 'A spec change rolls out';
  const rolling = watching(['get', 'agent/assistant', '-w', '-o', 'custom-columns=GEN:.metadata.generation,OBSERVED:.status.observedGeneration,PHASE:.status.phase,MESSAGE:.status.message']);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await apply(R, 'assistant.yaml', stringify(kaos('Agent', 'assistant', { modelAPI: 'llm', mcpServers: ['echo'], config: { instructions: 'Answer in one sentence.' } })));
  await eventually('the rollout', async () => {
    const a = await client.get<{ metadata?: { generation?: number }; status?: Status & { observedGeneration?: number } }>(kaosPath('Agent', { namespace: NS, name: 'assistant' }));
    return a.status?.phase === 'Ready' && a.status.observedGeneration === a.metadata?.generation;
  }, { timeoutMs: 60_000, intervalMs: 100 });
  write(R, `# in another terminal:\n$ kubectl get agent/assistant -w -o custom-columns=…\n${await rolling.stop()}`);
  await shown(R, ['get', 'replicasets', '-l', 'agent=assistant']);

  // 4. A missing ModelAPI: Failed until it appears.
  progress('an Agent whose ModelAPI does not exist');
  const F = 'A missing ModelAPI';
  await apply(F, 'orphan.yaml', stringify(ORPHAN));
  await waitFor('Agent', 'orphan', 'Failed');
  await shown(F, ['get', 'agent/orphan']);
  await statusColumns(F, 'agent/orphan');
  await conditions(F, 'agent/orphan');
  await shown(F, ['events', '--for', 'agent/orphan']);
  progress('the missing ModelAPI appears');
  comment(F, 'the ModelAPI appears: the Agent is woken at once, waits for it, then turns Ready');
  await apply(F, 'ghost.yaml', stringify(GHOST));
  await waitFor('Agent', 'orphan', 'Ready');
  await shown(F, ['get', 'agent/orphan']);
  await shown(F, ['events', '--for', 'agent/orphan']);

  let doc = `# From created to Ready, with kubectl

<!-- generated by \`npm run docs:lifecycle\` (scripts/show-lifecycle.ts) on ${new Date().toISOString().slice(0, 10)}; do not edit by hand -->

Real output: the local control plane (\`npm start\` runs the same one), the operator started
through its real entry point under its own RBAC, and kubectl. Pods run on kwok's fake nodes: the
scheduler places them, the Deployment and ReplicaSet controllers roll them out, and kwok plays the
kubelet (a pod turns Running and Ready within a second; no container runs). Nothing writes a
status by hand. To show an Agent waiting on its ModelAPI whatever the machine's speed, the
ModelAPI starts with pods that never become ready (the \`${NEVER_READY_ENV}\` marker of the local
control plane's kwok rules) and is then fixed by an ordinary \`kubectl apply\`.
`;
  for (const [section, lines] of sections) {
    const text = lines.join('');
    doc += section.startsWith('Created') ? `\n## ${section}\n\n${text}` : `\n## ${section}\n\n\`\`\`\n${text}\`\`\`\n`;
  }
  return doc;
}

let stack: LocalStack | undefined;
const cleanUp = async (): Promise<void> => { await stack?.stop(); };
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => { void cleanUp().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143)); });
}
try {
  // LEADER_ELECT with a Lease namespace that does not exist yet: the webhooks answer at once, the
  // controller starts reconciling only when step 2 creates that namespace.
  stack = await startLocalStack({ log: progress, operatorEnv: { LEADER_ELECT: 'true', LEADER_ELECTION_NAMESPACE: LEASE_NAMESPACE } });
  const doc = await main(stack);
  const file = join(ROOT, 'docs', 'lifecycle.md');
  await writeFile(file, doc);
  progress(`wrote ${file}`);
} catch (err) {
  progress(`failed: ${err instanceof Error ? err.message : String(err)}`);
  if (stack !== undefined) progress(`operator log (tail):\n${tail(stack.operator.log(), 30)}`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
