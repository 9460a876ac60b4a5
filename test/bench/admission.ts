// npm run bench:admission — what admission costs a user, through the real kube-apiserver.
//
// One local control plane with kaos-operator installed (scripts/local-stack.ts), measured in one
// run with the webhook configurations registered, with CRDs only (the configurations deleted;
// the operator keeps running and watching, so every column pays for its reflectors), and with the
// same configurations pointing at a bare webhook: an HTTPS server in this process, with the
// operator's certificate, that parses each AdmissionReview and allows it with no patch. That is
// what two webhook calls cost the API server and a create's latency whatever the webhook does,
// the floor of any webhook on this machine. The bare webhook runs twice: over HTTP/1.1 (what
// the operator serves) and over HTTP/2 only (the API server's webhook client speaks it when the
// server offers it in ALPN), to show what HTTP/2 would change for the operator:
//   (a) latency of a create at concurrency 1 (p50, p99), and what the webhooks add;
//   (b) throughput at saturation (IN_FLIGHT creates in flight), with the CPU time of
//       kube-apiserver, etcd and the operator from /proc/<pid>/stat (utime + stime) over the run,
//       per created object;
//   (c) the API server's own view: apiserver_admission_webhook_admission_duration_seconds per
//       webhook (mean over the saturation run, from /metrics), next to the operator's
//       controller_runtime_webhook_latency_seconds;
//   (d) label-only UPDATEs (a merge patch of one label) at concurrency 1 and how many of them
//       reached the operator — what matchConditions save.
// The operator runs as a webhook-only replica (CONTROLLER_ENABLED=false): otherwise its CPU time
// would include reconciling every created Agent (server-side applies of its children, status
// writes), which is the controller's cost, not admission's, and lands in whichever column happens
// to be running when the reconciles catch up. BENCH_CONTROLLER=true keeps the controller on.
// Never part of pass/fail: the figures depend on the machine and on whatever else runs on it.
//
// Env: BENCH_LATENCY_CREATES (default 300), BENCH_SATURATION_CREATES (1000), BENCH_IN_FLIGHT (16),
// BENCH_RELABELS (200), BENCH_CONTROLLER (false).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { applySetupObjects, startLocalStack, waitForAdmission, type LocalStack } from '../../scripts/local-stack.ts';
import { CONFIGURATION_NAMES, renderWebhookConfigurations } from '../../src/admission/webhook-configs.ts';
import type { KubeObject } from '../../src/api/lookup.ts';
import { ApiError } from '../../src/kube/errors.ts';
import { startBareWebhook } from './bare-webhook.ts';
import { printTable } from './reconcile.ts';
import { counterTotal, fetchText, histogramDelta, histograms, type HistogramData } from './metrics-text.ts';

const LATENCY_CREATES = Number(process.env.BENCH_LATENCY_CREATES ?? 300);
const SATURATION_CREATES = Number(process.env.BENCH_SATURATION_CREATES ?? 1000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 16);
const RELABELS = Number(process.env.BENCH_RELABELS ?? 200);
const CONTROLLER = process.env.BENCH_CONTROLLER === 'true';
const WARMUP = 50;
const NS = 'bench';
const TARGETS = { addedP50Ms: 1.5, addedP99Ms: 5, operatorCpuMsPerObject: 0.3 };
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
const ADMISSION_METRIC = 'apiserver_admission_webhook_admission_duration_seconds';
const OPERATOR_METRIC = 'controller_runtime_webhook_latency_seconds';
const OPERATOR_REQUESTS = 'controller_runtime_webhook_requests_total';

type Mode = 'webhooks' | 'bare' | 'bare-h2' | 'crds-only';
const MODES: readonly Mode[] = ['crds-only', 'bare', 'bare-h2', 'webhooks'];
type Processes = Record<'kube-apiserver' | 'etcd' | 'operator', number>;

interface ModeFigures {
  latency: { p50: number; p99: number; mean: number };
  saturation: { createsPerSecond: number; seconds: number; cpuMsPerObject: Processes; cpuSeconds: Processes; benchCpuMsPerObject: number };
  /** Mean seconds per call and count of calls, by webhook name (API server's view). */
  apiserverWebhooks: Map<string, { mean: number; count: number }>;
  /** Mean seconds per request and count, by path (operator's view). */
  operatorWebhooks: Map<string, { mean: number; count: number }>;
  relabel: { p50: number; p99: number; operatorRequests: number };
}

const log = (line: string): void => void process.stderr.write(`${line}\n`);

function cpuSeconds(pid: number): number {
  // Fields after the command name (which may hold spaces, inside parentheses): utime is the 14th
  // field of the line, stime the 15th, i.e. the 12th and 13th after ") ".
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / CLK_TCK;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

function delta(after: Map<string, HistogramData>, before: Map<string, HistogramData>): Map<string, { mean: number; count: number }> {
  const out = new Map<string, { mean: number; count: number }>();
  for (const [key, a] of after) {
    const d = histogramDelta(a, before.get(key));
    if (d.count > 0) out.set(key, { mean: d.sum / d.count, count: d.count });
  }
  return out;
}

const agent = (name: string): KubeObject => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind: 'Agent',
  metadata: { name, namespace: NS },
  spec: { modelAPI: 'model', mcpServers: ['tools'], config: { description: 'bench' } },
});

async function main(): Promise<void> {
  log('[bench] starting the local stack (control plane + operator)');
  const stack = await startLocalStack({ log, operatorEnv: { LOG_LEVEL: 'warn', CONTROLLER_ENABLED: String(CONTROLLER) } });
  try {
    await run(stack);
  } finally {
    await stack.stop();
  }
}

async function run(stack: LocalStack): Promise<void> {
  const { client, plane, operator } = stack;
  const ca = readFileSync(plane.caFile);
  const apiserverMetrics = (): Promise<string> =>
    fetchText(`${plane.server}/metrics`, { ca, headers: { authorization: `Bearer ${plane.token}` } });
  const operatorMetrics = (): Promise<string> => fetchText(`http://127.0.0.1:${operator.metricsPort}/metrics`);
  const pids = { 'kube-apiserver': plane.pids().apiserver, etcd: plane.pids().etcd, operator: operator.pid };
  const cpu = (): Processes => ({
    'kube-apiserver': cpuSeconds(pids['kube-apiserver']),
    etcd: cpuSeconds(pids.etcd),
    operator: cpuSeconds(operator.pid),
  });

  await client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await client.create(`/apis/kaos.tools/v1alpha1/namespaces/${NS}/modelapis`, {
    apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'model' }, spec: { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } },
  });
  await client.create(`/apis/kaos.tools/v1alpha1/namespaces/${NS}/mcpservers`, {
    apiVersion: 'kaos.tools/v1alpha1', kind: 'MCPServer', metadata: { name: 'tools' }, spec: { type: 'python-runtime', config: { tools: { fromPackage: 'mcp-server-fetch' } } },
  });
  const agents = `/apis/kaos.tools/v1alpha1/namespaces/${NS}/agents`;
  const create = (name: string): Promise<unknown> => client.create(agents, agent(name));

  const caBundle = readFileSync(join(stack.certDir, 'ca.crt'), 'utf8');
  const registered = renderWebhookConfigurations({ url: `https://127.0.0.1:${operator.webhookPort}`, caBundle });
  const bare = { 'bare': await startBareWebhook(stack.certDir, 'http/1.1'), 'bare-h2': await startBareWebhook(stack.certDir, 'h2') };
  const setMode = async (mode: Mode): Promise<void> => {
    if (mode === 'webhooks') {
      await applySetupObjects(client, registered);
      await waitForAdmission(client);
      return;
    }
    if (mode === 'bare' || mode === 'bare-h2') {
      await applySetupObjects(client, renderWebhookConfigurations({ url: `https://127.0.0.1:${bare[mode].port}`, caBundle }));
      await waitForBare(client, bare[mode].answered);
      return;
    }
    await client.delete(`/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${CONFIGURATION_NAMES.mutating}`);
    await client.delete(`/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${CONFIGURATION_NAMES.validating}`);
    await waitForNoAdmission(client);
  };

  const figures = new Map<Mode, ModeFigures>();
  const loadBefore = loadavg()[0] ?? 0;
  for (const mode of MODES) {
    log(`[bench] ${mode}: registering`);
    await setMode(mode);
    const tag = { webhooks: 'w', bare: 'b', 'bare-h2': 'h', 'crds-only': 'c' }[mode];
    for (let i = 0; i < WARMUP; i++) await create(`${tag}-warm-${i}`);

    log(`[bench] ${mode}: (a) ${LATENCY_CREATES} creates at concurrency 1`);
    const latencies: number[] = [];
    for (let i = 0; i < LATENCY_CREATES; i++) {
      const start = performance.now();
      await create(`${tag}-lat-${i}`);
      latencies.push(performance.now() - start);
    }
    latencies.sort((x, y) => x - y);

    log(`[bench] ${mode}: (b) ${SATURATION_CREATES} creates at ${IN_FLIGHT} in flight`);
    const [apiBefore, opBefore] = await Promise.all([apiserverMetrics(), operatorMetrics()]);
    const cpuBefore = cpu();
    const benchBefore = process.cpuUsage();
    const start = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < SATURATION_CREATES) await create(`${tag}-sat-${next++}`);
    }));
    const seconds = (performance.now() - start) / 1000;
    const benchCpu = process.cpuUsage(benchBefore);
    const cpuAfter = cpu();
    const [apiAfter, opAfter] = await Promise.all([apiserverMetrics(), operatorMetrics()]);
    const used = (p: keyof Processes): number => cpuAfter[p] - cpuBefore[p];
    const cpuSecondsUsed: Processes = { 'kube-apiserver': used('kube-apiserver'), etcd: used('etcd'), operator: used('operator') };

    log(`[bench] ${mode}: (d) ${RELABELS} label-only updates at concurrency 1`);
    const requestsBefore = counterTotal(await operatorMetrics(), OPERATOR_REQUESTS);
    const relabels: number[] = [];
    for (let i = 0; i < RELABELS; i++) {
      const s = performance.now();
      await client.patch(`${agents}/${tag}-lat-${i % LATENCY_CREATES}`, { metadata: { labels: { relabel: String(i) } } }, 'merge');
      relabels.push(performance.now() - s);
    }
    relabels.sort((x, y) => x - y);
    const operatorRequests = counterTotal(await operatorMetrics(), OPERATOR_REQUESTS) - requestsBefore;

    figures.set(mode, {
      latency: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), mean: latencies.reduce((a, b) => a + b, 0) / latencies.length },
      saturation: {
        createsPerSecond: SATURATION_CREATES / seconds,
        seconds,
        cpuSeconds: cpuSecondsUsed,
        cpuMsPerObject: {
          'kube-apiserver': (cpuSecondsUsed['kube-apiserver'] * 1000) / SATURATION_CREATES,
          etcd: (cpuSecondsUsed.etcd * 1000) / SATURATION_CREATES,
          operator: (cpuSecondsUsed.operator * 1000) / SATURATION_CREATES,
        },
        benchCpuMsPerObject: (benchCpu.user + benchCpu.system) / 1000 / SATURATION_CREATES,
      },
      apiserverWebhooks: delta(histograms(apiAfter, ADMISSION_METRIC, 'name'), histograms(apiBefore, ADMISSION_METRIC, 'name')),
      operatorWebhooks: delta(histograms(opAfter, OPERATOR_METRIC, 'webhook'), histograms(opBefore, OPERATOR_METRIC, 'webhook')),
      relabel: { p50: percentile(relabels, 50), p99: percentile(relabels, 99), operatorRequests },
    });
  }
  await Promise.all([bare.bare.close(), bare['bare-h2'].close()]);
  process.stdout.write(`operator: ${CONTROLLER ? 'controller on (its reconciles are in the operator\'s CPU)' : 'webhook-only (CONTROLLER_ENABLED=false)'}\n`);
  process.stdout.write(`${cpus().length} cores; 1-min load average ${loadBefore.toFixed(1)} at the start, ${(loadavg()[0] ?? 0).toFixed(1)} at the end (others' work shares the cores)\n`);
  report(figures);
}

/** Until a dry-run create reaches the bare webhook: the API server calls it now. */
async function waitForBare(client: LocalStack['client'], answered: () => number, timeoutMs = 30_000): Promise<void> {
  const path = `/apis/kaos.tools/v1alpha1/namespaces/default/modelapis`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const before = answered();
    try {
      await client.create(path, { apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { generateName: 'probe-' }, spec: { mode: 'Hosted' } }, { dryRun: true });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
    }
    if (answered() >= before + 2) return; // both webhooks (mutating and validating) answered
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the API server does not call the bare webhook ${timeoutMs} ms after it was registered`);
}

/** Until a dry-run create is neither defaulted nor refused by the webhooks: they are gone. */
async function waitForNoAdmission(client: LocalStack['client'], timeoutMs = 30_000): Promise<void> {
  const path = `/apis/kaos.tools/v1alpha1/namespaces/default/modelapis`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const made = await client.create<KubeObject>(path, {
        apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { generateName: 'probe-' }, spec: { mode: 'Hosted' },
      }, { dryRun: true });
      if ((made.spec as { container?: unknown }).container === undefined) return;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the API server still calls the webhooks ${timeoutMs} ms after they were deleted`);
}

const write = (line: string): void => void process.stdout.write(`${line}\n`);

function report(figures: Map<Mode, ModeFigures>): void {
  const w = figures.get('webhooks');
  const b = figures.get('bare');
  const h = figures.get('bare-h2');
  const c = figures.get('crds-only');
  if (w === undefined || b === undefined || h === undefined || c === undefined) throw new Error('a mode was not measured');
  const columns = [c, b, h, w];
  const ms = (v: number): string => `${v.toFixed(2)} ms`;
  const ratio = (a: number, x: number): string => `${(a / x).toFixed(2)}×`;
  const each = (get: (f: ModeFigures) => number, show: (v: number) => string): string[] => columns.map((f) => show(get(f)));
  const added = (get: (f: ModeFigures) => number): string[] => [b, h, w].map((f) => `+${ms(get(f) - get(c))}`);
  const ratios = (get: (f: ModeFigures) => number): string[] => [b, h, w].map((f) => ratio(get(f), get(c)));
  const rows: string[][] = [
    ['figure', 'CRDs only', 'bare webhook', 'bare, HTTP/2', 'webhooks', 'bare: added / ratio', 'bare HTTP/2: added / ratio', 'webhooks: added / ratio'],
    ['(a) create p50, concurrency 1', ...each((f) => f.latency.p50, ms), ...added((f) => f.latency.p50)],
    ['(a) create p99, concurrency 1', ...each((f) => f.latency.p99, ms), ...added((f) => f.latency.p99)],
    ['(a) create mean, concurrency 1', ...each((f) => f.latency.mean, ms), ...added((f) => f.latency.mean)],
    [`(b) creates/s, ${IN_FLIGHT} in flight`, ...each((f) => f.saturation.createsPerSecond, (v) => v.toFixed(0)), ...ratios((f) => f.saturation.createsPerSecond)],
    [`(b) time for ${SATURATION_CREATES} creates`, ...each((f) => f.saturation.seconds, (v) => `${v.toFixed(2)} s`), ...ratios((f) => f.saturation.seconds)],
  ];
  for (const p of ['kube-apiserver', 'etcd', 'operator'] as const) {
    rows.push([`(b) ${p} CPU per create`, ...each((f) => f.saturation.cpuMsPerObject[p], ms), ...added((f) => f.saturation.cpuMsPerObject[p])]);
  }
  rows.push(['(b) bench process CPU per create (the bare webhooks run in it)', ...each((f) => f.saturation.benchCpuMsPerObject, ms), ...added((f) => f.saturation.benchCpuMsPerObject)]);
  rows.push(['(d) label-only update p50', ...each((f) => f.relabel.p50, ms), ...added((f) => f.relabel.p50)]);
  rows.push(['(d) label-only update p99', ...each((f) => f.relabel.p99, ms), ...added((f) => f.relabel.p99)]);
  rows.push([`(d) operator webhook calls for ${RELABELS} label-only updates`, String(c.relabel.operatorRequests), '—', '—', String(w.relabel.operatorRequests), '', '', '']);
  printTable(rows, write);

  process.stdout.write(`\n(c) per webhook, during the saturation run (webhooks registered)\n`);
  const hooks: string[][] = [['webhook', 'API server calls', 'API server mean', 'operator path', 'operator mean']];
  for (const [name, a] of [...w.apiserverWebhooks].sort()) {
    const kind = name.slice(1).split('.')[0]?.replace(/-delete$/, '') ?? '';
    const type = name.startsWith('m') ? 'mutate' : 'validate';
    const path = [...w.operatorWebhooks.keys()].find((p) => p.startsWith(`/${type}-`) && p.endsWith(`-${kind}`));
    const op = path === undefined ? undefined : w.operatorWebhooks.get(path);
    hooks.push([name, String(a.count), ms(a.mean * 1000), path ?? '—', op === undefined ? '—' : ms(op.mean * 1000)]);
  }
  printTable(hooks, write);

  const addedP50 = w.latency.p50 - c.latency.p50;
  const addedP99 = w.latency.p99 - c.latency.p99;
  const operatorAdded = w.saturation.cpuMsPerObject.operator - c.saturation.cpuMsPerObject.operator;
  const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT met');
  process.stdout.write(
    `\ntargets: added p50 ${ms(addedP50)} ≤ ${TARGETS.addedP50Ms} ms: ${verdict(addedP50 <= TARGETS.addedP50Ms)}; ` +
      `added p99 ${ms(addedP99)} ≤ ${TARGETS.addedP99Ms} ms: ${verdict(addedP99 <= TARGETS.addedP99Ms)}; ` +
      `operator CPU per admitted object ${ms(w.saturation.cpuMsPerObject.operator)} (${ms(operatorAdded)} over CRDs only) ≤ ${TARGETS.operatorCpuMsPerObject} ms: ` +
      `${verdict(w.saturation.cpuMsPerObject.operator <= TARGETS.operatorCpuMsPerObject)}\n`,
  );
}

// `npm run bench:admission -- states`: the three states of a busy operator (admission-states.ts).
const scenario = process.argv[2] === 'states' ? (await import('./admission-states.ts')).runStates : main;
scenario().catch((err: unknown) => {
  process.stderr.write(`bench:admission: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
