// `npm test`: every check and every test, arranged to keep both cores busy.
//   - the control plane's build (test/cluster/build-version.sh: the Kubernetes version
//     KAOS_KUBE_VERSION names, else the default) starts first, in the background: from an empty
//     Go build cache it takes minutes, cached a second; test/prometheus/build.sh (promtool, a
//     module of its own) beside it;
//   - meanwhile the type check, the import-direction lint and the build of dist/ run side by side,
//     then the unit tests, at a lower CPU priority (nice): they fill the cores the build and the
//     end-to-end files leave idle, and never hold up either;
//   - the end-to-end tests (and the few unit tests that run a binary of that build) start as soon
//     as it is built, beside the unit tests if those are still running.
// Each test file is a tap test run by Node itself (`node <file>`), as `tap` would run it but
// without its runner: the runner's process and the loaders it puts into every Node process a test
// starts (the operator's included) cost about a second of CPU per file. Each file's TAP output,
// its closing `# { total, pass, fail }` and its exit code are what tap's runner reads too.
// At the end, a table of how long each phase took, when it ran (so overlaps show) and the CPU its
// processes used, then the sum of every file's tap totals as one summary line in tap's own format, which
// .ci/run reads.
//
// `node scripts/test.ts --e2e`: the same without the unit tests (what `npm run test:kube` runs on
// each Kubernetes minor; the unit tests do not depend on it).
//
// A failed check stops the run (as `tsc && depcruise && build && tap` did); a failed test does
// not: every test file runs, and the exit code is non-zero if anything failed. A control
// plane that cannot be built fails the run loudly: its end-to-end tests are counted as failed,
// never skipped.
import { spawn } from 'node:child_process';
import { existsSync, globSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot } from './cache-root.ts';
import { formatFailures, type TapFailure, tapFailures } from './tap-failures.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Unit tests that run a binary of the control plane's build (lua-health) or promtool: they wait
 * for those builds.
 */
const NEED_BUILT_BINARIES = ['test/unit/argocd-health.test.ts', 'test/unit/prometheus-rules.test.ts'];

/**
 * The end-to-end files that take longest (minutes: traffic, quiet windows, an image build), started
 * first so that the run does not end waiting on one of them alone; the others follow by name, each
 * taken from this queue by the next free worker.
 */
const LONGEST_FIRST = [
  'test/e2e/admission-defaulting.test.ts',
  'test/e2e/admission-validation.test.ts',
  'test/e2e/soak.test.ts',
  'test/e2e/upgrade-restore.test.ts',
  'test/e2e/security-plane.test.ts',
  'test/e2e/controller-idle-restart.test.ts',
  'test/e2e/image.test.ts',
  'test/e2e/chart-install.test.ts',
  'test/e2e/memory-stores.test.ts',
];
const longestFirst = (all: readonly string[]): string[] => [...LONGEST_FIRST.filter((f) => all.includes(f)), ...all.filter((f) => !LONGEST_FIRST.includes(f))];

/**
 * How many files of each kind run at once: KAOS_TEST_JOBS_UNIT, KAOS_TEST_JOBS_E2E, else the
 * defaults below (docs/development.md says how they were chosen).
 */
function jobs(run: 'unit' | 'e2e'): number {
  const set = Number(process.env[run === 'unit' ? 'KAOS_TEST_JOBS_UNIT' : 'KAOS_TEST_JOBS_E2E']);
  return Number.isInteger(set) && set > 0 ? set : run === 'unit' ? 2 : 3;
}

/** Sums tap summaries; a run that printed none counts as one failure (it crashed or timed out). */
function sum(runs: readonly Run[]): { total: number; pass: number; fail: number } {
  return {
    total: runs.reduce((n, r) => n + (r.totals?.total ?? 1), 0),
    pass: runs.reduce((n, r) => n + (r.totals?.pass ?? 0), 0),
    fail: runs.reduce((n, r) => n + (r.totals?.fail ?? (r.code === 0 ? 0 : 1)), 0),
  };
}

const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { tap: { timeout: number; plugin?: string[] } };

/**
 * How long one test file may take, in seconds: tap's `timeout` (package.json), as `tap` gives it.
 * The file's own root test fails at it (TAP_TIMEOUT) and prints what was running; a file that
 * hangs past it by a minute more is killed and counts as failed.
 */
const FILE_TIMEOUT_S = PACKAGE.tap.timeout;

/**
 * The unit files' CPU priority (nice 10: a tenth of the weight of a default process when both
 * want a core): the control plane's build and the end-to-end files decide how long the run takes,
 * and the unit files have the slack to wait for an idle core.
 */
const UNIT_NICE = 10;

/**
 * Node's compile cache for every Node process the tests start (NODE_COMPILE_CACHE, unless set):
 * each test file compiles most of src/ and test/support/, and each operator the end-to-end files
 * start its bundle; cached, a file's start costs about a quarter less CPU. Beside the control
 * plane's binaries, in build.sh's cache.
 */
process.env.NODE_COMPILE_CACHE ??= join(cacheRoot(), 'node-compile-cache');

interface Phase {
  name: string;
  startS: number;
  endS?: number;
  /** CPU seconds of the phase's whole process tree (its waited-for descendants), user and system. */
  cpuS?: number;
}

const t0 = performance.now();
const now = (): number => (performance.now() - t0) / 1000;
/**
 * CPU seconds of every descendant this process has waited for (cutime + cstime of /proc/self/stat;
 * the kernel adds a child's, and its waited-for descendants', when the child is reaped). Read as
 * each phase's process closes, the difference is that phase's CPU: a figure the other work on a
 * shared machine does not move, unlike the wall time beside it. Undefined off Linux.
 */
function childrenCpuS(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of stat(5) (cutime, cstime), in clock ticks of 1/100 s.
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}
let cpuSeen = childrenCpuS();
const phases: Phase[] = [];
const bin = (name: string): string => join(ROOT, 'node_modules', '.bin', name);

interface Run {
  code: number;
  /** tap's closing summary, when the command was a test file. */
  totals?: { total: number; pass: number; fail: number };
  /** The build's per-binary lines (build.sh: "ready: <name> at <s>s"). */
  lines: string[];
  /** The tests that failed, when the command was a test file. */
  failures: TapFailure[];
  /** CPU seconds of its process tree. */
  cpuS?: number;
}

/**
 * Runs a command as one phase. Its output passes through a line at a time (two phases' lines never
 * split each other), scanned for tap's summary and the build's lines; with `buffer`, it is held
 * and printed as one block when the command ends, so that a test file beside another stays readable.
 */
function run(
  name: string,
  command: string,
  args: readonly string[],
  options: { quiet?: boolean; buffer?: boolean; inTable?: boolean; env?: NodeJS.ProcessEnv; timeoutS?: number } = {},
): Promise<Run> {
  const phase: Phase = { name, startS: now() };
  if (options.inTable !== false) phases.push(phase);
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...(options.env === undefined ? {} : { env: options.env }) });
    const timer = options.timeoutS === undefined ? undefined : setTimeout(() => {
      process.stderr.write(`\nnpm test: ${name} still ran ${options.timeoutS} s after it started: killed, and counted as failed\n`);
      child.kill('SIGKILL');
    }, options.timeoutS * 1000);
    const lines: string[] = [];
    const stdoutLines: string[] = [];
    const held: string[] = [];
    let totals: Run['totals'];
    const pass = (stream: NodeJS.ReadableStream, to: NodeJS.WriteStream): void => {
      let partial = '';
      const emit = (text: string): void => {
        for (const line of text.split('\n')) {
          const summary = /^# \{ total: (\d+)(?:, pass: (\d+))?(?:, fail: (\d+))?/.exec(line);
          if (summary !== null) totals = { total: Number(summary[1]), pass: Number(summary[2] ?? 0), fail: Number(summary[3] ?? 0) };
          if (line.startsWith('[cluster-build]')) lines.push(line);
          if (to === process.stdout) stdoutLines.push(line);
        }
        if (options.quiet === true && to === process.stdout) return;
        if (options.buffer === true) held.push(text);
        else to.write(text);
      };
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const text = partial + chunk;
        const cut = text.lastIndexOf('\n') + 1;
        partial = text.slice(cut);
        if (cut > 0) emit(text.slice(0, cut));
      });
      stream.on('end', () => { if (partial !== '') emit(`${partial}\n`); });
    };
    pass(child.stdout, process.stdout);
    pass(child.stderr, process.stderr);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      phase.endS = now();
      const cpu = childrenCpuS();
      if (cpu !== undefined && cpuSeen !== undefined) phase.cpuS = cpu - cpuSeen;
      cpuSeen = cpu;
      const took = `${(phase.endS - phase.startS).toFixed(0)} s${phase.cpuS === undefined ? '' : `, ${phase.cpuS.toFixed(1)} s of CPU`}`;
      if (held.length > 0) process.stdout.write(`\n# ----- ${name}: output -----\n${held.join('')}# ----- ${name}: end (${took}) -----\n`);
      const failures = tapFailures(stdoutLines);
      stdoutLines.length = 0;
      resolve({ code: code ?? (signal === null ? 1 : 128), lines, failures, ...(phase.cpuS === undefined ? {} : { cpuS: phase.cpuS }), ...(totals === undefined ? {} : { totals }) });
    });
  });
}

function table(): string {
  const rows: string[][] = [['phase', 'seconds', 'from', 'to', 'cpu s']];
  const install = process.env.KAOS_CI_INSTALL_SECONDS;
  if (install !== undefined) rows.push(['install (npm ci, in .ci/run)', install, '', '', '']);
  for (const p of phases) {
    const end = p.endS ?? now();
    rows.push([p.name, (end - p.startS).toFixed(0), p.startS.toFixed(0), end.toFixed(0), p.cpuS === undefined ? '' : p.cpuS.toFixed(0)]);
  }
  const cpu = childrenCpuS();
  rows.push(['npm test', now().toFixed(0), '0', now().toFixed(0), cpu === undefined ? '' : cpu.toFixed(0)]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

/**
 * Prints the failed tests (again: CI keeps a log's tail), the table and the summary, then exits
 * once stdout has taken all of it: a pipe (CI's `tee`) may still hold megabytes of the tests'
 * output, which process.exit() would cut short.
 */
async function finish(code: number, totals?: { total: number; pass: number; fail: number }, failures: readonly TapFailure[] = []): Promise<never> {
  if (failures.length > 0) process.stdout.write(`\n# failed tests (their full output is above)\n${formatFailures(failures)}\n`);
  process.stdout.write(`\n# phases (seconds since npm test started)\n${table().replace(/^/gm, '# ')}\n`);
  const summary = totals === undefined ? '' : `# { total: ${totals.total}, pass: ${totals.pass}, fail: ${totals.fail} }\n`;
  await new Promise<void>((resolve) => process.stdout.write(summary, () => resolve()));
  process.exit(code);
}

// 1. The control plane's binaries and promtool, in the background. promtool's build (about 190 s
// of CPU from an empty Go build cache, docs/development.md) ends long before the control plane's.
const cluster = run('control plane build (test/cluster/build-version.sh)', join(ROOT, 'test', 'cluster', 'build-version.sh'), [], { quiet: true });
const prometheus = run('promtool build (test/prometheus/build.sh)', join(ROOT, 'test', 'prometheus', 'build.sh'), [], { quiet: true });

// 2. The checks, side by side (each is one process on one core); the first that fails ends the run.
// With them, in a fresh install, `tap build`: the test files below load tap's Test class, which
// must be built for the plugins package.json configures (tap's runner would build it on its first
// run). A stamp in node_modules, which `npm ci` removes, says for which it was built.
const tapStamp = join(ROOT, 'node_modules', '.kaos-tap-build');
const tapPlugins = JSON.stringify({ tap: (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'tap', 'package.json'), 'utf8')) as { version: string }).version, plugins: PACKAGE.tap.plugin });
const tapBuilt = existsSync(tapStamp) && readFileSync(tapStamp, 'utf8') === tapPlugins;
const checks = await Promise.all([
  run('type check (tsc --noEmit)', bin('tsc'), ['-p', 'tsconfig.json', '--noEmit']),
  run('dependency lint (depcruise)', bin('depcruise'), ['src', '--config', '.dependency-cruiser.cjs']),
  run('build (dist/)', process.execPath, ['scripts/build.ts']),
  ...(tapBuilt ? [] : [run('tap build (its plugins)', bin('tap'), ['build'], { quiet: true }).then((r) => {
    if (r.code === 0) writeFileSync(tapStamp, tapPlugins);
    return r;
  })]),
]);
const failedCheck = checks.find((c) => c.code !== 0);
if (failedCheck !== undefined) await finish(failedCheck.code);

/**
 * Runs one test file as tap would: `node <file>` (at `nice`, when given), its root test timing out
 * at FILE_TIMEOUT_S; its output held and printed as one block when it ends, its failures named
 * with the file first.
 */
async function testFile(file: string, options: { nice?: number; inTable?: boolean } = {}): Promise<Run> {
  const command = options.nice === undefined ? [process.execPath, file] : ['nice', '-n', String(options.nice), process.execPath, file];
  const result = await run(`  ${file}`, command[0]!, command.slice(1), {
    buffer: true,
    inTable: options.inTable ?? true,
    env: { ...process.env, TAP_TIMEOUT: String(FILE_TIMEOUT_S) },
    timeoutS: FILE_TIMEOUT_S + 60,
  });
  const failures = result.failures.map((f) => ({ ...f, path: [file, ...f.path] }));
  // A file that ended without its summary (killed, crashed) or with an exit code its summary does
  // not explain failed as a whole.
  if ((result.totals === undefined || result.totals.fail === 0) && result.code !== 0) {
    failures.push({ path: [file], name: `exited ${result.code}${result.totals === undefined ? ' without a summary' : ''}`, detail: [] });
  }
  return { ...result, failures };
}

/** Runs `files` through `jobs` workers, each taking the next file when it is free. */
async function testFiles(files: readonly string[], jobs: number, options: { nice?: number; inTable?: boolean } = {}): Promise<Run[]> {
  const queue = [...files];
  const runs: Run[] = [];
  const worker = async (): Promise<void> => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) runs.push(await testFile(file, options));
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  return runs;
}

/** A phase made of test files: its CPU is theirs. */
async function testPhase(name: string, runs: Promise<Run[]>): Promise<Run[]> {
  const phase: Phase = { name, startS: now() };
  phases.push(phase);
  const done = await runs;
  phase.endS = now();
  phase.cpuS = done.reduce((n, r) => n + (r.cpuS ?? 0), 0);
  return done;
}

// 3. The unit tests start at once, while the control plane may still be building, at a lower
// priority; the end-to-end tests (and the unit tests that run its binaries) start beside them as
// soon as it is built. The end-to-end files spend much of their time waiting (on rollouts, quiet
// windows, a webhook's timeout), which the unit files' CPU fills.
const files = (pattern: string): string[] => globSync(pattern, { cwd: ROOT }).sort();
const E2E_ONLY = process.argv.includes('--e2e');
const unitFiles = files('test/unit/**/*.test.ts').filter((f) => !NEED_BUILT_BINARIES.includes(f));
const unitRuns = E2E_ONLY ? Promise.resolve([]) : testPhase(
  `unit tests (${unitFiles.length} files, ${jobs('unit')} at a time, nice ${UNIT_NICE})`,
  testFiles(unitFiles, jobs('unit'), { nice: UNIT_NICE, inTable: false }),
);

const built = await cluster;
// A failed promtool build is not fatal here: the files that use it run build.sh again and fail.
await prometheus;
for (const line of built.lines) {
  const ready = /ready: (\S+) at (\d+)s/.exec(line);
  if (ready !== null) phases.push({ name: `  ${ready[1]!} linked`, startS: phases[0]!.startS, endS: phases[0]!.startS + Number(ready[2]) });
}
if (built.code !== 0) {
  process.stderr.write('\nnpm test: the control plane did not build (its error is above): its end-to-end tests cannot run, and count as one failure\n');
  const unit = await unitRuns;
  const u = sum(unit);
  await finish(1, { total: u.total + 1, pass: u.pass, fail: u.fail + 1 }, unit.flatMap((r) => r.failures));
}
const e2eFiles = longestFirst([...files('test/e2e/**/*.test.ts'), ...NEED_BUILT_BINARIES]);
const e2eRuns = await testPhase(`e2e tests (${e2eFiles.length} files, ${jobs('e2e')} at a time)`, testFiles(e2eFiles, jobs('e2e')));
const unit = await unitRuns;
const all = [...unit, ...e2eRuns];
const totals = sum(all);
await finish(totals.fail > 0 || all.some((r) => r.code !== 0) ? 1 : 0, totals, all.flatMap((r) => r.failures));
