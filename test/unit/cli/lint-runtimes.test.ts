// `kaos-operator lint` and MCPServers by runtime: the registry from --runtimes (runtimes.yaml or
// the ConfigMap), from the set itself (the chart's ConfigMap in a Helm stream), or none (warned);
// Agents' harness runtimes likewise, from the chart's kaos-harness-runtimes in the set, or none.
// (--cluster reads the cluster's: test/e2e/mcp-runtimes.test.ts.)
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { stringify } from 'yaml';
import { harnessRuntimesConfigMap } from '../../../src/api/harness-runtime-defaults.ts';
import { runtimesConfigMap, runtimesYaml } from '../../../src/api/mcp-runtime-defaults.ts';
import { lintInProcess } from './support.ts';

const dir = await mkdtemp(join(tmpdir(), 'kaos-lint-runtimes-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

const mcp = (name: string, spec: unknown) => ({ apiVersion: 'kaos.tools/v1alpha1', kind: 'MCPServer', metadata: { name, namespace: 'tools' }, spec });
const SET = [
  mcp('py', { runtime: 'python-string', params: 'def echo(x): return x' }),
  mcp('gone', { runtime: 'discord' }),
  mcp('chat', { runtime: 'slack', container: { env: [{ name: 'SLACK_BOT_TOKEN', value: 't' }] } }),
  mcp('own', { runtime: 'custom' }),
];
const stream = (docs: readonly unknown[]): string => docs.map((d) => `---\n${stringify(d)}`).join('');
const manifests = join(dir, 'mcp.yaml');
await writeFile(manifests, stream(SET));
const RUNTIMES_ERRORS = [
  'spec.runtime: Unsupported value: "discord": supported values: "kubernetes", "python-string", "slack", "custom"',
  'spec.container.env: Required value: runtime slack requires env SLACK_TEAM_ID',
  'spec.container.image: Required value: runtime custom takes its image from spec.container',
];

t.test('--runtimes with a runtimes.yaml, or a file holding the ConfigMap: every runtime rule', async (t) => {
  const yamlFile = join(dir, 'runtimes.yaml');
  await writeFile(yamlFile, runtimesYaml());
  const configMapFile = join(dir, 'registry.yaml');
  await writeFile(configMapFile, stream([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kaos-system' } }, runtimesConfigMap('kaos-system')]));
  for (const file of [yamlFile, configMapFile]) {
    const out = await lintInProcess(['lint', '-o', 'json', '--runtimes', file, manifests]);
    t.equal(out.code, 1, `${file}: errors`);
    const report = JSON.parse(out.stdout) as { findings: { severity: string; message: string }[] };
    t.same(report.findings.filter((f) => f.severity === 'error').map((f) => f.message), RUNTIMES_ERRORS);
  }
});

t.test('the chart\'s ConfigMap in the set is the registry (helm template … | lint -)', async (t) => {
  const out = await lintInProcess(['lint', '-o', 'json', '-'], stream([runtimesConfigMap('kaos-system'), ...SET]));
  t.equal(out.code, 1);
  const report = JSON.parse(out.stdout) as { findings: { severity: string; message: string }[] };
  t.same(report.findings.filter((f) => f.severity === 'error').map((f) => f.message), RUNTIMES_ERRORS);
});

t.test('no registry: runtimes are warned about, never refused (custom\'s own rule stands)', async (t) => {
  const out = await lintInProcess(['lint', '-o', 'json', manifests]);
  const report = JSON.parse(out.stdout) as { findings: { severity: string; message: string }[] };
  t.same(report.findings.filter((f) => f.severity === 'error').map((f) => f.message), [RUNTIMES_ERRORS[2]]);
  t.same(report.findings.filter((f) => f.severity === 'warning').map((f) => f.message), [
    'spec.runtime "python-string" not checked: the runtime registry is not known here',
    'spec.runtime "discord" not checked: the runtime registry is not known here',
    'spec.runtime "slack" not checked: the runtime registry is not known here',
  ]);
});

t.test('a --runtimes file without a usable registry: the tool cannot run (exit 2)', async (t) => {
  const bad = join(dir, 'bad.yaml');
  await writeFile(bad, 'runtimes: [a');
  const out = await lintInProcess(['lint', '--runtimes', bad, manifests]);
  t.equal(out.code, 2);
  t.match(out.stderr, /^kaos-operator: --runtimes .*bad\.yaml: runtimes\.yaml: not valid YAML: /);
  const missing = await lintInProcess(['lint', '--runtimes', join(dir, 'nope.yaml'), manifests]);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /--runtimes .*nope\.yaml: ENOENT/);
});

t.test('harness runtimes: the chart\'s kaos-harness-runtimes in the set is their registry; without one they are warned about', async (t) => {
  const coder = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name, namespace: 'code' }, spec: { modelAPI: 'llm', model: 'smollm2:135m', ...spec } });
  const llm = { apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'llm', namespace: 'code' }, spec: { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } } };
  const agents = [llm, coder('pi', { harness: { runtime: 'pi' } }), coder('codex', { harness: { runtime: 'codex' } }), coder('claude', { harness: { runtime: 'claude' } })];
  const withRegistry = await lintInProcess(['lint', '-o', 'json', '-'], stream([harnessRuntimesConfigMap('kaos-system'), ...agents]));
  t.equal(withRegistry.code, 1);
  const found = (JSON.parse(withRegistry.stdout) as { findings: { severity: string; message: string }[] }).findings;
  t.same(found.map((f) => [f.severity, f.message]), [
    ['error', 'spec.harness.runtime: Unsupported value: "codex": supported values: "claude", "pi"'],
    ['error', 'spec.container.image: Required value: harness runtime "claude" has no image'],
  ]);
  const without = await lintInProcess(['lint', '-o', 'json', '-'], stream(agents));
  t.equal(without.code, 0, 'nothing refused');
  t.same((JSON.parse(without.stdout) as { findings: { message: string }[] }).findings.map((f) => f.message), [
    'spec.harness.runtime "pi" not checked: the harness runtime registry is not known here',
    'spec.harness.runtime "codex" not checked: the harness runtime registry is not known here',
    'spec.harness.runtime "claude" not checked: the harness runtime registry is not known here',
  ]);
});
