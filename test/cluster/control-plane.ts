// A real Kubernetes control plane on loopback that runs workloads, for e2e tests and local runs:
// etcd, kube-apiserver, kube-controller-manager (the controllers a Deployment needs: deployment,
// replicaset, endpointslice, serviceaccount and its token, root CA publisher, garbage collector,
// namespace, pod GC, node lifecycle; those of persistent volumes: binder, expander, claim and
// volume protection; and the HorizontalPodAutoscaler's), kube-scheduler, and kwok playing the kubelet on a few fake nodes that this
// launcher creates with a real node's capacity: pods are scheduled, go Running and Ready by kwok's
// Stage rules (kwok/stages/), with no container runtime. A claim binds to a volume that
// kube-controller-manager's host-path provisioner makes (a directory) for the default
// StorageClass this launcher creates (DEFAULT_STORAGE_CLASS). Everything lives in one temporary
// directory, the volumes too where the machine allows kube-controller-manager a private /tmp
// (private-tmp.ts); stop() removes it and every process started.
//
// Standalone: `node test/cluster/control-plane.ts` starts one, prints the kubeconfig path and
// keeps running until Ctrl-C.
//
// Cleanup guarantees: stop() on success; stop() of what was started when start fails; SIGINT and
// SIGTERM of this process stop every running control plane, then re-raise the signal; a plain
// process exit kills the children synchronously; and if this process is killed outright
// (SIGKILL), a reaper shell notices its stdin pipe closing and stops the children and removes the
// directory (see processes.ts for its limit).
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { constants, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify as toYaml } from 'yaml';
import { outsidePath, privateTmpCommand, privateTmpSupport } from './private-tmp.ts';
import { startProcess, startReaper, tailFile, type ManagedProcess, type Reaper } from './processes.ts';

export interface ExtraToken {
  token: string;
  user: string;
  uid: string;
  groups?: readonly string[];
}

export interface ControlPlaneOptions {
  /** Where the binaries (BINARIES) are; built by build-version.sh (KAOS_KUBE_VERSION's) when omitted. */
  binDir?: string;
  /** Progress lines (build output, startup steps). Default: stderr. */
  log?: (line: string) => void;
  /** More static-token identities, e.g. the operator's service account for RBAC tests. */
  extraTokens?: readonly ExtraToken[];
  /** Deadline for the apiserver's /readyz. */
  readyTimeoutMs?: number;
  /** Parent of the temporary directory (default: the OS temp dir). */
  tmpRoot?: string;
  /**
   * An audit log (JSON lines, `logs.audit`) of every request's ResponseComplete stage at level
   * Metadata (verb, user, objectRef, code; no bodies), of `users` only when given: how benchmarks
   * and tests count the operator's requests by verb. With `othersWrites` also every other user's
   * writes (not their reads): what else changed the cluster meanwhile. Off by default (it costs
   * the API server).
   */
  audit?: { users?: readonly string[]; othersWrites?: boolean };
  /** More kube-apiserver flags, e.g. `--enable-aggregator-routing=true` to route Service webhooks to endpoints. */
  extraApiServerArgs?: readonly string[];
  /** How many fake nodes kwok runs (default NODES.count, each with NODES.capacity). */
  nodes?: number;
  /**
   * false: nothing runs a pod. No kube-scheduler, no kwok, no nodes, and kube-controller-manager
   * without POD_CHAIN_CONTROLLERS, so a Deployment's status is the caller's to write (the
   * benchmarks' stand-in: test/bench/rollout-stand-in.ts). For sizes where the chain that runs
   * each pod would saturate the API server before anything under test does. Default true.
   */
  pods?: boolean;
}

/** Every binary the launcher runs, from the build's bin directory. */
export const BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok', 'kubectl'] as const;

/**
 * The fake nodes: a common cloud machine's shape (8 vCPU, 32 GiB) and the kubelet's default pod
 * limit, allocatable less the usual system reservations, so that the scheduler has real limits to
 * honour. 3 × 110 pods by default; a benchmark asks for more nodes.
 */
export const NODES = {
  count: 3,
  namePrefix: 'kwok-node-',
  capacity: { cpu: '8', memory: '32Gi', pods: '110', 'ephemeral-storage': '100Gi' },
  allocatable: { cpu: '7910m', memory: '31Gi', pods: '110', 'ephemeral-storage': '95Gi' },
} as const;

/** The kube-controller-manager controllers a workload needs (see the header). */
export const CONTROLLERS = [
  'deployment-controller',
  'replicaset-controller',
  'endpointslice-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'root-ca-certificate-publisher-controller',
  'garbage-collector-controller',
  'namespace-controller',
  'pod-garbage-collector-controller',
  // The API server taints a new Node not-ready (TaintNodesByCondition); this controller lifts the
  // taint once kwok reports the node Ready, and puts it back if kwok stops renewing its Lease.
  'node-lifecycle-controller',
  // Binds claims to volumes, provisioning them through the host-path plugin
  // (--enable-hostpath-provisioner) once the scheduler has picked the consumer's node
  // (WaitForFirstConsumer), and deletes a released volume (reclaim policy Delete).
  'persistentvolume-binder-controller',
  // Acts on a bound claim whose request grows: host-path has no expander, so it records the Event
  // ExternalExpanding ("waiting for an external controller to expand this PVC") and the claim's
  // capacity stays as provisioned, as on a cluster whose storage driver cannot resize.
  'persistentvolume-expander-controller',
  // The API server's StorageObjectInUseProtection admission gives every claim and volume a
  // finalizer that only these remove (a claim once no pod uses it, a volume once no claim is bound
  // to it): without them a deleted claim, and its namespace, would stay Terminating for ever.
  'persistentvolumeclaim-protection-controller',
  'persistentvolume-protection-controller',
  // Reads an HPA's target through its scale subresource and scales it (an Agent's HPA aims at its
  // Deployment: docs/api.md, "Agent replicas"). No metrics server runs here, so an HPA reports
  // AbleToScale True and ScalingActive False (no metrics) and never changes a count. Idle without
  // HPAs: one informer; with one, a read of the scale and the metrics every 15 s, and an Event
  // when the metrics fail.
  'horizontal-pod-autoscaler-controller',
  // Not run: persistentvolume-attach-detach-controller (a host-path volume is not attachable, and
  // kwok mounts nothing), ephemeral-volume-controller (no generic ephemeral volumes here).
] as const;

/**
 * The controllers that turn a Deployment into pods, and provision the volumes pods wait for:
 * left out when a control plane runs no pods (a claim then stays Pending; the protection
 * controllers still run, so that it can be deleted).
 */
export const POD_CHAIN_CONTROLLERS: readonly (typeof CONTROLLERS)[number][] = [
  'deployment-controller',
  'replicaset-controller',
  'persistentvolume-binder-controller',
  'persistentvolume-expander-controller',
];

/**
 * The default StorageClass, created at start: what a claim without `storageClassName` gets (the
 * API server's DefaultStorageClass admission), named as kind's and minikube's defaults are.
 * - `kubernetes.io/host-path`: kube-controller-manager's in-tree provisioner for testing; each
 *   volume is an empty directory (volumeOnDisk() says where), of the claim's requested capacity.
 * - WaitForFirstConsumer, as the defaults of kind and the clouds: a claim binds when a pod that
 *   mounts it is scheduled (kube-scheduler records the node, then waits for the binding), so an
 *   operator that waited for Bound before creating the pod would wait for ever here as there.
 * - allowVolumeExpansion: a host-path volume has no size to enforce, so a larger request is as
 *   true as the first; the API server accepts it (without this it refuses, Forbidden), and the
 *   claim's status.capacity stays as provisioned (see the expander in CONTROLLERS).
 */
export const DEFAULT_STORAGE_CLASS = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
  provisioner: 'kubernetes.io/host-path',
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'WaitForFirstConsumer',
  allowVolumeExpansion: true,
} as const;

/** Where the host-path provisioner makes volumes (fixed in Kubernetes' pkg/volume/hostpath). */
export const HOST_PATH_VOLUMES = '/tmp/hostpath_pv';

/**
 * Client-side rate limits of kube-controller-manager and kube-scheduler (see where they start):
 * the "unlimited" values kwok's own cluster tool gives them; kwok's client has no limit.
 */
const CLIENT_RATE_FLAGS = ['--kube-api-qps=5000', '--kube-api-burst=10000'];

/** kwok's Stage rules: the release's own node and pod rules plus ours (each file says which). */
export const STAGES_DIR = join(dirname(fileURLToPath(import.meta.url)), 'kwok', 'stages');

/** A pod whose container has this env var set to `true` starts but never becomes ready (kwok/stages/pod-never-ready.yaml). */
export const NEVER_READY_ENV = 'KWOK_NEVER_READY';

/** A pod annotated with this (value `test`) is the test's to run and mark ready; kwok only starts it (kwok/stages/pod-run-by-test.yaml). */
export const RUN_BY_TEST_ANNOTATION = 'test.kaos.tools/kubelet';

/** A running pod annotated with this (value `true`) turns not ready until it is removed (kwok/stages/pod-not-ready.yaml). */
export const NOT_READY_ANNOTATION = 'test.kaos.tools/not-ready';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ControlPlane {
  /** The temporary directory holding state, keys, kubeconfig and logs. */
  readonly dir: string;
  readonly binDir: string;
  /** Admin kubeconfig (token auth, CA embedded). */
  readonly kubeconfigPath: string;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** The apiserver's serving certificate and its CA (the kubeconfig's certificate authority). */
  readonly caFile: string;
  /** The admin bearer token (group system:masters). */
  readonly token: string;
  readonly etcdUrl: string;
  /** Pids of the processes started (the apiserver's changes on restartApiServer()). */
  pids(): { etcd: number; apiserver: number; controllerManager: number; scheduler: number; kwok: number; reaper: number };
  /** `audit` is set only when the control plane was started with the `audit` option. */
  readonly logs: { etcd: string; apiserver: string; controllerManager: string; scheduler: string; kwok: string; audit?: string };
  /** The fake nodes' names. */
  readonly nodes: readonly string[];
  /**
   * Where a host-path volume is on this machine, from its PersistentVolume's `spec.hostPath.path`
   * (under HOST_PATH_VOLUMES as kube-controller-manager sees it): in this control plane's
   * directory when kube-controller-manager has a private /tmp, else that path itself.
   */
  volumeOnDisk(pvPath: string): string;
  /** Runs kubectl from binDir against this control plane. Never throws on a non-zero exit. */
  kubectl(args: readonly string[], options?: { input?: string; timeoutMs?: number }): Promise<KubectlResult>;
  /**
   * Stops the apiserver (SIGTERM, SIGKILL after graceMs, default 1 s) and starts it again on the
   * same port, certificates and etcd: every connection breaks, no data is lost.
   */
  restartApiServer(options?: { graceMs?: number }): Promise<void>;
  /**
   * Stops kube-controller-manager, runs `during`, and starts it again (also when `during` throws):
   * a window in which no controller acts, its garbage collector included — what a test needs to
   * show that something else deleted an object. On restart its informers list afresh.
   */
  pauseControllerManager<T>(during: () => Promise<T>): Promise<T>;
  /** Stops every process (by pid), then removes the directory. Idempotent. */
  stop(): Promise<void>;
}

const HERE = dirname(fileURLToPath(import.meta.url));
/** Decides how a private /tmp is made (private-tmp.ts); -1 where there are no uids. */
const UID = process.getuid?.() ?? -1;
const STOP_GRACE_MS = 5000;

/**
 * Finds (building if needed) the binaries of the Kubernetes version KAOS_KUBE_VERSION names (the
 * default minor's when unset) with build-version.sh, streaming its progress.
 */
export async function buildBinaries(log: (line: string) => void = defaultLog): Promise<string> {
  const script = join(HERE, 'build-version.sh');
  return new Promise<string>((resolvePromise, reject) => {
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderrTail = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
    let partial = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) log(line);
      stderrTail = (stderrTail + chunk).slice(-4000);
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (partial !== '') log(partial);
      const binDir = stdout.trim().split('\n').pop() ?? '';
      if (code !== 0 || binDir === '') {
        reject(new Error(`test/cluster/build-version.sh failed (exit ${code}); it is what builds the control plane:\n${stderrTail}`));
      } else {
        resolvePromise(binDir);
      }
    });
  });
}

export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = options.log ?? defaultLog;
  const binDir = options.binDir ?? process.env.KAOS_K8S_BIN_DIR ?? (await buildBinaries(log));
  for (const bin of BINARIES) {
    if (!existsSync(join(binDir, bin))) throw new Error(`control plane: ${join(binDir, bin)} is missing (run test/cluster/build-version.sh)`);
  }
  const started = Date.now();
  // The real path: whether it is under /tmp decides how kube-controller-manager's private /tmp keeps it in view.
  const dir = realpathSync(await mkdtemp(join(options.tmpRoot ?? tmpdir(), 'kaos-cp-')));
  const plane = new RunningPlane(dir, binDir, log, options);
  active.add(plane);
  installHandlers();
  try {
    await plane.start(options.readyTimeoutMs ?? 90_000);
  } catch (err) {
    await plane.stop();
    throw err;
  }
  log(`[control-plane] ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${plane.server} (kubeconfig ${plane.kubeconfigPath})`);
  return plane;
}

class RunningPlane implements ControlPlane {
  readonly dir: string;
  readonly binDir: string;
  readonly kubeconfigPath: string;
  readonly caFile: string;
  readonly token = randomBytes(24).toString('hex');
  readonly logs: ControlPlane['logs'];
  readonly nodes: readonly string[];
  server = '';
  etcdUrl = '';
  readonly #log: (line: string) => void;
  readonly #extraTokens: readonly ExtraToken[];
  readonly #audit: ControlPlaneOptions['audit'];
  readonly #extraApiServerArgs: readonly string[];
  readonly #pods: boolean;
  #reaper: Reaper | undefined;
  #etcd: ManagedProcess | undefined;
  #apiserver: ManagedProcess | undefined;
  #controllerManager: ManagedProcess | undefined;
  #scheduler: ManagedProcess | undefined;
  #kwok: ManagedProcess | undefined;
  #apiserverArgs: string[] = [];
  /** The directory kube-controller-manager sees as /tmp; undefined when it shares the machine's. */
  #kcmTmp: string | undefined;
  #controllers: readonly string[] = [];
  #stopping: Promise<void> | undefined;

  constructor(dir: string, binDir: string, log: (line: string) => void, options: ControlPlaneOptions) {
    this.dir = dir;
    this.binDir = binDir;
    this.#log = log;
    this.#extraTokens = options.extraTokens ?? [];
    this.#audit = options.audit;
    this.#extraApiServerArgs = options.extraApiServerArgs ?? [];
    this.#pods = options.pods ?? true;
    this.nodes = Array.from({ length: this.#pods ? options.nodes ?? NODES.count : 0 }, (_, i) => `${NODES.namePrefix}${i}`);
    this.kubeconfigPath = join(dir, 'kubeconfig');
    this.caFile = join(dir, 'pki', 'apiserver.crt');
    this.logs = {
      etcd: join(dir, 'etcd.log'),
      apiserver: join(dir, 'kube-apiserver.log'),
      controllerManager: join(dir, 'kube-controller-manager.log'),
      scheduler: join(dir, 'kube-scheduler.log'),
      kwok: join(dir, 'kwok.log'),
      ...(options.audit === undefined ? {} : { audit: join(dir, 'audit.log') }),
    };
  }

  pids(): ReturnType<ControlPlane['pids']> {
    return {
      etcd: this.#etcd?.pid ?? 0,
      apiserver: this.#apiserver?.pid ?? 0,
      controllerManager: this.#controllerManager?.pid ?? 0,
      scheduler: this.#scheduler?.pid ?? 0,
      kwok: this.#kwok?.pid ?? 0,
      reaper: this.#reaper?.pid ?? 0,
    };
  }

  async start(readyTimeoutMs: number): Promise<void> {
    const dir = this.dir;
    this.#reaper = startReaper(dir);
    const [etcdPort, etcdPeerPort, apiPort] = await freePorts(3);
    this.etcdUrl = `http://127.0.0.1:${etcdPort}`;
    this.server = `https://127.0.0.1:${apiPort}`;

    await mkdir(join(dir, 'pki'), { recursive: true });
    const tokenLines = [`${this.token},admin,admin-uid,"system:masters"`];
    for (const t of this.#extraTokens) tokenLines.push(`${t.token},${t.user},${t.uid},"${(t.groups ?? []).join(',')}"`);
    await writeFile(join(dir, 'tokens.csv'), tokenLines.join('\n') + '\n', { mode: 0o600 });
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await writeFile(join(dir, 'pki', 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    await writeFile(join(dir, 'pki', 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));

    this.#log('[control-plane] starting etcd');
    this.#etcd = this.#spawn('etcd', [
      '--name=default',
      `--data-dir=${join(dir, 'etcd-data')}`,
      `--listen-client-urls=${this.etcdUrl}`,
      `--advertise-client-urls=${this.etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-cluster=default=http://127.0.0.1:${etcdPeerPort}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ], this.logs.etcd);
    await waitFor('etcd /health', this.#etcd, 30_000, async () => (await httpGet(`${this.etcdUrl}/health`)).status === 200);

    this.#apiserverArgs = [
      `--etcd-servers=${this.etcdUrl}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      '--advertise-address=127.0.0.1',
      // Newer apiservers refuse a loopback advertise address unless nothing reconciles endpoints.
      '--endpoint-reconciler-type=none',
      `--cert-dir=${join(dir, 'pki')}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      '--authorization-mode=RBAC',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${join(dir, 'pki', 'sa.pub')}`,
      `--service-account-signing-key-file=${join(dir, 'pki', 'sa.key')}`,
      // A /16: a /24 holds 254 Services, fewer than the 1,000 Agents of bench:reconcile.
      '--service-cluster-ip-range=10.0.0.0/16',
      // ServiceAccount admission is on (the default), as on a real cluster: every pod gets its
      // namespace's `default` account (made by the serviceaccount controller) and the projected
      // token volume (kube-root-ca.crt from the root CA publisher); a pod naming an account that
      // does not exist is refused, and its ReplicaSet reports FailedCreate.
      '--allow-privileged=true',
      ...this.#extraApiServerArgs,
    ];
    if (this.#audit !== undefined && this.logs.audit !== undefined) {
      const policy = join(dir, 'audit-policy.yaml');
      await writeFile(policy, toYaml(auditPolicy(this.#audit.users, this.#audit.othersWrites === true)));
      // maxsize in MB: large enough never to rotate within a run (0 would mean lumberjack's 100).
      this.#apiserverArgs.push(`--audit-policy-file=${policy}`, `--audit-log-path=${this.logs.audit}`, '--audit-log-format=json', '--audit-log-maxsize=100000');
    }
    await this.#startApiServer(readyTimeoutMs);

    const ca = readFileSync(this.caFile, 'utf8');
    await writeFile(this.kubeconfigPath, toYaml({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'kaos-test', cluster: { server: this.server, 'certificate-authority-data': Buffer.from(ca).toString('base64') } }],
      users: [{ name: 'admin', user: { token: this.token } }],
      contexts: [{ name: 'kaos-test', context: { cluster: 'kaos-test', user: 'admin' } }],
      'current-context': 'kaos-test',
    }), { mode: 0o600 });

    const controllers = CONTROLLERS.filter((c) => this.#pods || !POD_CHAIN_CONTROLLERS.includes(c));
    const kcmTmp = join(dir, 'kcm-tmp');
    await mkdir(kcmTmp);
    const privateTmp = privateTmpSupport(kcmTmp, UID);
    if (privateTmp.ok) {
      this.#kcmTmp = kcmTmp;
    } else {
      this.#log(`[control-plane] no private /tmp for kube-controller-manager (${privateTmp.reason}): its host-path volumes go to ${HOST_PATH_VOLUMES} and outlive the control plane if their claims do`);
    }
    this.#log(`[control-plane] starting kube-controller-manager (${controllers.length} controllers)${this.#pods ? ', kube-scheduler, kwok' : '; no pods run'}`);
    this.#controllers = controllers;
    this.#startControllerManager();
    if (this.#pods) {
      this.#scheduler = this.#spawn('kube-scheduler', [
        `--kubeconfig=${this.kubeconfigPath}`,
        '--leader-elect=false',
        '--secure-port=0',
        // The same for its bindings (50 requests/s by default).
        ...CLIENT_RATE_FLAGS,
      ], this.logs.scheduler);
      const stages = (await readdir(STAGES_DIR)).filter((f) => f.endsWith('.yaml')).sort();
      this.#kwok = this.#spawn('kwok', [
        `--kubeconfig=${this.kubeconfigPath}`,
        '--manage-all-nodes=true',
        // kwok serves a kubelet-like API (logs, exec) that nothing here uses: any free port.
        '--server-address=127.0.0.1:0',
        // Pod IPs outside the Service range (10.0.0.0/16).
        '--cidr=10.244.0.1/16',
        '--node-lease-duration-seconds=40',
        ...stages.map((f) => `--config=${join(STAGES_DIR, f)}`),
      ], this.logs.kwok, { env: { HOME: dir } }); // HOME: never a user's ~/.kwok/kwok.yaml
    }
    // None of them serves anything to probe: make sure at least that none died on its flags.
    await new Promise((r) => setTimeout(r, 500));
    for (const proc of [this.#controllerManager, this.#scheduler, this.#kwok]) {
      if (proc?.hasExited() === true) throw new Error(`${proc.name} exited at start; log:\n${proc.tail()}`);
    }
    await this.#createClusterObjects(readyTimeoutMs);
  }

  /**
   * Creates the default StorageClass and the fake nodes (when kwok runs) in one request, then
   * waits until kwok reports each node Ready, and for the default ServiceAccount.
   */
  async #createClusterObjects(timeoutMs: number): Promise<void> {
    this.#log(`[control-plane] creating the default StorageClass${this.nodes.length === 0 ? '' : ` and ${this.nodes.length} kwok node(s)`}`);
    const items = [DEFAULT_STORAGE_CLASS, ...this.nodes.map((name) => fakeNode(name))];
    const created = await this.kubectl(['create', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
    if (created.code !== 0) throw new Error(`creating the default StorageClass and the kwok nodes failed: ${created.stderr}`);
    const kwok = this.#kwok;
    if (kwok !== undefined) await this.#waitForNodes(kwok, timeoutMs);
    // Pods created before the serviceaccount controller made `default` would be refused.
    const controllerManager = this.#controllerManager;
    if (controllerManager === undefined) throw new Error('kube-controller-manager is not running');
    await waitFor('the default ServiceAccount', controllerManager, timeoutMs, async () =>
      (await this.kubectl(['get', 'serviceaccount', 'default', '-n', 'default', '-o', 'name'])).code === 0);
  }

  async #waitForNodes(kwok: ManagedProcess, timeoutMs: number): Promise<void> {
    await waitFor('the kwok nodes Ready', kwok, timeoutMs, async () => {
      const res = await this.kubectl(['get', 'nodes', '-o', 'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}']);
      const ready = res.stdout.split('\n').filter((l) => l === 'True').length;
      return res.code === 0 && ready === this.nodes.length;
    });
  }

  async #startApiServer(readyTimeoutMs: number): Promise<void> {
    const started = Date.now();
    this.#log('[control-plane] starting kube-apiserver');
    const apiserver = this.#spawn('kube-apiserver', this.#apiserverArgs, this.logs.apiserver);
    this.#apiserver = apiserver;
    // Anonymous /readyz: allowed by the system:public-info-viewer role once RBAC is bootstrapped.
    await waitFor('kube-apiserver /readyz', apiserver, readyTimeoutMs, async () => {
      if (!existsSync(this.caFile)) return false;
      return (await httpGet(`${this.server}/readyz`, readFileSync(this.caFile))).status === 200;
    });
    this.#log(`[control-plane] kube-apiserver ready after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }

  async restartApiServer(options: { graceMs?: number } = {}): Promise<void> {
    // Short grace by default: with clients connected the apiserver lingers after it stops
    // listening, and a restart test wants the outage, not a graceful drain.
    await this.#apiserver?.stop(options.graceMs ?? 1000);
    await this.#startApiServer(90_000);
  }

  /** kube-controller-manager with the controllers start() chose. */
  #startControllerManager(): void {
    this.#controllerManager = this.#spawn('kube-controller-manager', [
      `--kubeconfig=${this.kubeconfigPath}`,
      `--controllers=${this.#controllers.join(',')}`,
      // The in-tree host-path provisioner, off by default (for testing only, says its help: a
      // volume is a directory on the controller manager's machine, which here is every node's).
      '--enable-hostpath-provisioner=true',
      `--service-account-private-key-file=${join(this.dir, 'pki', 'sa.key')}`,
      `--root-ca-file=${this.caFile}`,
      '--leader-elect=false',
      '--secure-port=0',
      // Each controller's client is limited to 20 requests/s by default: a Deployment costs its
      // controllers about eight writes (ReplicaSet, pod, statuses), so rolling out 1,000 at once
      // would take minutes of client-side waiting while the API server idles. A bulk apply here
      // should be paced by CPU, as on a real control plane sized for its load.
      ...CLIENT_RATE_FLAGS,
    ], this.logs.controllerManager, { privateTmp: this.#kcmTmp });
  }

  async pauseControllerManager<T>(during: () => Promise<T>): Promise<T> {
    await this.#controllerManager?.stop(STOP_GRACE_MS);
    this.#log('[control-plane] kube-controller-manager stopped');
    try {
      return await during();
    } finally {
      this.#startControllerManager();
      this.#log('[control-plane] kube-controller-manager started again');
    }
  }

  /** Starts a binary of binDir, with `privateTmp` (a directory) as its /tmp when given. */
  #spawn(bin: string, args: string[], logFile: string, options: { env?: NodeJS.ProcessEnv; privateTmp?: string | undefined } = {}): ManagedProcess {
    const binary = join(this.binDir, bin);
    const real = options.privateTmp === undefined ? binary : realpathSync(binary);
    const command = options.privateTmp === undefined ? { file: binary, args } : privateTmpCommand(options.privateTmp, [this.dir, dirname(real)], real, args, UID);
    const env = options.env;
    const proc = startProcess(bin, command.file, command.args, { logFile, ...(env === undefined ? {} : { env: { ...process.env, ...env } }) });
    this.#reaper?.watch(proc.pid);
    return proc;
  }

  volumeOnDisk(pvPath: string): string {
    return this.#kcmTmp === undefined ? pvPath : outsidePath(this.#kcmTmp, pvPath);
  }

  async kubectl(args: readonly string[], options: { input?: string; timeoutMs?: number } = {}): Promise<KubectlResult> {
    return runCommand(join(this.binDir, 'kubectl'), ['--kubeconfig', this.kubeconfigPath, ...args], options);
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    // Reverse order of start: clients before the apiserver, the apiserver before its storage.
    for (const proc of [this.#kwok, this.#scheduler, this.#controllerManager, this.#apiserver, this.#etcd]) {
      if (proc !== undefined) await proc.stop(STOP_GRACE_MS);
    }
    await rm(this.dir, { recursive: true, force: true });
    await this.#reaper?.release();
    active.delete(this);
    if (active.size === 0) removeHandlers();
  }

  /** Last resort when the process exits without stop(): synchronous, so it works in 'exit'. */
  killNow(): void {
    for (const proc of [this.#kwok, this.#scheduler, this.#controllerManager, this.#apiserver, this.#etcd]) {
      if (proc !== undefined && !proc.hasExited()) {
        try {
          process.kill(proc.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

// ---- process-wide cleanup -------------------------------------------------------------------

const active = new Set<RunningPlane>();
let handlersInstalled = false;

function onSignal(signal: NodeJS.Signals): void {
  defaultLog(`[control-plane] ${signal}: stopping ${active.size} control plane(s)`);
  void Promise.allSettled([...active].map((p) => p.stop())).then(() => {
    removeHandlers();
    // Re-raise so that the process ends the way it would have without us (killed by the signal),
    // or other handlers see it. Delivery is asynchronous and an emptied event loop would exit
    // with 0 first: keep it alive a moment, with the shell's 128+n as a fallback.
    process.kill(process.pid, signal);
    setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 2000);
  });
}

function onExit(): void {
  for (const plane of active) plane.killNow();
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.on('exit', onExit);
}

function removeHandlers(): void {
  if (!handlersInstalled) return;
  handlersInstalled = false;
  process.removeListener('SIGINT', onSignal);
  process.removeListener('SIGTERM', onSignal);
  process.removeListener('exit', onExit);
}

// ---- helpers --------------------------------------------------------------------------------

/** A Node as a kubelet registers it (kwok then keeps its conditions and Lease, as a kubelet would). */
export function fakeNode(name: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok' },
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
    },
    spec: {},
    status: {
      capacity: { ...NODES.capacity },
      allocatable: { ...NODES.allocatable },
      nodeInfo: { architecture: 'amd64', operatingSystem: 'linux', kubeletVersion: 'kwok', kubeProxyVersion: '', containerRuntimeVersion: '', kernelVersion: '', osImage: '', machineID: '', systemUUID: '', bootID: '' },
    },
  };
}

/** The verbs of requests that change something. */
export const WRITE_VERBS: readonly string[] = ['create', 'update', 'patch', 'delete', 'deletecollection'];

/**
 * One line per finished request, metadata only; `users` alone when given, and with
 * `othersWrites` the writes of every other user too.
 */
export function auditPolicy(users?: readonly string[], othersWrites = false): Record<string, unknown> {
  const others = othersWrites ? [{ level: 'Metadata', verbs: [...WRITE_VERBS] }] : [];
  return {
    apiVersion: 'audit.k8s.io/v1',
    kind: 'Policy',
    omitStages: ['RequestReceived', 'ResponseStarted'],
    rules: users === undefined ? [{ level: 'Metadata' }] : [{ level: 'Metadata', users: [...users] }, ...others, { level: 'None' }],
  };
}

function defaultLog(line: string): void {
  process.stderr.write(line + '\n');
}

/** Distinct free loopback ports: all held open together, then released. */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      servers.push(server);
      await new Promise<void>((res, rej) => {
        server.once('error', rej);
        server.listen(0, '127.0.0.1', () => res());
      });
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('no port');
      ports.push(address.port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((res) => s.close(() => res()))));
  }
}

async function waitFor(what: string, proc: ManagedProcess, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.hasExited()) {
      const status = await proc.exited;
      throw new Error(`${proc.name} exited (code ${status.code}, signal ${status.signal}) before ${what} was ready; last lines of ${proc.logFile}:\n${proc.tail(40)}`);
    }
    try {
      if (await probe()) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      throw new Error(`${what} not ready after ${timeoutMs / 1000} s; last lines of ${proc.logFile}:\n${tailFile(proc.logFile, 40)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

function httpGet(url: string, ca?: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const u = new URL(url);
    const get = u.protocol === 'https:' ? https.get : http.get;
    const req = get(u, { ...(ca === undefined ? {} : { ca }), timeout: 5000, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (c: string) => { body += c; });
      response.on('end', () => res({ status: response.statusCode ?? 0, body }));
      response.on('error', rej);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', rej);
  });
}

export function runCommand(bin: string, args: readonly string[], options: { input?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<KubectlResult> {
  return new Promise((res, rej) => {
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'], env: options.env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => { stdout += c; });
    child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.once('error', (err) => { clearTimeout(timer); rej(err); });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      res({ code: code ?? (signal === null ? -1 : 128), stdout, stderr });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

// ---- standalone -----------------------------------------------------------------------------

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const plane = await startControlPlane();
  process.stdout.write(`KUBECONFIG=${plane.kubeconfigPath}\n`);
  process.stdout.write(`kubectl: ${join(plane.binDir, 'kubectl')}\nlogs: ${plane.dir}\nCtrl-C to stop.\n`);
  // The handlers installed by startControlPlane stop it on Ctrl-C; the children keep us alive.
}
