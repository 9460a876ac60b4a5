// The soak's report, pure: operations by kind and outcome, edits by what they changed, faults by
// kind (each with its time), convergence after the last fault, each invariant with its count of
// violations (the figure that must be 0) and the first of them, and the last line the CI and
// people grep for: `soak: <operations> operations, <faults> faults, <violations> violations`.
import { INVARIANTS, type Invariant, type Violation } from './check.ts';
import { seconds } from './clock.ts';
import { FAULT_KINDS, type FaultRecord } from './faults.ts';
import type { Outcome } from './outcomes.ts';
import type { TrafficStats } from './traffic.ts';

export interface ReportInput {
  readonly phases: readonly { readonly seed: string; readonly ms: number }[];
  readonly stats: TrafficStats;
  readonly faults: readonly FaultRecord[];
  /** When the last fault was over and the traffic had stopped, ms since the start. */
  readonly quietFromMs: number;
  /** How long after quietFromMs the first clean check came; undefined when none did. */
  readonly convergenceMs: number | undefined;
  /** The operator's writes in the quiet window (undefined when not measured), and its length. */
  readonly quiet: { readonly ms: number; readonly writes: number | undefined; readonly leaseWrites: number; /** Windows before it in which others wrote. */ readonly disturbed: number };
  readonly violations: readonly Violation[];
  /** 1-minute load average at the start and the end (the machine is shared). */
  readonly load: readonly [number, number];
  readonly inDoubt: number;
  /** The webhook Service: reviews it sent again to the other replica, and those none answered. */
  readonly webhookService: { readonly retries: number; readonly failures: number };
}

const OUTCOMES: readonly Outcome[] = ['ok', 'denied', 'conflict', 'exists', 'not-found', 'unavailable', 'failed'];
/** Violations listed per invariant; the rest are counted. */
const SHOWN = 10;

export function formatReport(input: ReportInput): string {
  const lines: string[] = [];
  const injected = input.faults.filter((f) => f.failed === undefined);
  lines.push(`seeds: ${input.phases.map((p) => `${p.seed} (${(p.ms / 1000).toFixed(0)} s of traffic)`).join(', then ')}; replay one with: npm run soak -- --minutes <N> --seed <seed>`);
  lines.push(`load average: ${input.load[0].toFixed(2)} at the start, ${input.load[1].toFixed(2)} at the end`);
  lines.push('', 'operations (kind / operation: outcome count):');
  for (const [kind, byOp] of [...input.stats.operations].sort(([a], [b]) => a.localeCompare(b))) {
    for (const [operation, byOutcome] of [...byOp].sort(([a], [b]) => a.localeCompare(b))) {
      const cells = OUTCOMES.filter((o) => byOutcome.has(o)).map((o) => `${o} ${byOutcome.get(o) ?? 0}`);
      lines.push(`  ${`${kind} / ${operation}`.padEnd(28)} ${cells.join(', ')}`);
    }
  }
  const edits = input.stats.edits;
  lines.push(`  updates of KAOS objects: ${edits.children} changing children, ${edits['no-op']} changing nothing, ${edits.shape} switching shape; ${input.stats.warnings} warnings returned`);
  lines.push('', `faults (${injected.length}):`);
  for (const kind of FAULT_KINDS) {
    const of = injected.filter((f) => f.kind === kind);
    lines.push(`  ${kind.padEnd(18)} ${of.length}${of.length === 0 ? '' : `: at ${of.map((f) => seconds(f.startedMs)).join(', ')}`}`);
  }
  for (const f of input.faults.filter((x) => x.failed !== undefined)) lines.push(`  not injected: ${f.kind} at ${seconds(f.startedMs)}: ${f.failed ?? ''}`);
  lines.push('', input.convergenceMs === undefined
    ? `convergence: none (the traffic and the last fault were over at ${seconds(input.quietFromMs)})`
    : `convergence: ${(input.convergenceMs / 1000).toFixed(1)} s after the traffic and the last fault were over (${seconds(input.quietFromMs)})`);
  lines.push(input.quiet.writes === undefined
    ? 'quiet window: not measured (no convergence)'
    : `quiet window: ${(input.quiet.ms / 1000).toFixed(0)} s, ${input.quiet.writes} operator writes besides ${input.quiet.leaseWrites} Lease renewals${input.quiet.disturbed === 0 ? '' : ` (after ${input.quiet.disturbed} window${input.quiet.disturbed === 1 ? '' : 's'} in which others still wrote)`}`);
  lines.push(`webhook Service: ${input.webhookService.retries} reviews sent again to the other replica, ${input.webhookService.failures} answered by none`);
  lines.push(`writes in doubt (no complete answer; not judged): ${input.inDoubt}`);
  lines.push('', 'invariants (violations):');
  for (const invariant of Object.keys(INVARIANTS) as Invariant[]) {
    const of = input.violations.filter((v) => v.invariant === invariant);
    lines.push(`  ${String(of.length).padStart(4)}  ${INVARIANTS[invariant]}`);
    for (const v of of.slice(0, SHOWN)) lines.push(`          ${v.subject}: ${v.detail}`);
    if (of.length > SHOWN) lines.push(`          … and ${of.length - SHOWN} more`);
  }
  lines.push('', `soak: ${input.stats.total()} operations, ${injected.length} faults, ${input.violations.length} violations`);
  return lines.join('\n');
}
