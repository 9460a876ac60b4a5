// `npm run bench:admission -- states`: admission's latency at concurrency 1 while the same
// operator process does other work, beside a bare webhook under the same load. Never part of
// pass/fail.
//
// One local control plane without pods (test/bench/rollout-stand-in.ts writes each Deployment's
// rolled-out status), the operator with its controller on (LEADER_ELECT=false, LOG_LEVEL info,
// as shipped otherwise), RELIST_AGENTS Agents converged in namespace `relist` before anything is
// measured. Three states of the one process, each measured twice: with the webhook
// configurations pointing at the operator, and pointing at the bare webhook
// (test/bench/bare-webhook.ts, a process of its own), the operator's controller running either way:
//   idle        nothing but the probe, IDLE_SETTLE_SECONDS after the controller's queues emptied;
//   converging  another client (test/bench/admission-load.ts, a process of its own) creates
//               BULK_AGENTS Agents with their dependencies, CREATE_IN_FLIGHT in flight, through the
//               registered webhooks, and the window lasts until the controller has made every one
//               Ready (the namespace is deleted afterwards, outside any window);
//   relist      the Agent CRD's spec is touched (a printer column added or removed), which makes
//               the API server rebuild the Agents' storage and end every watch of them; the
//               operator's Agent reflector resumes from a resourceVersion the new watch cache does
//               not have, gets 410 Gone and relists its RELIST_AGENTS+ Agents, RELISTS times in a
//               row (each after the last one's `listed` log line and RELIST_TAIL_MS). Its reflector
//               backs off between the watch failures that lead there, so only the probes that
//               overlapped a list (from its start, told by the log, to RELIST_TAIL_MS after its
//               `listed` line) count for this state's latency; the loop-delay and GC figures are
//               the whole window's.
// The probe, in this process (which does nothing else meanwhile): server-side dry-run creates of
// an Agent, one at a time, through both webhooks — nothing is stored, so the probe adds no
// reconcile. Per window: the probe's latency (p50, p99, max; exact), the API server's
// apiserver_admission_webhook_admission_duration_seconds and, for the operator, its
// controller_runtime_webhook_latency_seconds (mean and histogram_quantile p99: only as fine as
// the buckets), the operator's event-loop delay (prom-client's nodejs_eventloop_lag_* gauges, a
// perf_hooks.monitorEventLoopDelay histogram reset at each scrape; one series per thread when the
// operator reports a `thread` label) and its GC pauses (from --trace-gc, one line per collection
// with its pause, per V8 isolate).
//
// BENCH_BASE=<directory of another checkout, built> runs that build's dist/main.js as well,
// alternated with this tree's within each round (this, base; then base, this; …), on the same
// control plane, so that before and after are measured side by side. BENCH_HEAD=<directory>
// runs that checkout's build in place of this tree's. Either may end in `+VAR=value` operator
// settings of its own (`BENCH_BASE=.+WEBHOOK_THREAD=false`: this tree with admission on the main
// thread, beside itself as shipped).
//
// Env: ROUNDS (2), RELIST_AGENTS (3000), BULK_AGENTS (1000), IDLE_PROBES (1500), IDLE_SETTLE_SECONDS (15), RELISTS (4),
// RELIST_TAIL_MS (200), BENCH_BASE, BENCH_HEAD, CREATE_IN_FLIGHT (16).
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  applySetupObjects,
  installCrds,
  ROOT,
  startOperator,
  waitForAdmission,
  writeTokenKubeconfig,
  type OperatorProcess,
  type StartOperatorOptions,
} from '../../scripts/local-stack.ts';
import { makeDevCerts } from '../../certs/make-dev-certs.ts';
import { renderWebhookConfigurations } from '../../src/admission/webhook-configs.ts';
import { runtimesConfigMap } from '../../src/api/mcp-runtime-defaults.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import { OPERATOR_IDENTITY, OPERATOR_USER, renderRbac } from '../../src/cluster/rbac.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { ApiError } from '../../src/kube/errors.ts';
import { NAMESPACE, resourcePath } from '../../src/kube/paths.ts';
import { startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';
import type { BareWebhookMessage } from './bare-webhook.ts';
import type { LoadCommand, LoadReport } from './admission-load.ts';
import {
  fetchText,
  histogramDelta,
  histogramQuantile,
  histograms,
  mergeHistograms,
  samples,
  type HistogramData,
} from './metrics-text.ts';
import { buildSettings, int, kaosPath, log, operatorCommandOf, printTable, sleep } from './reconcile.ts';

const ROUNDS = Math.max(1, int('ROUNDS', 2));
const RELIST_AGENTS = int('RELIST_AGENTS', 3000);
const BULK_AGENTS = Math.max(1, int('BULK_AGENTS', 1000));
const IDLE_PROBES = Math.max(1, int('IDLE_PROBES', 1500));
/** Quiet time before an idle window, once the controller's queues are empty: the collector's own after-burst work (V8's memory reducer) is done by then. */
const IDLE_SETTLE_SECONDS = int('IDLE_SETTLE_SECONDS', 15);
const RELISTS = Math.max(1, int('RELISTS', 4));
const RELIST_TAIL_MS = int('RELIST_TAIL_MS', 200);
const BASE = process.env.BENCH_BASE;
const DEPS = { modelAPIs: 10, mcpServers: 20 };
const PROBE_NS = 'probe';
const ADMISSION_METRIC = 'apiserver_admission_webhook_admission_duration_seconds';
const OPERATOR_METRIC = 'controller_runtime_webhook_latency_seconds';
const AGENT_CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/agents.kaos.tools';
const RELIST_COLUMN = 'BenchRelist';
const HERE = fileURLToPath(new URL('.', import.meta.url));

type State = 'idle' | 'converging' | 'relist';
const STATES: readonly State[] = ['idle', 'converging', 'relist'];
type Webhook = 'operator' | 'bare';

/** A build's entry point, and for another checkout how it starts its operator (its own flags). */
interface Build { name: string; main: string; command?: StartOperatorOptions['command']; env: Record<string, string> }

/** The build a BENCH_BASE or BENCH_HEAD spec names: this tree's own dist/ as it starts it, or another checkout's with its own flags. */
async function buildOf(name: string, spec: string): Promise<Build> {
  const { dir, env } = buildSettings(spec);
  const suffix = Object.entries(env).map(([k, v]) => ` ${k}=${v}`).join('');
  if (resolve(dir) === resolve(ROOT)) return { name: `${name}${suffix}`, main: join(ROOT, 'dist', 'main.js'), env };
  return { name: `${name}${suffix}`, main: join(dir, 'dist', 'main.js'), command: await operatorCommandOf(dir), env };
}

/** One GC pause from --trace-gc. */
interface GcPause { isolate: string; kind: string; ms: number }

interface LoopLag { p50: number; p99: number; max: number }

/** What one window measured. */
interface Window {
  build: string;
  webhook: Webhook;
  state: State;
  seconds: number;
  /** Probe latencies, ms, sorted. */
  probe: number[];
  probeErrors: number;
  apiserver: HistogramData;
  /** The operator's own histogram (also fed by the bulk's creates while converging). */
  operator: HistogramData;
  /** Event-loop delay by thread ('main' when the operator reports no thread label). */
  lag: Map<string, LoopLag>;
  /** GC pauses by isolate: 'main' (the first isolate of the process), 'admission' for the worker's. */
  gc: Map<string, GcPause[]>;
  /** For relist windows: relists seen, of RELISTS triggered. */
  relists?: number;
  /** For converging windows: the probe's latencies while the bulk was being created, and after. */
  phases?: { creating: number[]; reconciling: number[] };
}

// ---- the stack ----------------------------------------------------------------------------

interface Stack {
  plane: ControlPlane;
  admin: KubeClient;
  operatorKubeconfig: string;
  certDir: string;
  caPem: string;
}

async function startStack(): Promise<Stack> {
  const identity = {
    token: randomBytes(24).toString('hex'),
    user: OPERATOR_USER,
    uid: 'kaos-operator-uid',
    groups: ['system:serviceaccounts', `system:serviceaccounts:${OPERATOR_IDENTITY.namespace}`],
  };
  const plane = await startControlPlane({ log, extraTokens: [identity], pods: false });
  try {
    const certDir = join(plane.dir, 'webhook-certs');
    const certs = await makeDevCerts({ outDir: certDir });
    const admin = await KubeClient.fromKubeConfig(plane.kubeconfigPath);
    await installCrds(admin);
    await applySetupObjects(admin, renderRbac() as KubeObject[]);
    await applySetupObjects(admin, [runtimesConfigMap(OPERATOR_IDENTITY.namespace)]);
    const operatorKubeconfig = join(plane.dir, 'operator.kubeconfig');
    await writeTokenKubeconfig(plane.kubeconfigPath, operatorKubeconfig, identity.token, identity.user);
    return { plane, admin, operatorKubeconfig, certDir, caPem: certs.caPem };
  } catch (err) {
    await plane.stop();
    throw err;
  }
}

/** A forked helper process and its messages; a failure it reports fails every wait, present and future. */
class Helper<In, Out> {
  readonly child: ChildProcess;
  readonly #waiting: Array<{ match: (m: Out) => boolean; resolve: (m: Out) => void; reject: (err: Error) => void }> = [];
  /** Messages no one waited for yet. */
  readonly #unread: Out[] = [];
  #failure: Error | undefined;
  constructor(script: string, args: string[], onFailure: (m: Out) => string | undefined) {
    this.child = fork(join(HERE, script), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (m: Out) => {
      const failure = onFailure(m);
      if (failure !== undefined) {
        this.#failure = new Error(`${script}: ${failure}`);
        for (const w of this.#waiting.splice(0)) w.reject(this.#failure);
        return;
      }
      const i = this.#waiting.findIndex((w) => w.match(m));
      if (i >= 0) this.#waiting.splice(i, 1)[0]?.resolve(m);
      else this.#unread.push(m);
    });
  }
  /** The first message that matches, already received or still to come. */
  next(match: (m: Out) => boolean): Promise<Out> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    const i = this.#unread.findIndex(match);
    if (i >= 0) return Promise.resolve(this.#unread.splice(i, 1)[0] as Out);
    return new Promise((resolve, reject) => this.#waiting.push({ match, resolve, reject }));
  }
  send(message: In): void {
    this.child.send(message as object);
  }
  stop(): void {
    this.child.kill('SIGTERM');
  }
}

// ---- the operator and what it reports ------------------------------------------------------

const OPERATOR_ENV: Record<string, string> = {
  LEADER_ELECT: 'false',
  LOG_LEVEL: 'info',
  SHUTDOWN_DELAY_SECONDS: '0',
};

async function launch(stack: Stack, build: Build, tag: string): Promise<OperatorProcess> {
  return startOperator({
    kubeconfig: stack.operatorKubeconfig,
    certDir: stack.certDir,
    logFile: join(stack.plane.dir, `operator-${tag}.log`),
    main: build.main,
    ...(build.command === undefined ? {} : { command: build.command }),
    nodeArgs: ['--trace-gc'],
    env: { ...OPERATOR_ENV, ...build.env },
    readyTimeoutMs: 120_000,
  });
}

const operatorMetrics = (operator: OperatorProcess): Promise<string> => fetchText(`http://127.0.0.1:${operator.metricsPort}/metrics`);

/** Until the controller's queues are empty and nothing was reconciled for `quietMs`. */
async function waitForIdle(operator: OperatorProcess, quietMs = 3000, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let since = Date.now();
  while (Date.now() < deadline) {
    const all = samples(await operatorMetrics(operator));
    const depth = all.filter((s) => s.name === 'workqueue_depth').reduce((n, s) => n + s.value, 0);
    const done = all.filter((s) => s.name === 'controller_runtime_reconcile_total').reduce((n, s) => n + s.value, 0);
    if (depth > 0 || done !== last) {
      last = done;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) {
      return;
    }
    await sleep(500);
  }
  throw new Error('the operator did not go idle');
}

/** Event-loop delay since the previous scrape, by thread. */
function loopLag(text: string): Map<string, LoopLag> {
  const out = new Map<string, LoopLag>();
  for (const s of samples(text)) {
    const m = /^nodejs_eventloop_lag_(p50|p99|max)_seconds$/.exec(s.name);
    if (m === null) continue;
    const thread = s.labels.thread ?? 'main';
    const lag = out.get(thread) ?? { p50: Number.NaN, p99: Number.NaN, max: Number.NaN };
    lag[m[1] as keyof LoopLag] = s.value * 1000;
    out.set(thread, lag);
  }
  return out;
}

/** The GC pauses --trace-gc wrote into the log between two byte offsets. */
function gcPauses(logFile: string, from: number, to: number, mainIsolate: { address?: string }): Map<string, GcPause[]> {
  const text = readFileSync(logFile).subarray(from, to).toString('utf8');
  const out = new Map<string, GcPause[]>();
  for (const line of text.split('\n')) {
    const m = /^\[\d+:(0x[0-9a-f]+)\]\s+[\d.]+ ms: ([A-Za-z() -]+?) [\d.]+ \(.*?MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/.exec(line);
    if (m === null) continue;
    const isolate = m[1] as string;
    mainIsolate.address ??= isolate;
    const role = isolate === mainIsolate.address ? 'main' : 'admission';
    const list = out.get(role) ?? [];
    list.push({ isolate, kind: m[2] as string, ms: Number(m[3]) });
    out.set(role, list);
  }
  return out;
}

/** The first isolate --trace-gc names in a log: the main thread's (it collects long before a worker starts). */
function firstIsolate(logFile: string): string | undefined {
  return /^\[\d+:(0x[0-9a-f]+)\]/m.exec(readFileSync(logFile, 'utf8'))?.[1];
}

// ---- the probe ------------------------------------------------------------------------------

const probeAgent: KubeObject = {
  apiVersion: 'kaos.tools/v1alpha1',
  kind: 'Agent',
  metadata: { name: 'probe', namespace: PROBE_NS },
  spec: { modelAPI: 'model', mcpServers: ['tools'], config: { description: 'probe', instructions: 'You answer briefly.' } },
};

/** One probe: when it started (wall clock, ms) and how long it took (ms). */
interface ProbeTime { at: number; ms: number }

/** Dry-run creates one after the other until `done(creates so far)`. */
async function probe(client: KubeClient, done: (count: number) => boolean): Promise<{ times: ProbeTime[]; errors: number }> {
  const times: ProbeTime[] = [];
  let errors = 0;
  const path = kaosPath('Agent', PROBE_NS);
  while (!done(times.length)) {
    const at = Date.now();
    const start = performance.now();
    try {
      await client.create(path, probeAgent, { dryRun: true });
      times.push({ at, ms: performance.now() - start });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      errors++;
    }
  }
  return { times, errors };
}

/**
 * When the operator's Agent reflector was listing, from its log (wall-clock ms): each list
 * starts at its 410 ("relisting", when it lists at once) or at the end of the backoff that
 * follows a failed watch, and ends at its "listed" line.
 */
function listIntervals(logFile: string, from: number): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  let start: number | undefined;
  for (const line of readFileSync(logFile).subarray(from).toString('utf8').split('\n')) {
    if (!line.startsWith('{') || !line.includes('"resource":"agents"')) continue;
    const entry = JSON.parse(line) as { time?: string; msg?: string; delayMs?: number };
    const at = Date.parse(entry.time ?? '');
    if (entry.msg === 'resourceVersion too old, relisting') start = at;
    else if (entry.msg?.endsWith('failed, retrying') === true) start = at + (entry.delayMs ?? 0);
    else if (entry.msg === 'listed' && start !== undefined) {
      out.push({ start, end: at });
      start = undefined;
    }
  }
  return out;
}

// ---- the run --------------------------------------------------------------------------------

export async function runStates(): Promise<void> {
  const head = process.env.BENCH_HEAD;
  const builds: Build[] = [head === undefined || head === '' ? { name: 'this tree', main: join(ROOT, 'dist', 'main.js'), env: {} } : await buildOf('head', head)];
  if (BASE !== undefined && BASE !== '') builds.push(await buildOf('base', BASE));
  const loadStart = loadavg()[0] ?? 0;
  log(`starting the control plane; builds: ${builds.map((b) => `${b.name} (${b.main})`).join(', ')}`);
  const stack = await startStack();
  const { admin, plane } = stack;
  const load = new Helper<LoadCommand, LoadReport>('admission-load.ts', [plane.kubeconfigPath], (m) => (m.event === 'failed' ? m.message : undefined));
  const bare = new Helper<'stats' | 'stop', BareWebhookMessage>('bare-webhook.ts', [stack.certDir], () => undefined);
  let operator: OperatorProcess | undefined;
  try {
    await load.next((m) => m.event === 'ready');
    const barePort = ((await bare.next((m) => 'port' in m)) as { port: number }).port;
    const bareStats = async (): Promise<Extract<BareWebhookMessage, { times: number[] }>> => {
      const reply = bare.next((m) => 'times' in m);
      bare.send('stats');
      return (await reply) as Extract<BareWebhookMessage, { times: number[] }>;
    };
    const apiserverMetrics = (): Promise<string> =>
      fetchText(`${plane.server}/metrics`, { ca: readFileSync(plane.caFile), headers: { authorization: `Bearer ${plane.token}` } });

    let tag = 0;
    let current: Build | undefined;
    let mainIsolate: { address?: string } = {};
    const useBuild = async (build: Build): Promise<OperatorProcess> => {
      if (current === build && operator !== undefined) return operator;
      await operator?.stop();
      log(`operator: ${build.name}`);
      operator = await launch(stack, build, `${tag++}`);
      current = build;
      mainIsolate = { address: firstIsolate(operator.logFile) };
      return operator;
    };
    const register = async (webhook: Webhook, op: OperatorProcess): Promise<void> => {
      const url = `https://127.0.0.1:${webhook === 'operator' ? op.webhookPort : barePort}`;
      await applySetupObjects(admin, renderWebhookConfigurations({ url, caBundle: stack.caPem }));
      if (webhook === 'operator') return waitForAdmission(admin);
      return waitForBare(admin, async () => (await bareStats()).answered);
    };
    /** Resolves with the wall-clock time at which every object was created. */
    const bulk = async (namespace: string, agents: number): Promise<number> => {
      const created = load.next((m) => m.event === 'created' && m.namespace === namespace).then(() => Date.now());
      const converged = load.next((m) => m.event === 'converged' && m.namespace === namespace);
      load.send({ cmd: 'bulk', namespace, agents, ...DEPS });
      const report = (await converged) as { seconds: number };
      log(`  ${agents} Agents in ${namespace} converged after ${report.seconds.toFixed(1)} s`);
      return created;
    };
    const remove = async (namespace: string): Promise<void> => {
      const deleted = load.next((m) => m.event === 'deleted' && m.namespace === namespace);
      load.send({ cmd: 'delete', namespace });
      await deleted;
    };

    // Setup: the probe's dependencies, then RELIST_AGENTS Agents converged by the first build.
    const first = await useBuild(builds[0] as Build);
    await register('operator', first);
    await admin.create(resourcePath(NAMESPACE), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: PROBE_NS } });
    await admin.create(kaosPath('ModelAPI', PROBE_NS), { apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'model' }, spec: { mode: 'Proxy', proxyConfig: { apiBase: 'http://ollama.example:11434', model: 'ollama/smollm2:135m' } } });
    await admin.create(kaosPath('MCPServer', PROBE_NS), { apiVersion: 'kaos.tools/v1alpha1', kind: 'MCPServer', metadata: { name: 'tools' }, spec: { type: 'python-runtime', config: { tools: { fromPackage: 'mcp-server-fetch' } } } });
    if (RELIST_AGENTS > 0) {
      log(`setup: ${RELIST_AGENTS} Agents in namespace relist`);
      await bulk('relist', RELIST_AGENTS);
    }

    const windows: Window[] = [];
    let bulkSeq = 0;
    let relistSeq = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? builds : [...builds].reverse();
      for (const build of order) {
        const op = await useBuild(build);
        await waitForIdle(op);
        const webhooks: Webhook[] = round % 2 === 0 ? ['operator', 'bare'] : ['bare', 'operator'];
        for (const webhook of webhooks) {
          await register(webhook, op);
          for (const state of STATES) {
            if (state === 'relist' && RELIST_AGENTS === 0) continue;
            log(`round ${round + 1}/${ROUNDS}, ${build.name}, webhooks → ${webhook}: ${state}`);
            await waitForIdle(op);
            if (state === 'idle') await sleep(IDLE_SETTLE_SECONDS * 1000);
            // The window: metrics and GC log offsets before and after, the probe throughout.
            const [apiBefore, opBefore] = await Promise.all([apiserverMetrics(), operatorMetrics(op)]);
            await bareStats();
            const logFrom = statSync(op.logFile).size;
            let finished = false;
            let relists: number | undefined;
            let createdAt: number | undefined;
            const t0 = performance.now();
            const probing = probe(admin, (count) => finished || (state === 'idle' && count >= IDLE_PROBES));
            const driver = (async (): Promise<void> => {
              if (state === 'idle') {
                await probing;
              } else if (state === 'converging') {
                createdAt = await bulk(`bulk-${bulkSeq++}`, BULK_AGENTS);
              } else {
                relists = 0;
                for (let i = 0; i < RELISTS; i++) {
                  if (await relist(admin, op.logFile, relistSeq++)) relists++;
                  await sleep(RELIST_TAIL_MS);
                }
              }
              finished = true;
            })();
            const [result] = await Promise.all([probing, driver]);
            const seconds = (performance.now() - t0) / 1000;
            const [apiAfter, opAfter] = await Promise.all([apiserverMetrics(), operatorMetrics(op)]);
            const bareAfter = await bareStats();
            const logTo = statSync(op.logFile).size;
            // A relist window's probes: those that overlapped a list (RELIST_TAIL_MS after it included).
            const probeTimes = (times: ProbeTime[], lists?: Array<{ start: number; end: number }>): number[] =>
              times.filter((t) => lists === undefined || lists.some((l) => t.at < l.end + RELIST_TAIL_MS && t.at + t.ms > l.start)).map((t) => t.ms).sort((a, b) => a - b);
            const onlyOurs = (labels: Record<string, string>): boolean => (labels.name ?? '').endsWith('.kaos.tools');
            windows.push({
              build: build.name,
              webhook,
              state,
              seconds,
              probe: probeTimes(result.times, state === 'relist' ? listIntervals(op.logFile, logFrom) : undefined),
              probeErrors: result.errors,
              apiserver: histogramDelta(
                mergeHistograms(histograms(apiAfter, ADMISSION_METRIC, 'name', onlyOurs).values()),
                mergeHistograms(histograms(apiBefore, ADMISSION_METRIC, 'name', onlyOurs).values()),
              ),
              operator: webhook === 'operator'
                ? histogramDelta(mergeHistograms(histograms(opAfter, OPERATOR_METRIC, 'webhook').values()), mergeHistograms(histograms(opBefore, OPERATOR_METRIC, 'webhook').values()))
                : bareHistogram(bareAfter.times),
              // The bare webhook's own loop stands beside the operator's threads: what the machine alone does to a loop.
              lag: webhook === 'bare' ? new Map([...loopLag(opAfter), ['bare', bareAfter.loop]]) : loopLag(opAfter),
              gc: gcPauses(op.logFile, logFrom, logTo, mainIsolate),
              ...(relists === undefined ? {} : { relists }),
              ...(createdAt === undefined ? {} : { phases: {
                creating: probeTimes(result.times.filter((t) => t.at < (createdAt as number))),
                reconciling: probeTimes(result.times.filter((t) => t.at >= (createdAt as number))),
              } }),
            });
            log(`  ${describe(windows[windows.length - 1] as Window)}`);
            if (state === 'converging') {
              await remove(`bulk-${bulkSeq - 1}`);
            }
          }
        }
      }
    }
    process.stdout.write(`\n${cpus().length} cores; 1-min load average ${loadStart.toFixed(1)} at the start, ${(loadavg()[0] ?? 0).toFixed(1)} at the end (others' work shares the cores)\n`);
    report(windows, builds);
  } finally {
    await operator?.stop();
    load.stop();
    bare.stop();
    await plane.stop();
  }
}

/**
 * Touches the Agent CRD's spec (adds or removes a printer column), which ends every watch of
 * Agents; resolves true once the operator has logged a list of Agents after the touch (a relist),
 * false if none came within `timeoutMs` (its watch resumed instead).
 */
async function relist(admin: KubeClient, logFile: string, seq: number, timeoutMs = 90_000): Promise<boolean> {
  const from = statSync(logFile).size;
  const crd = await admin.get<{ spec: { versions: Array<{ additionalPrinterColumns?: Array<{ name: string }> }> } }>(AGENT_CRD);
  const columns = crd.spec.versions[0]?.additionalPrinterColumns ?? [];
  const at = columns.findIndex((c) => c.name === RELIST_COLUMN);
  const patch = at >= 0
    ? [{ op: 'remove', path: `/spec/versions/0/additionalPrinterColumns/${at}` }]
    : [{ op: 'add', path: '/spec/versions/0/additionalPrinterColumns/-', value: { name: RELIST_COLUMN, type: 'string', jsonPath: '.metadata.uid', priority: 1, description: `bench relist ${seq}` } }];
  await admin.patch(AGENT_CRD, patch, 'json');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const text = readFileSync(logFile).subarray(from).toString('utf8');
    if (/"resource":"agents".*"msg":"listed"|"msg":"listed".*"resource":"agents"/.test(text)) return true;
    await sleep(20);
  }
  return false;
}

/** Until a dry-run create reaches the bare webhook: the API server calls it now. */
async function waitForBare(client: KubeClient, answered: () => Promise<number>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let total = await answered();
  while (Date.now() < deadline) {
    try {
      await client.create(kaosPath('ModelAPI', 'default'), { apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { generateName: 'probe-' }, spec: { mode: 'Hosted' } }, { dryRun: true });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
    }
    const now = total + (await answered());
    if (now >= total + 2) return; // both webhooks (mutating and validating) answered
    total = now;
    await sleep(250);
  }
  throw new Error(`the API server does not call the bare webhook ${timeoutMs} ms after it was registered`);
}

/** The bare webhook's own service times as a histogram with the operator's buckets. */
function bareHistogram(times: readonly number[]): HistogramData {
  const bounds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, Infinity];
  const buckets = new Map<number, number>(bounds.map((b) => [b, times.filter((t) => t / 1000 <= b).length]));
  return { buckets, sum: times.reduce((a, b) => a + b, 0) / 1000, count: times.length };
}

// ---- the report -----------------------------------------------------------------------------

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

const ms = (v: number): string => (Number.isNaN(v) ? '—' : v >= 100 ? v.toFixed(0) : v.toFixed(1));

interface Figures {
  probeP50: number;
  probeP99: number;
  probeMax: number;
  apiserverMean: number;
  apiserverP99: number;
  ownMean: number;
  ownP99: number;
  lagP99: Record<string, number>;
  lagMax: Record<string, number>;
  gcCount: Record<string, number>;
  gcTotal: Record<string, number>;
  gcMax: Record<string, number>;
  /** The longest pause's kind (Scavenge, Mark-Compact, …). */
  gcMaxKind: Record<string, string>;
}

function figures(w: Window): Figures {
  const perRole = (get: (p: GcPause[]) => number): Record<string, number> =>
    Object.fromEntries([...w.gc].map(([role, list]) => [role, get(list)]));
  return {
    probeP50: percentile(w.probe, 50),
    probeP99: percentile(w.probe, 99),
    probeMax: w.probe[w.probe.length - 1] ?? Number.NaN,
    apiserverMean: (w.apiserver.sum / Math.max(1, w.apiserver.count)) * 1000,
    apiserverP99: histogramQuantile(w.apiserver, 0.99) * 1000,
    ownMean: (w.operator.sum / Math.max(1, w.operator.count)) * 1000,
    ownP99: histogramQuantile(w.operator, 0.99) * 1000,
    lagP99: Object.fromEntries([...w.lag].map(([t, l]) => [t, l.p99])),
    lagMax: Object.fromEntries([...w.lag].map(([t, l]) => [t, l.max])),
    gcCount: perRole((l) => l.length),
    gcTotal: perRole((l) => l.reduce((a, p) => a + p.ms, 0)),
    gcMax: perRole((l) => Math.max(0, ...l.map((p) => p.ms))),
    gcMaxKind: Object.fromEntries([...w.gc].map(([role, list]) => [role, list.reduce((a, p) => (p.ms > a.ms ? p : a), { ms: -1, kind: '' } as { ms: number; kind: string }).kind])),
  };
}

function describe(w: Window): string {
  const f = figures(w);
  const per = (r: Record<string, number>): string => Object.entries(r).map(([k, v]) => `${k} ${ms(v)}`).join(', ');
  return `${w.probe.length} probes (${w.probeErrors} errors) in ${w.seconds.toFixed(1)} s: p50 ${ms(f.probeP50)}, p99 ${ms(f.probeP99)}, max ${ms(f.probeMax)} ms; ` +
    `API server mean ${ms(f.apiserverMean)} ms; own mean ${ms(f.ownMean)} ms; loop lag p99 ${per(f.lagP99)}, max ${per(f.lagMax)} ms; ` +
    `GC ${per(f.gcCount)} pauses, total ${per(f.gcTotal)} ms, max ${Object.entries(f.gcMax).map(([k, v]) => `${k} ${ms(v)} (${f.gcMaxKind[k] ?? ''})`).join(', ')} ms${w.relists === undefined ? '' : `; relists ${w.relists}/${RELISTS}`}`;
}

/** Median of the values, with their range: `m [lo–hi]`. */
function spread(values: readonly number[]): string {
  const v = values.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (v.length === 0) return '—';
  return v.length === 1 ? ms(median(v)) : `${ms(median(v))} [${ms(v[0] as number)}–${ms(v[v.length - 1] as number)}]`;
}

function median(values: readonly number[]): number {
  const v = values.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  return v.length % 2 === 1 ? (v[(v.length - 1) / 2] as number) : ((v[v.length / 2 - 1] as number) + (v[v.length / 2] as number)) / 2;
}

function report(windows: readonly Window[], builds: readonly Build[]): void {
  process.stdout.write(`\nEach cell: the median over ${ROUNDS} round(s) [min–max], ms. Probe: a dry-run Agent create through both webhooks, at concurrency 1.\n`);
  const rows: string[][] = [[
    'build', 'state', 'webhook', 'probe p50', 'probe p99', 'probe max', 'API server mean / p99*', 'webhook\'s own mean / p99*',
    'loop lag p99 / max (thread)', 'GC pauses: count, total, max (isolate)',
  ]];
  for (const build of builds) {
    for (const state of STATES) {
      for (const webhook of ['bare', 'operator'] as const) {
        const ws = windows.filter((w) => w.build === build.name && w.state === state && w.webhook === webhook);
        if (ws.length === 0) continue;
        const fs = ws.map(figures);
        const threads = [...new Set(fs.flatMap((f) => Object.keys(f.lagP99)))];
        const roles = [...new Set(fs.flatMap((f) => Object.keys(f.gcCount)))];
        rows.push([
          build.name,
          state,
          webhook === 'bare' ? 'bare webhook' : 'kaos-operator',
          spread(fs.map((f) => f.probeP50)),
          spread(fs.map((f) => f.probeP99)),
          spread(fs.map((f) => f.probeMax)),
          `${spread(fs.map((f) => f.apiserverMean))} / ${spread(fs.map((f) => f.apiserverP99))}`,
          `${spread(fs.map((f) => f.ownMean))} / ${spread(fs.map((f) => f.ownP99))}`,
          threads.map((t) => `${spread(fs.map((f) => f.lagP99[t] ?? Number.NaN))} / ${spread(fs.map((f) => f.lagMax[t] ?? Number.NaN))} (${t})`).join('; '),
          roles.map((r) => `${spread(fs.map((f) => f.gcCount[r] ?? 0))}, ${spread(fs.map((f) => f.gcTotal[r] ?? 0))}, ${spread(fs.map((f) => f.gcMax[r] ?? 0))} (${r})`).join('; '),
        ]);
        for (const phase of ['creating', 'reconciling'] as const) {
          const lists = ws.flatMap((w) => (w.phases === undefined ? [] : [w.phases[phase]]));
          if (lists.length === 0) continue;
          rows.push([
            '', phase === 'creating' ? '… while creating' : '… after the creates', '',
            spread(lists.map((l) => percentile(l, 50))), spread(lists.map((l) => percentile(l, 99))), spread(lists.map((l) => l[l.length - 1] ?? Number.NaN)),
            '', '', '', '',
          ]);
        }
      }
    }
  }
  printTable(rows, (line) => void process.stdout.write(`${line}\n`));
  process.stdout.write('* histogram_quantile over the histogram\'s buckets: only as fine as they are (the API server\'s: 5, 25, 100 ms …).\n');
  const relists = windows.filter((w) => w.relists !== undefined);
  if (relists.length > 0) process.stdout.write(`relists seen: ${relists.reduce((n, w) => n + (w.relists ?? 0), 0)} of ${relists.length * RELISTS} triggered\n`);

  process.stdout.write('\nTargets (probe p99, medians of the rounds):\n');
  for (const build of builds) {
    const p99 = (state: State, webhook: Webhook): number =>
      median(windows.filter((w) => w.build === build.name && w.state === state && w.webhook === webhook).map((w) => percentile(w.probe, 99)));
    const idle = p99('idle', 'operator');
    const idleBare = p99('idle', 'bare');
    const converging = p99('converging', 'operator');
    const relist = p99('relist', 'operator');
    const relistBare = p99('relist', 'bare');
    const x = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;
    process.stdout.write(
      `  ${build.name}: idle p99 ${ms(idle)} ms = ${x(idle, idleBare)} the bare webhook's ${ms(idleBare)} ms (target ≤ 1.2×: ${idle / idleBare <= 1.2 ? 'met' : 'NOT met'}); ` +
        `converging p99 ${ms(converging)} ms = ${x(converging, idle)} its idle p99 (target ≤ 2×: ${converging / idle <= 2 ? 'met' : 'NOT met'}); ` +
        `relist p99 ${ms(relist)} ms = ${x(relist, relistBare)} the bare webhook's ${ms(relistBare)} ms\n`,
    );
  }
}

