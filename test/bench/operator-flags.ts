// A benchmark of what admission costs runs under the V8 flags and environment the operator runs
// with (scripts/operator-command.ts): they decide how often a large review's garbage is
// collected, which is a good part of what it costs. Flags are the process's, set when it starts:
// a benchmark started without them starts itself again with them.
//
// BENCH_NODE_FLAGS=default runs it under node's defaults instead (to compare the two).
import { spawnSync } from 'node:child_process';
import { OPERATOR_NODE_FLAGS, operatorProcessEnv } from '../../scripts/operator-command.ts';

/** Which flags this process runs under: `operator` or `default`. */
export function benchFlags(): 'operator' | 'default' {
  return process.env.BENCH_NODE_FLAGS === 'default' ? 'default' : 'operator';
}

/** The flags, for a report's first line. */
export function describeFlags(): string {
  return benchFlags() === 'default' ? 'node defaults (BENCH_NODE_FLAGS=default)' : `the operator's: ${OPERATOR_NODE_FLAGS.join(' ')}, MALLOC_ARENA_MAX=2`;
}

/**
 * Returns when this process runs under the chosen flags; otherwise runs this script again in a
 * child that does, with the same arguments, and exits with its status.
 */
export function runUnderBenchFlags(): void {
  if (benchFlags() === 'default' || OPERATOR_NODE_FLAGS.every((flag) => process.execArgv.includes(flag))) return;
  const script = process.argv[1];
  if (script === undefined) throw new Error('no script to run again');
  const child = spawnSync(process.execPath, [...OPERATOR_NODE_FLAGS, ...process.execArgv, script, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: operatorProcessEnv(),
  });
  process.exit(child.status ?? 1);
}
