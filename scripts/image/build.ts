// `npm run image`: the operator's image, built from the repository's Dockerfile with podman (or
// Docker, when that is what the machine has: engine.ts), tagged IMAGE (the package's version).
// Prints the image's name and size on stdout; the engine's output and progress go to stderr.
//
// The Dockerfile's default base (its `ARG NODE_IMAGE`) is used when the engine has it or can pull
// it. Where no image registry answers, local-base.sh makes a base of the same layout from
// Debian's packages and the Node.js runtime the project already has (the `node` devDependency),
// and the Dockerfile is built on it unchanged (`--build-arg NODE_IMAGE=`). The engine's storage
// caches that base (keyed by what determines it) and the build's layers, so a second build pays
// only for what changed. One build at a time per machine: a second `npm run image` waits for the
// first (the image's test files may all ask at once).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot } from '../cache-root.ts';
import { ensureEngine, engineOk, engineRun, SCRIPTS_DIR, type Engine } from './engine.ts';

export const ROOT = resolve(SCRIPTS_DIR, '..', '..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The image `npm run image` builds: fully qualified, so that podman, Docker, kind and k3d all name it alike. */
export const IMAGE = `localhost/kaos-operator:${VERSION}`;

/** The default of the Dockerfile's `ARG NODE_IMAGE`: the base a user's build starts from. */
export function defaultBase(dockerfile: string): string {
  const base = /^ARG NODE_IMAGE=(\S+)/m.exec(dockerfile)?.[1];
  if (base === undefined) throw new Error('the Dockerfile has no ARG NODE_IMAGE=<default base>');
  return base;
}

/** Debian's CA bundle, which the local base's npm trusts (local-base.sh). */
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

const log = (line: string): void => { process.stderr.write(`[image] ${line}\n`); };

/**
 * The build's base arguments: none when the engine has the default base or pulls it; otherwise
 * the local base, with this machine's CA bundle lent to the RUN steps (podman: a read-only mount
 * that no layer keeps) so that npm reaches its registry as this machine does.
 */
async function baseArgs(e: Engine): Promise<string[]> {
  const base = defaultBase(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  if ((await engineRun(e, ['image', 'inspect', base])).code === 0) return [];
  log(`pulling ${base}`);
  const pulled = await engineRun(e, ['pull', base], 600_000);
  if (pulled.code === 0) return [];
  log(`cannot pull ${base} (${(pulled.stderr || pulled.stdout).trim().split('\n').at(-1) ?? ''}): building on a local base instead`);
  // The local base takes this process's node: `npm run` runs the node devDependency's.
  const major = /^node:(\d+)/.exec(base)?.[1];
  if (major !== undefined && process.versions.node.split('.')[0] !== major) {
    throw new Error(`the local base needs Node.js ${major}, and this is ${process.versions.node}: run npm ci, then npm run image`);
  }
  const made = spawnSync(join(SCRIPTS_DIR, 'local-base.sh'), [e.name, process.execPath], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`local-base.sh exited ${made.status}`);
  const local = made.stdout.trim().split('\n').at(-1) ?? '';
  const lend = e.name === 'podman' && existsSync(CA_BUNDLE) ? ['--volume', `${CA_BUNDLE}:${CA_BUNDLE}:ro`] : [];
  return ['--build-arg', `NODE_IMAGE=${local}`, ...lend];
}

/** Builds IMAGE; resolves with its size in bytes. */
export async function buildImage(e: Engine): Promise<number> {
  const args = [
    ...e.global, 'build', ...e.containerArgs, ...(await baseArgs(e)),
    // The base is present now (pulled or made): podman would otherwise ask a registry again.
    ...(e.name === 'podman' ? ['--pull=never'] : []),
    '--tag', IMAGE, '--file', join(ROOT, 'Dockerfile'), ROOT,
  ];
  log(`${e.name} ${args.join(' ')}`);
  const started = Date.now();
  const child = spawn(e.name, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  child.stdout.pipe(process.stderr, { end: false });
  const code = await new Promise<number | null>((res) => child.once('close', res));
  if (code !== 0) throw new Error(`${e.name} build exited ${code}`);
  log(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return Number((await engineOk(e, ['image', 'inspect', '--format', '{{.Size}}', IMAGE])).trim());
}

/** Runs main() holding the machine's image lock: flock(1) re-runs this script under it. */
function underLock(main: () => Promise<void>): void {
  const lock = join(cacheRoot(), 'image', '.build.lock');
  if (process.env['KAOS_IMAGE_LOCK'] === lock) {
    main().catch((err: unknown) => {
      log(`FAILED: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    });
    return;
  }
  mkdirSync(dirname(lock), { recursive: true });
  const r = spawnSync('flock', [lock, process.execPath, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, KAOS_IMAGE_LOCK: lock } });
  if (r.error !== undefined) log(`FAILED: flock (util-linux) runs one build at a time: ${r.error.message}`);
  process.exit(r.status ?? 1);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  underLock(async () => {
    const e = await ensureEngine();
    const size = await buildImage(e);
    process.stdout.write(`${IMAGE} ${(size / 2 ** 20).toFixed(1)} MiB (${e.name})\n`);
  });
}
