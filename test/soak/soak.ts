// The soak (`npm run soak`; a short run in CI: test/e2e/soak.test.ts): randomized traffic of
// several clients against the local control plane with pods and two operator replicas, with
// faults injected at random times, then, once the traffic and the faults are over, the check of
// the invariants (check.ts, ledger.ts) until the cluster is converged, a quiet window in which the
// operator must write nothing (its audit log) while nobody else writes either, and the check once
// more: its violations, with
// the denials the clients saw that were no documented rule, are the run's.
//
// A run is one or more phases, each with its seed and its share of the traffic, one after the
// other over the same cluster (CI: a fixed seed, then a random one). A seed fixes each client's
// operations and the faults' times and kinds; what the cluster does with them depends on timing,
// so a replay reproduces the load, not every interleaving.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WORKLOAD_KINDS } from '../../src/api/kinds.ts';
import { REFERENCE_POLICY_KEY } from '../../src/api/kinds.ts';
import { kaosPath } from '../../src/cluster/kaos-resources.ts';
import { KIND_TABLE, type DependencyTypeKind } from '../../src/cluster/kind-table.ts';
import { OPERATOR_USER } from '../../src/cluster/rbac.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { NAMESPACE, resourcePath } from '../../src/kube/paths.ts';
import { tailFile } from '../cluster/processes.ts';
import { auditMark, auditSince, describeRequest } from '../e2e/support/lifecycle.ts';
import { quietVerdict } from './quiet.ts';
import { checkCluster, type Violation } from './check.ts';
import { watchCluster, type ClusterView } from './cluster-view.ts';
import { seconds } from './clock.ts';
import { FaultInjector, planFaults } from './faults.ts';
import { WriteLedger, type Json } from './ledger.ts';
import { Random } from './random.ts';
import { formatReport } from './report.ts';
import { startSoakStack, type SoakStack } from './stack.ts';
import { Timeline } from './timeline.ts';
import { Population, SOAK_LABEL, TrafficStats, runTraffic } from './traffic.ts';

export interface SoakPhase {
  readonly seed: string;
  /** Its traffic, ms. */
  readonly ms: number;
}

export interface SoakOptions {
  readonly phases: readonly SoakPhase[];
  /** Concurrent clients (default 4). */
  readonly clients?: number;
  /** Namespaces the traffic spreads over (default 3; the second one has the reference policy Warn). */
  readonly namespaces?: number;
  /** The quiet window (default 60 s). */
  readonly quietMs?: number;
  /** How long the cluster may take to converge once everything is over (default 180 s). */
  readonly convergeTimeoutMs?: number;
  /**
   * When the run must be over, ms from its start: past it, neither converging nor another quiet
   * window is waited for (the report then says what was not reached). A test under a timeout sets
   * it, so its report is always printed.
   */
  readonly endByMs?: number;
  readonly log: (line: string) => void;
}

export interface SoakResult {
  readonly operations: number;
  readonly faults: number;
  readonly violations: readonly Violation[];
  readonly convergenceMs: number | undefined;
  readonly report: string;
  /** Where the logs of a run with violations were saved. */
  readonly logsDir?: string;
}

/** How often the checker looks while the cluster converges. */
const CHECK_EVERY_MS = 2000;
/**
 * Quiet windows tried at most: a window in which another user changed the cluster (a PVC bound by
 * kube-controller-manager's provisioner, pods turned ready by kwok and the Deployment status that
 * follows) does not count, since the operator must follow such a change, and the next begins.
 */
const QUIET_WINDOWS = 4;
/**
 * Before a quiet window: how long the operator must have written nothing but its Lease. Converged
 * says the cluster is right, not that the operator is done saying so: the status writes of its
 * last reconciles and the Events they queue (written two at a time) can still be on their way,
 * seconds later on a loaded machine. A controller that writes more often than this never settles,
 * and its writes fall into the window all the same.
 */
const SETTLE_MS = 5_000;
/** The longest wait for it. */
const SETTLE_AT_MOST_MS = 30_000;


export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const t0 = Date.now();
  const clock = (): number => Date.now() - t0;
  const log = (line: string): void => options.log(line);
  const loadStart = loadavg()[0] ?? 0;
  const stack = await startSoakStack(log);
  let view: ClusterView | undefined;
  let crashes: ReturnType<typeof watchCrashes> | undefined;
  const timeline = new Timeline(stack.installation.client, clock);
  try {
    const { client, plane } = stack.installation;
    timeline.start();
    const namespaces = Array.from({ length: options.namespaces ?? 3 }, (_, i) => `soak-${i}`);
    for (const [i, name] of namespaces.entries()) {
      const labels = { [SOAK_LABEL]: 'true', ...(i === 1 ? { [REFERENCE_POLICY_KEY]: 'Warn' } : {}) };
      await client.create(resourcePath(NAMESPACE), { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
    }
    const ledger = new WriteLedger();
    const stats = new TrafficStats();
    const injector = new FaultInjector({ stack, namespaces, clock, log });
    const traffic = {
      kubeconfig: plane.kubeconfigPath, namespaces, clients: options.clients ?? 4, pauseMs: [200, 800] as const, clock, ledger, stats, population: new Population(),
      apiServerDown: (from: number, to: number) => injector.apiServerDown(from, to),
    };
    const violations: Violation[] = [];
    crashes = watchCrashes(stack, violations, clock);

    for (const phase of options.phases) {
      const rng = new Random(phase.seed);
      const start = clock();
      const plan = planFaults(rng.fork('faults'), phase.ms);
      log(`[${seconds(start)}] phase with seed ${phase.seed}: ${(phase.ms / 1000).toFixed(0)} s of traffic from ${traffic.clients} clients, ${plan.length} faults`);
      await Promise.all([runTraffic(traffic, rng.fork('traffic'), start + phase.ms), injector.run(plan, start, rng.fork('faults'))]);
    }
    const quietFromMs = Math.max(clock(), injector.lastEndedMs());
    log(`[${seconds(quietFromMs)}] traffic and faults over: ${stats.total()} operations; checking until converged`);
    await crashes.restarted();

    // Converge: check until nothing is left to do, or the deadline.
    view = await watchCluster(client, namespaces, stack.config);
    const check = async (): Promise<{ violations: Violation[]; inDoubt: number }> => {
      const state = await view?.state();
      if (state === undefined) throw new Error('no cluster view');
      const found = await checkCluster(state);
      const written = ledger.check(await liveObjects(client, namespaces));
      return { violations: [...found, ...written.violations.map((v) => ({ invariant: 'writes' as const, subject: v.key, detail: v.detail }))], inDoubt: written.inDoubt };
    };
    const quietMs = options.quietMs ?? 60_000;
    const endBy = options.endByMs ?? Infinity;
    const deadline = Math.min(clock() + (options.convergeTimeoutMs ?? 180_000), endBy - quietMs);
    let last = await check();
    let convergedAt: number | undefined;
    let told = clock();
    for (;;) {
      if (last.violations.length === 0) {
        convergedAt = clock();
        break;
      }
      if (clock() > deadline) break;
      if (clock() - told > 20_000) {
        told = clock();
        const first = last.violations[0];
        log(`[${seconds(told)}] not converged yet: ${last.violations.length} violations, e.g. ${first?.subject ?? ''}: ${first?.detail ?? ''}`);
      }
      await sleep(CHECK_EVERY_MS);
      last = await check();
    }
    const convergenceMs = convergedAt === undefined ? undefined : convergedAt - quietFromMs;
    log(convergenceMs === undefined
      ? `[${seconds(clock())}] not converged: ${last.violations.length} violations left`
      : `[${seconds(convergedAt ?? 0)}] converged ${(convergenceMs / 1000).toFixed(1)} s after the last fault`);

    // The quiet window: while nobody else changes the cluster, the operator writes nothing (Lease
    // renewals of leader election apart). Converged is not settled: a claim may still be on its
    // way to being bound, pods to being ready; a window in which another user wrote is followed by
    // another, and the last one tried counts.
    const quiet = { ms: quietMs, writes: undefined as number | undefined, leaseWrites: 0, disturbed: 0 };
    if (convergedAt !== undefined && plane.logs.audit !== undefined) {
      for (let window = 1; window <= QUIET_WINDOWS; window++) {
        const settledAfter = await operatorSettled(plane.logs.audit, clock, Math.min(clock() + SETTLE_AT_MOST_MS, endBy - quietMs));
        log(`[${seconds(clock())}] the operator's writes settled (${(settledAfter / 1000).toFixed(1)} s)`);
        const mark = auditMark(plane.logs.audit);
        log(`[${seconds(clock())}] quiet window: ${(quietMs / 1000).toFixed(0)} s`);
        await sleep(quietMs);
        const verdict = quietVerdict(auditSince(plane.logs.audit, mark), OPERATOR_USER);
        const others = verdict.disturbedBy;
        if (others.length > 0 && window < QUIET_WINDOWS && clock() + quietMs <= endBy) {
          quiet.disturbed++;
          log(`[${seconds(clock())}] quiet window disturbed by ${others.length} writes of others (${[...new Set(others.map((e) => `${e.user.username}: ${e.verb} ${e.objectRef?.resource ?? '?'}`))].slice(0, 3).join('; ')}): again`);
          continue;
        }
        quiet.writes = verdict.operatorWrites.length;
        quiet.leaseWrites = verdict.leaseWrites;
        for (const e of verdict.operatorWrites) violations.push({ invariant: 'quiet', subject: 'the operator', detail: describeRequest(e) });
        break;
      }
      last = await check();
    }
    crashes.stop();
    violations.push(...last.violations);
    for (const v of stats.violations) violations.push({ invariant: 'denials', ...v });

    const report = formatReport({
      phases: options.phases, stats, faults: injector.records, quietFromMs, convergenceMs, quiet, violations,
      load: [loadStart, loadavg()[0] ?? 0], inDoubt: last.inDoubt,
      webhookService: { retries: stack.webhooks.retries, failures: stack.webhooks.failures },
    });
    const faults = injector.records.filter((r) => r.failed === undefined).length;
    const logsDir = violations.length > 0 ? await saveLogs(stack, report, timeline) : undefined;
    if (logsDir !== undefined) log(`logs of this run: ${logsDir}`);
    return { operations: stats.total(), faults, violations, convergenceMs, report, ...(logsDir === undefined ? {} : { logsDir }) };
  } finally {
    crashes?.stop();
    await view?.stop();
    await timeline.stop();
    await stack.stop();
  }
}

/**
 * Waits until the audit log shows no write of the operator's but its Lease renewals for SETTLE_MS,
 * or until `until` (ms of the soak's `clock`); returns how long it waited.
 */
async function operatorSettled(audit: string, clock: () => number, until: number): Promise<number> {
  const started = clock();
  let mark = auditMark(audit);
  let lastWrite = clock();
  while (clock() - lastWrite < SETTLE_MS && clock() < until) {
    await sleep(500);
    const next = auditMark(audit);
    if (quietVerdict(auditSince(audit, mark), OPERATOR_USER).operatorWrites.length > 0) lastWrite = clock();
    mark = next;
  }
  return clock() - started;
}

/**
 * Every object the clients write, as the API server holds it, by ledger key (`Kind/namespace/name`):
 * the KAOS kinds and the types they depend on.
 */
async function liveObjects(client: KubeClient, namespaces: readonly string[]): Promise<(key: string) => Json | undefined> {
  const out = new Map<string, Json>();
  for (const namespace of namespaces) {
    for (const kind of WORKLOAD_KINDS) {
      for (const o of (await client.list<Json>(kaosPath(kind, { namespace }))).items) out.set(`${kind}/${namespace}/${String((o.metadata as Json).name)}`, o);
    }
    for (const kind of Object.keys(KIND_TABLE.dependencyTypes) as DependencyTypeKind[]) {
      const list = await client.list<Json>(resourcePath(KIND_TABLE.dependencyTypes[kind].type, { namespace }), { labelSelector: SOAK_LABEL });
      for (const o of list.items) out.set(`${kind}/${namespace}/${String((o.metadata as Json).name)}`, o);
    }
  }
  return (key) => out.get(key);
}

/**
 * Watches for a replica that exits on its own (not killed by a fault): a violation, and a new
 * replica in its place so the soak goes on as a Deployment would.
 */
function watchCrashes(stack: SoakStack, violations: Violation[], clock: () => number): { stop(): void; restarted(): Promise<void> } {
  const restarting: Promise<unknown>[] = [];
  const timer = setInterval(() => {
    for (const replica of stack.replicas()) {
      const status = replica.process.exitStatus();
      if (status === undefined || replica.exitExpected) continue;
      replica.exitExpected = true; // counted once, replaced below
      violations.push({ invariant: 'replicas', subject: replica.name, detail: `exited (${status}) at ${seconds(clock())}, no fault killed it` });
      restarting.push(stack.startReplica(replica.slot));
    }
  }, 1000);
  return { stop: () => clearInterval(timer), restarted: async () => void (await Promise.allSettled(restarting)) };
}

async function saveLogs(stack: SoakStack, report: string, timeline: Timeline): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kaos-soak-'));
  await writeFile(join(dir, 'report.txt'), `${report}\n`);
  await writeFile(join(dir, 'timeline.txt'), `${timeline.lines().join('\n')}\n`);
  for (const [name, text] of Object.entries(stack.logs())) await writeFile(join(dir, `${name}.log`), text);
  const { logs } = stack.installation.plane;
  await writeFile(join(dir, 'kube-apiserver.log'), tailFile(logs.apiserver, 2000));
  await writeFile(join(dir, 'kube-controller-manager.log'), tailFile(logs.controllerManager, 2000));
  return dir;
}
