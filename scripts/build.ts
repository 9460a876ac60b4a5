// `npm run build`: dist/, what the image and the `kaos-operator` command run.
//   1. tsc emits every module of src/ (bin/kaos-operator.js loads dist/cli/main.js from them);
//   2. esbuild bundles the operator's entry points, src/main.ts and src/admission-worker.ts (the
//      admission thread main starts), each with the dependencies it imports, into one file each,
//      dist/main.js and dist/admission-worker.js, in place of tsc's, and writes
//      dist/runtime-deps/: the package.json and package-lock.json that install what the bundles
//      still load from node_modules (what they leave outside, and what that needs), at the
//      locked versions.
// `node scripts/build.ts --bundle-only` does step 2 alone: the image's build (Dockerfile), which
// ships the bundles and nothing of tsc's.
// Why one file: Node keeps, for every module it loads, the source text, a module record and the
// loader's bookkeeping. Unbundled the operator loads about 700 files (2.2 MiB of source, most of
// it the dependencies'); bundled it loads one, and starts at about 70 MiB of RSS instead of 83
// (docs/benchmarks.md, "Memory"). Whitespace is minified (3 MiB less again), names are kept, so a
// stack trace still names its functions; `node --enable-source-maps dist/main.js` maps it to
// src/ through dist/main.js.map (lines only, no copy of the sources: 1.2 MiB instead of 4.4).
// @kubernetes/client-node stays outside: client.ts imports it only for kubeconfigs it cannot read
// itself, and it costs ~80 MiB when it loads.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Metafile } from 'esbuild';
import { lockfileSubset, manifestSubset, packageName, type Lockfile, type Manifest } from './lockfile-subset.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The operator's bundles: dist/main.js, and the admission thread it starts
 * (src/admission-worker.ts, beside it as dist/admission-worker.js). Two bundles, no shared
 * chunks: each thread is an isolate of its own that compiles what it loads, so a shared chunk
 * would save disk, not memory, and each thread loads only its own side.
 */
const OPERATOR_ENTRIES = [join(ROOT, 'src', 'main.ts'), join(ROOT, 'src', 'admission-worker.ts')];

/** Where the build writes the package.json and package-lock.json of what the bundle loads from node_modules. */
export const RUNTIME_DEPS_DIR = join(ROOT, 'dist', 'runtime-deps');

/**
 * The packages the bundle step runs besides the production dependencies it bundles: all that
 * the image's build stage installs of the devDependencies (scripts/image/build-manifest.ts).
 */
export const BUNDLER_PACKAGES: readonly string[] = ['esbuild'];

/** Dependencies that the bundle imports from node_modules at run time instead of holding them. */
const EXTERNAL: readonly string[] = ['@kubernetes/client-node'];

/**
 * Packages of express that the bundles replace by scripts/left-out-of-bundle.cjs: its body
 * parsers (with iconv-lite's code pages), its static file server, and the MIME table of
 * res.send, res.json, res.type and req.is. The webhook and health servers use express for its
 * routes alone, read bodies themselves and answer with writeHead and end; express only reads
 * these packages' exports when it loads. Each thread holds its bundle's text (the module
 * loader's copy, outside V8's heap) and what ran of it: without them a bundle is 0.7 MB smaller,
 * and an express application's heap 1.8 MiB instead of 3.4 MiB (docs/benchmarks.md, "Memory").
 */
export const LEFT_OUT_OF_BUNDLE: readonly string[] = ['body-parser', 'serve-static', 'send', 'mime-types'];

/**
 * The packages `metafile`'s entry outputs import at run time: every import esbuild left outside
 * a bundle (the EXTERNAL list, and anything else it could not or was told not to bundle) but
 * Node's builtins, by package name.
 */
export function bundleExternals(metafile: Metafile): string[] {
  const outputs = Object.values(metafile.outputs).filter((o) => o.entryPoint !== undefined);
  if (outputs.length === 0) throw new Error('the build has no entry outputs');
  const imports = outputs.flatMap((o) => o.imports);
  return [...new Set(imports.filter((i) => i.external && !isBuiltin(i.path)).map((i) => packageName(i.path)))].sort();
}

/**
 * What `npm ci` needs to install the bundle's `externals`: package.json cut down to those it lists
 * among its dependencies (each EXTERNAL one must be), and the lockfile cut down to what they
 * reach. The others are `absent`: packages no production install has, which esbuild leaves
 * outside only where it finds them required inside a try block (debug's optional
 * `require('supports-color')`), so the bundle runs without them; on a machine with the dev
 * dependencies installed, esbuild bundles such a package instead.
 */
export function runtimeDeps(pkg: Manifest, lock: Lockfile, externals: readonly string[]): { manifest: Manifest; lock: Lockfile; absent: string[] } {
  const dependencies = new Set(Object.keys(pkg.dependencies ?? {}));
  const installed = [...new Set([...EXTERNAL, ...externals.filter((e) => dependencies.has(e))])];
  const manifest = manifestSubset(pkg, installed);
  return { manifest, lock: lockfileSubset(manifest, lock), absent: externals.filter((e) => !installed.includes(e)) };
}

/** The files of a directory writeInstallManifest() writes: all that `npm ci` reads. */
export const INSTALL_MANIFEST_FILES = ['package.json', 'package-lock.json'] as const;

/** Writes `manifest` and `lock` as package.json and package-lock.json into `dir`, as npm formats them. */
export function writeInstallManifest(dir: string, manifest: Manifest, lock: Lockfile): void {
  mkdirSync(dir, { recursive: true });
  const [pkgFile, lockFile] = INSTALL_MANIFEST_FILES;
  writeFileSync(join(dir, pkgFile), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(dir, lockFile), `${JSON.stringify(lock, null, 2)}\n`);
}

/** esbuild: the bundles and their source maps, then dist/runtime-deps/ from what they left outside. */
export async function bundle(): Promise<void> {
  const { build: esbuild } = await import('esbuild');
  const { metafile } = await esbuild({
    entryPoints: OPERATOR_ENTRIES,
    outdir: join(ROOT, 'dist'),
    entryNames: '[name]',
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    external: [...EXTERNAL],
    alias: Object.fromEntries(LEFT_OUT_OF_BUNDLE.map((name) => [name, join(ROOT, 'scripts', 'left-out-of-bundle.cjs')])),
    minifyWhitespace: true,
    sourcemap: 'linked',
    sourcesContent: false,
    metafile: true,
    logLevel: 'warning',
    // The CommonJS dependencies (express, pino, …) require() Node's builtins; an ES module has no
    // require of its own.
    banner: { js: "import { createRequire as __kaosCreateRequire } from 'node:module'; const require = __kaosCreateRequire(import.meta.url);" },
  });
  const read = <T>(file: string): T => JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as T;
  const deps = runtimeDeps(read<Manifest>('package.json'), read<Lockfile>('package-lock.json'), bundleExternals(metafile));
  writeInstallManifest(RUNTIME_DEPS_DIR, deps.manifest, deps.lock);
  const count = Object.keys(deps.lock.packages).length - 1;
  const absent = deps.absent.length === 0 ? '' : `; runs without ${deps.absent.join(', ')}`;
  process.stderr.write(`bundle: ${OPERATOR_ENTRIES.map((e) => `dist/${basename(e, '.ts')}.js`).join(', ')} load ${Object.keys(deps.manifest.dependencies ?? {}).join(', ')} from node_modules (${count} packages: ${relative(ROOT, RUNTIME_DEPS_DIR)}/)${absent}\n`);
}

export async function build(): Promise<void> {
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  await bundle();
}

if (import.meta.main) await (process.argv.includes('--bundle-only') ? bundle() : build());
