// What the shipped entry points load (dist/main.js and the admission thread's
// dist/admission-worker.js, built by `npm run build` before the tests): one file of our own each,
// bundled (scripts/build.ts), and none of the Node builtins that only an ES import of node:http
// would drag in (src/leaves/node-http.ts). Each costs resident memory for nothing. The operator stops at
// configuration (an invalid LOG_LEVEL), the admission thread's entry run as a process at its
// first line that needs a parent thread: both after every import has run.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const ADMISSION = fileURLToPath(new URL('../../dist/admission-worker.js', import.meta.url));

// Runs before the entry point: records every file the module loader loads, and at exit prints
// those and the builtins Node loaded.
const RECORDER = `data:text/javascript,${encodeURIComponent(`
  import { registerHooks } from 'node:module';
  const files = [];
  registerHooks({ load(url, context, next) { if (url.startsWith('file:')) files.push(url); return next(url, context); } });
  process.on('exit', () => process.stderr.write('LOADED ' + JSON.stringify({ files, builtins: process.moduleLoadList }) + '\\n'));
`)}`;

interface Loaded { files: string[]; builtins: string[] }

function load(entry = MAIN, env: NodeJS.ProcessEnv = { LOG_LEVEL: 'not-a-level' }): { loaded: Loaded; stderr: string } {
  const run = spawnSync(process.execPath, ['--import', RECORDER, entry], { env: { ...process.env, ...env }, encoding: 'utf8' });
  const line = run.stderr.split('\n').find((l) => l.startsWith('LOADED ')) ?? 'LOADED {"files":[],"builtins":[]}';
  return { loaded: JSON.parse(line.slice('LOADED '.length)) as Loaded, stderr: run.stderr };
}

t.test('the operator entry point is one bundled file and loads no undici, http2 or fetch', async (t) => {
  t.ok(existsSync(MAIN), 'dist/main.js exists (run npm run build before this test)');
  const { loaded, stderr } = load();
  t.match(stderr, /LOG_LEVEL: must be one of/, 'it got as far as reading its configuration, every import done');
  t.same(loaded.files.map((f) => fileURLToPath(f)), [MAIN], 'the module loader loaded dist/main.js and no other file');
  t.same(loaded.builtins.filter((m) => /undici|http2/.test(m)), [], 'no undici (fetch), no http2');
});

t.test('an IP address as the ext_authz Service stops the operator at startup, naming the setting', async (t) => {
  const run = spawnSync(process.execPath, [MAIN], { env: { ...process.env, LOG_LEVEL: 'info', SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: '10.0.0.5:9191' }, encoding: 'utf8' });
  t.equal(run.status, 2, 'exit code 2, as for every invalid setting');
  t.equal(run.stderr, 'kaos-operator: invalid configuration:\n  - SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: must be a Service address name[.namespace]:port whose name is a Service name (a DNS-1035 label: a lowercase letter first; not an IP address), such as kaos-pdp.kaos-system.svc:9191, got "10.0.0.5:9191"\n');
});

t.test('the admission thread\'s entry point is one bundled file too', async (t) => {
  t.ok(existsSync(ADMISSION), 'dist/admission-worker.js exists (run npm run build before this test)');
  const { loaded, stderr } = load(ADMISSION, { LOG_LEVEL: 'info' });
  t.match(stderr, /serveAdmissionThread runs in a worker thread/, 'it got as far as serving, every import done');
  t.same(loaded.files.map((f) => fileURLToPath(f)), [ADMISSION], 'the module loader loaded dist/admission-worker.js and no other file');
  t.same(loaded.builtins.filter((m) => /undici|http2/.test(m)), [], 'no undici (fetch), no http2');
});

t.test("the bundles leave out express's body parsers, static file server and MIME table; calling what stands in for them throws", async (t) => {
  const leftOut = /node_modules\/(body-parser|serve-static|send|mime-types|mime-db|iconv-lite|raw-body)\//;
  for (const entry of [MAIN, ADMISSION]) {
    const { sources } = JSON.parse(readFileSync(`${entry}.map`, 'utf8')) as { sources: string[] };
    t.same(sources.filter((s) => leftOut.test(s)), [], `${entry}: none of them among its sources`);
    t.ok(sources.some((s) => s.endsWith('scripts/left-out-of-bundle.cjs')), `${entry}: the stand-in is`);
    t.ok(sources.some((s) => /node_modules\/express\//.test(s)), `${entry}: express itself is`);
  }
  const standIn = createRequire(import.meta.url)('../../scripts/left-out-of-bundle.cjs') as { (): unknown; json: () => unknown };
  t.type(standIn.json, 'function', 'reading an export, as express does when it loads, is harmless');
  t.throws(() => standIn.json(), /not in the operator's bundle \(scripts\/build\.ts, LEFT_OUT_OF_BUNDLE\)/, 'calling one says what happened');
  t.throws(() => standIn(), /not in the operator's bundle/, 'calling the module itself (serve-static) too');
});
