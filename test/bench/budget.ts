// npm run bench:budget — what the worst input of each class costs one AdmissionReview, against the
// work budget (test/support/work-budget.ts, docs/limits.md).
//
// Every case of test/support/worst-cases.ts (the classes of the fuzz generator at every path of
// every kind's schema, at the schema's limits and past them) through the real admission stack
// (router, decode, both handlers, the podSpec check with its render, merge and serialized dry
// run: test/support/admission-harness.ts), in this process. Each request's cost is the CPU time
// of the event loop (process.threadCpuUsage), so other load on the machine barely moves it; wall
// time is printed beside it. Side by side in the same run: a normal request (each sample, both
// webhooks), so the worst case reads as a ratio.
//
// Env: CLASSES, KINDS (comma-separated, default all), TOP (cases listed, default 15).
import { webhookPath } from '../../src/admission/webhook-paths.ts';
import { KINDS, type KaosKind } from '../../src/api/kinds.ts';
import { sampleObjects, startHarness, withPodParts } from '../support/admission-harness.ts';
import { WORK_BUDGET_MS, measured } from '../support/work-budget.ts';
import { HOSTILE_CLASSES, reviewBody, worstCases, type HostileClass } from '../support/worst-cases.ts';
import type { Doc } from '../support/arbitraries.ts';

const list = <T extends string>(value: string | undefined, all: readonly T[]): T[] =>
  value === undefined || value === '' ? [...all] : (value.split(',') as T[]).filter((v) => all.includes(v));
const classes = list<HostileClass>(process.env.CLASSES, HOSTILE_CLASSES);
const TOP = Number(process.env.TOP ?? 15);

const samples = (await sampleObjects()).map(withPodParts);
const kinds = list<KaosKind>(process.env.KINDS, KINDS);
const harness = await startHarness(samples);

// A normal request: each sample, to both webhooks, 20 rounds after one that warms the handlers.
// Timed in bulk: the thread's CPU clock ticks in milliseconds, coarser than one normal request.
const normalBodies = samples.flatMap((sample) =>
  (['mutate', 'validate'] as const).map((type) => ({ path: webhookPath(type, sample.kind as KaosKind), body: reviewBody(sample.kind as KaosKind, sample as unknown as Doc) })),
);
const NORMAL_ROUNDS = 20;
for (const n of normalBodies) await harness.post(n.path, n.body);
const { cpuMs: normalTotal } = await measured(async () => {
  for (let round = 0; round < NORMAL_ROUNDS; round++) for (const n of normalBodies) await harness.post(n.path, n.body);
});
const normalMs = normalTotal / (NORMAL_ROUNDS * normalBodies.length);

interface Row {
  cpuMs: number;
  wallMs: number;
  past: boolean;
  what: string;
}
const rows: Row[] = [];
const byClass = new Map<HostileClass, Row[]>();
const started = performance.now();
for (const c of worstCases({ bases: samples, classes, kinds })) {
  const body = c.body();
  const { result, cpuMs, wallMs } = await measured(() => harness.post(c.path, body));
  const row = { cpuMs, wallMs, past: c.past, what: `${c.type} ${c.kind} ${c.operation} ${c.label} (${(body.length / 1024).toFixed(0)} KiB) → ${result.status}` };
  rows.push(row);
  harness.dryRuns.length = 0; // the serialized dry runs are megabytes each: keep none
  byClass.set(c.class, [...(byClass.get(c.class) ?? []), row]);
}
await harness.close();

const ms = (n: number): string => `${n.toFixed(1)} ms`;
console.log(`work budget ${WORK_BUDGET_MS} ms of event-loop CPU per AdmissionReview; ${rows.length} worst cases in ${((performance.now() - started) / 1000).toFixed(0)} s`);
console.log(`normal request (samples, both webhooks): ${ms(normalMs)} on average`);
console.log('');
console.log('                      within the schema’s limits                past them (or where no limit is)');
console.log('class          cases  max CPU  × normal  max wall             max CPU  × normal  max wall');
const worstOf = (of: readonly Row[]): Row | undefined => of.reduce<Row | undefined>((w, r) => (w === undefined || r.cpuMs > w.cpuMs ? r : w), undefined);
const columns = (of: readonly Row[]): string => {
  const worst = worstOf(of);
  if (worst === undefined) return '       –         –         –';
  return `${ms(worst.cpuMs).padStart(9)} ${(worst.cpuMs / normalMs).toFixed(0).padStart(8)}× ${ms(Math.max(...of.map((r) => r.wallMs))).padStart(9)}`;
};
for (const cls of classes) {
  const of = byClass.get(cls) ?? [];
  if (of.length === 0) continue;
  console.log(`${cls.padEnd(14)} ${String(of.length).padStart(5)} ${columns(of.filter((r) => !r.past))}          ${columns(of.filter((r) => r.past))}`);
}
for (const [what, past] of [['within the schema', false], ['past it', true]] as const) {
  const worst = worstOf(rows.filter((r) => r.past === past));
  if (worst !== undefined) console.log(`costliest ${what}: ${worst.what}`);
}
console.log('');
console.log(`the ${TOP} costliest (CPU, wall):`);
for (const r of [...rows].sort((a, b) => b.cpuMs - a.cpuMs).slice(0, TOP)) console.log(`  ${ms(r.cpuMs).padStart(9)} ${ms(r.wallMs).padStart(9)}  ${r.what}`);
console.log('');
for (const [what, past] of [['within the schema’s limits', false], ['past them', true]] as const) {
  const over = rows.filter((r) => r.past === past && r.cpuMs > WORK_BUDGET_MS).length;
  console.log(over === 0 ? `${what}: every case within the budget (${WORK_BUDGET_MS} ms)` : `${what}: ${over} cases over the budget (${WORK_BUDGET_MS} ms)`);
}
