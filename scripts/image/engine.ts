// The container engine that builds and runs the operator's image: podman where it is installed,
// else Docker when its daemon answers, else podman installed from Debian's packages
// (install-packages.sh). `npm run image` (build.ts) and the image's end-to-end tests run every
// engine command through here, with the flags this machine needs.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand, type KubectlResult } from '../../test/cluster/control-plane.ts';

export type EngineName = 'podman' | 'docker';

export interface Engine {
  readonly name: EngineName;
  /**
   * Arguments before the subcommand. podman: `--runtime runc` where runc is installed — crun,
   * podman's first choice, refuses hosts with hybrid cgroups (v1 controllers beside a v2 tree),
   * which runc runs on.
   */
  readonly global: readonly string[];
  /**
   * Arguments of every `build` and `run`: this process's own open-file and process limits (see
   * ulimitArgs), and the host's network: a build's RUN steps reach the package registries as
   * this machine does, and a container reaches the API server on loopback as the API server
   * reaches its webhooks.
   */
  readonly containerArgs: readonly string[];
}

export const SCRIPTS_DIR = import.meta.dirname;

/** podman runs its conmon and OCI runtime with RLIMIT_NPROC 32768 (seen here), so a container's can be no higher. */
const PODMAN_NPROC = 32_768;

/**
 * `--ulimit` arguments from the text of /proc/self/limits: the open-file and process limits this
 * process has, the process limit capped at podman's own. An engine's defaults (podman: 1,048,576
 * open files) can exceed what a sandbox lets anything raise to: without CAP_SYS_RESOURCE no
 * process can go above its hard limit, and the runtime fails to start the container. An
 * unlimited limit leaves the engine's default.
 */
export function ulimitArgs(procLimits: string): string[] {
  const limit = (label: string): [number, number] | undefined => {
    const m = new RegExp(`^${label}\\s+(\\d+)\\s+(\\d+)`, 'm').exec(procLimits);
    return m === null ? undefined : [Number(m[1]), Number(m[2])];
  };
  const args: string[] = [];
  const nofile = limit('Max open files');
  if (nofile !== undefined) args.push('--ulimit', `nofile=${nofile[0]}:${nofile[1]}`);
  const nproc = limit('Max processes');
  if (nproc !== undefined) args.push('--ulimit', `nproc=${Math.min(nproc[0], PODMAN_NPROC)}:${Math.min(nproc[1], PODMAN_NPROC)}`);
  return args;
}

function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function engine(name: EngineName): Engine {
  const global = name === 'podman' && onPath('runc') ? ['--runtime', 'runc'] : [];
  // No /proc (a Mac's Docker client): the engine's own limits.
  const limits = existsSync('/proc/self/limits') ? readFileSync('/proc/self/limits', 'utf8') : '';
  return { name, global, containerArgs: ['--network', 'host', ...ulimitArgs(limits)] };
}

/** podman when installed; else docker when its daemon answers; else none. */
export async function findEngine(): Promise<Engine | undefined> {
  if (onPath('podman')) return engine('podman');
  if (onPath('docker') && (await runCommand('docker', ['info'], { timeoutMs: 30_000 })).code === 0) return engine('docker');
  return undefined;
}

/** The engine, installing podman and runc (Debian's packages) when the machine has none. */
export async function ensureEngine(): Promise<Engine> {
  const found = await findEngine();
  if (found !== undefined) return found;
  execFileSync(join(SCRIPTS_DIR, 'install-packages.sh'), ['podman', 'runc'], { stdio: ['ignore', 'inherit', 'inherit'] });
  return engine('podman');
}

/** Runs `<engine> <global> args`, capturing its output; never throws on a non-zero exit. */
export function engineRun(e: Engine, args: readonly string[], timeoutMs = 120_000): Promise<KubectlResult> {
  return runCommand(e.name, [...e.global, ...args], { timeoutMs });
}

/** Like engineRun, but a non-zero exit throws with the engine's own message. */
export async function engineOk(e: Engine, args: readonly string[], timeoutMs = 120_000): Promise<string> {
  const r = await engineRun(e, args, timeoutMs);
  if (r.code !== 0) throw new Error(`${e.name} ${args.join(' ')} exited ${r.code}: ${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
}
