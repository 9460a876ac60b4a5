// npm run bench:budget [base-ref] — what the worst input of each class costs one AdmissionReview,
// against the work budget (test/support/work-budget.ts, docs/limits.md).
//
// Every case of test/support/worst-cases.ts (the classes of the fuzz generator at every path of
// every kind's schema, at the schema's limits and past them, up to the largest object and past
// it) through the real admission stack (router, decode, both handlers, the podSpec check with its
// render, merge and serialized dry run: test/support/admission-harness.ts) on a thread of its
// own, as the operator's admission thread is. Each request's cost is the CPU time of that thread
// (process.threadCpuUsage there), so neither this thread's work (building the bodies, the client)
// nor other load on the machine moves it much; wall time is printed beside it. Side by side in
// the same run: a normal request (each sample, both webhooks), so the worst case reads as a ratio.
//
// With a base ref (a commit, a branch: `main`), the same cases also go to that commit's stack (its
// src/ and test/ exported with `git archive`, test/bench/tree-at.ts) on a second thread, each case
// to both in turn (alternating which goes first), so that before and after are measured under the
// same background load; the tables then show both.
//
// It runs under the operator's V8 flags (test/bench/operator-flags.ts), which decide much of what
// a large review's garbage costs.
//
// Env: CLASSES, KINDS (comma-separated, default all), TOP (cases listed, default 15), FILLS=0
// (leave out the cases as large as an object holds: the longest part of the run),
// BENCH_NODE_FLAGS=default (node's own flags instead).
import { webhookPath } from '../../src/admission/webhook-paths.ts';
import { KINDS, type KaosKind } from '../../src/api/kinds.ts';
import { sampleObjects, startHarnessThread, withPodParts } from '../support/admission-harness.ts';
import { WORK_BUDGET_MS, measured, type BudgetTarget } from '../support/work-budget.ts';
import { HOSTILE_CLASSES, reviewBody, worstCases, type HostileClass } from '../support/worst-cases.ts';
import type { Doc } from '../support/arbitraries.ts';
import { treeAt } from './tree-at.ts';
import { describeFlags, runUnderBenchFlags } from './operator-flags.ts';

runUnderBenchFlags();

/** The HTTP status, and a denial's code: `200` (allowed or denied on its merits), `200/413`, `400`. */
const answerOf = (result: { status: number; body: unknown }): string => {
  const code = (result.body as { response?: { status?: { code?: number } } }).response?.status?.code;
  return code === undefined || code === 422 || code === 403 ? String(result.status) : `${result.status}/${code}`;
};
const list = <T extends string>(value: string | undefined, all: readonly T[]): T[] =>
  value === undefined || value === '' ? [...all] : (value.split(',') as T[]).filter((v) => all.includes(v));
const classes = list<HostileClass>(process.env.CLASSES, HOSTILE_CLASSES);
const TOP = Number(process.env.TOP ?? 15);
const FILLS = process.env.FILLS !== '0';
const BASE = process.argv[2];

const samples = (await sampleObjects()).map(withPodParts);
const kinds = list<KaosKind>(process.env.KINDS, KINDS);
const tree = BASE === undefined ? undefined : treeAt(BASE);
const stacks: { name: string; harness: BudgetTarget & { close(): Promise<void> } }[] = [{ name: 'this checkout', harness: await startHarnessThread(samples) }];
if (tree !== undefined) stacks.unshift({ name: `${BASE} (${tree.sha})`, harness: await startHarnessThread(samples, tree.dir) });

// A normal request: each sample, to both webhooks, 20 rounds after one that warms the handlers.
// Summed over many: the thread's CPU clock ticks in milliseconds, coarser than one normal request.
const normalBodies = samples.flatMap((sample) =>
  (['mutate', 'validate'] as const).map((type) => ({ path: webhookPath(type, sample.kind as KaosKind), body: reviewBody(sample.kind as KaosKind, sample as unknown as Doc) })),
);
const NORMAL_ROUNDS = 20;
const normalMs: number[] = [];
for (const { harness } of stacks) {
  for (const n of normalBodies) await harness.send(n.path, n.body);
  let total = 0;
  for (let round = 0; round < NORMAL_ROUNDS; round++) for (const n of normalBodies) total += (await harness.send(n.path, n.body)).cpuMs;
  normalMs.push(total / (NORMAL_ROUNDS * normalBodies.length));
}

interface Row {
  /** Per stack, in the order of `stacks`. */
  cpuMs: number[];
  wallMs: number[];
  answers: string[];
  past: boolean;
  what: string;
}
const rows: Row[] = [];
const byClass = new Map<HostileClass, Row[]>();
const started = performance.now();
let largest = { bytes: 0, row: undefined as Row | undefined };
for (const c of worstCases({ bases: samples, classes, kinds })) {
  if (!FILLS && c.fills) continue;
  const body = c.body();
  const row: Row = { cpuMs: [], wallMs: [], answers: [], past: c.past, what: `${c.type} ${c.kind} ${c.operation} ${c.label} (${(body.length / 1024).toFixed(0)} KiB)` };
  // Each stack in turn, the first one alternating, so that neither is always measured first.
  const order = stacks.map((_, i) => i);
  if (rows.length % 2 === 1) order.reverse();
  for (const i of order) {
    const { result, wallMs } = await measured(() => (stacks[i] as (typeof stacks)[number]).harness.send(c.path, body));
    row.cpuMs[i] = result.cpuMs;
    row.wallMs[i] = wallMs;
    row.answers[i] = answerOf(result);
  }
  rows.push(row);
  if (body.length > largest.bytes) largest = { bytes: body.length, row };
  byClass.set(c.class, [...(byClass.get(c.class) ?? []), row]);
}
for (const { harness } of stacks) await harness.close();
tree?.remove();

const ms = (n: number): string => `${n.toFixed(1)} ms`;
const last = stacks.length - 1;
console.log(`V8 flags ${describeFlags()}`);
console.log(`work budget ${WORK_BUDGET_MS} ms of event-loop CPU per AdmissionReview; ${rows.length} worst cases in ${((performance.now() - started) / 1000).toFixed(0)} s${stacks.length > 1 ? `, each to ${stacks.map((s) => s.name).join(' and ')}` : ''}`);
console.log(`normal request (samples, both webhooks): ${stacks.map((s, i) => `${ms(normalMs[i] ?? 0)}${stacks.length > 1 ? ` (${s.name})` : ''}`).join(', ')} on average`);
console.log('');
const worstOf = (of: readonly Row[], i: number): Row | undefined => of.reduce<Row | undefined>((w, r) => (w === undefined || (r.cpuMs[i] ?? 0) > (w.cpuMs[i] ?? 0) ? r : w), undefined);
for (const [i, stack] of stacks.entries()) {
  if (stacks.length > 1) console.log(stack.name);
  console.log('                      within the schema’s limits                past them (or where no limit is)');
  console.log('class          cases  max CPU  × normal  max wall             max CPU  × normal  max wall');
  const columns = (of: readonly Row[]): string => {
    const worst = worstOf(of, i);
    if (worst === undefined) return '       –         –         –';
    const cpu = worst.cpuMs[i] ?? 0;
    return `${ms(cpu).padStart(9)} ${(cpu / (normalMs[i] ?? 1)).toFixed(0).padStart(8)}× ${ms(Math.max(...of.map((r) => r.wallMs[i] ?? 0))).padStart(9)}`;
  };
  for (const cls of classes) {
    const of = byClass.get(cls) ?? [];
    if (of.length === 0) continue;
    console.log(`${cls.padEnd(14)} ${String(of.length).padStart(5)} ${columns(of.filter((r) => !r.past))}          ${columns(of.filter((r) => r.past))}`);
  }
  for (const [what, past] of [['within the schema', false], ['past it', true]] as const) {
    const worst = worstOf(rows.filter((r) => r.past === past), i);
    if (worst !== undefined) console.log(`costliest ${what}: ${ms(worst.cpuMs[i] ?? 0)}: ${worst.what} → ${worst.answers[i]}`);
  }
  console.log('');
}
if (largest.row !== undefined) {
  console.log(`largest body: ${largest.row.what}: ${stacks.map((s, i) => `${ms(largest.row?.cpuMs[i] ?? 0)} → ${largest.row?.answers[i]}${stacks.length > 1 ? ` (${s.name})` : ''}`).join(', ')}`);
  console.log('');
}
const header = stacks.length > 1 ? `  ${stacks.map((s) => s.name).join(' → ')}` : '';
console.log(`the ${TOP} costliest (CPU, wall)${stacks.length > 1 ? `, by ${stacks[last]?.name}'s CPU, then by ${stacks[0]?.name}'s` : ''}:${header}`);
const line = (r: Row): string => `  ${stacks.map((_, i) => `${ms(r.cpuMs[i] ?? 0).padStart(9)} ${ms(r.wallMs[i] ?? 0).padStart(9)} ${(r.answers[i] ?? '').padEnd(7)}`).join(' | ')}  ${r.what}`;
for (const r of [...rows].sort((a, b) => (b.cpuMs[last] ?? 0) - (a.cpuMs[last] ?? 0)).slice(0, TOP)) console.log(line(r));
if (stacks.length > 1) {
  console.log('');
  for (const r of [...rows].sort((a, b) => (b.cpuMs[0] ?? 0) - (a.cpuMs[0] ?? 0)).slice(0, TOP)) console.log(line(r));
}
console.log('');
for (const [i, stack] of stacks.entries()) {
  for (const [what, past] of [['within the schema’s limits', false], ['past them', true]] as const) {
    const over = rows.filter((r) => r.past === past && (r.cpuMs[i] ?? 0) > WORK_BUDGET_MS).length;
    const who = stacks.length > 1 ? `${stack.name}, ` : '';
    console.log(over === 0 ? `${who}${what}: every case within the budget (${WORK_BUDGET_MS} ms)` : `${who}${what}: ${over} cases over the budget (${WORK_BUDGET_MS} ms)`);
  }
}
