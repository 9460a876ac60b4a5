// The pieces of a running kaos-operator installation, shared by the run command (scripts/start.ts)
// and the end-to-end tests, so that both exercise exactly what a user gets: CRDs from crds/,
// webhook configurations rendered by the operator's own renderer, and the operator started as a
// process through its real entry point (dist/main.js).
import { spawn } from 'node:child_process';
import { closeSync, createWriteStream, openSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../src/api/lookup.ts';
import { KubeClient } from '../src/kube/client.ts';
import { ApiError } from '../src/kube/errors.ts';
import { OPERATOR_IDENTITY, OPERATOR_USER, renderRbac } from '../src/cluster/rbac.ts';
import { harnessRuntimesConfigMap } from '../src/api/harness-runtime-defaults.ts';
import { runtimesConfigMap } from '../src/api/mcp-runtime-defaults.ts';
import { freePorts, startControlPlane, type ControlPlane, type ControlPlaneOptions } from '../test/cluster/control-plane.ts';
import { makeDevCerts } from '../certs/make-dev-certs.ts';
import { renderWebhookConfigurations } from '../src/admission/webhook-configs.ts';
import { operatorArgs, operatorProcessEnv } from './operator-command.ts';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const FIELD_MANAGER = 'kaos-operator-setup';

export type Log = (line: string) => void;

/** Every object in the YAML files of a directory, in file-name order. */
export async function readManifests(dir: string): Promise<KubeObject[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml')).sort();
  const objects: KubeObject[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(join(dir, file), 'utf8'))) {
      const value: unknown = doc.toJS();
      if (value !== null && typeof value === 'object') objects.push(value as KubeObject);
    }
  }
  return objects;
}

/** Where each kind of setup object lives: `[API prefix, plural, namespaced]`. */
const SETUP_KINDS: Readonly<Record<string, readonly [string, string, boolean]>> = {
  CustomResourceDefinition: ['/apis/apiextensions.k8s.io/v1', 'customresourcedefinitions', false],
  MutatingWebhookConfiguration: ['/apis/admissionregistration.k8s.io/v1', 'mutatingwebhookconfigurations', false],
  ValidatingWebhookConfiguration: ['/apis/admissionregistration.k8s.io/v1', 'validatingwebhookconfigurations', false],
  Namespace: ['/api/v1', 'namespaces', false],
  ConfigMap: ['/api/v1', 'configmaps', true],
  ServiceAccount: ['/api/v1', 'serviceaccounts', true],
  ClusterRole: ['/apis/rbac.authorization.k8s.io/v1', 'clusterroles', false],
  ClusterRoleBinding: ['/apis/rbac.authorization.k8s.io/v1', 'clusterrolebindings', false],
  Role: ['/apis/rbac.authorization.k8s.io/v1', 'roles', true],
  RoleBinding: ['/apis/rbac.authorization.k8s.io/v1', 'rolebindings', true],
};

function setupPath(object: KubeObject): string {
  const where = SETUP_KINDS[object.kind ?? ''];
  const name = object.metadata?.name;
  if (where === undefined || name === undefined) throw new Error(`cannot install ${object.kind ?? '?'} ${name ?? '?'}`);
  const [prefix, plural, namespaced] = where;
  return namespaced ? `${prefix}/namespaces/${object.metadata?.namespace ?? 'default'}/${plural}/${name}` : `${prefix}/${plural}/${name}`;
}

/** Server-side applies setup objects (CRDs, webhook configurations, RBAC), in order. */
export async function applySetupObjects(client: KubeClient, objects: readonly KubeObject[]): Promise<void> {
  for (const object of objects) await client.apply(setupPath(object), object, { fieldManager: FIELD_MANAGER, force: true });
}

/** Installs crds/ and waits until the API server serves every one of them. */
export async function installCrds(client: KubeClient, timeoutMs = 60_000): Promise<void> {
  await installCrdObjects(client, await readManifests(join(ROOT, 'crds')), timeoutMs);
}

/**
 * The files of Envoy Gateway's CRDs that test/cluster/build.sh copies beside the control plane's
 * binaries (`envoy-gateway-crds/`, from Envoy Gateway's Go module): the Gateway API release it
 * ships (HTTPRoutes, Gateways) and its SecurityPolicy, the one the operator writes.
 */
export const GATEWAY_CRD_FILES = {
  gatewayApi: 'gatewayapi-crds.yaml',
  envoyGateway: 'gateway.envoyproxy.io_securitypolicies.yaml',
} as const;
export type GatewayCrds = keyof typeof GATEWAY_CRD_FILES;

/** Installs the Gateway API's or Envoy Gateway's CRDs from `binDir`'s copy and waits until they are served. */
export async function installGatewayCrds(client: KubeClient, binDir: string, which: readonly GatewayCrds[], timeoutMs = 60_000): Promise<void> {
  const dir = join(binDir, '..', 'envoy-gateway-crds');
  const objects: KubeObject[] = [];
  for (const part of which) {
    for (const doc of parseAllDocuments(await readFile(join(dir, GATEWAY_CRD_FILES[part]), 'utf8'))) {
      const value: unknown = doc.toJS();
      if (value !== null && typeof value === 'object' && (value as KubeObject).kind === 'CustomResourceDefinition') objects.push(value as KubeObject);
    }
  }
  await installCrdObjects(client, objects, timeoutMs);
}

/** Applies CRDs and waits until each is Established. */
async function installCrdObjects(client: KubeClient, crds: readonly KubeObject[], timeoutMs: number): Promise<void> {
  await applySetupObjects(client, crds);
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    const path = setupPath(crd);
    for (;;) {
      const live = await client.get<{ status?: { conditions?: Array<{ type: string; status: string }> } }>(path);
      if (live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata?.name ?? ''} not Established after ${timeoutMs} ms`);
      await sleep(200);
    }
  }
}

export interface OperatorProcess {
  readonly pid: number;
  readonly webhookPort: number;
  readonly metricsPort: number;
  readonly logFile: string;
  /** The log so far (JSON lines). */
  log(): string;
  /** How it exited (code, else signal), or undefined while it runs. */
  exitStatus(): string | undefined;
  /** SIGTERM, then SIGKILL after a grace period; resolves with the exit code. Idempotent. */
  stop(): Promise<number | null>;
}

export interface StartOperatorOptions {
  kubeconfig: string;
  /** Directory with tls.crt and tls.key. */
  certDir: string;
  logFile: string;
  /** More environment (DEFAULT_*_IMAGE, REFERENCE_POLICY, LOG_LEVEL, …). */
  env?: Readonly<Record<string, string>>;
  readyTimeoutMs?: number;
  /** Also copy the operator's output to this process's stdout (the run command). */
  echo?: boolean;
  /** The entry point to run; default this tree's dist/main.js (a bench runs another build's beside it). */
  main?: string;
  /** More arguments of node before the entry point (e.g. `--trace-gc`). */
  nodeArgs?: readonly string[];
  /**
   * How the process is started, when not as this tree starts it (operator-command.ts): another
   * build's own flags and environment, so that a bench compares builds as each ships.
   */
  command?: { args: (main: string) => string[]; env: Readonly<Record<string, string>> };
}

/**
 * Starts `node dist/main.js` (run `npm run build` first) on free loopback ports and waits until
 * its /readyz answers 200, i.e. its cache is synced. Fails with the log's tail if it exits first.
 */
export async function startOperator(options: StartOperatorOptions): Promise<OperatorProcess> {
  const [webhookPort, metricsPort] = (await freePorts(2)) as [number, number];
  const echo = options.echo === true;
  // Without echo the operator writes its log file itself: no line passes through this process.
  const out = echo ? createWriteStream(options.logFile, { flags: 'a' }) : undefined;
  const fd = echo ? undefined : openSync(options.logFile, 'a');
  const main = options.main ?? join(ROOT, 'dist', 'main.js');
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...(options.command?.args ?? operatorArgs)(main)], {
    cwd: ROOT,
    stdio: fd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', fd, fd],
    env: {
      ...(options.command === undefined ? operatorProcessEnv() : { ...options.command.env, ...process.env }),
      KUBECONFIG: options.kubeconfig,
      // As the chart sets it (the release namespace): where the stack installs the harness registry.
      SYSTEM_NAMESPACE: OPERATOR_IDENTITY.namespace,
      WEBHOOK_HOST: '127.0.0.1',
      WEBHOOK_PORT: String(webhookPort),
      WEBHOOK_CERT_DIR: options.certDir,
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
      ...options.env,
    },
  });
  if (fd !== undefined) closeSync(fd);
  if (out !== undefined && child.stdout !== null && child.stderr !== null) {
    child.stdout.pipe(out);
    child.stderr.pipe(out);
    child.stdout.pipe(process.stdout, { end: false });
    child.stderr.pipe(process.stderr, { end: false });
  }
  let exitCode: number | null | undefined;
  let exitSignal: string | null = null;
  const exited = new Promise<number | null>((res) => child.once('exit', (code, signal) => { exitCode = code; exitSignal = signal; res(code); }));
  const log = (): string => { try { return readFileSync(options.logFile, 'utf8'); } catch { return ''; } };
  const proc: OperatorProcess = {
    pid: child.pid ?? -1,
    webhookPort,
    metricsPort,
    logFile: options.logFile,
    log,
    exitStatus: () => (exitCode === undefined ? undefined : exitCode === null ? `signal ${exitSignal ?? '?'}` : `code ${exitCode}`),
    stop: async () => {
      if (exitCode === undefined) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      out?.end();
      return exitCode ?? null;
    },
  };
  return awaitReady(proc, () => exitCode, options.readyTimeoutMs);
}

/**
 * Resolves with `operator` once its /readyz answers 200, i.e. its cache is synced. Fails with the
 * log's tail if it exits first (`exitCode()` is undefined while it runs), or stops it and fails
 * after `timeoutMs`.
 */
export async function awaitReady<T extends OperatorProcess>(operator: T, exitCode: () => number | null | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exitCode() !== undefined) throw new Error(`operator exited with ${exitCode()} before it was ready:\n${tail(operator.log(), 30)}`);
    if ((await httpStatus(`http://127.0.0.1:${operator.metricsPort}/readyz`)) === 200) return operator;
    if (Date.now() > deadline) {
      await operator.stop();
      throw new Error(`operator not ready after ${timeoutMs} ms:\n${tail(operator.log(), 30)}`);
    }
    await sleep(200);
  }
}

/**
 * Waits until the API server actually calls both webhooks: a dry-run ModelAPI comes back with
 * the image the mutating webhook defaults, and an invalid one is refused by the validating
 * webhook (a new webhook configuration takes the API server about a second to pick up).
 */
export async function waitForAdmission(client: KubeClient, namespace = 'default', timeoutMs = 30_000): Promise<void> {
  const path = `/apis/kaos.tools/v1alpha1/namespaces/${namespace}/modelapis`;
  const probe = (spec: Record<string, unknown>): KubeObject => ({
    apiVersion: 'kaos.tools/v1alpha1',
    kind: 'ModelAPI',
    metadata: { generateName: 'kaos-admission-probe-', namespace },
    spec,
  });
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const mutated = await client.create<KubeObject>(path, probe({ mode: 'Hosted', hostedConfig: { model: 'probe' } }), { dryRun: true });
      const image = (mutated.spec as { container?: { image?: string } } | undefined)?.container?.image;
      if (image === undefined) {
        last = 'mutating webhook not called yet';
      } else {
        try {
          await client.create(path, probe({ mode: 'Hosted' }), { dryRun: true });
          last = 'validating webhook not called yet';
        } catch (err) {
          if (err instanceof ApiError && err.code === 422 && err.message.includes('admission webhook')) return;
          last = String(err);
        }
      }
    } catch (err) {
      last = String(err);
    }
    await sleep(250);
  }
  throw new Error(`the API server does not call the webhooks after ${timeoutMs} ms: ${last}`);
}

/**
 * A copy of a kubeconfig whose every user authenticates with `token` instead, and whose clusters
 * are reached at `server` when given (e.g. a proxy in front of the API server, on the same host
 * so that its certificate still matches).
 */
export async function writeTokenKubeconfig(from: string, to: string, token: string, userName: string, server?: string): Promise<void> {
  const config = parse(await readFile(from, 'utf8')) as {
    users?: Array<{ name: string; user: Record<string, unknown> }>;
    contexts?: Array<{ context: { user: string } }>;
    clusters?: Array<{ cluster: { server?: string } }>;
  };
  config.users = [{ name: userName, user: { token } }];
  for (const c of config.contexts ?? []) c.context.user = userName;
  if (server !== undefined) for (const c of config.clusters ?? []) c.cluster.server = server;
  await writeFile(to, stringify(config), { mode: 0o600 });
}

export function tail(text: string, lines: number): string {
  return text.split('\n').slice(-lines - 1).join('\n');
}

function httpStatus(url: string): Promise<number> {
  return new Promise((res) => {
    const req = http.get(url, { timeout: 2000, agent: false }, (r) => { r.resume(); res(r.statusCode ?? 0); });
    req.on('timeout', () => req.destroy());
    req.on('error', () => res(0));
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((res) => setTimeout(res, ms));
}

/** A control plane with kaos-operator installed but not running: what starting it needs. */
export interface Installation {
  readonly plane: ControlPlane;
  /** Admin client. */
  readonly client: KubeClient;
  /** A kubeconfig of the operator's ServiceAccount identity, not admin. */
  readonly operatorKubeconfig: string;
  /** The operator's bearer token (operatorKubeconfig's), for kubeconfigs that reach the API server another way. */
  readonly operatorToken: string;
  /** Directory of the serving certificate (tls.crt, tls.key) and its CA (ca.crt). */
  readonly certDir: string;
  /** The CA of the serving certificate, PEM: the webhook configurations' caBundle. */
  readonly caPem: string;
  /** Stops the control plane; removes every file. Idempotent. */
  stop(): Promise<void>;
}

export interface LocalStack extends Omit<Installation, 'operatorToken' | 'caPem'> {
  readonly operator: OperatorProcess;
  /** Stops the operator, then the control plane; removes every file. Idempotent. */
  stop(): Promise<void>;
}

export interface InstallOptions {
  log?: Log;
  /** Envoy Gateway's CRDs to install too (installGatewayCrds); none by default, as on a cluster without Envoy Gateway. */
  gatewayCrds?: readonly GatewayCrds[];
  /** The control plane's audit log (test/cluster/control-plane.ts), e.g. to count the operator's writes. */
  audit?: ControlPlaneOptions['audit'];
  /** More kube-apiserver flags (test/cluster/control-plane.ts), e.g. to route a Service's webhooks to its endpoints. */
  extraApiServerArgs?: ControlPlaneOptions['extraApiServerArgs'];
}

export interface LocalStackOptions extends InstallOptions {
  /** Environment for the operator process (LOG_LEVEL, REFERENCE_POLICY, DEFAULT_*_IMAGE, …). */
  operatorEnv?: Readonly<Record<string, string>>;
  /** Copy the operator's log lines to stdout. */
  echoOperator?: boolean;
  /** How the operator starts: startOperator (the default: `node dist/main.js`), or its image in a container. */
  launch?: (options: StartOperatorOptions) => Promise<OperatorProcess>;
}

/**
 * A control plane on loopback with kaos-operator installed the url-based way, up to where the
 * operator would start: CRDs, the operator's RBAC and identity, the runtime registries, a dev CA
 * and serving certificate. The operator's processes and the webhook configurations are the
 * caller's (startLocalStack: one process, the webhooks pointing at it).
 */
export async function installLocalStack(options: InstallOptions = {}): Promise<Installation> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  // The operator runs as its ServiceAccount, bound to the ClusterRole of src/cluster/rbac.ts and
  // nothing else, so every test through this stack also proves that role is enough.
  const identity = {
    token: randomBytes(24).toString('hex'),
    user: OPERATOR_USER,
    uid: 'kaos-operator-uid',
    groups: ['system:serviceaccounts', `system:serviceaccounts:${OPERATOR_IDENTITY.namespace}`],
  };
  const plane = await startControlPlane({
    log,
    extraTokens: [identity],
    ...(options.audit === undefined ? {} : { audit: options.audit }),
    ...(options.extraApiServerArgs === undefined ? {} : { extraApiServerArgs: options.extraApiServerArgs }),
  });
  try {
    const certDir = join(plane.dir, 'webhook-certs');
    const certs = await makeDevCerts({ outDir: certDir });
    const client = await KubeClient.fromKubeConfig(plane.kubeconfigPath);
    log('[stack] installing CRDs and the operator\'s RBAC');
    await installCrds(client);
    if (options.gatewayCrds !== undefined && options.gatewayCrds.length > 0) {
      log(`[stack] installing Envoy Gateway's CRDs: ${options.gatewayCrds.join(', ')}`);
      await installGatewayCrds(client, plane.binDir, options.gatewayCrds);
    }
    await applySetupObjects(client, renderRbac() as KubeObject[]);
    // The runtime registries the chart ships, in the operator's namespace, which is also its
    // SYSTEM_NAMESPACE there (docs/api.md, "MCPServer runtimes" and "Agent harness").
    await applySetupObjects(client, [runtimesConfigMap(OPERATOR_IDENTITY.namespace), harnessRuntimesConfigMap(OPERATOR_IDENTITY.namespace)]);
    const operatorKubeconfig = join(plane.dir, 'operator.kubeconfig');
    await writeTokenKubeconfig(plane.kubeconfigPath, operatorKubeconfig, identity.token, identity.user);
    return { plane, client, operatorKubeconfig, operatorToken: identity.token, certDir, caPem: certs.caPem, stop: () => plane.stop() };
  } catch (err) {
    await plane.stop();
    throw err;
  }
}

/** Points the API server's webhooks at `url` (url-based configurations with `caPem`) and waits until it calls them. */
export async function registerWebhooks(client: KubeClient, url: string, caPem: string): Promise<void> {
  await applySetupObjects(client, renderWebhookConfigurations({ url, caBundle: caPem }));
  await waitForAdmission(client);
}

/**
 * installLocalStack, the operator process, and webhook configurations pointing at it — ready
 * when the API server is seen calling both webhooks.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const installed = await installLocalStack(options);
  const { plane, client, operatorKubeconfig, certDir } = installed;
  let operator: OperatorProcess | undefined;
  const stop = async (): Promise<void> => {
    await operator?.stop();
    await installed.stop();
  };
  try {
    log(`[stack] starting the operator (${options.launch === undefined ? 'node dist/main.js' : 'its image'})`);
    operator = await (options.launch ?? startOperator)({
      kubeconfig: operatorKubeconfig,
      certDir,
      logFile: join(plane.dir, 'operator.log'),
      ...(options.operatorEnv === undefined ? {} : { env: options.operatorEnv }),
      echo: options.echoOperator === true,
    });
    log(`[stack] registering webhooks at https://127.0.0.1:${operator.webhookPort}`);
    await registerWebhooks(client, `https://127.0.0.1:${operator.webhookPort}`, installed.caPem);
    log('[stack] admission is live');
    const running = operator;
    return { plane, client, operator: running, operatorKubeconfig, certDir, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
