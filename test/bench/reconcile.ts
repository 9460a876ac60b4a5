// npm run bench:reconcile — how fast the controller converges a backlog of Agents, next to a
// floor: the same writes made by a plain script with no logic. Never part of pass/fail.
//
// One local control plane (an audit log of the operator's requests on), the operator started
// through its real entry point under its own ServiceAccount, with leader election on:
// Real rollouts: the control plane's Deployment and ReplicaSet controllers, kube-scheduler and
// kwok run every pod on fake nodes (enough for both runs' pods), and nothing writes a status by
// hand, so "converged" means Ready through that whole chain, for the operator and the floor alike
// (PODS=0: no pods; test/bench/rollout-stand-in.ts writes each Deployment generation's status).
//  1. setup: MODELAPIS ModelAPIs and MCPSERVERS MCPServers, reconciled by the operator, Ready once
//     their pods run;
//  2. pause: the operator is stopped, the Lease is taken (and renewed) by this script and the
//     operator started again: it serves the webhooks and fills its cache but may not reconcile.
//     AGENTS Agents are created through the webhooks (CREATE_IN_FLIGHT at once);
//  3. operator run: the Lease is freed; T0 is the acquireTime the operator writes into it. The
//     end is when a watch of this script has seen every Agent with its Deployment and Service
//     (controlled by it) and status Ready at its generation (its pod scheduled, run and ready);
//  4. settle (SETTLE_SECONDS) and idle window (IDLE_SECONDS): the operator's writes, counted from
//     the audit log — Lease renewals of leader election apart;
//  5. floor, in a fresh namespace of the same control plane with the operator stopped and the
//     webhook configurations deleted: copies of the same Agents are created (untimed), then
//     MAX_CONCURRENT_RECONCILES workers server-side-apply exactly the children the operator
//     renders for them (src/render, the operator's config, the same field manager and force), and
//     PUT the Ready status the operator wrote as soon as each Agent's Deployment has a ready,
//     rolled-out replica (a watch of the Deployments; no logic beyond that); its end is seen by
//     the same watch. Same processes, same warm API server and etcd, same garbage collector: the only
//     difference is the operator (a second control plane would cost a minute of CPU on shared
//     cores and start with colder caches).
// Printed: both times and their ratio, the operator's requests by verb and resource, its peak
// RSS (VmHWM, sampled from /proc), CPU seconds of the operator, kube-apiserver and etcd in both
// runs, the idle writes, and the load average during the run.
//
// Env: AGENTS (1000), MODELAPIS (10), MCPSERVERS (20), MAX_CONCURRENT_RECONCILES (4),
// CREATE_IN_FLIGHT (16), SETTLE_SECONDS (5), IDLE_SECONDS (60), BENCH_LOG_LEVEL (info: the
// operator's default), BENCH_CPU_PROF (a directory: run the operator with --cpu-prof there),
// BENCH_OPERATOR_NODE_OPTIONS (e.g. --max-old-space-size=128), BENCH_OPERATOR_ROOT (another
// checkout, built: its dist/main.js is the operator run, to measure before and after alike).
import type { KaosKind } from '../../src/api/kinds.ts';
import type { KaosObjects } from '../../src/api/schema/index.ts';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  applySetupObjects,
  installCrds,
  startOperator,
  tail,
  waitForAdmission,
  writeTokenKubeconfig,
  type OperatorProcess,
  type StartOperatorOptions,
} from '../../scripts/local-stack.ts';
import { makeDevCerts } from '../../certs/make-dev-certs.ts';
import { CONFIGURATION_NAMES, renderWebhookConfigurations } from '../../src/admission/webhook-configs.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import { loadConfig } from '../../src/config/config.ts';
import { resolveAgentDeps } from '../../src/controller/reconcile/agent.ts';
import { desiredChildren } from '../../src/controller/reconcile/children.ts';
import { NO_GRANT_PROJECTION, type ReconcileReads } from '../../src/controller/reconcile/context.ts';
import { OWNED_SELECTOR } from '../../src/controller/watches.ts';
import { applyIntent, controllerUid } from '../../src/kube/apply.ts';
import { childPath, FIELD_MANAGER } from '../../src/cluster/child-apply.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { DEPLOYMENT, LEASE, resourcePath, SERVICE, type ResourceType } from '../../src/kube/paths.ts';
import { KAOS_TYPES } from '../../src/cluster/kaos-resources.ts';
import { OPERATOR_IDENTITY, OPERATOR_USER, renderRbac } from '../../src/cluster/rbac.ts';
import { Reflector } from '../../src/kube/reflector.ts';
import { renderAgent, workloadName, type AgentInput } from '../../src/render/index.ts';
import { NODES, startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';
import { RolloutStandIn } from './rollout-stand-in.ts';
import { memoryParts, type MemoryParts } from './memory-parts.ts';

export const int = (name: string, fallback: number): number => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer (got ${raw})`);
  return value;
};
const AGENTS = int('AGENTS', 1000);
const MODELAPIS = Math.max(1, int('MODELAPIS', 10));
const MCPSERVERS = Math.max(1, int('MCPSERVERS', 20));
export const CONCURRENCY = Math.max(1, int('MAX_CONCURRENT_RECONCILES', 4));
export const CREATE_IN_FLIGHT = Math.max(1, int('CREATE_IN_FLIGHT', 16));
export const SETTLE_SECONDS = int('SETTLE_SECONDS', 5);
export const IDLE_SECONDS = int('IDLE_SECONDS', 60);
export const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
const CPU_PROF = process.env.BENCH_CPU_PROF;
const OPERATOR_NODE_OPTIONS = process.env.BENCH_OPERATOR_NODE_OPTIONS ?? '';
/** Another checkout (built) whose dist/main.js runs in place of this tree's: before and after, one command. */
const OPERATOR_ROOT = process.env.BENCH_OPERATOR_ROOT;
const NS = 'bench';
const FLOOR_NS = 'bench-floor';
const LEASE_NAMESPACE = OPERATOR_IDENTITY.namespace;
const LEASE_NAME = 'kaos-operator';
const TARGETS = { ratio: 1.5, idleWrites: 0, peakRssMiB: 250 };
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
export const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

export const log = (line: string): void => void process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---- objects -------------------------------------------------------------------------------

const modelAPI = (i: number): KubeObject => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind: 'ModelAPI',
  metadata: { name: `model-${i}`, namespace: NS },
  spec: i % 2 === 0
    ? { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }
    : { mode: 'Proxy', proxyConfig: { apiBase: 'http://ollama.example:11434', model: 'ollama/smollm2:135m' } },
});

const mcpServer = (i: number): KubeObject => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind: 'MCPServer',
  metadata: { name: `tools-${i}`, namespace: NS },
  spec: i % 2 === 0
    ? { type: 'python-runtime', config: { tools: { fromPackage: 'mcp-server-fetch' } } }
    : { type: 'python-runtime', config: { tools: { fromString: `def echo_${i}(text: str) -> str:\n    return text\n` } } },
});

const agent = (i: number): KubeObject => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind: 'Agent',
  metadata: { name: `agent-${i}`, namespace: NS },
  spec: {
    modelAPI: `model-${i % MODELAPIS}`,
    mcpServers: [...new Set([`tools-${i % MCPSERVERS}`, `tools-${(i + 7) % MCPSERVERS}`])],
    config: { description: `bench agent ${i}`, instructions: 'You answer briefly.', env: [{ name: 'BENCH_INDEX', value: String(i) }] },
  },
});

export const kaosPath = (kind: keyof typeof KAOS_TYPES, namespace: string, name?: string, subresource?: string): string =>
  resourcePath(KAOS_TYPES[kind], { namespace, ...(name === undefined ? {} : { name }), ...(subresource === undefined ? {} : { subresource }) });

// ---- measuring -----------------------------------------------------------------------------

export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}

/** VmHWM (peak RSS) and VmRSS in MiB; NaN once the process is gone. */
export function memory(pid: number): { hwm: number; rss: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { hwm: kib('VmHWM') / 1024, rss: kib('VmRSS') / 1024 };
  } catch {
    return { hwm: Number.NaN, rss: Number.NaN };
  }
}

/** The operator's own view of its memory (prom-client's default metrics), in MiB. */
export interface HeapFigures { heapUsed: number; heapTotal: number; external: number }

export async function heapFigures(metricsPort: number): Promise<HeapFigures | undefined> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const gauge = (name: string): number => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN) / 2 ** 20;
    return { heapUsed: gauge('nodejs_heap_size_used_bytes'), heapTotal: gauge('nodejs_heap_size_total_bytes'), external: gauge('nodejs_external_memory_bytes') };
  } catch {
    return undefined;
  }
}

/**
 * Samples the operator's memory five times a second and the 1-minute load average once a second;
 * keeps the heap figures and the parts (memory-parts.ts) of the sample with the highest RSS (is a
 * peak live objects, garbage not yet collected, or memory outside the heap?), and when VmHWM rose
 * (a peak shorter than a sample shows there, not in the parts).
 */
export class Sampler {
  readonly loads: number[] = [];
  peakHwm = 0;
  peakRss = 0;
  heapAtPeakRss: HeapFigures | undefined;
  /** What the memory was made of at the sample with the highest RSS (memory-parts.ts). */
  partsAtPeakRss: MemoryParts | undefined;
  /** Each rise of VmHWM by at least 1 MiB: when (ms since the epoch) and to what (MiB). */
  readonly hwmRises: { at: number; hwm: number }[] = [];
  #pid = 0;
  #metricsPort = 0;
  #timer: NodeJS.Timeout | undefined;
  #ticks = 0;
  /** When the parts were last read, at what RSS: at most once a second, a scrape costs the operator some CPU. */
  #partsAt = 0;
  #partsRss = 0;
  watch(pid: number, metricsPort: number): void {
    this.#pid = pid;
    this.#metricsPort = metricsPort;
    this.#timer ??= setInterval(() => this.sample(), 200);
  }
  sample(): void {
    if (this.#ticks++ % 5 === 0) this.loads.push(loadavg()[0] ?? 0);
    const { hwm, rss } = memory(this.#pid);
    if (hwm >= (this.hwmRises.at(-1)?.hwm ?? 0) + 1) this.hwmRises.push({ at: Date.now(), hwm });
    if (hwm > this.peakHwm) this.peakHwm = hwm;
    if (rss > this.peakRss) this.peakRss = rss;
    if (rss > this.#partsRss && Date.now() - this.#partsAt >= 1000) {
      this.#partsAt = Date.now();
      this.#partsRss = rss;
      void heapFigures(this.#metricsPort).then((h) => { if (h !== undefined && rss >= this.#partsRss) this.heapAtPeakRss = h; });
      void memoryParts(this.#pid, this.#metricsPort).then((p) => { if (p !== undefined && rss >= this.#partsRss) this.partsAtPeakRss = p; });
    }
  }
  stop(): void {
    clearInterval(this.#timer);
  }
}

/**
 * Watches Agents, Deployments and Services of one namespace and notes when the last Agent
 * reached its final state: its Deployment and Service controlled by it, and a status at its
 * generation with phase Ready (its pod runs and is ready). `onDeployment` hears every Deployment
 * event (the floor writes a status when its Deployment is ready).
 */
export class ConvergenceWatch {
  readonly #agents: Reflector;
  readonly #deployments: Reflector;
  readonly #services: Reflector;
  readonly #done = new Set<string>();
  readonly #expected: number;
  #lastAt = 0;
  #resolve: (() => void) | undefined;
  /** Updates seen after convergence, by kind: the idle check's resourceVersion changes. */
  readonly updatesAfter = { Agent: 0, Deployment: 0, Service: 0 };
  #converged = false;

  readonly #namespace: string;

  constructor(client: KubeClient, namespace: string, expected: number, onDeployment?: (deployment: KubeObject) => void) {
    this.#expected = expected;
    this.#namespace = namespace;
    const reflector = (type: ResourceType, labelSelector?: string): Reflector =>
      new Reflector({ client, type, namespace, ...(labelSelector === undefined ? {} : { labelSelector }) });
    this.#agents = reflector(KAOS_TYPES.Agent);
    this.#deployments = reflector(DEPLOYMENT, OWNED_SELECTOR);
    this.#services = reflector(SERVICE, OWNED_SELECTOR);
    const onEvent = (kind: 'Agent' | 'Deployment' | 'Service') => (event: { type: string; object: KubeObject }): void => {
      if (this.#converged && event.type === 'update') this.updatesAfter[kind]++;
      // A child names its Agent in its controller ownerReference.
      const owner = kind === 'Agent'
        ? event.object.metadata?.name
        : (event.object.metadata?.ownerReferences as { kind?: string; name?: string; controller?: boolean }[] | undefined)
          ?.find((o) => o.controller === true && o.kind === 'Agent')?.name;
      if (owner !== undefined) this.#check(owner);
    };
    this.#agents.on(onEvent('Agent'));
    this.#deployments.on(onEvent('Deployment'));
    this.#services.on(onEvent('Service'));
    if (onDeployment !== undefined) this.#deployments.on((event) => { if (event.type !== 'delete') onDeployment(event.object); });
  }

  start(): Promise<void> {
    for (const r of [this.#agents, this.#deployments, this.#services]) r.start();
    return Promise.all([this.#agents, this.#deployments, this.#services].map((r) => r.waitForSync())).then(() => {});
  }

  /** Resolves with the wall-clock ms at which the last Agent converged. */
  converged(): Promise<number> {
    if (this.#done.size >= this.#expected) return Promise.resolve(this.#lastAt);
    return new Promise((res) => { this.#resolve = () => res(this.#lastAt); });
  }

  get count(): number {
    return this.#done.size;
  }

  deployments(): KubeObject[] {
    return this.#deployments.list();
  }

  markConverged(): void {
    this.#converged = true;
  }

  #check(agentName: string): void {
    const agent = this.#agents.getByName(this.#namespace, agentName);
    const uid = agent?.metadata?.uid;
    const status = agent?.status as { phase?: string; observedGeneration?: number } | undefined;
    const deployment = this.#deployments.getByName(this.#namespace, workloadName('Agent', agentName));
    const service = this.#services.getByName(this.#namespace, workloadName('Agent', agentName));
    const ok =
      uid !== undefined &&
      status?.phase === 'Ready' &&
      status.observedGeneration === agent?.metadata?.generation &&
      deployment !== undefined && controllerUid(deployment) === uid &&
      service !== undefined && controllerUid(service) === uid;
    if (ok && !this.#done.has(agentName)) {
      this.#done.add(agentName);
      this.#lastAt = Date.now();
      if (this.#done.size >= this.#expected) this.#resolve?.();
    } else if (!ok) {
      this.#done.delete(agentName);
    }
  }

  async stop(): Promise<void> {
    await Promise.all([this.#agents.stop(), this.#deployments.stop(), this.#services.stop()]);
  }
}

interface AuditEvent {
  verb: string;
  stage: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  requestReceivedTimestamp: string;
  responseStatus?: { code?: number };
}

/** The operator's finished requests from the audit log, with their time in ms. */
export function auditEvents(file: string): { at: number; verb: string; resource: string; name: string; code: number }[] {
  const out: { at: number; verb: string; resource: string; name: string; code: number }[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    const e = JSON.parse(line) as AuditEvent;
    if (e.stage !== 'ResponseComplete' || e.user?.username !== OPERATOR_USER) continue;
    const ref = e.objectRef ?? {};
    const resource = `${ref.resource ?? '?'}${ref.subresource === undefined ? '' : `/${ref.subresource}`}`;
    out.push({ at: Date.parse(e.requestReceivedTimestamp), verb: e.verb, resource, name: ref.name ?? '', code: e.responseStatus?.code ?? 0 });
  }
  return out;
}

export function countBy(events: readonly { verb: string; resource: string }[], key: (e: { verb: string; resource: string }) => string): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of events) out.set(key(e), (out.get(key(e)) ?? 0) + 1);
  return new Map([...out].sort((a, b) => b[1] - a[1]));
}

// ---- the run -------------------------------------------------------------------------------

export interface Stack {
  plane: ControlPlane;
  admin: KubeClient;
  operatorKubeconfig: string;
  certDir: string;
  caPem: string;
  /** Stops the stand-in (PODS=0) and the control plane; once, however often called. */
  stop(): Promise<void>;
}

/**
 * PODS=0: no pod runs; test/bench/rollout-stand-in.ts writes each Deployment generation's
 * rolled-out status instead of the Deployment and ReplicaSet controllers, kube-scheduler and kwok.
 */
export const POD_CHAIN = process.env.PODS !== '0';

/** `pods`: every pod the bench runs at once (enough fake nodes are made for them, 110 a node). */
export async function startStack(pods = 2 * AGENTS + MODELAPIS + MCPSERVERS): Promise<Stack> {
  const identity = {
    token: randomBytes(24).toString('hex'),
    user: OPERATOR_USER,
    uid: 'kaos-operator-uid',
    groups: ['system:serviceaccounts', `system:serviceaccounts:${OPERATOR_IDENTITY.namespace}`],
  };
  // By default every pod of both runs at once (the floor's copies run beside the operator run's).
  const nodes = Math.max(NODES.count, Math.ceil(pods / Number(NODES.capacity.pods)) + 1);
  const plane = await startControlPlane({ log, extraTokens: [identity], audit: { users: [OPERATOR_USER] }, nodes, pods: POD_CHAIN });
  let standIn: RolloutStandIn | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => stopping ??= (async () => {
    await standIn?.stop();
    if (standIn !== undefined) log(`rollout stand-in: ${standIn.writes} Deployment status writes`);
    await plane.stop();
  })();
  try {
    const certDir = join(plane.dir, 'webhook-certs');
    const certs = await makeDevCerts({ outDir: certDir });
    const admin = await KubeClient.fromKubeConfig(plane.kubeconfigPath);
    if (!POD_CHAIN) {
      standIn = new RolloutStandIn(admin, log);
      await standIn.start();
    }
    await installCrds(admin);
    await applySetupObjects(admin, renderRbac() as KubeObject[]);
    const operatorKubeconfig = join(plane.dir, 'operator.kubeconfig');
    await writeTokenKubeconfig(plane.kubeconfigPath, operatorKubeconfig, identity.token, identity.user);
    return { plane, admin, operatorKubeconfig, certDir, caPem: certs.caPem, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export const operatorEnv: Record<string, string> = {
  LOG_LEVEL: LOG_LEVEL,
  LEADER_ELECT: 'true',
  LEADER_ELECTION_NAMESPACE: LEASE_NAMESPACE,
  POD_NAME: 'bench-operator',
  MAX_CONCURRENT_RECONCILES: String(CONCURRENCY),
  SHUTDOWN_DELAY_SECONDS: '0',
};

/** Starts the operator of this run on `stack`; `env` over operatorEnv (e.g. a setting two runs compare). */
export async function launchOperator(stack: Stack, tag: string, env: Readonly<Record<string, string>> = {}): Promise<OperatorProcess> {
  if (CPU_PROF !== undefined) mkdirSync(CPU_PROF, { recursive: true });
  const nodeOptions = [OPERATOR_NODE_OPTIONS, CPU_PROF === undefined ? '' : `--cpu-prof --cpu-prof-dir=${CPU_PROF}`].filter((o) => o !== '').join(' ');
  const operator = await startOperator({
    kubeconfig: stack.operatorKubeconfig,
    certDir: stack.certDir,
    logFile: join(stack.plane.dir, `operator-${tag}.log`),
    env: { ...operatorEnv, ...env, ...(nodeOptions === '' ? {} : { NODE_OPTIONS: nodeOptions }) },
    ...(OPERATOR_ROOT === undefined || OPERATOR_ROOT === '' ? {} : { main: join(OPERATOR_ROOT, 'dist', 'main.js'), command: await operatorCommandOf(OPERATOR_ROOT) }),
  });
  await applySetupObjects(stack.admin, renderWebhookConfigurations({ url: `https://127.0.0.1:${operator.webhookPort}`, caBundle: stack.caPem }));
  await waitForAdmission(stack.admin);
  return operator;
}

/** `checkout[+VAR=value…]`, how a bench names a build: the checkout, and the operator settings it runs with. */
export function buildSettings(spec: string): { dir: string; env: Record<string, string> } {
  const [dir = '', ...settings] = spec.split('+');
  const env: Record<string, string> = {};
  for (const setting of settings) {
    const [key = '', ...value] = setting.split('=');
    if (key === '' || value.length === 0) throw new Error(`"${setting}" in "${spec}" is not VAR=value`);
    env[key] = value.join('=');
  }
  return { dir, env };
}

/** How the checkout at `root` starts its operator (its scripts/operator-command.ts): its flags and environment, not this tree's. */
export async function operatorCommandOf(root: string): Promise<NonNullable<StartOperatorOptions['command']>> {
  const command = (await import(pathToFileURL(join(root, 'scripts', 'operator-command.ts')).href)) as typeof import('../../scripts/operator-command.ts');
  return { args: command.operatorArgs, env: command.OPERATOR_PROCESS_ENV };
}

interface LeaseObject extends KubeObject {
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string; leaseTransitions?: number };
}

const leasePath = resourcePath(LEASE, { namespace: LEASE_NAMESPACE, name: LEASE_NAME });

async function setLeaseHolder(admin: KubeClient, holder: string): Promise<void> {
  const lease = await admin.get<LeaseObject>(leasePath);
  const now = new Date().toISOString().replace('Z', '000Z');
  await admin.replace(leasePath, { ...lease, spec: { ...lease.spec, holderIdentity: holder, leaseDurationSeconds: 15, acquireTime: now, renewTime: now } });
}

/**
 * Holds the Lease as `holder`, renewing it every 2 s like a live leader (a candidate takes a
 * Lease that has not changed for its lease duration, whatever the holder wrote), until the
 * returned function frees it: holder '' — taken at the operator's next retry.
 */
async function holdLease(admin: KubeClient, holder: string): Promise<() => Promise<void>> {
  await setLeaseHolder(admin, holder);
  let renewing = Promise.resolve();
  const timer = setInterval(() => {
    renewing = renewing.then(async () => {
      const lease = await admin.get<LeaseObject>(leasePath);
      await admin.replace(leasePath, { ...lease, spec: { ...lease.spec, renewTime: new Date().toISOString().replace('Z', '000Z') } });
    }).catch((err: unknown) => log(`renewing the bench's Lease failed: ${String(err)}`));
  }, 2000);
  return async () => {
    clearInterval(timer);
    await renewing;
    await setLeaseHolder(admin, '');
  };
}

export async function inParallel<T>(items: readonly T[], width: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) await work(items[next++] as T);
  }));
}

export async function until(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not after ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

/**
 * What a floor's render reads: the KAOS objects `kaos` gives (taken as valid objects of their
 * kinds: the API server admitted them), no children, no Secrets or ConfigMaps, no routes, no
 * runtime registries (the benches' MCPServers use `type`, their Agents have no harness).
 */
export function floorReads(kaos: (kind: KaosKind, name: string) => KubeObject | undefined): ReconcileReads {
  return {
    kaos: <K extends KaosKind>(kind: K, _namespace: string, name: string) => kaos(kind, name) as KaosObjects[K] | undefined,
    child: () => undefined,
    secretResourceVersion: () => undefined,
    configMapResourceVersion: () => undefined,
    httpRoutesServed: () => false,
    mcpRuntimes: () => ({ problem: 'no MCP runtime registry in a floor run' }),
    grantProjection: () => NO_GRANT_PROJECTION,
    securityPoliciesServed: () => false,
    serviceAccountIssuer: () => undefined,
    userJwksUri: () => undefined,
    gatewayAddress: () => undefined,
    harnessRuntimes: () => ({ problem: 'no harness runtime registry in a floor run' }),
  };
}

export interface RunFigures {
  seconds: number;
  cpu: { operator: number; apiserver: number; etcd: number; script: number };
}

async function main(): Promise<void> {
  if (AGENTS < 1) throw new Error('AGENTS must be at least 1');
  const loadStart = loadavg()[0] ?? 0;
  log(`AGENTS=${AGENTS} MODELAPIS=${MODELAPIS} MCPSERVERS=${MCPSERVERS} MAX_CONCURRENT_RECONCILES=${CONCURRENCY}; starting the control plane`);
  const stack = await startStack();
  const sampler = new Sampler();
  let operator: OperatorProcess | undefined;
  try {
    const { admin, plane } = stack;
    await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });

    // 1. dependencies, reconciled, Ready once their pods run
    operator = await launchOperator(stack, 'setup');
    log(`setup: ${MODELAPIS} ModelAPIs and ${MCPSERVERS} MCPServers`);
    for (let i = 0; i < MODELAPIS; i++) await admin.create(kaosPath('ModelAPI', NS), modelAPI(i));
    for (let i = 0; i < MCPSERVERS; i++) await admin.create(kaosPath('MCPServer', NS), mcpServer(i));
    const depDeployments = [
      ...Array.from({ length: MODELAPIS }, (_, i) => workloadName('ModelAPI', `model-${i}`)),
      ...Array.from({ length: MCPSERVERS }, (_, i) => workloadName('MCPServer', `tools-${i}`)),
    ];
    await until('dependency Deployments', 120_000, async () => {
      const list = await admin.list<KubeObject>(resourcePath(DEPLOYMENT, { namespace: NS }), { labelSelector: OWNED_SELECTOR });
      return depDeployments.every((d) => list.items.some((x) => x.metadata?.name === d));
    });
    await until('dependencies Ready', 120_000, async () => {
      const lists = await Promise.all([admin.list<KubeObject>(kaosPath('ModelAPI', NS)), admin.list<KubeObject>(kaosPath('MCPServer', NS))]);
      return lists.every((l) => l.items.every((o) => (o.status as { ready?: boolean } | undefined)?.ready === true));
    });

    // 2. pause the controller: a fake holder keeps the Lease while the Agents are created
    log('pause: restarting the operator behind a Lease held by someone else');
    await operator.stop();
    const releaseLease = await holdLease(admin, 'bench-paused');
    operator = await launchOperator(stack, 'run');
    sampler.watch(operator.pid, operator.metricsPort);
    log(`creating ${AGENTS} Agents through the webhooks, ${CREATE_IN_FLIGHT} in flight`);
    const indexes = Array.from({ length: AGENTS }, (_, i) => i);
    await inParallel(indexes, CREATE_IN_FLIGHT, (i) => admin.create(kaosPath('Agent', NS), agent(i)));
    const rssBeforeRun = memory(operator.pid);

    // 3. operator run
    const watch = new ConvergenceWatch(admin, NS, AGENTS);
    await watch.start();
    await sleep(1000); // the operator's cache has seen the last creates
    const pids = plane.pids();
    const cpuAt = (): RunFigures['cpu'] => ({ operator: cpuSeconds(operator?.pid ?? 0), apiserver: cpuSeconds(pids.apiserver), etcd: cpuSeconds(pids.etcd), script: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6 });
    const loadRunStart = loadavg()[0] ?? 0;
    const cpu0 = cpuAt();
    log('operator run: freeing the Lease');
    await releaseLease();
    const progress = setInterval(() => log(`  ${watch.count}/${AGENTS} Agents converged`), 10_000);
    const convergedAt = await watch.converged();
    clearInterval(progress);
    const cpu1 = cpuAt();
    const lease = await admin.get<LeaseObject>(leasePath);
    const t0 = Date.parse(lease.spec?.acquireTime ?? '');
    if (lease.spec?.holderIdentity !== operatorEnv.POD_NAME || Number.isNaN(t0)) throw new Error(`the operator does not hold the Lease: ${JSON.stringify(lease.spec)}`);
    const early = auditEvents(plane.logs.audit ?? '').filter((e) => e.at < t0 && e.verb === 'patch' && e.resource === 'deployments' && e.name.startsWith(workloadName('Agent', ''))).length;
    if (early > 0) throw new Error(`the operator applied ${early} Deployments before it took the Lease at T0: the pause did not hold`);
    const operatorRun: RunFigures = { seconds: (convergedAt - t0) / 1000, cpu: diffCpu(cpu1, cpu0) };
    log(`operator converged ${AGENTS} Agents in ${operatorRun.seconds.toFixed(2)} s`);
    const rssAtConvergence = memory(operator.pid);

    // 4. settle and idle
    watch.markConverged();
    log(`settle ${SETTLE_SECONDS} s, then idle ${IDLE_SECONDS} s`);
    await sleep(SETTLE_SECONDS * 1000);
    const idleStart = Date.now();
    await sleep(IDLE_SECONDS * 1000);
    const idleEnd = Date.now();
    sampler.sample();
    const rssEnd = memory(operator.pid);
    const heapEnd = await heapFigures(operator.metricsPort);
    const updatesAfter = { ...watch.updatesAfter };
    const deploymentsOfOperator = watch.deployments();
    await watch.stop();
    const audit = auditEvents(plane.logs.audit ?? '');
    await operator.stop();
    operator = undefined;
    sampler.stop();

    // 5. floor
    log('floor: operator stopped, webhook configurations deleted, copies of the Agents in a fresh namespace');
    await admin.delete(`/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${CONFIGURATION_NAMES.mutating}`);
    await admin.delete(`/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${CONFIGURATION_NAMES.validating}`);
    const floor = await runFloor(admin, pids);
    const floorDeployments = floor.deployments;
    const mismatches = compareTemplates(deploymentsOfOperator, floorDeployments);

    const loads = sampler.loads;
    report({
      operatorRun,
      floor: floor.figures,
      floorWritesDoneSeconds: floor.writesDoneSeconds,
      floorRequests: floor.requests,
      audit,
      windows: { t0, convergedAt, idleStart, idleEnd },
      rss: { peak: Math.max(sampler.peakHwm, rssEnd.hwm || 0), beforeRun: rssBeforeRun, atConvergence: rssAtConvergence, end: rssEnd },
      heap: { atPeakRss: sampler.heapAtPeakRss, peakRss: sampler.peakRss, end: heapEnd },
      updatesAfter,
      mismatches,
      load: loadFigures(loadStart, loadRunStart, loads),
    });
  } catch (err) {
    if (operator !== undefined) log(`the operator's log ends with:\n${tail(operator.log(), 25)}`);
    throw err;
  } finally {
    sampler.stop();
    await operator?.stop();
    await stack.stop();
  }
}

/** The machine's 1-minute load average: at the start, when the run began, its samples' mean and max, now. */
export function loadFigures(start: number, runStart: number, samples: readonly number[]): { start: number; runStart: number; mean: number; max: number; end: number } {
  const mean = samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length);
  return { start, runStart, mean, max: Math.max(...samples, 0), end: loadavg()[0] ?? 0 };
}

export function diffCpu(a: RunFigures['cpu'], b: RunFigures['cpu']): RunFigures['cpu'] {
  return { operator: a.operator - b.operator, apiserver: a.apiserver - b.apiserver, etcd: a.etcd - b.etcd, script: a.script - b.script };
}

/**
 * The floor: copies of the operator run's Agents in FLOOR_NS (untimed), then, timed, exactly the
 * operator's children and final status for each, CONCURRENCY Agents at a time.
 */
async function runFloor(admin: KubeClient, pids: ReturnType<ControlPlane['pids']>): Promise<{ figures: RunFigures; writesDoneSeconds: number; requests: number; deployments: KubeObject[] }> {
  await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: FLOOR_NS } });
  const [agents, modelAPIs, mcpServers] = await Promise.all([
    admin.list<KubeObject>(kaosPath('Agent', NS)),
    admin.list<KubeObject>(kaosPath('ModelAPI', NS)),
    admin.list<KubeObject>(kaosPath('MCPServer', NS)),
  ]);
  const byName = (items: readonly KubeObject[]): Map<string, KubeObject> => new Map(items.map((o) => [o.metadata?.name ?? '', o]));
  const deps = { Agent: byName(agents.items), ModelAPI: byName(modelAPIs.items), MCPServer: byName(mcpServers.items), MemoryStore: new Map<string, KubeObject>(), AccessGrant: new Map<string, KubeObject>() };
  // The operator run's dependencies, whatever the namespace asked: their status endpoints (in NS)
  // are what the operator rendered into its Agents, so the floor's children are byte for byte
  // the same apart from their own namespace and owner.
  const reads = floorReads((kind, name) => deps[kind].get(name));
  const config = loadConfig({ ...process.env, ...operatorEnv });

  const copies: { object: KubeObject; status: unknown }[] = [];
  await inParallel(agents.items, CREATE_IN_FLIGHT, async (a) => {
    const { name, labels, annotations } = a.metadata ?? {};
    const made = await admin.create<KubeObject>(kaosPath('Agent', FLOOR_NS), {
      apiVersion: a.apiVersion, kind: a.kind, metadata: { name, namespace: FLOOR_NS, ...(labels === undefined ? {} : { labels }), ...(annotations === undefined ? {} : { annotations }) }, spec: a.spec,
    });
    copies.push({ object: made, status: a.status });
  });
  copies.sort((x, y) => Number((x.object.metadata?.name ?? '').slice(6)) - Number((y.object.metadata?.name ?? '').slice(6)));
  const work = copies.map(({ object, status }) => {
    const resolution = resolveAgentDeps(reads, FLOOR_NS, object.spec);
    if ('verdict' in resolution) throw new Error(`floor: ${object.metadata?.name ?? ''} does not resolve: ${resolution.verdict.message}`);
    const children = desiredChildren('Agent', renderAgent(object as unknown as AgentInput, resolution.deps, config)).map((c) => applyIntent(c, false));
    const { managedFields: _m, ...metadata } = object.metadata ?? {};
    return { name: object.metadata?.name ?? '', children, statusBody: { ...object, metadata, status } };
  });

  // The status of each copy is written once its Deployment has a ready replica of the current
  // template, as the operator's would be (deploymentProgress; the same chain of controllers).
  const statusOf = new Map(work.map((w) => [workloadName('Agent', w.name), w]));
  const statusWrites: Promise<unknown>[] = [];
  const onDeployment = (d: KubeObject): void => {
    const w = statusOf.get(d.metadata?.name ?? '');
    if (w === undefined || !rolledOutAndReady(d)) return;
    statusOf.delete(d.metadata?.name ?? '');
    statusWrites.push(admin.replace(kaosPath('Agent', FLOOR_NS, w.name, 'status'), w.statusBody, { fieldManager: FIELD_MANAGER }));
  };
  const watch = new ConvergenceWatch(admin, FLOOR_NS, work.length, onDeployment);
  await watch.start();
  await sleep(1000);
  const cpuAt = (): RunFigures['cpu'] => ({ operator: 0, apiserver: cpuSeconds(pids.apiserver), etcd: cpuSeconds(pids.etcd), script: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6 });
  log(`floor: ${work.length} Agents, ${CONCURRENCY} at a time`);
  const cpu0 = cpuAt();
  const start = Date.now();
  await inParallel(work, CONCURRENCY, async (w) => {
    for (const child of w.children) await admin.apply(childPath(child), child, { fieldManager: FIELD_MANAGER, force: true });
  });
  const convergedAt = await watch.converged();
  await Promise.all(statusWrites);
  const writesDone = Date.now();
  const cpu1 = cpuAt();
  const deployments = watch.deployments();
  await watch.stop();
  const seconds = (Math.max(convergedAt, writesDone) - start) / 1000;
  log(`floor converged in ${seconds.toFixed(2)} s`);
  const requests = work.reduce((n, w) => n + w.children.length + 1, 0);
  return { figures: { seconds, cpu: diffCpu(cpu1, cpu0) }, writesDoneSeconds: (writesDone - start) / 1000, requests, deployments };
}

/**
 * A Deployment whose controller has seen its generation, with every replica of the current
 * template and at least one ready: when a floor writes the Ready status the operator would.
 */
export function rolledOutAndReady(d: KubeObject): boolean {
  const st = d.status as { observedGeneration?: number; replicas?: number; updatedReplicas?: number; readyReplicas?: number } | undefined;
  if (st === undefined) return false;
  const rolledOut = (st.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0) && (st.replicas ?? 0) <= (st.updatedReplicas ?? 0);
  return rolledOut && (st.readyReplicas ?? 0) >= 1;
}

/** Deployments whose pod template differs between the two namespaces (namespace names aside). */
function compareTemplates(operator: readonly KubeObject[], floor: readonly KubeObject[]): number {
  const templates = new Map(operator.map((d) => [d.metadata?.name ?? '', JSON.stringify((d.spec as { template?: unknown }).template)]));
  let differ = 0;
  for (const d of floor) {
    const mine = JSON.stringify((d.spec as { template?: unknown }).template).replaceAll(`"${FLOOR_NS}"`, `"${NS}"`).replaceAll(`.${FLOOR_NS}.`, `.${NS}.`);
    const theirs = templates.get(d.metadata?.name ?? '');
    if (theirs === undefined || theirs !== mine) differ++;
  }
  return differ + Math.max(0, operator.filter((d) => (d.metadata?.name ?? '').startsWith('agent-')).length - floor.length);
}

interface Report {
  operatorRun: RunFigures;
  floor: RunFigures;
  floorWritesDoneSeconds: number;
  floorRequests: number;
  audit: ReturnType<typeof auditEvents>;
  windows: { t0: number; convergedAt: number; idleStart: number; idleEnd: number };
  rss: { peak: number; beforeRun: { hwm: number; rss: number }; atConvergence: { hwm: number; rss: number }; end: { hwm: number; rss: number } };
  heap: { atPeakRss: HeapFigures | undefined; peakRss: number; end: HeapFigures | undefined };
  updatesAfter: ConvergenceWatch['updatesAfter'];
  mismatches: number;
  load: { start: number; runStart: number; mean: number; max: number; end: number };
}

function report(r: Report): void {
  const out = (line = ''): void => void process.stdout.write(`${line}\n`);
  const { t0, convergedAt, idleStart, idleEnd } = r.windows;
  const within = (from: number, to: number): Report['audit'] => r.audit.filter((e) => e.at >= from && e.at < to);
  const run = within(t0 - 1, convergedAt + 1);
  const settle = within(convergedAt + 1, idleStart);
  const idle = within(idleStart, idleEnd);
  const writes = (events: Report['audit']): Report['audit'] => events.filter((e) => WRITE_VERBS.has(e.verb));
  const isLease = (e: { resource: string }): boolean => e.resource === 'leases';
  const ratio = r.operatorRun.seconds / r.floor.seconds;
  const idleWrites = writes(idle).filter((e) => !isLease(e));

  out(`${cpus().length} cores; 1-min load average ${r.load.start.toFixed(1)} at the start, ${r.load.runStart.toFixed(1)} when the operator run began, mean ${r.load.mean.toFixed(1)} / max ${r.load.max.toFixed(1)} while the operator ran, ${r.load.end.toFixed(1)} at the end`);
  out(`${AGENTS} Agents over ${MODELAPIS} ModelAPIs and ${MCPSERVERS} MCPServers; MAX_CONCURRENT_RECONCILES=${CONCURRENCY}; operator LOG_LEVEL=${LOG_LEVEL}${OPERATOR_NODE_OPTIONS === '' ? '' : `, NODE_OPTIONS=${OPERATOR_NODE_OPTIONS}`}`);
  out();
  const rows: string[][] = [
    ['', 'operator', 'floor', 'ratio'],
    ['convergence', `${r.operatorRun.seconds.toFixed(2)} s`, `${r.floor.seconds.toFixed(2)} s`, `${ratio.toFixed(2)}×`],
    ['Agents/s', (AGENTS / r.operatorRun.seconds).toFixed(0), (AGENTS / r.floor.seconds).toFixed(0), ''],
    ['operator CPU', `${r.operatorRun.cpu.operator.toFixed(2)} s`, '—', ''],
    ['floor script CPU', '—', `${r.floor.cpu.script.toFixed(2)} s`, ''],
    ['kube-apiserver CPU', `${r.operatorRun.cpu.apiserver.toFixed(2)} s`, `${r.floor.cpu.apiserver.toFixed(2)} s`, `${(r.operatorRun.cpu.apiserver / r.floor.cpu.apiserver).toFixed(2)}×`],
    ['etcd CPU', `${r.operatorRun.cpu.etcd.toFixed(2)} s`, `${r.floor.cpu.etcd.toFixed(2)} s`, `${(r.operatorRun.cpu.etcd / r.floor.cpu.etcd).toFixed(2)}×`],
    ['requests', String(run.length), String(r.floorRequests), ''],
  ];
  printTable(rows, out);
  out(`(floor: its last write returned after ${r.floorWritesDoneSeconds.toFixed(2)} s; ${r.mismatches} of its Deployments' pod templates differ from the operator's)`);
  out();
  out('operator requests from the Lease acquisition to convergence, by verb and resource:');
  printTable([['verb', 'resource', 'count', 'non-2xx'], ...[...countBy(run, (e) => `${e.verb} ${e.resource}`)].map(([k, n]) => {
    const [verb = '', resource = ''] = k.split(' ');
    const failed = run.filter((e) => e.verb === verb && e.resource === resource && (e.code < 200 || e.code >= 300)).length;
    return [verb, resource, String(n), String(failed)];
  })], out);
  out();
  const settleWrites = writes(settle);
  out(`writes in the ${SETTLE_SECONDS} s after convergence: ${settleWrites.length} (${[...countBy(settleWrites, (e) => `${e.verb} ${e.resource}`)].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'})`);
  out(`writes in the idle ${IDLE_SECONDS} s after that: ${idleWrites.length} (${[...countBy(idleWrites, (e) => `${e.verb} ${e.resource}`)].map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}), plus ${writes(idle).filter(isLease).length} Lease renewals of leader election; updates seen by the watch after convergence: Agents ${r.updatesAfter.Agent}, Deployments ${r.updatesAfter.Deployment}, Services ${r.updatesAfter.Service}`);
  out(`operator RSS: peak (VmHWM) ${r.rss.peak.toFixed(0)} MiB; VmHWM ${r.rss.beforeRun.hwm.toFixed(0)} MiB after admitting the Agents, ${r.rss.atConvergence.hwm.toFixed(0)} MiB at convergence; VmRSS ${r.rss.atConvergence.rss.toFixed(0)} MiB at convergence, ${r.rss.end.rss.toFixed(0)} MiB after the idle window`);
  const heap = (h: HeapFigures | undefined): string => h === undefined ? 'unknown' : `heap used ${h.heapUsed.toFixed(0)} of ${h.heapTotal.toFixed(0)} MiB, external ${h.external.toFixed(0)} MiB`;
  out(`operator heap at its highest sampled RSS (${r.heap.peakRss.toFixed(0)} MiB): ${heap(r.heap.atPeakRss)}; after the idle window: ${heap(r.heap.end)}`);
  out();
  const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT met');
  out(`targets: convergence ${ratio.toFixed(2)}× the floor ≤ ${TARGETS.ratio}×: ${verdict(ratio <= TARGETS.ratio)}; ` +
    `idle writes ${idleWrites.length} = 0: ${verdict(idleWrites.length === TARGETS.idleWrites)}; ` +
    `peak RSS ${r.rss.peak.toFixed(0)} MiB ≤ ${TARGETS.peakRssMiB} MiB: ${verdict(r.rss.peak <= TARGETS.peakRssMiB)}${AGENTS === 1000 ? '' : ` (at ${AGENTS} Agents, not 1,000)`}`);
}

export function printTable(rows: readonly string[][], out: (line: string) => void): void {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  for (const r of rows) out(r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd());
}

// Run, not imported (test/bench/bulk-apply.ts reuses the helpers above).
// `bench:reconcile -- bulk [sizes…]`: the GitOps bulk-apply scenario as a scale curve instead
// (test/bench/scale.ts), the operator running while everything is applied at once.
if (import.meta.main) {
  (process.argv[2] === 'bulk' ? import('./scale.ts').then((m) => m.scaleCurve(process.argv.slice(3))) : main()).catch((err: unknown) => {
    process.stderr.write(`bench:reconcile: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
