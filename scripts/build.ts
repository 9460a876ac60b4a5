// `npm run build`: dist/, what the image and the `kaos-operator` command run.
//   1. tsc emits every module of src/ (bin/kaos-operator.js loads dist/cli/main.js from them);
//   2. esbuild bundles the operator's entry points, src/main.ts and src/admission-worker.ts (the
//      admission thread main starts) with the dependencies each imports, into one file each,
//      dist/main.js and dist/admission-worker.js, in place of tsc's.
// Why one file: Node keeps, for every module it loads, the source text, a module record and the
// loader's bookkeeping. Unbundled the operator loads about 700 files (2.2 MiB of source, most of
// it the dependencies'); bundled it loads one, and starts at about 70 MiB of RSS instead of 83
// (docs/benchmarks.md, "Memory"). Whitespace is minified (3 MiB less again), names are kept, so a
// stack trace still names its functions; `node --enable-source-maps dist/main.js` maps it to src/.
// @kubernetes/client-node stays outside: client.ts imports it only for kubeconfigs it cannot read
// itself, and it costs ~80 MiB when it loads.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as esbuild } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The operator's bundles: what `node dist/main.js` runs, and the admission thread it starts
 * (src/admission-worker.ts, beside it as dist/admission-worker.js). Two bundles, not one with
 * shared chunks: each thread is an isolate of its own that compiles what it loads, so a shared
 * chunk would save disk, not memory, and each thread loads only its own side.
 */
const OPERATOR_BUNDLES = [
  { entry: join(ROOT, 'src', 'main.ts'), outfile: join(ROOT, 'dist', 'main.js') },
  { entry: join(ROOT, 'src', 'admission-worker.ts'), outfile: join(ROOT, 'dist', 'admission-worker.js') },
];

export async function build(): Promise<void> {
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  await Promise.all(OPERATOR_BUNDLES.map((bundle) => bundleOne(bundle.entry, bundle.outfile)));
}

async function bundleOne(entry: string, outfile: string): Promise<void> {
  await esbuild({
    entryPoints: [entry],
    outfile,
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    external: ['@kubernetes/client-node'],
    minifyWhitespace: true,
    sourcemap: 'linked',
    logLevel: 'warning',
    // The CommonJS dependencies (express, pino, …) require() Node's builtins; an ES module has no
    // require of its own.
    banner: { js: "import { createRequire as __kaosCreateRequire } from 'node:module'; const require = __kaosCreateRequire(import.meta.url);" },
  });
}

if (import.meta.main) await build();
