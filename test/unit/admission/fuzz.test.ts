// Property-based fuzzing of both admission webhooks over real HTTPS: generated and mutated
// AdmissionReviews (test/support/arbitraries.ts) against the real server, router and handlers on
// a thread of their own (test/support/fuzz-target.ts). For each: the answer is a well-formed
// AdmissionReview or a clean 4xx (test/support/admission-oracle.ts), never a 500; it costs the
// serving thread less than ten work budgets of CPU (test/support/work-budget.ts: a guard against
// seconds, not a timing); the podSpec check never fails open because of the object; and a normal
// request sent right after gets the answer a fresh server gave it.
// Two runs: 2,000 with a fixed seed, the generator's largest input of each class first
// (largestCases), the same every time; then a few hundred with a new seed each run, so that every
// CI run tries inputs no run tried before. Then the live heap, after a full GC, is back near where
// it started (RSS is printed).
//
// Reproducible: each seed is printed (FUZZ_SEED sets the fixed one, FUZZ_RANDOM_SEED the new one),
// and a failure names its seed, fast-check's path and the shrunk counterexample. `npm run fuzz`
// runs the same properties 100,000 times and prints figures.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import t from 'tap';
import { judge, judgeNormal } from '../../support/admission-oracle.ts';
import { fuzzCase, largestCases, type FuzzCase } from '../../support/arbitraries.ts';
import { WORK_GUARD_MS } from '../../support/work-budget.ts';
import { POD_SPEC_UNCHECKED, startFuzzTarget, type FuzzTarget } from '../../support/fuzz-target.ts';

const RUNS = 2_000;
const SEED = Number(process.env.FUZZ_SEED ?? 0x6b616f73);
/** A few seconds of CI: enough that, run after run, the seeds cover what no fixed one does. */
const RANDOM_RUNS = 300;
const RANDOM_SEED = Number(process.env.FUZZ_RANDOM_SEED ?? Date.now() % 2 ** 31);
// On stderr, which the test runner passes through: every run's log names the seed it tried.
process.stderr.write(`admission fuzz: ${RANDOM_RUNS} cases from seed ${RANDOM_SEED} (FUZZ_RANDOM_SEED=${RANDOM_SEED} repeats them)\n`);
/** Live heap the serving thread may keep after a run: caches (compiled schemas, the LRU of warnings). */
const RETAINED_GROWTH_LIMIT = 32 * 1024 * 1024;

// A full collection before each RSS reading; without it the reading says more about when V8
// last collected than about what the server holds on to.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const rss = (): number => {
  gc();
  gc();
  return process.memoryUsage().rss;
};
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

let target: FuzzTarget;
let rssStart = 0;
let retainedStart = 0;
t.before(async () => {
  target = await startFuzzTarget();
  rssStart = rss();
  retainedStart = await target.retained();
});
t.teardown(() => target.close());

/** The property, `runs` times from `seed` (the largest cases first when given), as one subtest. */
function fuzz(name: string, runs: number, seed: number, examples: readonly FuzzCase[]): void {
  t.test(name, async (t) => {
    t.comment(`seed ${seed} (FUZZ_SEED=${seed} npm run fuzz runs it with figures)`);
    let sent = 0;
    let costliest = { cpuMs: 0, what: '' };
    const property = fc.asyncProperty(fuzzCase, async (c) => {
      const { reply, cpuMs, logged } = await target.send(c.path, c.body);
      if (cpuMs > costliest.cpuMs) costliest = { cpuMs, what: `${c.type} ${c.operation} ${c.label}` };
      const verdict = judge(c.type, c.body, reply);
      const problems = [...verdict.problems];
      if (cpuMs > WORK_GUARD_MS) problems.push(`the answer took ${cpuMs.toFixed(0)} ms of the serving thread's CPU, over ${WORK_GUARD_MS} ms`);
      if (logged(POD_SPEC_UNCHECKED) > 0) problems.push('the podSpec check threw on the object and the validating webhook let it through (fail-open)');
      const normal = target.normal[sent++ % target.normal.length];
      if (normal !== undefined) problems.push(...judgeNormal(normal, await target.post(normal.path, normal.body)));
      if (problems.length > 0) throw new Error(problems.join('\n'));
    });
    try {
      await fc.assert(property, { numRuns: runs, seed, examples: examples.map((c): [FuzzCase] => [c]) });
      t.pass(`${runs} requests answered as the protocol requires${examples.length > 0 ? `, the ${examples.length} largest first` : ''}`);
      t.comment(`the costliest took ${costliest.cpuMs.toFixed(0)} ms of the serving thread's CPU: ${costliest.what}`);
    } catch (err) {
      // The property's own error (what was wrong with the answer) is fast-check's cause; its
      // message carries the seed, the path and the shrunk counterexample.
      const report = err instanceof Error ? err.message : String(err);
      const problem = err instanceof Error && err.cause instanceof Error ? err.cause.message : 'the property failed';
      t.fail(`seed ${seed}: ${problem}`, { diagnostic: true, fastCheck: report });
    }
  });
}

fuzz(`${RUNS} hostile AdmissionReviews (a fixed seed): well-formed answers within the work budget, no 500, normal requests unharmed`, RUNS, SEED, largestCases());
fuzz(`${RANDOM_RUNS} more from a new seed, ${RANDOM_SEED}: the same`, RANDOM_RUNS, RANDOM_SEED, []);

t.test('memory returns near where it started: what the server holds on to, after GC', async (t) => {
  const end = rss();
  const retained = await target.retained();
  t.comment(`RSS ${mib(rssStart)} → ${mib(end)} (the process); the serving thread's live heap + external ${mib(retainedStart)} → ${mib(retained)} (after GC)`);
  // RSS is reported, not asserted: V8 keeps the heap pages it grew into for the multi-MiB cases
  // and glibc keeps its arenas, so RSS stays up without anything being held. A leak shows as
  // live objects that survive a full collection.
  t.ok(retained - retainedStart < RETAINED_GROWTH_LIMIT, `live heap grew ${mib(retained - retainedStart)}, under ${mib(RETAINED_GROWTH_LIMIT)}`);
});
