// The `kaos-operator` command as a process: bin/kaos-operator.js over dist/ (npm test builds it
// first), with the project's Node, exactly as `npx kaos-operator` runs it.
import { readFile } from 'node:fs/promises';
import t from 'tap';
import { ROOT, SAMPLES, spawnCli } from './support.ts';

t.test('package.json names the bin', async (t) => {
  const pkg = JSON.parse(await readFile(`${ROOT}package.json`, 'utf8')) as { bin?: Record<string, string> };
  t.same(pkg.bin, { 'kaos-operator': 'bin/kaos-operator.js' });
});

t.test('lint of the samples exits 0', async (t) => {
  const out = await spawnCli(['lint', ...['1-simple-echo-agent.yaml', '2-multi-agent-mcp.yaml', '4-dev-ollama-proxy-agent.yaml'].map((f) => SAMPLES + f)]);
  t.equal(out.code, 0, out.stderr);
  t.match(out.stdout, /^11 kaos.tools objects in 3 files \(3 other objects ignored\): 0 errors, 0 warnings\n$/);
});

t.test('lint - reads stdin and exits 1 on an error', async (t) => {
  const agent = 'apiVersion: kaos.tools/v1alpha1\nkind: Agent\nmetadata: {name: a1, namespace: ns}\nspec: {modelAPI: gpt}\n';
  const out = await spawnCli(['lint', '-'], { stdin: agent });
  t.equal(out.code, 1, out.stderr);
  t.equal(out.stdout.split('\n')[0], '-:1 (line 1) Agent/ns/a1: error: spec.modelAPI: Not found: "gpt"');
});

t.test('broken YAML exits 2 with the line', async (t) => {
  const out = await spawnCli(['lint', '-'], { stdin: 'a: b\n  c: d\n' });
  t.equal(out.code, 2);
  t.match(out.stderr, /^kaos-operator: -:1:\d+: document 1 is not valid YAML: /);
});

t.test('--help and a missing command', async (t) => {
  const help = await spawnCli(['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /What only the cluster can check/);
  const none = await spawnCli([]);
  t.equal(none.code, 2);
  t.match(none.stderr, /a command is required/);
});

t.test('an older Node says so instead of failing on syntax', async (t) => {
  // The bin's version check, with this Node pretending to be 20 (the machine's system Node).
  const pretend = `data:text/javascript,${encodeURIComponent('Object.defineProperty(process, "versions", { value: { ...process.versions, node: "20.1.0" } }); Object.defineProperty(process, "version", { value: "v20.1.0" });')}`;
  const out = await spawnCli(['lint', SAMPLES], { env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: `--import=${pretend}` } });
  t.equal(out.code, 2);
  t.match(out.stderr, /^kaos-operator: needs Node\.js 24 or later, this is v20\.1\.0/);
});
