// Runs the generated shell programs under the local /bin/sh (a POSIX shell, as in the
// python/node slim images) with stub pip/npx/python/ollama on PATH, to prove that hostile
// package and model names reach the tools as one argument each and are never executed.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_PACKAGE_SCRIPT, PYTHON_PACKAGE_SCRIPT } from '../../../src/render/mcpserver.ts';
import { PULL_MODEL_SCRIPT } from '../../../src/render/modelapi.ts';

const dir = mkdtempSync(join(tmpdir(), 'kaos-render-sh-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const bin = join(dir, 'bin');
const log = join(dir, 'calls.log');
const pwned = join(dir, 'pwned');

/**
 * A stub that appends one line "<name>\x1f<arg>\x1f<arg>..." to the log, in a single write so
 * that lines of concurrent stubs (the background `ollama serve`) never interleave.
 */
function stub(name: string, body = ''): void {
  writeFileSync(
    join(bin, name),
    `#!/bin/sh\nsep=$(printf '\\037')\nline="${name}"\nfor a in "$@"; do line="$line$sep$a"; done\nprintf '%s\\n' "$line" >> "$CALL_LOG"\n${body}\n`,
  );
  chmodSync(join(bin, name), 0o755);
}

function calls(): string[][] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split('\x1f'));
}

function run(script: string, env: Record<string, string>, args: string[] = []) {
  rmSync(log, { force: true });
  return spawnSync('/bin/sh', ['-c', script, 'mcp-server', ...args], {
    env: { PATH: `${bin}:/usr/bin:/bin`, CALL_LOG: log, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
}

const evil = `p"; touch ${pwned}; echo "$(touch ${pwned})\`touch ${pwned}\` & touch ${pwned} #`;

t.before(() => {
  mkdirSync(bin);
  stub('pip');
  stub('python');
  stub('npx');
  // `sleep 5` in the pull script waits for `ollama serve` to come up; the stub waits (at most
  // 5 s) for the background stub server to have started instead of a fixed time.
  stub('sleep', 'i=0; while ! grep -q serve "$CALL_LOG" 2>/dev/null && [ $i -lt 100 ]; do /bin/sleep 0.05; i=$((i+1)); done');
  stub('ollama', 'if [ "$1" = serve ]; then exec /bin/sleep 30; fi');
});

t.test('python package: pip gets the name as one argument; module fallback; args forwarded', async (t) => {
  const r = run(PYTHON_PACKAGE_SCRIPT, { MCP_PACKAGE: evil, MCP_ENTRYPOINT: 'no-such-script', MCP_MODULE: 'mod_x' }, ['--flag', 'a b']);
  t.equal(r.status, 0, r.stderr);
  t.strictSame(calls(), [
    ['pip', 'install', '--no-cache-dir', evil],
    ['python', '-m', 'mod_x', '--flag', 'a b'],
  ]);
  t.notOk(existsSync(pwned), 'nothing in the name was executed');
});

t.test('python package: a console script on PATH is preferred', async (t) => {
  stub('my-server');
  const r = run(PYTHON_PACKAGE_SCRIPT, { MCP_PACKAGE: 'my-server==1.0', MCP_ENTRYPOINT: 'my-server', MCP_MODULE: 'my_server' });
  t.equal(r.status, 0, r.stderr);
  t.strictSame(calls(), [['pip', 'install', '--no-cache-dir', 'my-server==1.0'], ['my-server']]);
});

t.test('python package: a failed install stops there', async (t) => {
  stub('pip', 'exit 1');
  const r = run(PYTHON_PACKAGE_SCRIPT, { MCP_PACKAGE: 'p', MCP_ENTRYPOINT: 'p', MCP_MODULE: 'p' });
  t.not(r.status, 0);
  t.strictSame(calls(), [['pip', 'install', '--no-cache-dir', 'p']]);
  stub('pip');
});

t.test('node package: npx gets the name as one argument', async (t) => {
  const r = run(NODE_PACKAGE_SCRIPT, { MCP_PACKAGE: evil }, ['--stdio']);
  t.equal(r.status, 0, r.stderr);
  t.strictSame(calls(), [['npx', '-y', evil, '--stdio']]);
  t.notOk(existsSync(pwned));
});

t.test('ollama pull: model as one argument, server started and stopped', async (t) => {
  const r = spawnSync('/bin/sh', ['-c', PULL_MODEL_SCRIPT], {
    env: { PATH: `${bin}:/usr/bin:/bin`, CALL_LOG: log, OLLAMA_MODEL: evil },
    encoding: 'utf8',
    timeout: 20_000,
  });
  t.equal(r.status, 0, r.stderr);
  const c = calls();
  t.ok(c.some((x) => x[0] === 'ollama' && x[1] === 'serve'));
  t.ok(c.some((x) => JSON.stringify(x) === JSON.stringify(['ollama', 'pull', evil])));
  t.notOk(existsSync(pwned));
});
