// The scale curve: the GitOps bulk-apply scenario (test/bench/bulk-apply.ts) at several sizes, each
// beside its floor measured the same way in the same run, each run on a fresh local control plane.
// Run by `npm run bench:reconcile -- bulk [sizes…]` (default 1000 3000 10000) or
// `npm run bench:scale -- [sizes…]`. Never part of pass/fail.
//
// Printed, one row per size: time to every Agent Ready and per Agent for the operator and the
// floor with their ratio, writes per Agent (operator, floor), idle writes, Deployment generations
// per Deployment, operator peak RSS, operator CPU per Agent, kube-apiserver CPU (operator run,
// floor), and the machine's load while the operator ran. Then the flatness of the ratios and a
// straight line through the peak RSS figures (base + slope × Agents).
//
// Env: IDLE_SECONDS (30 here), and everything bulk-apply.ts reads (MODELAPIS, MCPSERVERS,
// MAX_CONCURRENT_RECONCILES, CREATE_IN_FLIGHT, SETTLE_SECONDS, PODS, …) passes through. PODS=0
// (no pods, a stand-in writes each Deployment's status) is how the 10,000 row fits two cores.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BulkFigures } from './bulk-apply.ts';
import { log, printTable } from './reconcile.ts';

const BULK = fileURLToPath(new URL('./bulk-apply.ts', import.meta.url));

function sizes(args: readonly string[]): number[] {
  const given = args.map((a) => Number(a));
  const bad = args.filter((_, i) => !Number.isInteger(given[i]) || (given[i] ?? 0) < 1);
  if (bad.length > 0) throw new Error(`sizes must be positive integers (got ${bad.join(', ')})`);
  return given.length > 0 ? given : [1000, 3000, 10000];
}

/** One bulk-apply run of `agents` Agents in its own process and control plane. */
async function runOne(agents: number, dir: string): Promise<BulkFigures> {
  const resultFile = join(dir, `bulk-${agents}.json`);
  const env = { ...process.env, AGENTS: String(agents), BULK_RESULT_FILE: resultFile, IDLE_SECONDS: process.env.IDLE_SECONDS ?? '30' };
  const child = spawn(process.execPath, [BULK], { env, stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`the bulk apply of ${agents} Agents exited with ${String(code)}`);
  // A CREATE_ONLY run has no convergence figures: NaN, which JSON writes as null.
  return JSON.parse(readFileSync(resultFile, 'utf8'), (_key, value: unknown) => (value === null ? Number.NaN : value)) as BulkFigures;
}

function table(runs: readonly BulkFigures[], out: (line: string) => void): void {
  const x = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}×` : '');
  printTable([
    ['Agents', 'creating: ours / floor', 'ratio', 'all Ready: ours / floor', 'per Agent: ours / floor', 'ratio', 'writes per Agent: ours / floor', 'idle writes', 'generations per Deployment', 'peak RSS', 'operator CPU (per Agent)', 'kube-apiserver CPU: ours / floor', 'load mean / max'],
    ...runs.map((r) => [
      r.agents.toLocaleString('en-US'),
      `${r.createSeconds.operator.toFixed(1)} / ${r.createSeconds.floor.toFixed(1)} s`,
      x(r.createSeconds.operator, r.createSeconds.floor),
      `${r.seconds.operator.toFixed(1)} / ${r.seconds.floor.toFixed(1)} s`,
      `${(r.seconds.operator * 1000 / r.agents).toFixed(1)} / ${(r.seconds.floor * 1000 / r.agents).toFixed(1)} ms`,
      x(r.seconds.operator, r.seconds.floor),
      `${(r.writes.operator / r.agents).toFixed(2)} / ${(r.writes.floor / r.agents).toFixed(2)}`,
      String(r.idleWrites),
      (r.generations.operator / Math.max(1, r.generations.deployments)).toFixed(3),
      `${r.peakRssMiB.toFixed(0)} MiB`,
      `${r.cpu.operator.toFixed(1)} s (${(r.cpu.operator * 1000 / r.agents).toFixed(1)} ms)`,
      `${r.cpu.apiserver.toFixed(0)} / ${r.cpu.floorApiserver.toFixed(0)} s`,
      `${r.load.mean.toFixed(1)} / ${r.load.max.toFixed(1)}`,
    ]),
  ], out);
  const first = runs[0];
  const last = runs[runs.length - 1];
  if (first === undefined || last === undefined || first === last) return;
  const ratio = (r: BulkFigures): number => r.seconds.operator / r.seconds.floor;
  const createRatio = (r: BulkFigures): number => r.createSeconds.operator / r.createSeconds.floor;
  const perAgentWrites = (r: BulkFigures): number => r.writes.operator / r.agents;
  out('');
  out(`creation time ratio (webhooks on / off), ${last.agents} vs ${first.agents} Agents: ${(createRatio(last) / createRatio(first)).toFixed(2)}× (flat = 1; target ≤ 1.2×)`);
  out(`time ratio to the floor, ${last.agents} vs ${first.agents} Agents: ${(ratio(last) / ratio(first)).toFixed(2)}× (flat = 1; target ≤ 1.2×)`);
  out(`writes per Agent, ${last.agents} vs ${first.agents} Agents: ${(perAgentWrites(last) / perAgentWrites(first)).toFixed(2)}× (flat = 1)`);
  const slope = (last.peakRssMiB - first.peakRssMiB) / (last.agents - first.agents);
  const base = first.peakRssMiB - slope * first.agents;
  out(`peak RSS ≈ ${base.toFixed(0)} MiB + ${(slope * 1024).toFixed(1)} KiB per Agent (a line through the ${first.agents} and ${last.agents} runs)` +
    runs.slice(1, -1).map((r) => `; at ${r.agents} the line says ${(base + slope * r.agents).toFixed(0)}, measured ${r.peakRssMiB.toFixed(0)} MiB`).join(''));
}

export async function scaleCurve(args: readonly string[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kaos-scale-'));
  const runs: BulkFigures[] = [];
  try {
    for (const agents of sizes(args)) {
      log(`scale curve: ${agents} Agents`);
      runs.push(await runOne(agents, dir));
      // Each row as it comes: a long curve should not lose its first rows to a later failure.
      table(runs, (line) => void process.stderr.write(`${line}\n`));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const mode = runs.every((r) => r.pods) ? 'every pod run' : runs.every((r) => !r.pods) ? 'no pods: PODS=0, the rollout stand-in' : 'mixed pod modes';
  process.stdout.write(`\nscale curve: the GitOps bulk apply at each size (test/bench/bulk-apply.ts), each beside its floor; ${mode}\n`);
  table(runs, (line) => void process.stdout.write(`${line}\n`));
}

if (import.meta.main) {
  scaleCurve(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`bench:scale: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
