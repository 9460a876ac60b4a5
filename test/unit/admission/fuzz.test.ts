// Property-based fuzzing of both admission webhooks over real HTTPS: 2,000
// generated and mutated AdmissionReviews (test/support/arbitraries.ts) against the real server,
// router and handlers, the generator's largest input of each class first (largestCases). For
// each: the answer is a well-formed AdmissionReview or a clean 4xx
// (test/support/admission-oracle.ts), never a 500; it costs the event loop less than ten work
// budgets of CPU (test/support/work-budget.ts: a guard against seconds, not a timing); the
// podSpec check never fails open because of the object; and a normal request sent right after
// gets the answer a fresh server gave it.
// Then the live heap, after a full GC, is back near where it started (RSS is printed).
//
// Reproducible: the seed is fixed (FUZZ_SEED overrides it) and printed, and a failure prints
// fast-check's seed, path and shrunk counterexample. `npm run fuzz` runs the same properties
// 100,000 times and prints figures.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import t from 'tap';
import { judge, judgeNormal } from '../../support/admission-oracle.ts';
import { fuzzCase, largestCases } from '../../support/arbitraries.ts';
import { measured, WORK_GUARD_MS } from '../../support/work-budget.ts';
import { POD_SPEC_UNCHECKED, startFuzzTarget, type FuzzTarget } from '../../support/fuzz-target.ts';

const RUNS = 2_000;
const SEED = Number(process.env.FUZZ_SEED ?? 0x6b616f73);
/** Live heap a run may leave behind: caches (compiled schemas, the LRU of warnings) and fast-check's own state. */
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
  retainedStart = process.memoryUsage().heapUsed + process.memoryUsage().external;
});
t.teardown(() => target.close());

t.test(`${RUNS} hostile AdmissionReviews: well-formed answers within the work budget, no 500, normal requests unharmed`, async (t) => {
  t.comment(`seed ${SEED} (FUZZ_SEED=${SEED} reproduces this run)`);
  let sent = 0;
  let costliest = { cpuMs: 0, what: '' };
  const property = fc.asyncProperty(fuzzCase, async (c) => {
    const unchecked = target.logged(POD_SPEC_UNCHECKED);
    const { result: reply, cpuMs } = await measured(() => target.post(c.path, c.body));
    if (cpuMs > costliest.cpuMs) costliest = { cpuMs, what: `${c.type} ${c.operation} ${c.label}` };
    const verdict = judge(c.type, c.body, reply);
    const problems = [...verdict.problems];
    if (cpuMs > WORK_GUARD_MS) problems.push(`the answer took ${cpuMs.toFixed(0)} ms of event-loop CPU, over ${WORK_GUARD_MS} ms`);
    if (target.logged(POD_SPEC_UNCHECKED) > unchecked) {
      problems.push('the podSpec check threw on the object and the validating webhook let it through (fail-open)');
    }
    const normal = target.normal[sent++ % target.normal.length];
    if (normal !== undefined) problems.push(...judgeNormal(normal, await target.post(normal.path, normal.body)));
    if (problems.length > 0) throw new Error(problems.join('\n'));
  });
  const examples = largestCases().map((c): [typeof c] => [c]);
  try {
    await fc.assert(property, { numRuns: RUNS, seed: SEED, examples });
    t.pass(`${RUNS} requests answered as the protocol requires, the ${examples.length} largest first`);
    t.comment(`the costliest took ${costliest.cpuMs.toFixed(0)} ms of event-loop CPU: ${costliest.what}`);
  } catch (err) {
    // The property's own error (what was wrong with the answer) is fast-check's cause; its
    // message carries the seed, the path and the shrunk counterexample.
    const report = err instanceof Error ? err.message : String(err);
    const problem = err instanceof Error && err.cause instanceof Error ? err.cause.message : 'the property failed';
    t.fail(problem, { diagnostic: true, fastCheck: report });
  }
});

t.test('memory returns near where it started: what the server holds on to, after GC', async (t) => {
  const end = rss();
  const { heapUsed, external } = process.memoryUsage();
  const retained = heapUsed + external;
  t.comment(`RSS ${mib(rssStart)} → ${mib(end)}; live heap + external ${mib(retainedStart)} → ${mib(retained)} (after GC)`);
  // RSS is reported, not asserted: V8 keeps the heap pages it grew into for the multi-MiB cases
  // and glibc keeps its arenas, so RSS stays up without anything being held. A leak shows as
  // live objects that survive a full collection.
  t.ok(retained - retainedStart < RETAINED_GROWTH_LIMIT, `live heap grew ${mib(retained - retainedStart)}, under ${mib(RETAINED_GROWTH_LIMIT)}`);
});
