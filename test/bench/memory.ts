// npm run bench:memory -- [sizes…] — the operator's memory in the bulk apply, explained, builds
// side by side. Never part of pass/fail.
//
// For each size (default 1000), each build runs the operator's half of bench:bulk
// (test/bench/bulk-apply.ts with FLOOR=0: a fresh control plane, the objects created through the
// webhooks, every Agent Ready, settle, idle window), the builds alternated, ROUNDS rounds. Per run:
// peak RSS (VmHWM) and what the memory was made of at the highest sampled RSS (memory-parts.ts:
// the node binary's file-backed pages, shared libraries, each thread's V8 heap with its young
// generation, and the rest: malloc and stacks), then the other bulk figures — every Agent Ready,
// creating the objects, operator CPU, writes while converging, idle writes, Deployment generations —
// and the load average while the operator ran. Then each build's medians and their ratio to the
// first build's.
//
// Env: BUILDS, space-separated, each `name=checkout` with optional `+VAR=value` operator settings:
// `.` is this tree, any other path a built checkout whose dist/main.js runs with its own flags
// (e.g. `main=/tmp/kaos-main shipped=. one-thread=.+WEBHOOK_THREAD=false`; default `this=.`,
// and `base=$BENCH_BASE` when BENCH_BASE is set). ROUNDS (1), IDLE_SECONDS (10), and whatever
// bulk-apply.ts reads (PODS, MODELAPIS, MCPSERVERS, …) passes through.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BulkFigures } from './bulk-apply.ts';
import type { MemoryParts } from './memory-parts.ts';
import { buildSettings, int, log, printTable } from './reconcile.ts';

const BULK = fileURLToPath(new URL('./bulk-apply.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ROUNDS = Math.max(1, int('ROUNDS', 1));

interface Build { name: string; root: string | undefined; env: Record<string, string> }

function builds(spec: string | undefined): Build[] {
  const tokens = (spec ?? '').split(/\s+/).filter((t) => t !== '');
  if (tokens.length === 0) {
    tokens.push('this=.');
    const base = process.env.BENCH_BASE;
    if (base !== undefined && base !== '') tokens.push(`base=${base}`);
  }
  return tokens.map((token) => {
    const { dir: head, env } = buildSettings(token);
    const [name = '', dir = ''] = head.split('=');
    if (name === '' || dir === '') throw new Error(`BUILDS: "${token}" is not name=checkout[+VAR=value…]`);
    const root = resolve(dir) === resolve(ROOT) ? undefined : resolve(dir);
    return { name, root, env };
  });
}

function sizes(args: readonly string[]): number[] {
  const given = args.map((a) => Number(a));
  if (given.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`sizes must be positive integers (got ${args.join(', ')})`);
  return given.length > 0 ? given : [1000];
}

async function runOne(build: Build, agents: number, dir: string, tag: string): Promise<BulkFigures> {
  const resultFile = join(dir, `${tag}.json`);
  const env: NodeJS.ProcessEnv = { ...process.env, ...build.env, AGENTS: String(agents), FLOOR: '0', BULK_RESULT_FILE: resultFile, IDLE_SECONDS: process.env.IDLE_SECONDS ?? '10' };
  if (build.root === undefined) delete env.BENCH_OPERATOR_ROOT;
  else env.BENCH_OPERATOR_ROOT = build.root;
  const child = spawn(process.execPath, [BULK], { env, stdio: 'inherit' });
  const code = await new Promise<number | null>((done, fail) => {
    child.once('error', fail);
    child.once('exit', done);
  });
  if (code !== 0) throw new Error(`${build.name}, ${agents} Agents: the bulk apply exited with ${String(code)}`);
  return JSON.parse(readFileSync(resultFile, 'utf8'), (_key, value: unknown) => (value === null ? Number.NaN : value)) as BulkFigures;
}

const median = (values: readonly number[]): number => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

const mib = (n: number | undefined): string => (n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(1));
const heap = (p: MemoryParts | undefined, thread: string): string => {
  const h = p?.heaps[thread];
  return h === undefined ? '—' : `${h.total.toFixed(1)} (${h.young.toFixed(1)})`;
};

function row(name: string, r: BulkFigures): string[] {
  const p = r.memory.atPeak;
  return [
    name,
    mib(r.peakRssMiB),
    `${r.memory.peakAtSeconds.toFixed(0)} s`,
    mib(p?.rss),
    mib(p?.binary),
    mib(p?.libraries),
    heap(p, 'main'),
    heap(p, 'admission'),
    mib(p?.rest),
    `${r.seconds.operator.toFixed(1)} s`,
    `${r.createSeconds.operator.toFixed(1)} s`,
    `${r.cpu.operator.toFixed(1)} s`,
    String(r.writes.operator),
    String(r.idleWrites),
    (r.generations.operator / Math.max(1, r.generations.deployments)).toFixed(3),
    `${r.load.mean.toFixed(1)} / ${r.load.max.toFixed(1)}`,
  ];
}

const HEADER = ['build', 'peak RSS (VmHWM)', 'reached at', 'highest sampled RSS', 'node binary', 'libraries', 'main heap (young)', 'admission heap (young)', 'rest', 'every Agent Ready', 'creating', 'operator CPU', 'writes', 'idle writes', 'generations per Deployment', 'load mean / max'];

async function main(): Promise<void> {
  const list = builds(process.env.BUILDS);
  const dir = mkdtempSync(join(tmpdir(), 'kaos-memory-'));
  const out = (line = ''): void => void process.stdout.write(`${line}\n`);
  const results = new Map<number, Map<string, BulkFigures[]>>();
  try {
    for (const agents of sizes(process.argv.slice(2))) {
      const bySize = new Map<string, BulkFigures[]>(list.map((b) => [b.name, []]));
      results.set(agents, bySize);
      for (let round = 1; round <= ROUNDS; round++) {
        // Alternated, so that the machine's load falls on every build alike.
        const order = round % 2 === 1 ? list : [...list].reverse();
        for (const build of order) {
          log(`memory: ${agents} Agents, round ${round}/${ROUNDS}, ${build.name} (${build.root ?? 'this tree'}${Object.keys(build.env).length === 0 ? '' : `, ${Object.entries(build.env).map(([k, v]) => `${k}=${v}`).join(' ')}`})`);
          bySize.get(build.name)?.push(await runOne(build, agents, dir, `${agents}-${round}-${build.name}`));
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  out();
  out(`the operator's memory in the bulk apply (${process.env.PODS === '0' ? 'PODS=0' : 'every pod run'}), MiB; the parts are those of the sample with the highest RSS: node binary + libraries + each thread's V8 heap (of it the young generation) + rest = sampled RSS`);
  for (const [agents, bySize] of results) {
    out();
    out(`${agents.toLocaleString('en-US')} Agents:`);
    printTable([HEADER, ...list.flatMap((b) => (bySize.get(b.name) ?? []).map((r, i) => row(ROUNDS === 1 ? b.name : `${b.name} #${i + 1}`, r)))], out);
    if (list.length < 2 && ROUNDS < 2) continue;
    const first = list[0] as Build;
    const med = (name: string, f: (r: BulkFigures) => number): number => median((bySize.get(name) ?? []).map(f));
    out('medians, and each build ÷ the first:');
    printTable([
      ['build', 'peak RSS', 'every Agent Ready', 'creating', 'operator CPU', 'writes'],
      ...list.map((b) => {
        const cell = (f: (r: BulkFigures) => number, unit: string, digits: number): string => {
          const v = med(b.name, f);
          const ratio = b === first ? '' : ` (${(v / med(first.name, f)).toFixed(2)}×)`;
          return `${v.toFixed(digits)}${unit}${ratio}`;
        };
        return [b.name, cell((r) => r.peakRssMiB, ' MiB', 1), cell((r) => r.seconds.operator, ' s', 1), cell((r) => r.createSeconds.operator, ' s', 1), cell((r) => r.cpu.operator, ' s', 1), cell((r) => r.writes.operator, '', 0)];
      }),
    ], out);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:memory: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
