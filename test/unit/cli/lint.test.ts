// `kaos-operator lint` and `default` in-process: the samples are clean, the invalid fixtures get
// exactly the validating webhook's messages, references resolve across files and directories,
// stdin and Helm streams are read, broken input exits 2, and `default` is the webhook's fixpoint.
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parseAllDocuments, stringify } from 'yaml';
import { loadConfig } from '../../../src/config/config.ts';
import { createMutatingHandler } from '../../../src/admission/mutate.ts';
import { createValidatingHandler } from '../../../src/admission/validate.ts';
import { isKaosKind } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { applyPatch, createRequest } from '../../../src/cli/judge.ts';
import { createStructuralPodSpecCheck } from '../../../src/cli/pod-spec-structure.ts';
import { MemoryLookup } from '../../support/memory-lookup.ts';
import { lintInProcess, SAMPLES } from './support.ts';

const CONFIG = loadConfig({});
const dir = await mkdtemp(join(tmpdir(), 'kaos-lint-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

const readDocs = async (path: string | URL): Promise<unknown[]> =>
  parseAllDocuments(await readFile(path, 'utf8')).map((d) => d.toJS() as unknown).filter((d) => d !== null);
const isKaos = (d: unknown): d is KubeObject => isKaosKind((d as KubeObject | undefined)?.kind);
const yamlStream = (docs: readonly unknown[]): string => docs.map((d) => `---\n${stringify(d)}`).join('');

const modelAPI = { apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'm1' }, spec: { mode: 'Hosted', hostedConfig: { model: 'llama3:8b' } } };
const agent = { apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name: 'a1' }, spec: { modelAPI: 'm1' } };

const ORIGINAL_SAMPLES = ['1-simple-echo-agent.yaml', '2-multi-agent-mcp.yaml', '4-dev-ollama-proxy-agent.yaml'].map((f) => join(SAMPLES, f));
const V013_SAMPLES = join(SAMPLES, 'kaos-v0.1.3');

t.test('the samples are clean: exit 0 and a summary', async (t) => {
  // Each release on its own: both use the same namespaces and names.
  const out = await lintInProcess(['lint', ...ORIGINAL_SAMPLES]);
  t.equal(out.code, 0, out.stdout + out.stderr);
  t.equal(out.stdout, '11 kaos.tools objects in 3 files (3 other objects ignored): 0 errors, 0 warnings\n');
  const v013 = await lintInProcess(['lint', V013_SAMPLES]);
  t.equal(v013.code, 0, v013.stdout + v013.stderr);
  t.equal(v013.stdout, '11 kaos.tools objects in 3 files (3 other objects ignored): 0 errors, 0 warnings\n', 'KAOS v0.1.3 samples too');
});

t.test('both shapes: the model check, mixed shapes, and default leaves spec.model alone', async (t) => {
  const cloud = { apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'cloud' }, spec: { mode: 'Proxy', proxyConfig: { models: ['openai/*'], provider: 'x' } } };
  const asks = (model: string) => ({ apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name: 'a2' }, spec: { modelAPI: 'cloud', model } });
  const served = await lintInProcess(['lint', '-'], yamlStream([cloud, asks('openai/gpt-4o')]));
  t.equal(served.code, 0, served.stdout);
  const notServed = await lintInProcess(['lint', '-'], yamlStream([cloud, asks('claude')]));
  t.equal(notServed.code, 1);
  t.match(notServed.stdout, /Agent\/default\/a2: error: spec\.model: Not found: "claude": not supported by ModelAPI "cloud" \(supported: \[openai\/\*\]\)/);
  const warned = await lintInProcess(['lint', '--reference-policy', 'Warn', '-'], yamlStream([cloud, asks('claude')]));
  t.equal(warned.code, 0, 'Warn: a warning');
  const mixed = await lintInProcess(['lint', '-'], yamlStream([{ ...cloud, spec: { mode: 'Proxy', proxyConfig: { model: 'a', models: ['a'] } } }]));
  t.match(mixed.stdout, /ModelAPI\/default\/cloud: error: spec\.proxyConfig\.models: Forbidden: may not be set together with spec\.proxyConfig\.model/);

  const out = await lintInProcess(['default', '-'], yamlStream([cloud, asks('openai/gpt-4o')]));
  t.equal(out.code, 0, out.stderr);
  const docs = parseAllDocuments(out.stdout).map((d) => d.toJS() as KubeObject);
  t.same(docs[1]?.spec, { modelAPI: 'cloud', model: 'openai/gpt-4o', agentNetwork: { expose: true }, waitForDependencies: true, container: { image: CONFIG.images.agent } },
    'no MODEL_NAME beside spec.model');
});

t.test('invalid fixtures: exit 1 with the validating webhook\'s own messages, side by side', async (t) => {
  const cases = (await readDocs(new URL('../../fixtures/invalid-objects.yaml', import.meta.url))) as { case: string; sample: string; object: KubeObject; errors: string[] }[];
  t.ok(cases.length >= 5);
  for (const c of cases) {
    const sample = (await readDocs(join(SAMPLES, c.sample))) as KubeObject[];
    const others = sample.filter((o) => !(o.kind === c.object.kind && o.metadata?.name === c.object.metadata?.name));
    // The set split over two files in two directories.
    await mkdir(join(dir, 'case', 'others'), { recursive: true });
    await writeFile(join(dir, 'case', 'others', 'rest.yaml'), yamlStream(others));
    await writeFile(join(dir, 'case', 'object.yaml'), yamlStream([c.object]));
    const out = await lintInProcess(['lint', join(dir, 'case')]);
    t.equal(out.code, 1, c.case);
    const lines = out.stdout.trim().split('\n').slice(0, -1);
    const prefix = `${join(dir, 'case', 'object.yaml')}:1 (line 2) ${c.object.kind}/${c.object.metadata?.namespace}/${c.object.metadata?.name}: error: `;
    t.ok(lines.every((l) => l.startsWith(prefix)), `${c.case}: every line is about the object\n${out.stdout}`);
    const cliMessages = lines.map((l) => l.slice(prefix.length));

    // The webhook: its handlers over a cache holding the sample's other objects.
    const kind = c.object.kind;
    if (!isKaosKind(kind)) throw new Error(`bad fixture kind ${String(kind)}`);
    const lookup = new MemoryLookup().add(...others.filter(isKaos));
    const mutation = await createMutatingHandler(kind, { lookup, config: CONFIG })(createRequest(kind, c.object));
    const decision = await createValidatingHandler(kind, { lookup, config: CONFIG, podSpecCheck: createStructuralPodSpecCheck(CONFIG) })(
      createRequest(kind, applyPatch(c.object, mutation.patch)),
    );
    const webhookMessages = (decision.status?.details?.causes ?? []).map((cause) => `${cause.field}: ${cause.message}`);
    t.same(cliMessages, webhookMessages, `${c.case}: the CLI prints what the webhook answers`);
    t.same(cliMessages, c.errors, `${c.case}: and that is the fixture's list`);
  }
});

t.test('references resolve across the set; without the ModelAPI, Not found; Warn turns it into a warning', async (t) => {
  await mkdir(join(dir, 'set', 'apis'), { recursive: true });
  await writeFile(join(dir, 'set', 'agent.yaml'), yamlStream([agent]));
  await writeFile(join(dir, 'set', 'apis', 'model.json'), JSON.stringify(modelAPI));
  const whole = await lintInProcess(['lint', join(dir, 'set', 'agent.yaml'), join(dir, 'set', 'apis')]);
  t.equal(whole.code, 0, whole.stdout);
  t.match(whole.stdout, /2 kaos.tools objects in 2 files: 0 errors, 0 warnings/);

  const alone = await lintInProcess(['lint', join(dir, 'set', 'agent.yaml')]);
  t.equal(alone.code, 1);
  t.equal(alone.stdout.split('\n')[0], `${join(dir, 'set', 'agent.yaml')}:1 (line 2) Agent/default/a1: error: spec.modelAPI: Not found: "m1"`);

  const other = await lintInProcess(['lint', '-n', 'team-a', join(dir, 'set', 'agent.yaml')]);
  t.match(other.stdout, /Agent\/team-a\/a1: error: spec\.modelAPI: Not found: "m1"/, '--namespace fills in the namespace');

  const warned = await lintInProcess(['lint', '--reference-policy', 'Warn', join(dir, 'set', 'agent.yaml')]);
  t.equal(warned.code, 0, 'warnings alone exit 0');
  t.match(warned.stdout, /Agent\/default\/a1: warning: .*m1/);
  t.match(warned.stdout, /0 errors, 1 warning\n$/);

  const labelled = yamlStream([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'relaxed', labels: { 'kaos.tools/reference-policy': 'Warn' } } }, { ...agent, metadata: { name: 'a1', namespace: 'relaxed' } }]);
  const byLabel = await lintInProcess(['lint', '-'], labelled);
  t.equal(byLabel.code, 0, 'a Namespace of the set carries the policy label');
  t.match(byLabel.stdout, /-:2 \(line \d+\) Agent\/relaxed\/a1: warning: /);
});

t.test('stdin: a Helm-rendered stream with # Source comments and a List', async (t) => {
  const helm = [
    '---',
    '# Source: kaos/templates/modelapi.yaml',
    stringify(modelAPI).trim(),
    '---',
    '# Source: kaos/templates/agents.yaml',
    stringify({ apiVersion: 'v1', kind: 'List', items: [agent, { ...agent, metadata: { name: 'a2' }, spec: { modelAPI: 'nope' } }] }).trim(),
    '---',
    '# Source: kaos/templates/configmap.yaml',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}',
    '',
  ].join('\n');
  const out = await lintInProcess(['lint', '-'], helm);
  t.equal(out.code, 1);
  t.equal(out.stdout, [
    '-:2 items[1] (line 22, kaos/templates/agents.yaml) Agent/default/a2: error: spec.modelAPI: Not found: "nope"',
    '3 kaos.tools objects in 1 file (1 other object ignored): 1 error, 0 warnings',
    '',
  ].join('\n'));
});

t.test('JSON output for tools', async (t) => {
  const out = await lintInProcess(['lint', '-o', 'json', '-'], yamlStream([agent]));
  t.equal(out.code, 1);
  t.same(JSON.parse(out.stdout), {
    files: 1, objects: 1, ignored: 0, errors: 1, warnings: 0,
    findings: [{ file: '-', document: 1, line: 2, kind: 'Agent', namespace: 'default', name: 'a1', severity: 'error', field: 'spec.modelAPI', message: 'spec.modelAPI: Not found: "m1"' }],
  });
});

t.test('the tool cannot run: exit 2 with the reason', async (t) => {
  await writeFile(join(dir, 'broken.yaml'), 'apiVersion: v1\nkind: ConfigMap\n---\nmetadata:\n  name: [a, b\nspec: {}\n');
  const broken = await lintInProcess(['lint', join(dir, 'broken.yaml')]);
  t.equal(broken.code, 2);
  t.match(broken.stderr, new RegExp(`^kaos-operator: ${join(dir, 'broken.yaml').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:6:1: document 2 is not valid YAML: `));
  t.equal(broken.stdout, '');

  const missing = await lintInProcess(['lint', join(dir, 'no-such.yaml')]);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /cannot read .*no-such\.yaml: no such file or directory/);

  const laughs = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 9 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`)].join('\n');
  const bomb = await lintInProcess(['lint', '-'], laughs);
  t.equal(bomb.code, 2, 'a billion laughs is refused, not expanded');
  t.match(bomb.stderr, /cannot be read: .*alias/i);

  const usage = await lintInProcess(['lint', '--output', 'xml', '-']);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /--output must be text or json/);
});

t.test('bounds: a deep document and an object with thousands of errors stay small', async (t) => {
  let deep: unknown = 'x';
  for (let i = 0; i < 200; i++) deep = { d: deep };
  const nested = await lintInProcess(['lint', '-'], JSON.stringify({ ...agent, spec: { modelAPI: 'm1', podSpec: deep } }));
  t.equal(nested.code, 1);
  t.match(nested.stdout, /error: the object is nested deeper than 98 levels/);

  const env = Array.from({ length: 5000 }, () => ({ name: 'X', value: 1 }));
  const many = await lintInProcess(['lint', '-'], JSON.stringify({ ...agent, spec: { modelAPI: 'm1', config: { env } } }));
  t.equal(many.code, 1);
  const lines = many.stdout.trim().split('\n');
  t.ok(lines.length <= 102, `the webhook's cause cap holds (${lines.length} lines)`);
  t.match(lines.at(-2), /further errors not shown/);
});

t.test('default prints what the mutating webhook leaves, and the webhook leaves that unchanged', async (t) => {
  // Quoted, as YAML 1.1 readers (kubectl, Helm) need them: unquoted, both would be booleans.
  const configMap = '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {"on": "yes"}\n';
  const input = configMap + yamlStream([modelAPI, agent]);
  const out = await lintInProcess(['default', '-'], input);
  t.equal(out.code, 0, out.stderr);
  const docs = parseAllDocuments(out.stdout, { version: '1.1' }).map((d) => d.toJS() as KubeObject);
  t.equal(docs.length, 3);
  t.same(docs[0], { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { on: 'yes' } }, 'other kinds unchanged, strings stay strings');
  t.notOk(docs[2]?.metadata?.namespace, 'no namespace is added');
  t.same((docs[2]?.spec as { config?: unknown }).config, { env: [{ name: 'MODEL_NAME', value: 'llama3:8b' }], reasoningLoopMaxSteps: 5 }, 'MODEL_NAME from the ModelAPI of the set');
  t.equal(docs[2]?.metadata?.annotations?.['kaos.tools/defaulted'], 'spec.config.env[MODEL_NAME],spec.container.image');

  const lookup = new MemoryLookup().add({ ...modelAPI, metadata: { name: 'm1', namespace: 'default' } });
  for (const doc of docs.filter(isKaos)) {
    const kind = doc.kind;
    if (!isKaosKind(kind)) continue;
    const object = { ...doc, metadata: { ...doc.metadata, namespace: 'default' } };
    const again = await createMutatingHandler(kind, { lookup, config: CONFIG })(createRequest(kind, object));
    t.same(again.patch ?? [], [], `${kind}: the webhook's dry run over the output changes nothing`);
  }
  const lint = await lintInProcess(['lint', '-'], out.stdout);
  t.equal(lint.code, 0, 'and the output lints clean');
});

t.test('the structural podSpec check refuses what the cluster would not decode', async (t) => {
  const bad = { ...agent, spec: { modelAPI: 'm1', podSpec: { containers: [{ name: 'agent', resources: { limits: { cpu: 'lots' } } }], hostNetwork: 'yes please' } } };
  const out = await lintInProcess(['lint', '-'], yamlStream([modelAPI, bad]));
  t.equal(out.code, 1);
  t.match(out.stdout, /Agent\/default\/a1: error: spec\.podSpec\.containers\[0\]\.resources\.limits\.cpu: Invalid value: "lots": /);
  t.match(out.stdout, /Agent\/default\/a1: error: spec\.podSpec\.hostNetwork: Invalid value: "string": hostNetwork in body must be of type boolean/);
  const good = { ...agent, spec: { modelAPI: 'm1', podSpec: { containers: [{ name: 'agent', resources: { limits: { cpu: 1, memory: '1Gi' } } }], nodeSelector: { pool: 'gpu' } } } };
  t.equal((await lintInProcess(['lint', '-'], yamlStream([modelAPI, good]))).code, 0);
});

t.test('MemoryStores and the Agents bound to them: the KAOS 2026 fixture is clean, its faults named', async (t) => {
  const fixture = new URL('../../fixtures/kaos-2026/memory-agents.yaml', import.meta.url);
  const clean = await lintInProcess(['lint', fixture.pathname]);
  t.equal(clean.code, 0, clean.stdout + clean.stderr);
  t.equal(clean.stdout, '4 kaos.tools objects in 1 file (2 other objects ignored): 0 errors, 0 warnings\n');
  const faulty = (await readFile(fixture, 'utf8')).replace('model: text-embedding-3-small', 'model: text-embedding-9').replace('memoryStore: support-memory\n      maxReadScope: session', 'memoryStore: elsewhere\n      maxReadScope: session');
  const file = join(dir, 'memory-faulty.yaml');
  await writeFile(file, faulty);
  const out = await lintInProcess(['lint', file]);
  t.equal(out.code, 1);
  t.match(out.stdout, /MemoryStore\/kaos-memory\/support-memory: error: spec\.models\.embedding\.model: Not found: "text-embedding-9": not supported by ModelAPI "support-modelapi"/);
  t.match(out.stdout, /Agent\/kaos-memory\/session-assistant: error: spec\.config\.memory\.memoryStore: Not found: "elsewhere"/);
  const defaulted = await lintInProcess(['default', fixture.pathname]);
  t.match(defaulted.stdout, /kaos\.tools\/defaulted: spec\.container\.image,spec\.replicas\n/, "default prints the store with the webhook's choices");
});
