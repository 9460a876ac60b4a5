// npm run fuzz — the properties of test/unit/admission/fuzz.test.ts, 100,000 times, with figures.
//
// Same generator (test/support/arbitraries.ts), same server and handlers
// (test/support/fuzz-target.ts), same judge (test/support/admission-oracle.ts), the generator's
// largest input of each class first; but instead of stopping at the first failure it counts
// everything and prints, at the end: requests, answers by HTTP code and by AdmissionReview code,
// the 500s, p50/p99 latency, the event loop's CPU time per request against the work budget
// (test/support/work-budget.ts), RSS start/peak/end, the slowest kinds of input, and every
// distinct failure with its smallest reproduction. It exits 1 when a request took more than the
// work budget of CPU (or when it cannot run), 0 otherwise: the other failures are reported for a
// person to judge.
//
// Env: FUZZ_RUNS (default 100000), FUZZ_SEED (default: random, printed), FUZZ_SHOW (characters of
// each reproduction to print, default 400).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { judge, judgeNormal } from '../support/admission-oracle.ts';
import { fuzzCase, largestCases, type FuzzCase } from '../support/arbitraries.ts';
import { measured, WORK_BUDGET_MS } from '../support/work-budget.ts';
import { POD_SPEC_UNCHECKED, startFuzzTarget } from '../support/fuzz-target.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 100_000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const SHOW = Number(process.env.FUZZ_SHOW ?? 400);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

interface Failure {
  count: number;
  /** The smallest body that showed it. */
  example: FuzzCase;
}

/** One class per problem, with numbers, quotes and uids blanked so that instances group. */
function classOf(problem: string): string {
  return problem
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\d+/g, 'N')
    .slice(0, 160);
}

function count<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const target = await startFuzzTarget();
  gc();
  const rssStart = process.memoryUsage().rss;
  let rssPeak = rssStart;
  const byHttp = new Map<number, number>();
  const byReview = new Map<string, number>();
  const failures = new Map<string, Failure>();
  const latencies = new Float64Array(RUNS + largestCases().length);
  const cpuTimes = new Float64Array(latencies.length);
  const overBudget: { cpuMs: number; c: FuzzCase }[] = [];
  const byFamily = new Map<string, { n: number; ms: number; max: number }>();
  let slowest: { ms: number; c: FuzzCase } | undefined;
  let served500 = 0;
  let normalFailures = 0;
  let n = 0;
  const started = performance.now();

  console.log(`kaos-operator admission fuzz — ${RUNS.toLocaleString('en')} requests, seed ${SEED} (FUZZ_SEED=${SEED} repeats it)`);
  await fc.assert(
    fc.asyncProperty(fuzzCase, async (c) => {
      const unchecked = target.logged(POD_SPEC_UNCHECKED);
      const { result: reply, cpuMs } = await measured(() => target.post(c.path, c.body));
      cpuTimes[n] = cpuMs;
      if (cpuMs > WORK_BUDGET_MS) overBudget.push({ cpuMs, c });
      const verdict = judge(c.type, c.body, reply);
      const problems = [...verdict.problems];
      if (target.logged(POD_SPEC_UNCHECKED) > unchecked) problems.push('the podSpec check threw on the object and the validating webhook let it through (fail-open)');
      const normal = target.normal[n % target.normal.length];
      if (normal !== undefined) {
        const normalProblems = judgeNormal(normal, await target.post(normal.path, normal.body));
        if (normalProblems.length > 0) normalFailures++;
        problems.push(...normalProblems);
      }

      latencies[n++] = reply.ms;
      count(byHttp, reply.status);
      if (reply.status === 200) count(byReview, String(verdict.reviewCode ?? '?'));
      if (reply.status === 500 || verdict.reviewCode === 500) served500++;
      const family = byFamily.get(c.family) ?? { n: 0, ms: 0, max: 0 };
      byFamily.set(c.family, { n: family.n + 1, ms: family.ms + reply.ms, max: Math.max(family.max, reply.ms) });
      if (slowest === undefined || reply.ms > slowest.ms) slowest = { ms: reply.ms, c };
      for (const problem of problems) {
        const key = `${c.type} · ${classOf(problem)}`;
        const seen = failures.get(key);
        if (seen === undefined) failures.set(key, { count: 1, example: c });
        else {
          seen.count++;
          if (c.body.length < seen.example.body.length) seen.example = c;
        }
      }
      if (n % 200 === 0) {
        rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
        if (n % 5_000 === 0) process.stderr.write(`  ${n.toLocaleString('en')} requests, ${((performance.now() - started) / 1000).toFixed(0)} s, RSS ${mib(process.memoryUsage().rss)}\n`);
      }
    }),
    { numRuns: RUNS, seed: SEED, examples: largestCases().map((c): [FuzzCase] => [c]) },
  );
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  await target.close();
  gc();
  gc();
  const rssEnd = process.memoryUsage().rss;
  const seconds = (performance.now() - started) / 1000;

  const sorted = latencies.slice(0, n).sort();
  const list = (map: Map<string | number, number>) =>
    [...map].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}: ${v.toLocaleString('en')}`).join(', ');
  console.log('');
  console.log(`requests          ${n.toLocaleString('en')} hostile (+ as many normal ones) in ${seconds.toFixed(0)} s`);
  console.log(`by HTTP code      ${list(byHttp)}`);
  console.log(`by review code    ${list(byReview)} (200 = allowed)`);
  console.log(`500s              ${served500.toLocaleString('en')}`);
  console.log(`normal requests   ${normalFailures.toLocaleString('en')} answered wrongly`);
  console.log(`latency           p50 ${percentile(sorted, 50).toFixed(2)} ms, p99 ${percentile(sorted, 99).toFixed(2)} ms, max ${(sorted.at(-1) ?? 0).toFixed(0)} ms`);
  const cpuSorted = cpuTimes.slice(0, n).sort();
  console.log(`event-loop CPU    p99 ${percentile(cpuSorted, 99).toFixed(1)} ms, max ${(cpuSorted.at(-1) ?? 0).toFixed(0)} ms; work budget ${WORK_BUDGET_MS} ms: ${overBudget.length.toLocaleString('en')} requests over`);
  console.log(`RSS               start ${mib(rssStart)}, peak ${mib(rssPeak)}, end ${mib(rssEnd)} (after GC)`);
  if (slowest !== undefined) console.log(`slowest request   ${slowest.ms.toFixed(0)} ms: ${slowest.c.type} ${slowest.c.operation} — ${slowest.c.label}`);
  console.log('slowest kinds of input (mean ms, max ms, count):');
  for (const [family, s] of [...byFamily].sort((a, b) => b[1].ms / b[1].n - a[1].ms / a[1].n).slice(0, 8)) {
    console.log(`  ${(s.ms / s.n).toFixed(2).padStart(8)} ${s.max.toFixed(0).padStart(6)} ${String(s.n).padStart(7)}  ${family}`);
  }
  for (const { cpuMs, c } of overBudget.sort((a, b) => b.cpuMs - a.cpuMs).slice(0, 10)) {
    console.log(`  over the budget: ${cpuMs.toFixed(0)} ms of CPU: ${c.type} ${c.operation} ${c.path} — ${c.label}`);
  }
  if (overBudget.length > 0) process.exitCode = 1;
  console.log('');
  console.log(failures.size === 0 ? 'no failures' : `${failures.size} distinct failures (count, class, smallest reproduction):`);
  for (const [key, f] of [...failures].sort((a, b) => b[1].count - a[1].count)) {
    const body = f.example.body;
    console.log(`- ${f.count.toLocaleString('en')} × ${key}`);
    console.log(`    ${f.example.operation} ${f.example.path} — ${f.example.label}`);
    console.log(`    ${body.length.toLocaleString('en')} B: ${body.length <= SHOW ? body : `${body.slice(0, SHOW / 2)} … ${body.slice(-SHOW / 2)}`}`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
