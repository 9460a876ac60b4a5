// The soak (test/soak/) in CI: about two minutes of randomized traffic against two operator
// replicas with every kind of fault injected at random times — one minute under a fixed seed, one
// under a random seed printed here (replay it with `npm run soak -- --minutes 1 --seed <seed>`) —
// then the check of every invariant once the cluster is quiet, and a quiet minute. Each invariant
// must hold with 0 violations; the report is printed whole.
//
// Run `npm run build` first: the replicas are dist/main.js.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { INVARIANTS, type Invariant } from '../soak/check.ts';
import { FAULT_KINDS } from '../soak/faults.ts';
import { randomSeed } from '../soak/random.ts';
import { runSoak } from '../soak/soak.ts';

const FIXED_SEED = '20261126';
const random = process.env.KAOS_SOAK_SEED ?? randomSeed();
t.comment(`soak seeds: ${FIXED_SEED} (fixed), then ${random} (random; replay: npm run soak -- --minutes 1 --seed ${random})`);

const result = await runSoak({
  phases: [{ seed: FIXED_SEED, ms: 60_000 }, { seed: random, ms: 60_000 }],
  // Bound the file well inside tap's 10 minutes, so that its report is always printed: it
  // converges within seconds when nothing is wrong, and its first quiet window counts.
  convergeTimeoutMs: 120_000,
  endByMs: 480_000,
  log: (line) => t.comment(line),
});
t.comment(`\n${result.report}`);

t.test('the traffic ran and every kind of fault was injected', async (t) => {
  t.ok(result.operations >= 200, `${result.operations} operations`);
  t.ok(result.faults >= FAULT_KINDS.length * 2, `${result.faults} faults, every kind in each phase`);
  t.not(result.convergenceMs, undefined, `converged ${((result.convergenceMs ?? 0) / 1000).toFixed(1)} s after the last fault`);
});

for (const invariant of Object.keys(INVARIANTS) as Invariant[]) {
  t.test(INVARIANTS[invariant], async (t) => {
    const violations = result.violations.filter((v) => v.invariant === invariant).map((v) => `${v.subject}: ${v.detail}`);
    t.same(violations, [], `0 violations${result.logsDir === undefined ? '' : ` (logs: ${result.logsDir})`}`);
  });
}

// Once the soak is over, every socket, server and process it opened is closed: a handle left
// open (a socket reset while its shutdown was under way, say) would keep this file's process
// from ever exiting, and tap would report a timeout instead of what was left.
t.test('nothing of the soak left open: its process can exit', async (t) => {
  const open = (): string[] => process.getActiveResourcesInfo().filter((r) => LEFT_OPEN.has(r));
  for (let i = 0; i < 100 && open().length > 0; i++) await sleep(100);
  t.same(open(), [], 'no socket, server or child process');
});

const LEFT_OPEN: ReadonlySet<string> = new Set(['TCPSocketWrap', 'TCPServerWrap', 'ProcessWrap']);
