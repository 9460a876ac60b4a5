// How the operator's process is started, written once: `npm start`, the e2e and bench stacks
// (scripts/local-stack.ts) and the image's CMD (checked by test/unit/dockerfile.test.ts).

/**
 * V8 flags of the operator's process. On a 64-bit machine V8 lets the young generation grow to
 * three 32 MiB semi-spaces under a burst of allocation, and keeps the pages: reconciling 1,000 new
 * Agents took the operator to a peak RSS of 296 MiB with only 88 MiB of live heap. With 8 MiB
 * semi-spaces the same run peaked at 176 MiB and used less CPU (`npm run bench:reconcile`).
 */
export const OPERATOR_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];

/** The arguments of `node` that run the operator's entry point `main` (dist/main.js). */
export function operatorArgs(main: string): string[] {
  return [...OPERATOR_NODE_FLAGS, main];
}
