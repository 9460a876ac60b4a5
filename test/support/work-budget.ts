// The work budget of one AdmissionReview (docs/limits.md, "What one request may cost"): the CPU
// time of the event loop one request may take, for the largest and most hostile input the
// webhook server accepts. Tests guard it with a wide margin (a loaded 2-core machine must never
// fail them: they catch seconds, not milliseconds); `npm run bench:budget` and `npm run fuzz`
// report against it.

/** CPU time of the event loop one AdmissionReview may take, in milliseconds. */
export const WORK_BUDGET_MS = 100;

/** What a test fails at: ten budgets. The defects this class of test exists for cost seconds to minutes. */
export const WORK_GUARD_MS = 10 * WORK_BUDGET_MS;

/** CPU time of this thread (user and system), in milliseconds: what a request costs the event loop, whatever else the machine runs. */
export function threadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

/** `run`'s result with the CPU time of this thread and the wall time it took. */
export async function measured<T>(run: () => Promise<T>): Promise<{ result: T; cpuMs: number; wallMs: number }> {
  const cpu = threadCpuMs();
  const wall = performance.now();
  const result = await run();
  return { result, cpuMs: threadCpuMs() - cpu, wallMs: performance.now() - wall };
}

/** What the tests need of the admission stack they send worst cases to (admission-harness.ts). */
export interface BudgetTarget {
  /** POSTs `body` to `path`; resolves with the HTTP status, the parsed answer and the CPU time the serving thread spent on it. */
  send(path: string, body: string): Promise<{ status: number; body: unknown; cpuMs: number }>;
}

/** The worst cases' part a report needs: test/support/worst-cases.ts makes them. */
export interface BudgetCase {
  readonly kind: string;
  readonly type: string;
  readonly operation: string;
  readonly path: string;
  readonly label: string;
  body(): string;
}

interface Answer {
  response?: { status?: { code?: number } };
}

export interface BudgetReport {
  cases: number;
  /** The costliest case: its CPU time and what it was. */
  worst: { cpuMs: number; what: string };
  /** Cases past the guard, with their cost. */
  over: string[];
  /** Answers that were not a well-formed AdmissionReview or a 400 for a body never read, or that were code 500. */
  malformed: string[];
}

/**
 * Sends each case to `target` and measures the event loop's CPU time for each. Answers must be
 * an AdmissionReview (any verdict but code 500) or a plain 400 for a body refused unread.
 */
export async function sendWorstCases(target: BudgetTarget, cases: Iterable<BudgetCase>): Promise<BudgetReport> {
  const report: BudgetReport = { cases: 0, worst: { cpuMs: 0, what: 'nothing' }, over: [], malformed: [] };
  for (const c of cases) {
    const body = c.body();
    const what = `${c.type} ${c.kind} ${c.operation} ${c.label} (${(body.length / 1024).toFixed(0)} KiB)`;
    const result = await target.send(c.path, body);
    const { cpuMs } = result;
    report.cases++;
    if (cpuMs > report.worst.cpuMs) report.worst = { cpuMs, what };
    if (cpuMs > WORK_GUARD_MS) report.over.push(`${what}: ${cpuMs.toFixed(0)} ms`);
    const code = (result.body as Answer).response?.status?.code;
    if (!((result.status === 200 && code !== 500) || result.status === 400)) {
      report.malformed.push(`${what}: HTTP ${result.status}, ${JSON.stringify(result.body).slice(0, 200)}`);
    }
  }
  return report;
}
