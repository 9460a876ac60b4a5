// The README's run command, `npm start` (= `npm run build && node scripts/start.ts`), end to end:
// what the user sees on the terminal, that the cluster it sets up works through kubectl, and
// that Ctrl-C leaves no process and no directory behind. Every path it has:
//   - no cluster in KUBECONFIG or ~/.kube/config: a local control plane, webhooks registered, and
//     KAOS's 2026 security plane (an Agent, a harness Agent, an AccessGrant) as its defaults run it;
//   - a reachable cluster: CRDs applied, webhooks registered only with WEBHOOK_URL (and a CA);
//   - no cluster and no Go toolchain: it says so and exits 1 without starting to build.
//
// scripts/start.ts is run directly, not through `npm start`, whose `npm run build` would rewrite
// dist/ while other test files run the operator from it. dist/ must be current: `npm test`
// builds it before tap starts; run standalone, this file builds it first when a source file is
// newer than dist/main.js (see ensureDist). The control plane's binaries come from the real cache
// (built on first use, like every e2e test), so that the run command finds them and never builds.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import t, { type Test } from 'tap';
import { operatorArgs } from '../../scripts/operator-command.ts';
import { eventually } from '../support/poll.ts';
import { makeDevCerts } from '../../certs/make-dev-certs.ts';
import { ROOT, waitForAdmission } from '../../scripts/local-stack.ts';
import { renderWebhookConfigurations } from '../../src/admission/webhook-configs.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { buildBinaries, freePorts, runCommand, startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';
import { expectedKubeVersion } from '../cluster/kube-version.ts';
import { describe, descendants, environOf, processesMentioning, stillRunning, type ProcInfo } from './support/proc.ts';
import { cleanEnv, httpStatus, newestMtime, runPrinted, startRunCommand, type RunCommand } from './support/run-command.ts';

const log = (line: string): void => { t.comment(line); };

// Deadlines only turn a hang into a failure; nothing here asserts on time. Generous: two cores
// shared with other test files.
const STACK_START_MS = 300_000;
const READY_MS = 180_000;
const EXIT_MS = 120_000;

const SAMPLE = join(ROOT, 'test', 'fixtures', 'samples', '1-simple-echo-agent.yaml');
const SECURITY_PLANE = join(ROOT, 'test', 'fixtures', 'kaos-2026', 'security-plane.yaml');
const SAMPLE_APPLIED = [
  'namespace/kaos-simple created',
  'modelapi.kaos.tools/simple-modelapi created',
  'mcpserver.kaos.tools/simple-echo-mcp created',
  'agent.kaos.tools/simple-agent created',
  '',
].join('\n');
const ORPHAN_AGENT = `apiVersion: kaos.tools/v1alpha1
kind: Agent
metadata:
  name: orphan
  namespace: kaos-simple
spec:
  modelAPI: no-such-modelapi
`;
const ORPHAN_DENIED = 'The Agent "orphan" is invalid: spec.modelAPI: Not found: "no-such-modelapi"\n';
const KAOS_CRDS = [
  'customresourcedefinition.apiextensions.k8s.io/accessgrants.kaos.tools',
  'customresourcedefinition.apiextensions.k8s.io/agents.kaos.tools',
  'customresourcedefinition.apiextensions.k8s.io/mcpservers.kaos.tools',
  'customresourcedefinition.apiextensions.k8s.io/memorystores.kaos.tools',
  'customresourcedefinition.apiextensions.k8s.io/modelapis.kaos.tools',
  '',
].join('\n');
const NOT_REGISTERED = [
  '[kaos] webhook configurations NOT registered: an API server elsewhere usually cannot reach this machine.',
  '[kaos] Set WEBHOOK_URL=https://<address the API server can reach>:<port> to register them (the operator listens on WEBHOOK_PORT, default 9443).',
];
const OPERATOR_MAIN = join(ROOT, 'dist', 'main.js');
const REPO_DEV_CERTS = join(ROOT, 'certs', 'dev');

/** Builds dist/ (as `npm run build` does) unless it is newer than every source file. */
function ensureDist(): void {
  const main = join(ROOT, 'dist', 'main.js');
  if (existsSync(main) && statSync(main).mtimeMs >= newestMtime(join(ROOT, 'src'), '.ts')) return;
  log('dist/ is missing or older than src/: building it (npm run build)');
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.ts')], { cwd: ROOT, stdio: 'pipe' });
}

/** The operator's JSON log lines (what the run command copies to stdout). */
function logEntries(stdout: string): Array<Record<string, unknown>> {
  const entries: Array<Record<string, unknown>> = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      entries.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line still being written
    }
  }
  return entries;
}

/** The operator process the run command started: `node dist/main.js`, its child. */
function operatorOf(run: RunCommand): ProcInfo[] {
  return descendants(run.pid).filter((p) => p.ppid === run.pid && p.argv.join(' ') === [process.execPath, ...operatorArgs(OPERATOR_MAIN)].join(' '));
}

/** The sample applies through the webhooks: created as printed, defaulted, and a dangling reference refused by the operator. */
async function assertAdmission(t: Test, run: RunCommand, kubectl: (args: string[], input?: string) => ReturnType<typeof runCommand>, applySample: () => ReturnType<typeof runCommand>): Promise<void> {
  const applied = await applySample();
  t.equal(applied.stdout, SAMPLE_APPLIED, 'kubectl apply of the sample prints one "created" line per object');
  t.equal(applied.stderr, '', 'and nothing on stderr');
  t.equal(applied.code, 0, 'and succeeds');
  const image = await kubectl(['get', 'modelapi', 'simple-modelapi', '-n', 'kaos-simple', '-o', 'jsonpath={.spec.container.image}']);
  t.equal(image.stdout, 'ollama/ollama:0.11.4', 'the mutating webhook defaulted the ModelAPI\'s image');

  const denied = await kubectl(['apply', '-f', '-'], ORPHAN_AGENT);
  t.equal(denied.stderr, ORPHAN_DENIED, 'an Agent naming a missing ModelAPI is refused, with the field and the name');
  t.equal(denied.stdout, '', 'nothing on stdout');
  t.equal(denied.code, 1, 'kubectl exits 1');
  // The refusal is the operator's: its validating webhook logged this very request as a 422.
  const refusalLogged = () => logEntries(run.stdout()).some((e) =>
    e.webhook === '/validate-kaos-tools-v1alpha1-agent' && e.name === 'orphan' && e.namespace === 'kaos-simple' && e.operation === 'CREATE' && e.code === 422,
  );
  await eventually('the operator to log the refusal of Agent orphan', refusalLogged, { timeoutMs: 30_000, intervalMs: 200 });
  t.ok(refusalLogged(), 'the operator\'s validating webhook logged the refusal (422) on the run command\'s stdout');
  const absent = await kubectl(['get', 'agent', 'orphan', '-n', 'kaos-simple']);
  t.equal(absent.stderr, 'Error from server (NotFound): agents.kaos.tools "orphan" not found\n', 'the refused Agent was not stored');
}

type Kubectl = (args: string[], input?: string) => ReturnType<typeof runCommand>;
type Json = Record<string, unknown>;

/** `kubectl get -o json` of one object, once it exists. */
async function getJson(kubectl: Kubectl, resource: string, namespace: string, name: string): Promise<Json> {
  let found: Json | undefined;
  await eventually(`${resource} ${namespace}/${name}`, async () => {
    const res = await kubectl(['get', resource, name, '-n', namespace, '-o', 'json']);
    found = res.code === 0 ? JSON.parse(res.stdout) as Json : undefined;
    return found !== undefined;
  }, { timeoutMs: READY_MS, intervalMs: 500 });
  return found ?? {};
}

interface PodSpec {
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  initContainers?: Array<{ name: string; image: string; env?: Array<{ name: string; value?: string }> }>;
  containers: Array<{ name: string; image: string; env?: Array<{ name: string; value?: string }>; volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }> }>;
  volumes?: Array<{ name: string }>;
}
const podSpecOf = (deployment: Json): PodSpec => (deployment as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;

/**
 * KAOS's 2026 security plane under `npm start` (docs/api.md, "Security plane"): an Agent, a harness
 * Agent and an AccessGrant apply unchanged; each Agent runs under its ServiceAccount with the
 * projected token and AGENT_AUTH_* last in its env; the harness Agent has its runtime's image, the
 * clone init container, HARNESS_* and the workspace volumes; the AccessGrant is not enforced with
 * security off, and says why. Expectations are the contract's, written out.
 */
async function assertSecurityPlane(t: Test, kubectl: Kubectl): Promise<void> {
  const ns = 'kaos-secure';
  const applied = await kubectl(['apply', '-f', SECURITY_PLANE]);
  t.same(applied, {
    code: 0,
    stdout: [
      `namespace/${ns} created`,
      'modelapi.kaos.tools/team-modelapi created',
      'agent.kaos.tools/helper created',
      'agent.kaos.tools/coder created',
      'accessgrant.kaos.tools/platform-team created',
      '',
    ].join('\n'),
    stderr: 'Warning: this AccessGrant will not be enforced: Gateway authorization is not enabled; this AccessGrant is not enforced\n',
  }, 'the manifest applies as written; the AccessGrant is admitted with a warning that security is off');

  const tokenVolume = {
    name: 'agent-auth-token',
    projected: { sources: [{ serviceAccountToken: { audience: 'kaos-gateway', expirationSeconds: 3600, path: 'token' } }] },
  };
  const tokenMount = { name: 'agent-auth-token', mountPath: '/var/run/secrets/kaos-agent', readOnly: true };
  const identityEnv = (name: string) => [
    { name: 'AGENT_AUTH_IDENTITY', value: `kaos://agent/${ns}/${name}` },
    { name: 'AGENT_AUTH_TOKEN_FILE', value: '/var/run/secrets/kaos-agent/token' },
  ];
  for (const name of ['helper', 'coder']) {
    const account = await getJson(kubectl, 'serviceaccount', ns, `kaos-agent-${name}`);
    t.match(account, { metadata: { labels: { 'kaos.tools/agent': name } }, automountServiceAccountToken: false }, `${name}: its ServiceAccount kaos-agent-${name}`);
    const pod = podSpecOf(await getJson(kubectl, 'deployment', ns, `agent-${name}`));
    t.equal(pod.serviceAccountName, `kaos-agent-${name}`, `${name}: the pod runs under it`);
    t.equal(pod.automountServiceAccountToken, false, `${name}: with no API token`);
    t.match(pod.volumes?.[0], tokenVolume, `${name}: the projected token is the pod's first volume`);
    const agent = pod.containers.find((c) => c.name === 'agent');
    t.match(agent?.volumeMounts?.find((m) => m.name === 'agent-auth-token'), tokenMount, `${name}: mounted read-only at the token path's directory`);
    t.same(agent?.env?.slice(-2), identityEnv(name), `${name}: AGENT_AUTH_IDENTITY and AGENT_AUTH_TOKEN_FILE, the last generated env`);
  }

  const coder = podSpecOf(await getJson(kubectl, 'deployment', ns, 'agent-coder'));
  const agent = coder.containers.find((c) => c.name === 'agent');
  t.equal(agent?.image, 'ghcr.io/axsaucedo/kaos-harness-pi:0.1.0', 'the harness Agent runs pi\'s image from the registry');
  t.same(agent?.env?.slice(-5, -2), [
    { name: 'HARNESS_DRIVER', value: 'pi' },
    { name: 'HARNESS_WORKSPACE', value: '/workspace' },
    { name: 'HARNESS_STATE_DIR', value: '/state' },
  ], 'HARNESS_* just before the identity env');
  t.same(coder.volumes?.map((v) => v.name), ['agent-auth-token', 'workspace', 'state'], 'the token volume, then the workspace\'s');
  t.match(coder.initContainers, [{
    name: 'workspace-clone',
    image: 'alpine/git:2.45.2',
    env: [{ name: 'WORKSPACE_REPO_URL', value: 'https://github.com/acme/platform-tools.git' }, { name: 'WORKSPACE_BRANCH', value: 'main' }],
  }], 'the clone init container, the repository and the branch as its env');
  t.equal(coder.initContainers?.length, 1, 'and no other');

  let enforced: Json | undefined;
  await eventually('the AccessGrant\'s Enforced condition', async () => {
    const grant = await getJson(kubectl, 'accessgrant', ns, 'platform-team');
    const conditions = ((grant.status as Json | undefined)?.conditions ?? []) as Json[];
    enforced = conditions.find((c) => c.type === 'Enforced');
    return enforced !== undefined;
  }, { timeoutMs: READY_MS, intervalMs: 500 });
  t.match(enforced, {
    status: 'False',
    reason: 'AuthorizationDisabled',
    message: 'Gateway authorization is not enabled; this AccessGrant is not enforced',
    observedGeneration: 1,
  }, 'Enforced=False AuthorizationDisabled: npm start runs with security off');
}

const binDir = await buildBinaries(log);
// build.sh puts them in <cache>/cluster-<build>/bin: <cache> is what KAOS_CACHE_DIR names.
const cacheRoot = resolve(binDir, '..', '..');
ensureDist();

t.test('no cluster: a local control plane; prints how to use it; kubectl goes through the webhooks; Ctrl-C leaves nothing', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'kaos-home-'));
  // HOME empty, so no ~/.kube/config; KUBECONFIG unset (cleanEnv); the real cache and the
  // Kubernetes minor this run tests (npm run test:kube), so no build.
  const minor = process.env.KAOS_KUBE_VERSION;
  const run = startRunCommand(cleanEnv({ HOME: home, KAOS_CACHE_DIR: cacheRoot, ...(minor === undefined ? {} : { KAOS_KUBE_VERSION: minor }) }));
  const planeDir = (): string | undefined => /\(kubeconfig (\/\S+)\/kubeconfig\)/.exec(run.stderr())?.[1];
  t.teardown(async () => {
    const dir = planeDir();
    await run.killAll(dir);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  });

  const removes = await run.waitForStderr(/^Ctrl-C stops the operator and the control plane and removes (\/\S+)\.\n/m, STACK_START_MS);
  const dir = removes[1] ?? '';
  t.equal(planeDir(), dir, 'the directory it will remove is the control plane\'s');
  const kubeconfig = join(dir, 'kubeconfig');
  const kubectl = join(binDir, 'kubectl');
  const banner = [
    '',
    'kaos-operator is running, with its webhooks registered, against a local control plane.',
    'Use it from another terminal:',
    '',
    `  export KUBECONFIG=${kubeconfig}`,
    `  ${kubectl} apply -f ${SAMPLE}`,
    `  ${kubectl} get agents,modelapis,mcpservers -A`,
    `  ${kubectl} get deployments,services,configmaps -A -l app.kubernetes.io/managed-by=kaos-operator`,
    `  ${kubectl} get pods -A -w`,
    '',
    'The controller runs too (LEADER_ELECT=false: one replica, no Lease): each object gets its',
    'Deployment and Service (and a ConfigMap for a Proxy ModelAPI), owned by it, and a status.',
    'As with KAOS\'s chart, each Agent also gets a ServiceAccount kaos-agent-<name> and runs under it',
    '(SECURITY_AGENT_AUTH_IDENTITY_PROVIDER=serviceaccount; set it empty for none).',
    'The pods run on 3 fake nodes (kwok-node-0, kwok-node-1, kwok-node-2): kube-scheduler places',
    'them and kwok plays the kubelet (no container runs; a pod turns Running and Ready within',
    'seconds), so the Deployments become available and every object reaches Ready; an Agent',
    'waits for its ModelAPI and MCPServers first (kubectl describe agent <name> -n <namespace>',
    'says why).',
    `Ctrl-C stops the operator and the control plane and removes ${dir}.`,
    '',
  ].join('\n');
  const stderrAtReady = run.stderr();
  t.equal(stderrAtReady.slice(-banner.length), banner, 'it ends with the KUBECONFIG line, the kubectl to use (from the cache), the sample and what Ctrl-C does');
  const progress = stderrAtReady.slice(0, -banner.length).split('\n').slice(0, -1);
  t.equal(progress[0], '[kaos] no reachable cluster: starting a local control plane on 127.0.0.1 (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, and kwok running pods on fake nodes)', 'it says there is no cluster first');
  // Another minor than the default's also names the default's build first, whose clients it links.
  const builds = progress.filter((l) => l.startsWith('[kaos] [cluster-build] '));
  t.same(builds, progress.slice(1, 1 + builds.length), 'the build speaks next');
  t.equal(builds.at(-1)?.replace(/ \(its clients from \S+\)$/, ''), `[kaos] [cluster-build] control plane ${expectedKubeVersion()} ready in ${binDir}`, 'it found the binaries in KAOS_CACHE_DIR');
  t.ok(builds.every((l) => / ready in \S+/.test(l)), `and only found them: ${builds.join(' / ')}`);
  t.equal(progress.at(-1), '[kaos] [stack] admission is live', 'and says admission is live last');
  t.same(progress.filter((l) => !l.startsWith('[kaos] ')), [], 'every progress line carries the [kaos] prefix');
  t.notMatch(stderrAtReady, /building/, 'nothing was built');
  t.ok(existsSync(kubeconfig), 'the printed kubeconfig exists');

  // The other terminal: exactly the printed lines, after the printed export.
  const exportLine = /^ {2}export KUBECONFIG=(\S+)$/m.exec(stderrAtReady)?.[1] ?? '';
  const applyLine = /^ {2}(\S+ apply -f \S+)$/m.exec(stderrAtReady)?.[1] ?? '';
  const getLine = /^ {2}(\S+ get agents,modelapis,mcpservers -A)$/m.exec(stderrAtReady)?.[1] ?? '';
  const userEnv = cleanEnv({ HOME: home, KUBECONFIG: exportLine });
  await assertAdmission(t, run, (args, input) => runCommand(kubectl, args, { env: userEnv, ...(input === undefined ? {} : { input }) }), () => runPrinted(applyLine, userEnv));
  const listed = await runPrinted(getLine, userEnv);
  t.equal(listed.code, 0, 'the printed get works', { stderr: listed.stderr });
  t.match(listed.stdout, /^kaos-simple\s+agent\.kaos\.tools\/simple-agent\s+simple-modelapi\s/m, 'it lists the Agent');
  t.match(listed.stdout, /^kaos-simple\s+modelapi\.kaos\.tools\/simple-modelapi\s+Hosted\s/m, 'the ModelAPI');
  t.match(listed.stdout, /^kaos-simple\s+mcpserver\.kaos\.tools\/simple-echo-mcp\s+python-runtime\s/m, 'and the MCPServer');
  // KAOS's default install: ServiceAccount identity, so the sample's Agent runs as its own.
  const podAccount = async (): Promise<string> =>
    (await runCommand(kubectl, ['-n', 'kaos-simple', 'get', 'pods', '-l', 'agent=simple-agent', '-o', 'jsonpath={.items[*].spec.serviceAccountName}'], { env: userEnv })).stdout;
  await eventually('the sample Agent\'s pod', async () => (await podAccount()) !== '', { timeoutMs: READY_MS, intervalMs: 500 });
  t.equal(await podAccount(), 'kaos-agent-simple-agent', 'npm start gives the Agent its ServiceAccount, as KAOS\'s chart does');
  await assertSecurityPlane(t, (args, input) => runCommand(kubectl, args, { env: userEnv, ...(input === undefined ? {} : { input }) }));

  // Everything it started: the control plane (each mentions the directory), its reaper, and the operator.
  const started = descendants(run.pid);
  const named = (name: string): ProcInfo[] => started.filter((p) => basename(p.argv[0] ?? '') === name && p.argv.some((a) => a.includes(dir)));
  const CONTROL_PLANE = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'];
  for (const name of CONTROL_PLANE) {
    t.equal(named(name).length, 1, `${name} runs, started by it, in ${dir}`);
  }
  t.equal(started.filter((p) => p.argv[0] === 'sh' && p.argv.includes(dir)).length, 1, 'the control plane\'s reaper runs');
  const operator = operatorOf(run);
  t.equal(operator.length, 1, 'the operator runs as node dist/main.js, its child');
  t.ok(environOf(operator[0]?.pid ?? 0, 'KUBECONFIG')?.startsWith(`${dir}/`), 'with a kubeconfig of that control plane');
  t.equal(environOf(operator[0]?.pid ?? 0, 'SECURITY_AGENT_AUTH_IDENTITY_PROVIDER'), 'serviceaccount', 'and ServiceAccount identity, as KAOS\'s chart');
  t.same(started.map(describe).sort(), [...CONTROL_PLANE.flatMap(named), ...started.filter((p) => p.argv[0] === 'sh'), ...operator].map(describe).sort(), 'and nothing else');
  t.same(processesMentioning(dir).filter((p) => !started.some((s) => s.pid === p.pid)).map(describe), [], 'every process using the directory is one of them');

  run.interrupt();
  const status = await run.waitForExit(EXIT_MS);
  t.same(status, { code: 130, signal: null }, 'Ctrl-C: it exits 130 once everything is stopped');
  t.equal(run.stderr().slice(stderrAtReady.length), '[kaos] SIGINT: stopping the operator and the control plane\n[control-plane] SIGINT: stopping 1 control plane(s)\n', 'it says what it stops');
  t.same(started.filter(stillRunning).map(describe), [], 'every process it started is gone');
  t.same(processesMentioning(dir).map(describe), [], 'no process mentions the directory');
  t.notOk(existsSync(dir), `${dir} is removed`);
});

/** A control plane of our own, standing in for "the cluster in KUBECONFIG", and the run command against it. */
async function againstCluster(t: Test, options: { webhookUrl?: (port: number) => string; keepCa: boolean }): Promise<{
  plane: ControlPlane; run: RunCommand; certDir: string; webhookPort: number; metricsPort: number; stderrAtReady: string; devCertsBefore: boolean;
}> {
  let plane: ControlPlane | undefined;
  let run: RunCommand | undefined;
  const home = await mkdtemp(join(tmpdir(), 'kaos-home-'));
  const certDir = await mkdtemp(join(tmpdir(), 'kaos-certs-'));
  t.teardown(async () => {
    await run?.killAll();
    await plane?.stop();
    await rm(home, { recursive: true, force: true });
    await rm(certDir, { recursive: true, force: true });
  });
  plane = await startControlPlane({ binDir, log });
  t.equal((await plane.kubectl(['get', 'crd', '-o', 'name'])).stdout, '', 'the cluster has no CRDs yet');
  // A serving certificate of the user's own (WEBHOOK_CERT_DIR), so nothing is written to certs/dev/.
  await makeDevCerts({ outDir: certDir });
  if (!options.keepCa) {
    await unlink(join(certDir, 'ca.crt'));
    await unlink(join(certDir, 'ca.key'));
  }
  const [webhookPort = 0, metricsPort = 0] = await freePorts(2);
  const devCertsBefore = existsSync(REPO_DEV_CERTS);
  run = startRunCommand(cleanEnv({
    HOME: home,
    KUBECONFIG: plane.kubeconfigPath,
    WEBHOOK_CERT_DIR: certDir,
    WEBHOOK_HOST: '127.0.0.1',
    WEBHOOK_PORT: String(webhookPort),
    METRICS_HOST: '127.0.0.1',
    METRICS_PORT: String(metricsPort),
    ...(options.webhookUrl === undefined ? {} : { WEBHOOK_URL: options.webhookUrl(webhookPort) }),
  }));
  const current = run;
  await eventually('the operator\'s /readyz', async () => current.hasExited() || (await httpStatus(`http://127.0.0.1:${metricsPort}/readyz`)) === 200, { timeoutMs: READY_MS, intervalMs: 200 });
  t.notOk(run.hasExited(), 'the run command keeps running', { stderr: run.stderr() });
  t.equal(await httpStatus(`http://127.0.0.1:${metricsPort}/readyz`), 200, 'the operator is ready (/readyz 200 on METRICS_PORT)');
  const operator = operatorOf(run);
  t.equal(operator.length, 1, 'the operator runs as node dist/main.js, its child');
  t.equal(environOf(operator[0]?.pid ?? 0, 'KUBECONFIG'), plane.kubeconfigPath, 'with the user\'s kubeconfig');
  t.equal(environOf(operator[0]?.pid ?? 0, 'WEBHOOK_CERT_DIR'), certDir, 'and the user\'s certificate');
  t.equal(environOf(operator[0]?.pid ?? 0, 'SECURITY_AGENT_AUTH_IDENTITY_PROVIDER'), 'serviceaccount', 'and ServiceAccount identity unless the environment says otherwise');
  await eventually('the operator\'s "started" line', () => logEntries(current.stdout()).some((e) => e.msg === 'kaos-operator started'), { timeoutMs: 30_000, intervalMs: 200 });
  const startedLine = logEntries(run.stdout()).find((e) => e.msg === 'kaos-operator started');
  t.match(startedLine, { webhookPort, metricsPort, server: plane.server }, 'its log, on stdout, names the ports and the server');
  t.equal((await plane.kubectl(['get', 'crd', '-o', 'name'])).stdout, KAOS_CRDS, 'the five kaos.tools CRDs are installed');
  t.equal((await plane.kubectl(['get', 'namespace', 'kaos-system', '-o', 'name'])).stdout, 'namespace/kaos-system\n', 'the namespace of the leader-election Lease was made');
  return { plane, run, certDir, webhookPort, metricsPort, stderrAtReady: run.stderr(), devCertsBefore };
}

/** Ctrl-C: the operator shuts down, the run command exits 130 and leaves no process; the cluster is the user's and stays. */
async function assertInterrupt(t: Test, c: Awaited<ReturnType<typeof againstCluster>>): Promise<void> {
  const operator = operatorOf(c.run);
  c.run.interrupt();
  const status = await c.run.waitForExit(EXIT_MS);
  t.same(status, { code: 130, signal: null }, 'Ctrl-C: it exits 130 after the operator\'s clean shutdown');
  t.equal(c.run.stderr(), c.stderrAtReady, 'and prints nothing more on stderr');
  t.ok(logEntries(c.run.stdout()).some((e) => e.msg === 'shutting down' && e.signal === 'SIGINT'), 'the operator logged its shutdown on SIGINT');
  t.same(operator.filter(stillRunning).map(describe), [], 'the operator is gone');
  t.same(descendants(c.run.pid).map(describe), [], 'nothing it started runs');
  t.equal(await httpStatus(`http://127.0.0.1:${c.metricsPort}/readyz`), 0, 'the metrics port is closed');
  t.equal((await c.plane.kubectl(['get', 'crd', '-o', 'name'])).stdout, KAOS_CRDS, 'the cluster keeps its CRDs');
  t.equal(existsSync(REPO_DEV_CERTS), c.devCertsBefore, 'certs/dev/ in the repository was not created');
}

t.test('a reachable cluster, no WEBHOOK_URL: CRDs applied, the operator runs, webhooks not registered and how to', async (t) => {
  const c = await againstCluster(t, { keepCa: true });
  t.equal(c.stderrAtReady, [
    `[kaos] running against ${c.plane.server} (kubeconfig ${c.plane.kubeconfigPath})`,
    '[kaos] CRDs from crds/ applied (server-side apply)',
    '[kaos] namespace kaos-system created for the leader-election Lease (LEADER_ELECT=false runs without one)',
    '[kaos] ConfigMap kaos-system/kaos-mcp-runtimes created with the built-in MCP runtimes',
    // SYSTEM_NAMESPACE unset: KAOS's own default, kaos.
    '[kaos] ConfigMap kaos/kaos-harness-runtimes created with the built-in harness runtimes',
    ...NOT_REGISTERED,
    '',
  ].join('\n'), 'it names the server, the CRDs, that webhooks are NOT registered and how to set WEBHOOK_URL');
  const hooks = await c.plane.kubectl(['get', 'mutatingwebhookconfigurations,validatingwebhookconfigurations', '-o', 'name']);
  t.equal(hooks.stdout, '', 'no webhook configuration in the cluster');
  await assertInterrupt(t, c);
});

t.test('a reachable cluster, WEBHOOK_URL and WEBHOOK_CERT_DIR holding ca.crt: webhooks registered with that CA and working', async (t) => {
  const c = await againstCluster(t, { keepCa: true, webhookUrl: (port) => `https://127.0.0.1:${port}` });
  const url = `https://127.0.0.1:${c.webhookPort}`;
  t.equal(c.stderrAtReady, [
    `[kaos] running against ${c.plane.server} (kubeconfig ${c.plane.kubeconfigPath})`,
    '[kaos] CRDs from crds/ applied (server-side apply)',
    '[kaos] namespace kaos-system created for the leader-election Lease (LEADER_ELECT=false runs without one)',
    '[kaos] ConfigMap kaos-system/kaos-mcp-runtimes created with the built-in MCP runtimes',
    // SYSTEM_NAMESPACE unset: KAOS's own default, kaos.
    '[kaos] ConfigMap kaos/kaos-harness-runtimes created with the built-in harness runtimes',
    `[kaos] webhook configurations registered for ${url}`,
    '',
  ].join('\n'), 'it names the server, the CRDs and the webhook URL registered');
  const expected = renderWebhookConfigurations({ url, caBundle: readFileSync(join(c.certDir, 'ca.crt'), 'utf8') });
  const hooks = await c.plane.kubectl(['get', 'mutatingwebhookconfigurations,validatingwebhookconfigurations', '-o', 'name']);
  t.equal(hooks.stdout, `mutatingwebhookconfiguration.admissionregistration.k8s.io/${expected[0].metadata.name}\nvalidatingwebhookconfiguration.admissionregistration.k8s.io/${expected[1].metadata.name}\n`, 'both webhook configurations are registered');
  for (const config of expected) {
    const live = JSON.parse((await c.plane.kubectl(['get', config.kind.toLowerCase(), config.metadata.name, '-o', 'json'])).stdout) as { webhooks: Array<{ clientConfig: unknown }> };
    t.same(live.webhooks.map((w) => w.clientConfig), config.webhooks.map((w) => w.clientConfig), `${config.kind}: every webhook calls ${url} and trusts WEBHOOK_CERT_DIR/ca.crt`);
  }
  await waitForAdmission(await KubeClient.fromKubeConfig(c.plane.kubeconfigPath));
  await assertAdmission(t, c.run, (args, input) => c.plane.kubectl(args, input === undefined ? {} : { input }), () => c.plane.kubectl(['apply', '-f', SAMPLE]));
  await assertInterrupt(t, c);
});

t.test('a reachable cluster, WEBHOOK_URL but WEBHOOK_CERT_DIR without ca.crt: not registered, and it says why', async (t) => {
  const c = await againstCluster(t, { keepCa: false, webhookUrl: (port) => `https://127.0.0.1:${port}` });
  t.equal(c.stderrAtReady, [
    `[kaos] running against ${c.plane.server} (kubeconfig ${c.plane.kubeconfigPath})`,
    '[kaos] CRDs from crds/ applied (server-side apply)',
    '[kaos] namespace kaos-system created for the leader-election Lease (LEADER_ELECT=false runs without one)',
    '[kaos] ConfigMap kaos-system/kaos-mcp-runtimes created with the built-in MCP runtimes',
    // SYSTEM_NAMESPACE unset: KAOS's own default, kaos.
    '[kaos] ConfigMap kaos/kaos-harness-runtimes created with the built-in harness runtimes',
    `[kaos] webhook configurations NOT registered: ${join(c.certDir, 'ca.crt')} is missing, and the API server needs the CA that signed the serving certificate.`,
    '[kaos] Put that CA in ca.crt next to tls.crt and tls.key, or unset WEBHOOK_CERT_DIR to have a development certificate made in certs/dev/.',
    '',
  ].join('\n'), 'it says which file is missing and what to do');
  const hooks = await c.plane.kubectl(['get', 'mutatingwebhookconfigurations,validatingwebhookconfigurations', '-o', 'name']);
  t.equal(hooks.stdout, '', 'no webhook configuration in the cluster');
  await assertInterrupt(t, c);
});

t.test('no cluster and no Go toolchain: says so and exits 1, without building anything', async (t) => {
  const home = await mkdtemp(join(tmpdir(), 'kaos-home-'));
  const cache = await mkdtemp(join(tmpdir(), 'kaos-cache-'));
  const tmp = await mkdtemp(join(tmpdir(), 'kaos-tmp-'));
  let run: RunCommand | undefined;
  t.teardown(async () => {
    await run?.killAll(cache);
    for (const dir of [home, cache, tmp]) await rm(dir, { recursive: true, force: true });
  });
  // Node (this test's, Node 24) and the basic tools, but no Go: it lives in /usr/local/go/bin.
  const path = [dirname(process.execPath), '/usr/bin', '/bin'];
  t.same(path.filter((d) => existsSync(join(d, 'go'))), [], 'precondition: no go on the PATH given');
  run = startRunCommand(cleanEnv({ HOME: home, KAOS_CACHE_DIR: cache, TMPDIR: tmp, PATH: path.join(':') }));
  const status = await run.waitForExit(EXIT_MS);
  t.same(status, { code: 1, signal: null }, 'it exits 1');
  t.equal(run.stderr(), [
    '[kaos] no reachable cluster: starting a local control plane on 127.0.0.1 (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, and kwok running pods on fake nodes)',
    '[kaos] [cluster-build] FAILED: no Go toolchain on PATH: install Go ≥ 1.26.0 to build the control plane',
    '[kaos] no cluster is reachable (set KUBECONFIG to one) and there is no Go toolchain to build a local control plane:',
    '[kaos] install Go ≥ 1.26, or point KUBECONFIG at a reachable cluster.',
    '',
  ].join('\n'), 'it says there is no cluster and no Go, and what to do');
  t.equal(run.stdout(), '', 'nothing on stdout');
  t.same(readdirSync(cache).filter((name) => name !== '.build.lock'), [], 'nothing was built into the cache');
  t.same(readdirSync(tmp), [], 'no control-plane directory was made');
  t.same(processesMentioning(cache).map(describe), [], 'nothing it started runs');
});
