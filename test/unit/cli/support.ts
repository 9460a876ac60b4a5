// Runs `kaos-operator` in-process (run() with captured output) or as a process (bin/ over dist/).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { run } from '../../../src/cli/run.ts';

export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const SAMPLES = fileURLToPath(new URL('../../fixtures/samples/', import.meta.url));

/** run() with the operator's defaults (no DEFAULT_* variables), stdin given as a string. */
export async function lintInProcess(argv: readonly string[], stdin = ''): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: (s) => { stdout += s; },
    stderr: (s) => { stderr += s; },
    readStdin: async () => stdin,
    env: {},
  });
  return { code, stdout, stderr };
}

/** bin/kaos-operator.js with this test's Node (the project's), against dist/ (npm run build first). */
export function spawnCli(argv: readonly string[], options: { stdin?: string; env?: NodeJS.ProcessEnv; node?: string } = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(options.node ?? process.execPath, [`${ROOT}bin/kaos-operator.js`, ...argv], {
      cwd: ROOT,
      env: options.env ?? { PATH: process.env.PATH ?? '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => { stdout += c; });
    child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}
