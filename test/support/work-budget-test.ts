// The unit test of the work budget for one class of hostile input (test/unit/admission/work-budget-*.test.ts):
// every worst case of the class (worst-cases.ts) that `select` keeps, per kind, through the real
// admission stack on a thread of its own (admission-harness.ts). Each answer must be well formed
// and cost the serving thread less than WORK_GUARD_MS of CPU, ten budgets: what this guards
// against costs seconds, and a loaded machine must never fail it. The figures themselves are
// `npm run bench:budget`'s.
import t from 'tap';
import { KINDS } from '../../src/api/kinds.ts';
import { sampleObjects, startHarnessThread, withPodParts } from './admission-harness.ts';
import { sendWorstCases, WORK_GUARD_MS } from './work-budget.ts';
import { worstCases, type HostileClass, type WorstCase } from './worst-cases.ts';

export async function testWorkBudget(cls: HostileClass, description: string, select: (c: WorstCase) => boolean = () => true): Promise<void> {
  const samples = (await sampleObjects()).map(withPodParts);
  const harness = await startHarnessThread(samples);
  t.teardown(() => harness.close());
  for (const kind of KINDS) {
    t.test(`${kind}, ${cls}: ${description}`, async (t) => {
      const cases = [...worstCases({ bases: samples, classes: [cls], kinds: [kind] })].filter(select);
      const report = await sendWorstCases(harness, cases);
      t.comment(`${report.cases} cases; the costliest took ${report.worst.cpuMs.toFixed(0)} ms of event-loop CPU: ${report.worst.what}`);
      t.ok(report.cases > 0, 'the schema gives this class something to send');
      t.same(report.over, [], `every answer within ${WORK_GUARD_MS} ms of CPU`);
      t.same(report.malformed, [], 'every answer a well-formed AdmissionReview (or a 400 for a body refused unread), never a 500');
    });
  }
}
