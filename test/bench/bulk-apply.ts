// npm run bench:bulk — a GitOps bulk apply with the operator running, next to a floor: the same
// objects and the same children written by a plain script with no logic. Never part of
// pass/fail. bench:reconcile (test/bench/reconcile.ts, whose helpers this reuses) measures the
// kindest case instead: every Agent created while the operator is paused, its dependencies Ready.
//
// A local control plane for each run (an audit log of the operator's requests on), the operator
// started through its real entry point under its own ServiceAccount, with leader election and its
// webhooks on. Real rollouts: the control plane's Deployment and ReplicaSet controllers,
// kube-scheduler and kwok run every pod on fake nodes (enough for the run's pods, 110 a node),
// and nothing writes a Deployment status by hand, so "Ready" means Ready through that whole chain,
// for the operator and the floor alike (test/bench/reconcile.ts's ConvergenceWatch). PODS=0 runs
// no pods: one status write per Deployment generation (test/bench/rollout-stand-in.ts) stands in
// for that chain, for sizes where the chain alone would saturate the API server.
//  1. operator run, T0 = the first create: MODELAPIS ModelAPIs (Proxy), MCPSERVERS MCPServers
//     (python-runtime, tools fromString), then a MemoryStore per ModelAPI (local mode: a claim the
//     host-path provisioner binds, both models from that ModelAPI), then AGENTS Agents,
//     CREATE_IN_FLIGHT at a time through the webhooks. Agent i uses ModelAPI i mod MODELAPIS,
//     MCPServers 2i and 2i+1 mod MCPSERVERS, binds its memory to MemoryStore i mod MODELAPIS,
//     lists Agents i+1 and i+2 in agentNetwork.access (forward references: they do not exist
//     yet when it is created), waitForDependencies true. The end: a watch of this script has
//     seen every Agent with its Deployment and Service (controlled by it) and status Ready at
//     its generation (its pod scheduled, run and ready);
//  2. settle (SETTLE_SECONDS) and idle window (IDLE_SECONDS): the operator's writes, counted from
//     the audit log — Lease renewals of leader election apart;
//  3. floor, on a fresh control plane of the same build (the operator's stopped with its own):
//     both runs start from an empty cluster, as the API server slows with the objects it holds
//     (docs/benchmarks.md, the scale curve). The same objects created the same way, no
//     webhooks, and as each one is
//     created, MAX_CONCURRENT_RECONCILES workers (as the operator's ServiceAccount, so under the
//     same flow-control priority level) server-side-apply exactly the children the
//     operator renders for it (every dependency taken as ready, every peer that will exist wired
//     in); once its Deployment has a ready, rolled-out replica (a watch of the Deployments), its
//     final (Ready) status is PUT. Its end is seen by the same watch.
// Printed: time to every Agent Ready and per Agent, creation time, Deployment generations per
// Deployment, the operator's requests by verb and resource while converging, writes per Agent,
// idle writes, peak RSS (VmHWM), operator / kube-apiserver / etcd CPU, each beside the floor
// with ratios, and the load average.
//
//
// ACCESS_GRANTS=N (default 0) adds N AccessGrants before the Agents, with the policy projection
// active (test/bench/bulk-grants.ts): printed beside the rest, how many projection passes and
// policy ConfigMap writes the burst of Agent creates cost, and how long one pass takes.
//
// IDENTITY_COMPARE=1: instead of the floor, the operator run twice side by side in one run, each
// on a fresh control plane — without an identity provider and with ServiceAccount identity
// (SECURITY_AGENT_AUTH_IDENTITY_PROVIDER=serviceaccount: one more child per Agent, its
// ServiceAccount) — alternating ROUNDS times (1: off, on; 2: off, on, on, off), and a table of
// what identity costs: time to every Agent Ready, writes per Agent (ServiceAccounts among them),
// rollouts per Agent, idle writes, CPU, peak RSS.
//
// Env: as bench:reconcile — AGENTS (1000), MODELAPIS (10), MCPSERVERS (20),
// MAX_CONCURRENT_RECONCILES (4), CREATE_IN_FLIGHT (16), SETTLE_SECONDS (5), IDLE_SECONDS (60),
// BENCH_LOG_LEVEL (info), BENCH_OPERATOR_NODE_OPTIONS, BENCH_OPERATOR_ROOT, PODS (1; 0: the stand-in
// above); FLOOR=0 skips the floor; CREATE_ONLY=1 ends both runs once everything is created (the
// creation time alone, e.g. for the scale curve's creation ratio).
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import type { KubeObject } from '../../src/api/meta.ts';
import { loadConfig } from '../../src/config/config.ts';
import { resolveAgentDeps } from '../../src/controller/reconcile/agent.ts';
import { desiredChildren } from '../../src/controller/reconcile/children.ts';
import type { KaosKind } from '../../src/api/kinds.ts';
import { deploymentProgress, memoryDegraded, nextStatus } from '../../src/controller/status.ts';
import { applyIntent } from '../../src/kube/apply.ts';
import { childPath, FIELD_MANAGER } from '../../src/cluster/child-apply.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { LEASE, resourcePath } from '../../src/kube/paths.ts';
import { OPERATOR_IDENTITY } from '../../src/cluster/rbac.ts';
import {
  endpointFor,
  renderAgent,
  renderMCPServer,
  renderMemoryStore,
  renderModelAPI,
  workloadName,
  type AgentInput,
  type MCPServerInput,
  type MemoryStoreInput,
  type ModelAPIInput,
  type Rendered,
} from '../../src/render/index.ts';
import type { ControlPlane } from '../cluster/control-plane.ts';
import {
  auditEvents,
  CONCURRENCY,
  ConvergenceWatch,
  countBy,
  cpuSeconds,
  CREATE_IN_FLIGHT,
  diffCpu,
  IDLE_SECONDS,
  int,
  kaosPath,
  floorReads,
  loadFigures,
  launchOperator,
  log,
  memory,
  operatorEnv,
  POD_CHAIN,
  printTable,
  rolledOutAndReady,
  Sampler,
  SETTLE_SECONDS,
  sleep,
  startStack,
  until,
  WRITE_VERBS,
  type RunFigures,
} from './reconcile.ts';
import { tail, type OperatorProcess } from '../../scripts/local-stack.ts';
import { bulkScenario, createBulk, type BulkObjects, type Named } from './bulk-scenario.ts';
import { accessGrants, createGrants, GRANTS_ENV, POLICY_CONFIG_MAP, projectionMetrics, timePass, withShards } from './bulk-grants.ts';
import { describeParts, memoryParts, type MemoryParts } from './memory-parts.ts';

const AGENTS = Math.max(1, int('AGENTS', 1000));
const MODELAPIS = Math.max(1, int('MODELAPIS', 10));
const MCPSERVERS = Math.max(1, int('MCPSERVERS', 20));
const ACCESS_GRANTS = Math.max(0, int('ACCESS_GRANTS', 0));
const NS = 'bulk';
const FLOOR_NS = 'bulk-floor';
/** FLOOR=0: the operator run only (its figures are logged), e.g. to try a V8 flag. */
const FLOOR = process.env.FLOOR !== '0';
/**
 * CREATE_ONLY=1: each run ends once every object is created (its reconciles or applies running
 * meanwhile, as in a whole run): the creation time, webhooks on / off, and nothing else.
 */
const CREATE_ONLY = process.env.CREATE_ONLY === '1';
/** IDENTITY_COMPARE=1: ServiceAccount identity off and on, side by side (see the header). */
const IDENTITY_COMPARE = process.env.IDENTITY_COMPARE === '1';
const ROUNDS = Math.max(1, int('ROUNDS', 1));
const TARGETS = { writes: 5100, idleWrites: 0, peakRssMiB: 115, generationsPerDeployment: 1 };
/** Where to write the run's figures as JSON (test/bench/scale.ts reads them for its table). */
const RESULT_FILE = process.env.BULK_RESULT_FILE;

/** One run's figures, as test/bench/scale.ts tabulates them. */
export interface BulkFigures {
  agents: number;
  /** false: PODS=0, the rollout stand-in instead of pods. */
  pods: boolean;
  seconds: { operator: number; floor: number };
  createSeconds: { operator: number; floor: number };
  writes: { operator: number; floor: number };
  idleWrites: number;
  generations: { operator: number; deployments: number; rolledTwice: number };
  cpu: { operator: number; floorScript: number; apiserver: number; floorApiserver: number };
  peakRssMiB: number;
  /**
   * When VmHWM last rose (seconds after the first create), what the operator's memory was made of
   * at its highest sampled RSS, and at convergence (memory-parts.ts).
   */
  memory: { peakAtSeconds: number; atPeak?: MemoryParts; atConvergence?: MemoryParts };
  load: { mean: number; max: number };
}

// ---- the scenario --------------------------------------------------------------------------

const scenario = (namespace: string): BulkObjects => {
  const objects = bulkScenario(namespace, { agents: AGENTS, modelAPIs: MODELAPIS, mcpServers: MCPSERVERS });
  return ACCESS_GRANTS > 0 ? withShards(objects) : objects;
};

/** Dependencies first, then the Agents, CREATE_IN_FLIGHT at a time; `created` sees each answer. */
const createAll = (client: KubeClient, objects: BulkObjects, created?: (object: Named) => void): Promise<void> =>
  createBulk(client, objects, CREATE_IN_FLIGHT, created);

// ---- measuring ----------------------------------------------------------------------------

interface Generations { deployments: number; generations: number; rolledTwice: number }

/** Generations of the Agents' Deployments: 1 each when every Agent was rolled out once. */
function generations(deployments: readonly KubeObject[]): Generations {
  let sum = 0;
  let twice = 0;
  const agents = deployments.filter((d) => (d.metadata?.name ?? '').startsWith(workloadName('Agent', '')));
  for (const d of agents) {
    const g = d.metadata?.generation ?? 0;
    sum += g;
    if (g > 1) twice++;
  }
  return { deployments: agents.length, generations: sum, rolledTwice: twice };
}

interface Run {
  figures: RunFigures;
  createSeconds: number;
  generations: Generations;
}

// ---- the run -------------------------------------------------------------------------------

async function operatorRun(admin: KubeClient, pids: ReturnType<ControlPlane['pids']>, operator: OperatorProcess): Promise<Run & { t0: number; convergedAt: number; idleStart: number; idleEnd: number; atConvergence?: MemoryParts }> {
  const watch = new ConvergenceWatch(admin, NS, AGENTS);
  await watch.start();
  const cpuAt = (): RunFigures['cpu'] => ({ operator: cpuSeconds(operator.pid), apiserver: cpuSeconds(pids.apiserver), etcd: cpuSeconds(pids.etcd), script: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6 });
  const cpu0 = cpuAt();
  const t0 = Date.now();
  log(`operator run: ${MODELAPIS + MCPSERVERS} dependencies, ${MODELAPIS} MemoryStores, then ${AGENTS} Agents, ${CREATE_IN_FLIGHT} in flight`);
  await createAll(admin, scenario(NS));
  const createSeconds = (Date.now() - t0) / 1000;
  log(`  created in ${createSeconds.toFixed(2)} s`);
  if (CREATE_ONLY) {
    const now = Date.now();
    await watch.stop();
    return { figures: { seconds: Number.NaN, cpu: diffCpu(cpuAt(), cpu0) }, createSeconds, generations: { deployments: 0, generations: 0, rolledTwice: 0 }, t0, convergedAt: now, idleStart: now, idleEnd: now };
  }
  const progress = setInterval(() => log(`  ${watch.count}/${AGENTS} Agents Ready`), 10_000);
  const convergedAt = await watch.converged();
  clearInterval(progress);
  const cpu1 = cpuAt();
  const atConvergence = await memoryParts(operator.pid, operator.metricsPort);
  log(`operator memory at convergence: ${atConvergence === undefined ? 'unknown' : describeParts(atConvergence)}`);
  log(`operator: every Agent Ready after ${((convergedAt - t0) / 1000).toFixed(2)} s; settle ${SETTLE_SECONDS} s, idle ${IDLE_SECONDS} s`);
  await sleep(SETTLE_SECONDS * 1000);
  const idleStart = Date.now();
  await sleep(IDLE_SECONDS * 1000);
  const idleEnd = Date.now();
  const result = {
    figures: { seconds: (convergedAt - t0) / 1000, cpu: diffCpu(cpu1, cpu0) },
    createSeconds,
    generations: generations(watch.deployments()),
    t0, convergedAt, idleStart, idleEnd,
    ...(atConvergence === undefined ? {} : { atConvergence }),
  };
  await watch.stop();
  return result;
}

/** The floor (see the header): creates and children and one final status, no logic. */
async function floorRun(admin: KubeClient, writer: KubeClient, pids: ReturnType<ControlPlane['pids']>): Promise<Run & { requests: number }> {
  await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: FLOOR_NS } });
  const objects = scenario(FLOOR_NS);
  const all = [...objects.dependencies, ...objects.stores, ...objects.agents];
  const byKey = new Map(all.map((o) => [`${o.kind}/${o.metadata.name}`, o]));
  // Every dependency taken as ready and every peer that will exist as there: the final render.
  const reads = floorReads((kind, name) => {
    const o = byKey.get(`${kind}/${name}`);
    return o === undefined ? undefined : ({ ...o, status: { ready: true } } as KubeObject);
  });
  const config = loadConfig({ ...process.env, ...operatorEnv });
  const render = (o: Named): Rendered => {
    switch (o.kind) {
      case 'ModelAPI': return renderModelAPI(o as unknown as ModelAPIInput, {}, config);
      case 'MCPServer': return renderMCPServer(o as unknown as MCPServerInput, config, {});
      case 'MemoryStore': {
        const summarization = (o as unknown as MemoryStoreInput).spec.models.summarization.modelAPI;
        return renderMemoryStore(o as unknown as MemoryStoreInput, { summarizationEndpoint: endpointFor('ModelAPI', summarization, FLOOR_NS, 'Proxy') }, config);
      }
      case 'Agent': {
        const resolution = resolveAgentDeps(reads, FLOOR_NS, o.spec);
        if ('verdict' in resolution) throw new Error(`floor: ${o.metadata.name} does not resolve: ${resolution.verdict.message}`);
        return renderAgent(o as unknown as AgentInput, resolution.deps, config);
      }
    }
  };

  let requests = 0;
  // Created objects wait for an apply worker; an applied one waits for its Deployment to be ready.
  const toApply: Named[] = [];
  const waitingReady = new Map<string, { object: Named; rendered: Rendered }>();
  const toStatus: { object: Named; rendered: Rendered; deployment: KubeObject }[] = [];
  let wake: (() => void) | undefined;
  const poke = (): void => { wake?.(); wake = undefined; };
  // The status of each object is written once its Deployment has a ready replica of the current
  // template, as the operator's would be (the same chain of controllers).
  const onDeployment = (deployment: KubeObject): void => {
    const name = deployment.metadata?.name ?? '';
    const entry = waitingReady.get(name);
    if (entry === undefined || !rolledOutAndReady(deployment)) return;
    waitingReady.delete(name);
    toStatus.push({ ...entry, deployment });
    poke();
  };
  const watch = new ConvergenceWatch(admin, FLOOR_NS, AGENTS, onDeployment);
  await watch.start();
  let creating = true;
  let statusesLeft = all.length;
  const worker = async (): Promise<void> => {
    while (statusesLeft > 0) {
      const status = toStatus.shift();
      if (status !== undefined) {
        const { object, rendered, deployment } = status;
        const agent = object.kind === 'Agent' ? (object.spec as { modelAPI?: string; config?: { memory?: { memoryStore?: string } } }) : undefined;
        const linkedResources = agent === undefined ? {} : { linkedResources: { modelapi: String(agent.modelAPI), memorystore: String(agent.config?.memory?.memoryStore) } };
        const extraConditions = agent === undefined ? {} : { extraConditions: [memoryDegraded(agent.config?.memory?.memoryStore, undefined)] };
        const next = nextStatus(undefined, object.metadata.generation, { ...deploymentProgress(deployment), ...(rendered.endpoint === undefined ? {} : { endpoint: rendered.endpoint }), ...linkedResources, ...extraConditions }, new Date());
        await writer.replace(kaosPath(object.kind, FLOOR_NS, object.metadata.name, 'status'), { ...object, status: next });
        requests++;
        statusesLeft--;
        continue;
      }
      const object = toApply.shift();
      if (object !== undefined) {
        const rendered = render(object);
        waitingReady.set(rendered.deployment.metadata.name, { object, rendered });
        for (const child of desiredChildren(object.kind as KaosKind, rendered).map((c) => applyIntent(c, false))) {
          await writer.apply(childPath(child), child, { fieldManager: FIELD_MANAGER, force: true });
          requests++;
        }
        continue;
      }
      if (!creating && waitingReady.size === 0 && toStatus.length === 0 && toApply.length === 0) break;
      await new Promise<void>((r) => { wake = r; setTimeout(r, 50); });
    }
  };

  const cpuAt = (): RunFigures['cpu'] => ({ operator: 0, apiserver: cpuSeconds(pids.apiserver), etcd: cpuSeconds(pids.etcd), script: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6 });
  const cpu0 = cpuAt();
  const t0 = Date.now();
  log(`floor: the same ${all.length} objects, ${CONCURRENCY} apply workers`);
  const workers = Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await createAll(admin, objects, (made) => { toApply.push(made); poke(); });
  const createSeconds = (Date.now() - t0) / 1000;
  creating = false;
  if (CREATE_ONLY) {
    statusesLeft = 0;
    poke();
    await workers;
    await watch.stop();
    return { figures: { seconds: Number.NaN, cpu: diffCpu(cpuAt(), cpu0) }, createSeconds, generations: { deployments: 0, generations: 0, rolledTwice: 0 }, requests };
  }
  const progress = setInterval(() => log(`  ${watch.count}/${AGENTS} Agents Ready`), 10_000);
  const convergedAt = await watch.converged();
  await workers;
  clearInterval(progress);
  const cpu1 = cpuAt();
  const seconds = (Math.max(convergedAt, Date.now()) - t0) / 1000;
  log(`floor: every Agent Ready after ${seconds.toFixed(2)} s`);
  const result = { figures: { seconds, cpu: diffCpu(cpu1, cpu0) }, createSeconds, generations: generations(watch.deployments()), requests };
  await watch.stop();
  return result;
}

/** What one operator run on a fresh control plane measured (measuredOperatorRun). */
interface MeasuredRun {
  run: Report['run'];
  audit: Report['audit'];
  peakRss: number;
  /** What the RSS was made of at its highest sample (memory-parts.ts), and when VmHWM last rose (s after the first create). */
  parts: MemoryParts | undefined;
  peakAtSeconds: number;
  /** The 1-minute load average when the run began, and its samples while it ran. */
  loadRunStart: number;
  loads: number[];
}

/**
 * One operator run on a fresh control plane of its own, the operator started with `env` over the
 * run's: the bulk apply, its convergence and idle window, the audit log's view of it. The control
 * plane is stopped before it returns.
 */
async function measuredOperatorRun(tag: string, env: Readonly<Record<string, string>> = {}): Promise<MeasuredRun> {
  const stack = await startStack(AGENTS + 2 * MODELAPIS + MCPSERVERS);
  const sampler = new Sampler();
  let operator: OperatorProcess | undefined;
  try {
    const { admin, plane } = stack;
    await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    operator = await launchOperator(stack, tag, env);
    sampler.watch(operator.pid, operator.metricsPort);
    const leasePath = resourcePath(LEASE, { namespace: OPERATOR_IDENTITY.namespace, name: 'kaos-operator' });
    await until('the operator holds the Lease', 60_000, async () => {
      try {
        return (await admin.get<{ spec?: { holderIdentity?: string } }>(leasePath)).spec?.holderIdentity === operatorEnv.POD_NAME;
      } catch {
        return false;
      }
    });
    await sleep(1000);
    const grants = ACCESS_GRANTS > 0 ? accessGrants(NS, ACCESS_GRANTS, AGENTS) : [];
    if (grants.length > 0) {
      log(`creating ${grants.length} AccessGrants, then waiting for the projection to settle`);
      await createGrants(admin, grants, CREATE_IN_FLIGHT);
      await sleep(15_000);
    }
    const projectionBefore = grants.length > 0 ? await projectionMetrics(operator.metricsPort) : undefined;
    const loadRunStart = loadavg()[0] ?? 0;
    const run = await operatorRun(admin, plane.pids(), operator);
    const projectionAfter = projectionBefore === undefined ? undefined : await projectionMetrics(operator.metricsPort);
    sampler.sample();
    const peakRss = Math.max(sampler.peakHwm, memory(operator.pid).hwm || 0);
    const audit = auditEvents(plane.logs.audit ?? '');
    const parts = sampler.partsAtPeakRss;
    log(`operator: peak RSS (VmHWM) ${peakRss.toFixed(1)} MiB; at the highest sampled RSS: ${parts === undefined ? 'unknown' : describeParts(parts)}`);
    const peakAtSeconds = ((sampler.hwmRises.at(-1)?.at ?? run.t0) - run.t0) / 1000;
    log(`operator: VmHWM rose (seconds after the first create: MiB) ${sampler.hwmRises.map((r) => `${((r.at - run.t0) / 1000).toFixed(1)}: ${r.hwm.toFixed(0)}`).join(', ')}; the objects were created by ${run.createSeconds.toFixed(1)} s, every Agent Ready at ${run.figures.seconds.toFixed(1)} s`);
    reportOperator(run, audit);
    if (projectionBefore !== undefined && projectionAfter !== undefined) reportProjection(run, audit, projectionBefore, projectionAfter, grants);
    return { run, audit, peakRss, parts, peakAtSeconds, loadRunStart, loads: [...sampler.loads] };
  } catch (err) {
    if (operator !== undefined) log(`the operator's log ends with:\n${tail(operator.log(), 25)}`);
    throw err;
  } finally {
    sampler.stop();
    await operator?.stop();
    await stack.stop();
  }
}

/** IDENTITY_COMPARE=1: what ServiceAccount identity costs a bulk apply, its runs alternated with runs without it. */
async function compareIdentity(): Promise<void> {
  const out = (line = ''): void => void process.stdout.write(`${line}\n`);
  const modes = { off: { SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: '' }, on: { SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount' } } as const;
  const order: ('off' | 'on')[] = Array.from({ length: ROUNDS }, (_, i): ('off' | 'on')[] => (i % 2 === 0 ? ['off', 'on'] : ['on', 'off'])).flat();
  const results: Record<'off' | 'on', MeasuredRun[]> = { off: [], on: [] };
  for (const [i, mode] of order.entries()) {
    log(`identity ${mode} (run ${i + 1} of ${order.length})`);
    results[mode].push(await measuredOperatorRun(`identity-${mode}-${i}`, modes[mode]));
  }
  const figures = (r: MeasuredRun) => {
    const converging = r.audit.filter((e) => e.at >= r.run.t0 - 1 && e.at < r.run.convergedAt + 1 && e.resource !== 'leases');
    const writes = converging.filter((e) => WRITE_VERBS.has(e.verb));
    const idle = r.audit.filter((e) => e.at >= r.run.idleStart && e.at < r.run.idleEnd && e.resource !== 'leases' && WRITE_VERBS.has(e.verb));
    return {
      seconds: r.run.figures.seconds,
      create: r.run.createSeconds,
      writes: writes.length,
      serviceAccountWrites: writes.filter((e) => e.resource === 'serviceaccounts').length,
      deploymentWrites: writes.filter((e) => e.resource === 'deployments').length,
      generations: r.run.generations,
      idle: idle.length,
      operatorCpu: r.run.figures.cpu.operator,
      apiserverCpu: r.run.figures.cpu.apiserver,
      etcdCpu: r.run.figures.cpu.etcd,
      peakRss: r.peakRss,
      load: r.loads.reduce((a, b) => a + b, 0) / Math.max(1, r.loads.length),
    };
  };
  const off = results.off.map(figures);
  const on = results.on.map(figures);
  const each = (list: ReturnType<typeof figures>[], f: (x: ReturnType<typeof figures>) => number, digits: number, unit = ''): string => list.map((x) => `${f(x).toFixed(digits)}${unit}`).join(' / ');
  const mean = (list: ReturnType<typeof figures>[], f: (x: ReturnType<typeof figures>) => number): number => list.reduce((a, x) => a + f(x), 0) / list.length;
  const ratio = (f: (x: ReturnType<typeof figures>) => number): string => {
    const b = mean(off, f);
    return b > 0 ? `${(mean(on, f) / b).toFixed(2)}×` : '';
  };
  out(`${cpus().length} cores; bulk apply of ${MODELAPIS} ModelAPIs, ${MCPSERVERS} MCPServers, ${MODELAPIS} MemoryStores, then ${AGENTS} Agents, ${CREATE_IN_FLIGHT} in flight; ${POD_CHAIN ? 'every pod run (kube-scheduler, kwok)' : 'no pods (PODS=0)'}; runs in the order ${order.join(', ')}, each on a fresh control plane`);
  out();
  printTable([
    ['', 'identity off', 'identity on (ServiceAccount)', 'on / off (means)'],
    ['every Agent Ready', each(off, (x) => x.seconds, 2, ' s'), each(on, (x) => x.seconds, 2, ' s'), ratio((x) => x.seconds)],
    ['per Agent', each(off, (x) => (x.seconds * 1000) / AGENTS, 1, ' ms'), each(on, (x) => (x.seconds * 1000) / AGENTS, 1, ' ms'), ''],
    ['creating the objects', each(off, (x) => x.create, 2, ' s'), each(on, (x) => x.create, 2, ' s'), ratio((x) => x.create)],
    ['writes while converging', each(off, (x) => x.writes, 0), each(on, (x) => x.writes, 0), ratio((x) => x.writes)],
    ['writes per Agent', each(off, (x) => x.writes / AGENTS, 2), each(on, (x) => x.writes / AGENTS, 2), ''],
    ['  of them ServiceAccount writes', each(off, (x) => x.serviceAccountWrites, 0), each(on, (x) => x.serviceAccountWrites, 0), ''],
    ['  of them Deployment writes', each(off, (x) => x.deploymentWrites, 0), each(on, (x) => x.deploymentWrites, 0), ''],
    ['Agent Deployment generations / Deployments', off.map((x) => `${x.generations.generations} / ${x.generations.deployments}`).join(', '), on.map((x) => `${x.generations.generations} / ${x.generations.deployments}`).join(', '), ''],
    ['Deployments rolled out more than once', each(off, (x) => x.generations.rolledTwice, 0), each(on, (x) => x.generations.rolledTwice, 0), ''],
    [`idle writes (${IDLE_SECONDS} s)`, each(off, (x) => x.idle, 0), each(on, (x) => x.idle, 0), ''],
    ['operator CPU', each(off, (x) => x.operatorCpu, 2, ' s'), each(on, (x) => x.operatorCpu, 2, ' s'), ratio((x) => x.operatorCpu)],
    ['kube-apiserver CPU', each(off, (x) => x.apiserverCpu, 2, ' s'), each(on, (x) => x.apiserverCpu, 2, ' s'), ratio((x) => x.apiserverCpu)],
    ['etcd CPU', each(off, (x) => x.etcdCpu, 2, ' s'), each(on, (x) => x.etcdCpu, 2, ' s'), ratio((x) => x.etcdCpu)],
    ['operator peak RSS (VmHWM)', each(off, (x) => x.peakRss, 0, ' MiB'), each(on, (x) => x.peakRss, 0, ' MiB'), ratio((x) => x.peakRss)],
    ['1-min load average, mean', each(off, (x) => x.load, 1), each(on, (x) => x.load, 1), ''],
  ], out);
}

async function main(): Promise<void> {
  if (IDENTITY_COMPARE) return compareIdentity();
  const loadStart = loadavg()[0] ?? 0;
  log(`bulk apply: AGENTS=${AGENTS} MODELAPIS=${MODELAPIS} MCPSERVERS=${MCPSERVERS} MAX_CONCURRENT_RECONCILES=${CONCURRENCY}; starting the control plane`);
  const { run, audit, peakRss, parts, peakAtSeconds, loadRunStart, loads } = await measuredOperatorRun('bulk', ACCESS_GRANTS > 0 ? GRANTS_ENV : {});
  const load = (): Report['load'] => loadFigures(loadStart, loadRunStart, loads);
  if (!FLOOR) {
    writeResult(run, undefined, audit, peakRss, parts, peakAtSeconds, load());
    return;
  }
  // Both runs start from an empty cluster: the floor gets a fresh control plane too.
  log('floor: operator stopped; a fresh control plane, no webhooks');
  const stack = await startStack(AGENTS + 2 * MODELAPIS + MCPSERVERS);
  try {
    // The floor's writes go out as the operator's ServiceAccount: the same priority level of the
    // API server's flow control (workload-low), where the admin is exempt.
    const floor = await floorRun(stack.admin, await KubeClient.fromKubeConfig(stack.operatorKubeconfig), stack.plane.pids());
    report({ run, floor, audit, peakRss, load: load() });
    writeResult(run, floor, audit, peakRss, parts, peakAtSeconds, load());
  } finally {
    await stack.stop();
  }
}

interface Report {
  run: Awaited<ReturnType<typeof operatorRun>>;
  floor: Awaited<ReturnType<typeof floorRun>>;
  audit: ReturnType<typeof auditEvents>;
  peakRss: number;
  load: { start: number; runStart: number; mean: number; max: number; end: number };
}

/**
 * The projection's figures (ACCESS_GRANTS): passes and policy ConfigMap writes from the first
 * Agent create to every Agent Ready (from the operator's metrics and the audit log), the idle
 * window's, and one pass's time in the operator and in-process with the user grants (stdout).
 */
function reportProjection(run: Report['run'], audit: Report['audit'], before: Awaited<ReturnType<typeof projectionMetrics>>, after: Awaited<ReturnType<typeof projectionMetrics>>, grants: readonly Named[]): void {
  const out = (line = ''): void => void process.stdout.write(`${line}\n`);
  const policyWrites = (from: number, to: number): number =>
    audit.filter((e) => e.at >= from && e.at < to && e.resource === 'configmaps' && e.name === POLICY_CONFIG_MAP.name && WRITE_VERBS.has(e.verb)).length;
  const passes = after.passes - before.passes;
  const meanMs = ((after.passSeconds.sum - before.passSeconds.sum) / Math.max(1, after.passSeconds.count - before.passSeconds.count)) * 1000;
  const inProcess = timePass(scenario(NS), grants);
  out(`AccessGrants: ${grants.length} over ${AGENTS} Agents (created ${run.createSeconds.toFixed(2)} s long, ${CREATE_IN_FLIGHT} in flight), the projection active (security off: no per-route policies)`);
  printTable([
    ['', 'burst (first Agent create → every Agent Ready)', 'idle window'],
    ['projection passes', `${passes} (${after.failures - before.failures} failed)`, '—'],
    ['policy ConfigMap writes (audit log)', String(policyWrites(run.t0 - 1, run.convergedAt + 1)), String(policyWrites(run.idleStart, run.idleEnd))],
    ['one pass in the operator (mean)', `${meanMs.toFixed(1)} ms`, ''],
    ['one pass in-process, user grants included (median / slowest of 21)', `${inProcess.medianMs.toFixed(1)} / ${inProcess.maxMs.toFixed(1)} ms`, `data.json ${(inProcess.bytes / 1024).toFixed(0)} KiB`],
  ], out);
  out();
}

/** The operator's writes from the first create to every Agent Ready, and in the idle window (Lease renewals apart). */
function operatorWrites(run: Report['run'], audit: Report['audit']): { converging: number; idle: number } {
  const counted = (from: number, to: number): number =>
    audit.filter((e) => e.at >= from && e.at < to && e.resource !== 'leases' && WRITE_VERBS.has(e.verb)).length;
  return { converging: counted(run.t0 - 1, run.convergedAt + 1), idle: counted(run.idleStart, run.idleEnd) };
}

/** BULK_RESULT_FILE: the run's figures as JSON (the floor's NaN with FLOOR=0), for scale.ts and memory.ts. */
function writeResult(run: Report['run'], floor: Report['floor'] | undefined, audit: Report['audit'], peakRss: number, atPeak: MemoryParts | undefined, peakAtSeconds: number, load: Report['load']): void {
  if (RESULT_FILE === undefined) return;
  const writes = operatorWrites(run, audit);
  const figures: BulkFigures = {
    agents: AGENTS,
    pods: POD_CHAIN,
    seconds: { operator: run.figures.seconds, floor: floor?.figures.seconds ?? Number.NaN },
    createSeconds: { operator: run.createSeconds, floor: floor?.createSeconds ?? Number.NaN },
    writes: { operator: writes.converging, floor: floor?.requests ?? Number.NaN },
    idleWrites: writes.idle,
    generations: { operator: run.generations.generations, deployments: run.generations.deployments, rolledTwice: run.generations.rolledTwice },
    cpu: { operator: run.figures.cpu.operator, floorScript: floor?.figures.cpu.script ?? Number.NaN, apiserver: run.figures.cpu.apiserver, floorApiserver: floor?.figures.cpu.apiserver ?? Number.NaN },
    peakRssMiB: peakRss,
    memory: { peakAtSeconds, ...(atPeak === undefined ? {} : { atPeak }), ...(run.atConvergence === undefined ? {} : { atConvergence: run.atConvergence }) },
    load: { mean: load.mean, max: load.max },
  };
  writeFileSync(RESULT_FILE, `${JSON.stringify(figures)}\n`);
}

/** The operator run's requests, told at once (stderr), before the floor runs. */
function reportOperator(run: Report['run'], audit: Report['audit']): void {
  const converging = audit.filter((e) => e.at >= run.t0 - 1 && e.at < run.convergedAt + 1 && e.resource !== 'leases');
  const idle = audit.filter((e) => e.at >= run.idleStart && e.at < run.idleEnd && e.resource !== 'leases' && WRITE_VERBS.has(e.verb));
  log(`operator: every Agent Ready after ${run.figures.seconds.toFixed(2)} s (created in ${run.createSeconds.toFixed(2)} s), ${converging.filter((e) => WRITE_VERBS.has(e.verb)).length} writes, ${idle.length} idle writes, generations ${run.generations.generations} / ${run.generations.deployments}, operator CPU ${run.figures.cpu.operator.toFixed(2)} s; requests: ` +
    [...countBy(converging, (e) => `${e.verb} ${e.resource}`)].map(([k, n]) => `${k} ${n}`).join(', '));
}

function report(r: Report): void {
  const out = (line = ''): void => void process.stdout.write(`${line}\n`);
  const { run, floor } = r;
  const within = (from: number, to: number): Report['audit'] => r.audit.filter((e) => e.at >= from && e.at < to);
  const isLease = (e: { resource: string }): boolean => e.resource === 'leases';
  const converging = within(run.t0 - 1, run.convergedAt + 1).filter((e) => !isLease(e));
  const writes = converging.filter((e) => WRITE_VERBS.has(e.verb));
  const reads = converging.filter((e) => !WRITE_VERBS.has(e.verb) && e.verb !== 'watch' && e.verb !== 'list');
  const idleWrites = within(run.idleStart, run.idleEnd).filter((e) => WRITE_VERBS.has(e.verb) && !isLease(e));
  const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}×` : '');
  const gen = (g: Generations): string => `${g.generations} / ${g.deployments}`;

  out(`${cpus().length} cores; 1-min load average ${r.load.start.toFixed(1)} at the start, ${r.load.runStart.toFixed(1)} when the operator run began, mean ${r.load.mean.toFixed(1)} / max ${r.load.max.toFixed(1)} while the operator ran, ${r.load.end.toFixed(1)} at the end`);
  out(`bulk apply: ${MODELAPIS} ModelAPIs, ${MCPSERVERS} MCPServers, ${MODELAPIS} MemoryStores, then ${AGENTS} Agents, ${CREATE_IN_FLIGHT} in flight; MAX_CONCURRENT_RECONCILES=${CONCURRENCY}; ${POD_CHAIN ? 'every pod run (kube-scheduler, kwok)' : 'no pods (PODS=0: the rollout stand-in writes each Deployment status)'}`);
  out();
  printTable([
    ['', 'operator', 'floor', 'ratio'],
    ['every Agent Ready', `${run.figures.seconds.toFixed(2)} s`, `${floor.figures.seconds.toFixed(2)} s`, ratio(run.figures.seconds, floor.figures.seconds)],
    ['per Agent', `${(run.figures.seconds * 1000 / AGENTS).toFixed(1)} ms`, `${(floor.figures.seconds * 1000 / AGENTS).toFixed(1)} ms`, ''],
    ['creating the objects', `${run.createSeconds.toFixed(2)} s (webhooks on)`, `${floor.createSeconds.toFixed(2)} s (no webhooks)`, ratio(run.createSeconds, floor.createSeconds)],
    ['Deployment generations / Deployments', gen(run.generations), gen(floor.generations), ''],
    ['Deployments rolled out more than once', String(run.generations.rolledTwice), String(floor.generations.rolledTwice), ''],
    ['writes while converging', String(writes.length), String(floor.requests), ratio(writes.length, floor.requests)],
    ['writes per Agent', (writes.length / AGENTS).toFixed(2), (floor.requests / AGENTS).toFixed(2), ''],
    ['operator reads (GET) while converging', String(reads.length), '0', ''],
    ['operator CPU', `${run.figures.cpu.operator.toFixed(2)} s`, `(script ${floor.figures.cpu.script.toFixed(2)} s)`, ''],
    ['kube-apiserver CPU', `${run.figures.cpu.apiserver.toFixed(2)} s`, `${floor.figures.cpu.apiserver.toFixed(2)} s`, ratio(run.figures.cpu.apiserver, floor.figures.cpu.apiserver)],
    ['etcd CPU', `${run.figures.cpu.etcd.toFixed(2)} s`, `${floor.figures.cpu.etcd.toFixed(2)} s`, ratio(run.figures.cpu.etcd, floor.figures.cpu.etcd)],
    ['operator peak RSS (VmHWM)', `${r.peakRss.toFixed(0)} MiB`, '—', ''],
  ], out);
  out();
  out('operator requests from the first create to every Agent Ready, by verb and resource (Lease renewals apart):');
  printTable([['verb', 'resource', 'count', 'non-2xx'], ...[...countBy(converging, (e) => `${e.verb} ${e.resource}`)].map(([k, n]) => {
    const [verb = '', resource = ''] = k.split(' ');
    const failed = converging.filter((e) => e.verb === verb && e.resource === resource && (e.code < 200 || e.code >= 300)).length;
    return [verb, resource, String(n), String(failed)];
  })], out);
  out(`writes in the idle ${IDLE_SECONDS} s after a ${SETTLE_SECONDS} s settle: ${idleWrites.length} (${[...countBy(idleWrites, (e) => `${e.verb} ${e.resource}`)].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'})`);
  out();
  const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT met');
  const perDeployment = run.generations.generations / Math.max(1, run.generations.deployments);
  out(`targets${AGENTS === 1000 ? '' : ` (set for 1,000 Agents; this run has ${AGENTS})`}: ` +
    `writes ${writes.length} ≤ ${TARGETS.writes}: ${verdict(writes.length <= TARGETS.writes)}; ` +
    `idle writes ${idleWrites.length} = 0: ${verdict(idleWrites.length === TARGETS.idleWrites)}; ` +
    `peak RSS ${r.peakRss.toFixed(0)} MiB ≤ ${TARGETS.peakRssMiB} MiB: ${verdict(r.peakRss <= TARGETS.peakRssMiB)}; ` +
    `generations per Deployment ${perDeployment.toFixed(3)} = 1: ${verdict(run.generations.rolledTwice === 0)}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:bulk: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
