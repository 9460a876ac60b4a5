// The operator's image for the end-to-end tests: built by `npm run image` (the README's command),
// run as the chart runs it (test/support/chart-pod.ts maps the Deployment that `helm template`
// renders from chart/ onto the container) on the host's network, so that it reaches the local
// API server on loopback and the API server reaches its webhooks there; and its filesystem,
// exported for a look at what it holds.
import { spawn, spawnSync } from 'node:child_process';
import { chown, chmod, copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createWriteStream, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { isBuiltin } from 'node:module';
import { parseAllDocuments } from 'yaml';
import { engineOk, engineRun, findEngine, type Engine } from '../../../scripts/image/engine.ts';
import { IMAGE, ROOT } from '../../../scripts/image/build.ts';
import { packageName } from '../../../scripts/lockfile-subset.ts';
import { awaitReady, tail, type OperatorProcess, type StartOperatorOptions } from '../../../scripts/local-stack.ts';
import { buildBinaries, freePorts, runCommand } from '../../cluster/control-plane.ts';
import { chartRunArgs, imageValues, operatorContainer, type ChartDeployment } from '../../support/chart-pod.ts';
import { descendants, procInfo, type ProcInfo } from './proc.ts';

/** Where the container finds its kubeconfig: in a cluster, the ServiceAccount's token takes its place. */
export const KUBECONFIG_PATH = '/var/run/kaos-operator/kubeconfig';
/** Each container of these tests carries the pid of the test process that started it. */
const OWNER_LABEL = 'tools.kaos.e2e-owner';

/**
 * Runs `npm run image`; resolves with what it printed on stdout (the image and its size), or
 * throws with the tail of its output: the engine's own message when the engine cannot build.
 */
export async function npmRunImage(log: (line: string) => void): Promise<string> {
  const child = spawn('npm', ['run', 'image'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => { stdout += c; output += c; });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    output += c;
    for (const line of c.split('\n')) if (line.startsWith('[image]')) log(line);
  });
  const code = await new Promise<number | null>((res) => child.once('close', res));
  if (code !== 0) throw new Error(`npm run image exited ${code}:\n${tail(output, 40)}`);
  return stdout;
}

/** The chart's Deployment as `helm template` renders it with `sets` (`--set` arguments). */
export async function renderChartDeployment(binDir: string, namespace: string, sets: readonly string[]): Promise<ChartDeployment> {
  const helmHome = await mkdtemp(join(tmpdir(), 'kaos-helm-'));
  try {
    const env = { ...process.env, HELM_CACHE_HOME: join(helmHome, 'cache'), HELM_CONFIG_HOME: join(helmHome, 'config'), HELM_DATA_HOME: join(helmHome, 'data') };
    // helm template assumes an old Kubernetes unless told; the chart refuses it.
    const kubeVersion = /"gitVersion":\s*"([^"]+)"/.exec((await runCommand(join(binDir, 'kubectl'), ['version', '--client', '-o', 'json'])).stdout)?.[1] ?? '';
    const r = await runCommand(join(binDir, 'helm'), ['template', 'kaos-operator', join(ROOT, 'chart'), '--namespace', namespace, '--kube-version', kubeVersion, ...sets.flatMap((s) => ['--set', s])], { env });
    if (r.code !== 0) throw new Error(`helm template: ${r.stderr}`);
    const deployments = parseAllDocuments(r.stdout).map((d) => d.toJS() as ChartDeployment | null).filter((d) => d?.kind === 'Deployment');
    if (deployments.length !== 1 || deployments[0] === null || deployments[0] === undefined) throw new Error(`helm template rendered ${deployments.length} Deployments`);
    return deployments[0];
  } finally {
    await rm(helmHome, { recursive: true, force: true });
  }
}

/** The namespace the chart is rendered for (its pods' POD_NAMESPACE, the Lease's namespace). */
export const CHART_NAMESPACE = 'kaos-system';
/** The default image the chart's config gives the operator, to show its env reaches the container. */
export const CHART_OLLAMA_IMAGE = 'e2e.local/ollama:from-the-chart';

export interface PreparedImage {
  /** What `npm run image` printed. */
  printed: string;
  engine: Engine;
  /** The chart's Deployment, rendered for the image (docs/helm.md's values). */
  deployment: ChartDeployment;
}

/** `npm run image`, the engine it used, and the chart's Deployment of that image. */
export async function prepareImage(log: (line: string) => void): Promise<PreparedImage> {
  const printed = await npmRunImage(log);
  const engine = await findEngine();
  if (engine === undefined) throw new Error('npm run image succeeded, yet no engine is found');
  const deployment = await renderChartDeployment(await buildBinaries(log), CHART_NAMESPACE, [
    ...imageValues(IMAGE), `config.defaultOllamaImage=${CHART_OLLAMA_IMAGE}`,
  ]);
  return { printed, engine, deployment };
}

export interface ContainerOperator extends OperatorProcess {
  /** The container's name. */
  readonly name: string;
  /** The pod name it was given (POD_NAME: its Lease identity). */
  readonly podName: string;
}

export interface ContainerOptions extends StartOperatorOptions {
  /** POD_NAME, as the downward API gives it. */
  podName: string;
  /**
   * The pod's IP (an address of this host): the webhooks listen there on the chart's port, as in
   * a pod, for a Service's endpoints to reach. Default: loopback, on a free port.
   */
  podIP?: string;
}

/** `rm` of a container, killing it first if it runs (podman would otherwise give it its stop timeout). */
function removal(engine: Engine, name: string): string[] {
  return ['rm', '--force', ...(engine.name === 'podman' ? ['--time', '0'] : []), name];
}

/** Removes the containers of test processes that are gone (a run killed before its teardown). */
async function removeOrphans(engine: Engine): Promise<void> {
  const r = await engineRun(engine, ['ps', '--all', '--filter', `label=${OWNER_LABEL}`, '--format', `{{.Names}} {{index .Labels "${OWNER_LABEL}"}}`]);
  for (const line of r.stdout.split('\n')) {
    const [name, owner] = line.trim().split(' ');
    if (name === undefined || name === '' || procInfo(Number(owner)) !== undefined) continue;
    await engineRun(engine, removal(engine, name));
  }
}

/**
 * Copies `from` to `to` as the kubelet projects a Secret's file into a pod: owned by root, group
 * the pod's fsGroup, readable by that group only.
 */
async function project(from: string, to: string, fsGroup: number): Promise<void> {
  await copyFile(from, to);
  await chown(to, 0, fsGroup);
  await chmod(to, 0o640);
}

/**
 * Starts the image as the chart's `deployment` runs it, on free loopback ports, with the serving
 * certificate of `certDir` as the chart's Secret and the kubeconfig mounted; resolves once its
 * /readyz answers. stop() is `<engine> stop` (the chart's grace period as the container's stop
 * timeout), resolves with the exit code, then removes the container.
 */
export async function startContainerOperator(engine: Engine, deployment: ChartDeployment, o: ContainerOptions): Promise<ContainerOperator> {
  await removeOrphans(engine);
  const pod = deployment.spec.template.spec;
  const fsGroup = pod.securityContext?.fsGroup ?? 0;
  const secrets = (pod.volumes ?? []).flatMap((v) => (v.secret === undefined ? [] : [v.secret.secretName]));
  if (secrets.length !== 1) throw new Error(`the chart's pod mounts ${secrets.length} Secrets; the serving certificate is the one expected`);
  const [freeWebhookPort, metricsPort] = (await freePorts(2)) as [number, number];
  const chartPort = operatorContainer(deployment).ports?.find((p) => p.name === 'webhook')?.containerPort;
  if (o.podIP !== undefined && chartPort === undefined) throw new Error('the chart\'s container has no webhook port');
  const webhookPort = o.podIP === undefined ? freeWebhookPort : chartPort ?? freeWebhookPort;
  const files = await mkdtemp(join(tmpdir(), 'kaos-image-'));
  const certs = join(files, 'serving-certs');
  await mkdir(certs, { mode: 0o750 });
  await chown(certs, 0, fsGroup);
  for (const file of ['tls.crt', 'tls.key', 'ca.crt']) await project(join(o.certDir, file), join(certs, file), fsGroup);
  await project(o.kubeconfig, join(files, 'kubeconfig'), fsGroup);

  const name = `kaos-e2e-${process.pid}-${o.podName}`;
  const args = chartRunArgs(deployment, {
    engine: engine.name,
    name,
    podName: o.podName,
    podNamespace: deployment.metadata.namespace ?? 'default',
    secrets: { [secrets[0] as string]: certs },
    env: {
      WEBHOOK_HOST: o.podIP ?? '127.0.0.1', WEBHOOK_PORT: String(webhookPort),
      METRICS_HOST: '127.0.0.1', METRICS_PORT: String(metricsPort),
      KUBECONFIG: KUBECONFIG_PATH,
      ...o.env,
    },
    mounts: { [join(files, 'kubeconfig')]: KUBECONFIG_PATH },
    extra: ['--detach', '--label', `${OWNER_LABEL}=${process.pid}`],
  });
  try {
    await engineOk(engine, ['run', ...engine.containerArgs, ...args]);
  } catch (err) {
    await engineRun(engine, removal(engine, name));
    await rm(files, { recursive: true, force: true });
    throw err;
  }

  // A test process that ends without stopping it (an error, tap's timeout) takes it along.
  const onExit = (): void => { spawnSync(engine.name, [...engine.global, ...removal(engine, name)], { stdio: 'ignore' }); };
  process.once('exit', onExit);
  const out = createWriteStream(o.logFile, { flags: 'a' });
  const logs = spawn(engine.name, [...engine.global, 'logs', '--follow', name], { stdio: ['ignore', 'pipe', 'pipe'] });
  logs.stdout.pipe(out, { end: false });
  logs.stderr.pipe(out, { end: false });
  const logsDone = new Promise<void>((res) => logs.once('close', () => res()));
  let exitCode: number | null | undefined;
  const waiter = spawn(engine.name, [...engine.global, 'wait', name], { stdio: ['ignore', 'pipe', 'ignore'] });
  let waited = '';
  waiter.stdout.setEncoding('utf8').on('data', (c: string) => { waited += c; });
  const exited = new Promise<number | null>((res) => waiter.once('close', () => {
    const code = Number.parseInt(waited.trim(), 10);
    exitCode = Number.isNaN(code) ? null : code;
    res(exitCode);
  }));
  const pid = Number((await engineOk(engine, ['inspect', '--format', '{{.State.Pid}}', name])).trim());

  let stopped: Promise<number | null> | undefined;
  const operator: ContainerOperator = {
    name,
    podName: o.podName,
    pid,
    webhookPort,
    metricsPort,
    logFile: o.logFile,
    log: () => { try { return readFileSync(o.logFile, 'utf8'); } catch { return ''; } },
    exitStatus: () => (exitCode === undefined ? undefined : `code ${exitCode ?? '?'}`),
    stop: () => (stopped ??= (async () => {
      if (exitCode === undefined) await engineRun(engine, ['stop', name], ((pod.terminationGracePeriodSeconds ?? 30) + 30) * 1000);
      const code = await exited;
      await logsDone;
      out.end();
      process.removeListener('exit', onExit);
      await engineRun(engine, removal(engine, name));
      await rm(files, { recursive: true, force: true });
      return code;
    })()),
  };
  return awaitReady(operator, () => exitCode, o.readyTimeoutMs);
}

/** The operator's node process in a container whose init (tini) is `initPid` on this host. */
export function nodeOf(initPid: number): ProcInfo {
  const children = descendants(initPid);
  const node = children.find((p) => p.ppid === initPid);
  if (node === undefined) throw new Error(`no process under the container's init ${initPid}`);
  return node;
}

/** A process's resident memory in MiB (VmRSS). */
export function rssMiB(pid: number): number {
  const kib = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kib) / 1024;
}

/** The image's root filesystem, exported into a temporary directory; remove() deletes it. */
export async function exportImage(engine: Engine, image: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'kaos-image-fs-'));
  // Hundreds of MiB: gone however the test process ends, short of SIGKILL.
  const onExit = (): void => rmSync(dir, { recursive: true, force: true });
  process.once('exit', onExit);
  const remove = async (): Promise<void> => {
    process.removeListener('exit', onExit);
    await rm(dir, { recursive: true, force: true });
  };
  const name = `kaos-e2e-${process.pid}-export`;
  const archive = join(dir, 'rootfs.tar');
  try {
    await engineOk(engine, ['create', '--name', name, '--label', `${OWNER_LABEL}=${process.pid}`, image]);
    await engineOk(engine, ['export', '--output', archive, name]);
    await mkdir(join(dir, 'rootfs'));
    const untar = await runCommand('tar', ['-x', '-f', archive, '-C', join(dir, 'rootfs')]);
    if (untar.code !== 0) throw new Error(`tar -x of the exported image: ${untar.stderr}`);
    await rm(archive);
  } catch (err) {
    await remove();
    throw err;
  } finally {
    await engineRun(engine, removal(engine, name));
  }
  return { dir: join(dir, 'rootfs'), remove };
}

/** The image's configuration (User, Entrypoint, Cmd, Env, …) as the engine reports it. */
export async function imageConfig(engine: Engine, image: string): Promise<{ User?: string; Entrypoint?: string[]; Cmd?: string[]; Env?: string[] }> {
  return JSON.parse(await engineOk(engine, ['image', 'inspect', '--format', '{{json .Config}}', image])) as { User?: string; Entrypoint?: string[]; Cmd?: string[]; Env?: string[] };
}

export interface LockedPackage { version: string; dev: boolean }

/** package-lock.json's packages by path (`node_modules/a/node_modules/b`): `dev` when only the dev dependencies need it. */
export async function lockedPackages(): Promise<Map<string, LockedPackage>> {
  const lock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; dev?: boolean }> };
  const packages = new Map<string, LockedPackage>();
  for (const [path, p] of Object.entries(lock.packages)) {
    if (path === '') continue;
    packages.set(path, { version: p.version ?? '', dev: p.dev === true });
  }
  return packages;
}

interface PackageJson {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const readPackageJson = (dir: string): PackageJson => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;

/** The packages installed under `app`'s node_modules, by path from `app` (`node_modules/a/node_modules/b`), with their versions. */
export function installedPackages(app: string): Map<string, string> {
  const installed = new Map<string, string>();
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir)) {
      if (entry.startsWith('.')) continue;
      for (const name of entry.startsWith('@') ? readdirSync(join(dir, entry)).map((n) => `${entry}/${n}`) : [entry]) {
        installed.set(relative(app, join(dir, name)), readPackageJson(join(dir, name)).version ?? '');
        walk(join(dir, name, 'node_modules'));
      }
    }
  };
  walk(join(app, 'node_modules'));
  return installed;
}

/**
 * What Node can reach from `app`'s `roots` as it resolves a require (each package's dependencies,
 * optional dependencies and peers, looked up in the nearest node_modules, then its parents'):
 * `reached`, by path from `app`; `missing`, the required ones it finds nowhere, as `from → name`.
 */
export function reachablePackages(app: string, roots: readonly string[]): { reached: Set<string>; missing: string[] } {
  const reached = new Set<string>();
  const missing: string[] = [];
  const find = (from: string, name: string): string | undefined => {
    for (let dir = from; ; dir = dirname(dir)) {
      if (basename(dir) !== 'node_modules' && existsSync(join(dir, 'node_modules', name, 'package.json'))) return join(dir, 'node_modules', name);
      if (dir === app || dir === dirname(dir)) return undefined;
    }
  };
  const visit = (from: string, name: string, optional: boolean): void => {
    const dir = find(from, name);
    if (dir === undefined) {
      if (!optional) missing.push(`${relative(app, from) || '/'} → ${name}`);
      return;
    }
    const path = relative(app, dir);
    if (reached.has(path)) return;
    reached.add(path);
    const pkg = readPackageJson(dir);
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dir, dep, false);
    for (const dep of Object.keys(pkg.optionalDependencies ?? {})) visit(dir, dep, true);
    for (const dep of Object.keys(pkg.peerDependencies ?? {})) visit(dir, dep, pkg.peerDependenciesMeta?.[dep]?.optional === true);
  };
  for (const root of roots) visit(app, root, false);
  return { reached, missing };
}

/**
 * The packages `bundle` (an ES module) imports, by name, Node's builtins aside: its import
 * statements and import() calls, as esbuild reads them.
 */
export async function bundleImports(bundle: string): Promise<string[]> {
  const { build } = await import('esbuild');
  const { metafile } = await build({ entryPoints: [bundle], bundle: true, write: false, metafile: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'silent', outdir: tmpdir() });
  const imports = Object.values(metafile.inputs).flatMap((i) => i.imports);
  return [...new Set(imports.filter((i) => i.external === true && !isBuiltin(i.path)).map((i) => packageName(i.path)))].sort();
}
