// promtool for the tests: built (or found in the cache) by test/prometheus/build.sh, which waits
// on its lock while another test's build runs. Never skipped: a build that fails fails the test.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../cluster/control-plane.ts';

const HERE = fileURLToPath(new URL('.', import.meta.url));
let built: Promise<string> | undefined;

/** The path of promtool, built on first use. */
export function promtoolPath(): Promise<string> {
  built ??= new Promise((resolve, reject) => {
    execFile(join(HERE, 'build.sh'), { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`test/prometheus/build.sh failed: ${err.message}\n${stderr.slice(-4000)}`));
      else resolve(stdout.trim().split('\n').at(-1) ?? '');
    });
  });
  return built;
}

/** Runs promtool with `args` (in `cwd`); its exit code and output. */
export async function promtool(args: readonly string[], options: { timeoutMs?: number } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCommand(await promtoolPath(), args, { timeoutMs: options.timeoutMs ?? 300_000 });
}
