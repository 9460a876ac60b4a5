// How the operator's process is started, written once: `npm start`, the e2e and bench stacks
// (scripts/local-stack.ts) and the image's CMD and ENV (checked by test/unit/dockerfile.test.ts).
// Each setting below was measured with the operator reconciling a bulk apply of 1,000 Agents
// (`npm run bench:bulk`; docs/benchmarks.md, "Memory").

/**
 * V8 flags of the operator's process.
 * - `--max-semi-space-size=8`: on a 64-bit machine V8 lets the young generation grow to three
 *   32 MiB semi-spaces under a burst of allocation, and keeps the pages: reconciling 1,000 new
 *   Agents took the operator to a peak RSS of 296 MiB with only 88 MiB of live heap; with 8 MiB
 *   semi-spaces, 176 MiB and less CPU.
 * - `--memory-saver-mode`: V8's own trade of CPU for footprint (its heap grows in smaller steps
 *   and is collected sooner). Peak RSS 115 and 116 MiB against 131–152 MiB without it, the V8
 *   heap 37–38 MiB at the peak against 52–72; the price is operator CPU, and a slower burst of
 *   admission while the bulk apply is created (both measured in that section).
 */
export const OPERATOR_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8', '--memory-saver-mode'];

/**
 * Environment of the operator's process, under whatever the caller sets. MALLOC_ARENA_MAX=2:
 * glibc gives a thread that allocates while another holds an arena an arena of its own (up to 8
 * per core), and memory freed into it stays there; Node's threads (libuv's pool for TLS and file
 * work, V8's compiler and GC workers) each kept one. With 2, peak RSS 111–112 MiB against 115–116.
 */
export const OPERATOR_PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** The operator's environment: OPERATOR_PROCESS_ENV, with this process's environment over it. */
export function operatorProcessEnv(): NodeJS.ProcessEnv {
  return { ...OPERATOR_PROCESS_ENV, ...process.env };
}

/** The arguments of `node` that run the operator's entry point `main` (dist/main.js). */
export function operatorArgs(main: string): string[] {
  return [...OPERATOR_NODE_FLAGS, main];
}
