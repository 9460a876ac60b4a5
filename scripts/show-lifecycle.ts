// `npm run docs:lifecycle`: what a user sees with kubectl as a ModelAPI, an MCPServer and an Agent
// go from created to Ready, and as an Agent fails on a missing ModelAPI — printed as Markdown, one
// section per kind, from a real control plane and the operator started through its real entry
// point. Its output is the body of docs/lifecycle.md (paste it under that page's introduction
// when the operator's behaviour changes). Progress goes to stderr, the transcript to
// stdout; exit 1 (with the operator's log tail) when a state is not reached within 60 s.
//
// There are no nodes: a Deployment becomes ready when this script writes its status subresource,
// as the Deployment controller would once a pod passes its readiness probe. The controller is held
// back at first (its Lease lives in a namespace that does not exist yet), so the transcript can
// show the objects as the API server stores them before any reconcile.
import { stringify } from 'yaml';
import type { KaosKind } from '../src/api/kinds.ts';
import type { KubeObject } from '../src/api/lookup.ts';
import { kaosPath } from '../src/cluster/kaos-resources.ts';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../src/render/index.ts';
import { eventually } from '../test/support/poll.ts';
import { startLocalStack, tail, type LocalStack } from './local-stack.ts';

const NS = 'default';
const LEASE_NAMESPACE = 'kaos-docs-leases';
const MANAGED = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

const kaos = (kind: KaosKind, name: string, spec: Record<string, unknown>, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind,
  metadata: { name, ...(annotations === undefined ? {} : { annotations }) },
  spec,
});

const MANIFEST = [
  kaos('ModelAPI', 'llm', { mode: 'Proxy', proxyConfig: { model: 'ollama/smollm2:135m', apiBase: 'http://ollama.ollama.svc:11434' } }),
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
const out = (text: string): void => { process.stdout.write(text); };

interface Status { phase?: string; message?: string }

async function main(stack: LocalStack): Promise<void> {
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
  const quiet = async (args: readonly string[]): Promise<void> => {
    const result = await plane.kubectl(args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
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
  /** What the Deployment controller would write once a pod is ready (there is no kubelet). */
  const markReady = async (section: string, deployment: string): Promise<void> => {
    comment(section, `no kubelet here: the script writes deployment/${deployment}'s status (1 ready replica), as the Deployment controller would`);
    await quiet([
      'patch', 'deployment', deployment, '-n', NS, '--subresource=status', '--type=merge',
      '-p', JSON.stringify({ status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1 } }),
    ]);
  };
  const statusColumns = (section: string, resource: string, endpoint = true): Promise<void> => shown(section, [
    'get', resource, '-o', `custom-columns=PHASE:.status.phase,MESSAGE:.status.message${endpoint ? ',ENDPOINT:.status.endpoint' : ''}`,
  ]);
  const manifest = MANIFEST.map((o) => stringify(o)).join('---\n');
  const apply = (section: string, name: string, yaml: string): Promise<void> =>
    shown(section, ['apply', '-f', '-'], { input: yaml, display: ['apply', '-f', name] });

  // 1. Stored, not reconciled yet (the controller waits for its Lease's namespace).
  progress('applying while the controller is held back');
  write('Created', `\`\`\`yaml\n# kaos.yaml\n${manifest}\`\`\`\n`);
  write('Created', '\n```\n');
  await apply('Created', 'kaos.yaml', manifest);
  await shown('Created', ['get', 'modelapis,mcpservers,agents']);
  await shown('Created', ['get', 'deployments,services,configmaps', '-l', MANAGED]);
  write('Created', '```\n');

  // 2. The controller starts: children for the dependencies, the Agent waits.
  progress('the controller starts');
  await quiet(['create', 'namespace', LEASE_NAMESPACE]);
  await waitFor('ModelAPI', 'llm', 'Pending');
  await waitFor('MCPServer', 'echo', 'Pending');
  await waitFor('Agent', 'assistant', 'Waiting', 'ModelAPI is not ready');
  for (const [section, resource, label] of [['ModelAPI', 'modelapi/llm', 'modelapi=llm'], ['MCPServer', 'mcpserver/echo', 'mcpserver=echo']] as const) {
    await shown(section, ['get', resource]);
    await statusColumns(section, resource);
    await shown(section, ['get', 'deployments,services,configmaps', '-l', label]);
  }
  comment('Agent', 'its ModelAPI and MCPServer are Pending');
  await statusColumns('Agent', 'agent/assistant', false);
  await shown('Agent', ['get', 'deployments,services', '-l', 'agent=assistant']);

  // 3. The ModelAPI is ready; the Agent now waits for its MCPServer.
  progress('the ModelAPI becomes ready');
  await markReady('ModelAPI', 'modelapi-llm');
  await waitFor('ModelAPI', 'llm', 'Ready');
  await waitFor('Agent', 'assistant', 'Waiting', 'MCPServer echo is not ready');
  await shown('ModelAPI', ['get', 'modelapi/llm']);
  await statusColumns('ModelAPI', 'modelapi/llm');
  await shown('ModelAPI', ['events', '--for', 'modelapi/llm']);
  comment('Agent', 'its ModelAPI is Ready, its MCPServer still Pending');
  await statusColumns('Agent', 'agent/assistant', false);

  // 4. Both dependencies Ready: the Agent gets its Deployment, at 0/1.
  progress('the MCPServer becomes ready');
  await markReady('MCPServer', 'mcpserver-echo');
  await waitFor('MCPServer', 'echo', 'Ready');
  await waitFor('Agent', 'assistant', 'Pending', 'Deployment ready replicas: 0/1');
  await shown('MCPServer', ['get', 'mcpserver/echo']);
  await statusColumns('MCPServer', 'mcpserver/echo');
  comment('Agent', 'both dependencies Ready: the Agent gets its children; no pod is ready yet');
  await shown('Agent', ['get', 'agent/assistant']);
  await shown('Agent', ['get', 'deployments,services', '-l', 'agent=assistant']);
  await shown('Agent', ['describe', 'agent/assistant'], { from: 'Status:' });

  // 5. The Agent's Deployment reports a ready replica: `kubectl wait` returns.
  progress('kubectl wait, then the Agent\'s Deployment becomes ready');
  const waitArgs = ['wait', '--for=condition=Ready', 'agent/assistant', '--timeout=60s'];
  const waiting = plane.kubectl(waitArgs, { timeoutMs: 90_000 });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await markReady('Agent', 'agent-assistant');
  const waited = await waiting;
  if (waited.code !== 0) throw new Error(`kubectl wait exited ${waited.code}: ${waited.stderr}`);
  await waitFor('Agent', 'assistant', 'Ready');
  comment('Agent', 'kubectl wait, started before that status write, returns once it lands');
  write('Agent', `$ kubectl ${waitArgs.join(' ')}\n${waited.stdout}${waited.stderr}`);
  await shown('Agent', ['get', 'agent/assistant']);
  await statusColumns('Agent', 'agent/assistant');
  await shown('Agent', ['get', 'agent/assistant', '-o', 'jsonpath={range .status.conditions[*]}{.type}={.status} {.reason}{"\\n"}{end}']);
  await shown('Agent', ['events', '--for', 'agent/assistant']);
  await shown('All', ['get', 'modelapis,mcpservers,agents']);
  await shown('All', ['get', 'deployments', '-o', 'wide', '-l', MANAGED]);

  // 6. A missing ModelAPI: Failed until it appears.
  progress('an Agent whose ModelAPI does not exist');
  await apply('Failed', 'orphan.yaml', stringify(ORPHAN));
  await waitFor('Agent', 'orphan', 'Failed');
  await shown('Failed', ['get', 'agent/orphan']);
  await statusColumns('Failed', 'agent/orphan', false);
  await shown('Failed', ['get', 'agent/orphan', '-o', 'jsonpath={range .status.conditions[*]}{.type}={.status} {.reason}{"\\n"}{end}']);
  await shown('Failed', ['get', 'events', '--field-selector', 'involvedObject.name=orphan']);
  await shown('Failed', ['events', '--for', 'agent/orphan']);
  progress('the missing ModelAPI appears');
  comment('Failed', 'the ModelAPI appears: the Agent is woken at once and waits for it');
  await apply('Failed', 'ghost.yaml', stringify(GHOST));
  await waitFor('Agent', 'orphan', 'Waiting', 'ModelAPI is not ready');
  await shown('Failed', ['get', 'agent/orphan']);
  await statusColumns('Failed', 'agent/orphan', false);

  out(`<!-- captured by \`npm run docs:lifecycle\` (scripts/show-lifecycle.ts) on ${new Date().toISOString().slice(0, 10)} -->\n`);
  for (const [section, lines] of sections) {
    const text = lines.join('');
    out(section === 'Created' ? `\n## ${section}\n\n${text}` : `\n## ${section}\n\n\`\`\`\n${text}\`\`\`\n`);
  }
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
  await main(stack);
} catch (err) {
  progress(`failed: ${err instanceof Error ? err.message : String(err)}`);
  if (stack !== undefined) progress(`operator log (tail):\n${tail(stack.operator.log(), 30)}`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
