// `npm run test:kube -- <minor>`: the whole end-to-end suite against one Kubernetes minor (a row
// of test/cluster/versions/table: 1.37, or its patch v1.37.2), then that minor's row of README's
// support table written from the run: its date, commit and pass/fail counts. Builds the minor's
// control plane first (test/cluster/build-version.sh; minutes when cold), then runs
// `scripts/test.ts --e2e` with KAOS_KUBE_VERSION set, so every file's control plane is that build.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stampVersion, withSupportRow } from './support-table.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const asked = process.argv[2];
if (asked === undefined || asked.startsWith('-')) {
  process.stderr.write('usage: npm run test:kube -- <minor> (a row of test/cluster/versions/table, e.g. 1.37)\n');
  process.exit(2);
}

/** Runs a command from the repository's root, its stderr passed through; resolves to its exit code and stdout, which passes through too unless `quiet`. */
function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv, quiet = false): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (!quiet) process.stdout.write(chunk);
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? 1, stdout }));
  });
}

const env = { ...process.env, KAOS_KUBE_VERSION: asked };
const build = await run('bash', [join(ROOT, 'test', 'cluster', 'build-version.sh')], env, true);
const binDir = build.stdout.trim().split('\n').pop() ?? '';
if (build.code !== 0 || binDir === '') process.exit(build.code === 0 ? 1 : build.code);
// The release the binaries are, from the build itself: what the row states.
const { minor, kubernetes } = stampVersion(readFileSync(join(binDir, '.stamp'), 'utf8'));

const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
// README itself is left out: an earlier run's row is a change this run does not test.
const commit = git('rev-parse', '--short', 'HEAD') + (git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!README.md') === '' ? '' : ' + changes');
const suite = await run(process.execPath, [join(ROOT, 'scripts', 'test.ts'), '--e2e'], env);
// scripts/test.ts's last line: the sum of every file's tap summary.
const summary = [...suite.stdout.matchAll(/^# \{ total: (\d+), pass: (\d+), fail: (\d+) \}$/gm)].pop();
if (summary === undefined) {
  process.stderr.write(`\nnpm run test:kube: the end-to-end suite on ${kubernetes} ended (exit ${suite.code}) without its summary: README's table is unchanged\n`);
  process.exit(suite.code === 0 ? 1 : suite.code);
}
const [total, pass, fail] = [summary[1], summary[2], summary[3]].map(Number) as [number, number, number];
const readme = join(ROOT, 'README.md');
writeFileSync(readme, withSupportRow(readFileSync(readme, 'utf8'), { minor, kubernetes, date: new Date().toISOString().slice(0, 10), commit, total, pass, fail }));
process.stdout.write(`\nnpm run test:kube: ${kubernetes}: ${pass} passed, ${fail} failed of ${total}; README.md's row for v${minor} written\n`);
process.exit(suite.code);
