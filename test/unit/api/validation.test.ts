import t from 'tap';
import { REFERENCE_POLICY_KEY, type KaosKind, type ReferencePolicy } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { deletionWarnings, validateObject, type ValidationContext } from '../../../src/api/validation/validate-object.ts';
import { strandedWarnings } from '../../../src/api/validation/new-shapes.ts';
import { WORK_GUARD_MS, threadCpuMs } from '../../support/work-budget.ts';
import { agent, echoMCP, hosted, mcpServer, modelAPI, referencesIn } from './objects.ts';

const DNS =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";


const EXISTING = [hosted('m'), echoMCP('echo'), echoMCP('tools'), agent('peer', { modelAPI: 'm' })];

function check(object: KubeObject, extra: Partial<ValidationContext> & { existing?: KubeObject[] } = {}) {
  const kind = object.kind as KaosKind;
  const references = kind === 'Agent' ? referencesIn(extra.existing ?? EXISTING, object.spec) : undefined;
  const result = validateObject(kind, object, { referencePolicy: 'Enforce', references, ...extra });
  return { errors: result.errors.map((e) => e.errorString()), warnings: result.warnings, raw: result.errors };
}

t.test('a valid Agent has no errors and no warnings', async (t) => {
  t.same(check(agent('a1', { modelAPI: 'm', mcpServers: ['echo', 'tools'], agentNetwork: { access: ['peer'] } })), { errors: [], warnings: [], raw: [] });
});

t.test('reference names are DNS-1123 subdomains, in Kubernetes’ words', async (t) => {
  const { errors, raw } = check(agent('a1', { modelAPI: 'GPT', mcpServers: ['echo', 'Bad_Name'], agentNetwork: { access: ['-x'] } }));
  t.same(errors, [
    `spec.modelAPI: Invalid value: "GPT": ${DNS}`,
    `spec.mcpServers[1]: Invalid value: "Bad_Name": ${DNS}`,
    `spec.agentNetwork.access[0]: Invalid value: "-x": ${DNS}`,
  ]);
  t.same(raw.map((e) => e.type), ['FieldValueInvalid', 'FieldValueInvalid', 'FieldValueInvalid']);
  const long = 'a'.repeat(254);
  // The schema's maxLength says it, as kube-apiserver would before the webhook; the name rule,
  // which would judge only the cut value, is silent.
  t.same(check(agent('a1', { modelAPI: long })).errors, ['spec.modelAPI: Too long: may not be more than 253 bytes']);
  t.same(check(agent('a1', { modelAPI: '' })).errors, ['spec.modelAPI: Required value']);
  t.same(check(agent('a1', { modelAPI: 'm', mcpServers: [''] })).errors, [`spec.mcpServers[0]: Invalid value: "": ${DNS}`]);
  t.same(check(agent('a1', { modelAPI: 'm.v1', mcpServers: ['a.b-c'] }), { existing: [hosted('m.v1'), echoMCP('a.b-c')] }).errors, [], 'dots are fine');
});

t.test('no duplicates in mcpServers or access', async (t) => {
  const { errors, raw } = check(agent('a1', { modelAPI: 'm', mcpServers: ['echo', 'tools', 'echo', 'echo'], agentNetwork: { access: ['peer', 'peer'] } }));
  t.same(errors, [
    'spec.mcpServers[2]: Duplicate value: "echo"',
    'spec.mcpServers[3]: Duplicate value: "echo"',
    'spec.agentNetwork.access[1]: Duplicate value: "peer"',
  ]);
  t.equal(raw[0]?.type, 'FieldValueDuplicate');
});

t.test('an agent cannot list itself', async (t) => {
  const { errors } = check(agent('a1', { modelAPI: 'm', agentNetwork: { access: ['a1'] } }));
  t.same(errors, ['spec.agentNetwork.access[0]: Invalid value: "a1": an agent cannot list itself']);
});

t.test('the ModelAPI and every MCPServer must exist (Enforce)', async (t) => {
  const { errors, raw, warnings } = check(agent('a1', { modelAPI: 'gpt', mcpServers: ['echo', 'x'] }));
  t.same(errors, ['spec.modelAPI: Not found: "gpt"', 'spec.mcpServers[1]: Not found: "x"']);
  t.same(raw.map((e) => [e.type, e.field, e.badValue]), [
    ['FieldValueNotFound', 'spec.modelAPI', 'gpt'],
    ['FieldValueNotFound', 'spec.mcpServers[1]', 'x'],
  ]);
  t.same(warnings, []);
});

t.test('under Warn, missing references are warnings', async (t) => {
  const { errors, warnings } = check(agent('a1', { modelAPI: 'gpt', mcpServers: ['x'] }), { referencePolicy: 'Warn' });
  t.same(errors, []);
  t.same(warnings, [
    'spec.modelAPI: Not found: "gpt" (allowed: reference policy Warn)',
    'spec.mcpServers[0]: Not found: "x" (allowed: reference policy Warn)',
  ]);
});

t.test('only references that are new or changed on UPDATE are checked', async (t) => {
  const old = agent('a1', { modelAPI: 'gone', mcpServers: ['gone-too', 'echo'], agentNetwork: { access: ['ghost'] } });
  const relabelled = agent('a1', { modelAPI: 'gone', mcpServers: ['echo', 'gone-too'], agentNetwork: { access: ['ghost'] } }, { metadata: { labels: { x: 'y' } } });
  t.same(check(relabelled, { oldObject: old }), { errors: [], warnings: [], raw: [] }, 'reordered, unchanged references pass');

  const changed = agent('a1', { modelAPI: 'gone2', mcpServers: ['gone-too', 'new'], agentNetwork: { access: ['ghost', 'ghost2'] } });
  const result = check(changed, { oldObject: old });
  t.same(result.errors, ['spec.modelAPI: Not found: "gone2"', 'spec.mcpServers[1]: Not found: "new"']);
  t.same(result.warnings, ['spec.agentNetwork.access[1]: Agent "ghost2" does not exist yet; it is wired in once it does']);

  t.same(check(changed).errors.length, 3, 'on CREATE everything is checked');
});

t.test('a missing peer is only a warning', async (t) => {
  const { errors, warnings } = check(agent('coordinator', { modelAPI: 'm', agentNetwork: { access: ['worker-1', 'peer'] } }));
  t.same(errors, []);
  t.same(warnings, ['spec.agentNetwork.access[0]: Agent "worker-1" does not exist yet; it is wired in once it does']);
});

t.test('dependencies that exist but are not ready: a warning when waitForDependencies is false', async (t) => {
  const existing = [hosted('m', 'x', false), echoMCP('echo', false), echoMCP('tools', true)];
  const spec = { modelAPI: 'm', mcpServers: ['echo', 'tools'], waitForDependencies: false };
  t.same(check(agent('a1', spec), { existing }).warnings, [
    'ModelAPI "m" is not ready; with waitForDependencies false the Agent starts without it',
    'MCPServer "echo" is not ready; with waitForDependencies false the Agent starts without it',
  ]);
  t.same(check(agent('a1', { ...spec, waitForDependencies: true }), { existing }).warnings, [], 'the controller waits for them');
  t.same(check(agent('a1', spec), { existing, oldObject: agent('a1', spec) }).warnings.length, 2, 'unchanged references are still reported');
});

t.test('reference policy: annotation > namespace label > operator configuration', async (t) => {
  const missing = (policy?: string) =>
    agent('a1', { modelAPI: 'gpt' }, policy === undefined ? {} : { metadata: { annotations: { [REFERENCE_POLICY_KEY]: policy } } });
  const verdict = (o: KubeObject, referencePolicy: ReferencePolicy, labels?: Record<string, string>) => {
    const r = check(o, { referencePolicy, namespaceLabels: labels });
    return r.errors.some((e) => e.includes('Not found')) ? 'denied' : r.warnings.some((w) => w.includes('Not found')) ? 'warned' : 'silent';
  };
  const warnLabel = { [REFERENCE_POLICY_KEY]: 'Warn' };
  const enforceLabel = { [REFERENCE_POLICY_KEY]: 'Enforce' };
  t.equal(verdict(missing(), 'Enforce'), 'denied', 'operator default');
  t.equal(verdict(missing(), 'Warn'), 'warned', 'operator default Warn');
  t.equal(verdict(missing(), 'Enforce', warnLabel), 'warned', 'namespace label beats operator');
  t.equal(verdict(missing(), 'Warn', enforceLabel), 'denied', 'namespace label beats operator');
  t.equal(verdict(missing('Enforce'), 'Warn', warnLabel), 'denied', 'annotation beats label');
  t.equal(verdict(missing('Warn'), 'Enforce', enforceLabel), 'warned', 'annotation beats label');

  const bad = check(missing('warn'), { referencePolicy: 'Enforce', namespaceLabels: warnLabel });
  t.same(bad.errors, [
    'metadata.annotations[kaos.tools/reference-policy]: Unsupported value: "warn": supported values: "Enforce", "Warn"',
  ], 'an invalid annotation is an error, and the next source decides (label Warn)');
  t.same(bad.warnings, ['spec.modelAPI: Not found: "gpt" (allowed: reference policy Warn)']);

  const badLabel = check(missing(), { referencePolicy: 'Enforce', namespaceLabels: { [REFERENCE_POLICY_KEY]: 'Off' } });
  t.same(badLabel.errors, ['spec.modelAPI: Not found: "gpt"']);
  t.same(badLabel.warnings, ['namespace label kaos.tools/reference-policy="Off" is not Enforce or Warn; using Enforce']);
});

t.test('ModelAPI: what each mode needs and forbids', async (t) => {
  const errs = (spec: unknown) => check(modelAPI('m', spec)).errors;
  t.same(errs({ mode: 'Proxy' }), ['spec.proxyConfig: Required value: required when mode is Proxy']);
  t.same(errs({ mode: 'Proxy', proxyConfig: { env: [] } }), ['spec.proxyConfig: Required value: must specify at least one of apiBase, model, models, configYaml']);
  t.same(errs({ mode: 'Proxy', proxyConfig: { model: 'x' }, hostedConfig: { model: 'y' } }), ['spec.hostedConfig: Forbidden: may not be set when mode is Proxy']);
  t.same(errs({ mode: 'Hosted' }), ['spec.hostedConfig.model: Required value: required when mode is Hosted']);
  t.same(errs({ mode: 'Hosted', hostedConfig: {} }), ['spec.hostedConfig.model: Required value'], 'from the schema');
  t.same(errs({ mode: 'Hosted', hostedConfig: { model: 'x' }, proxyConfig: { apiBase: 'nope' } }), ['spec.proxyConfig: Forbidden: may not be set when mode is Hosted']);
  for (const ok of [{ apiBase: 'http://host.docker.internal:11434' }, { model: 'ollama/x' }, { configYaml: { fromSecretKeyRef: { name: 's', key: 'k' } } }]) {
    t.same(errs({ mode: 'Proxy', proxyConfig: ok }), [], JSON.stringify(ok));
  }
  t.same(errs({ mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }), []);
});

t.test('ModelAPI: apiBase is an http(s) URL', async (t) => {
  const errs = (apiBase: string) => check(modelAPI('m', { mode: 'Proxy', proxyConfig: { apiBase } })).errors;
  for (const ok of ['http://x', 'https://api.openai.com/v1', 'http://10.0.0.1:8080/']) t.same(errs(ok), [], ok);
  for (const bad of ['ftp://x', 'host:11434', 'http://', 'http://a b', 'localhost']) {
    t.same(errs(bad), [`spec.proxyConfig.apiBase: Invalid value: "${bad}": must be an http or https URL`], bad);
  }
});

t.test('ModelAPI: configYaml holds exactly one source; an inline config must be a usable LiteLLM config', async (t) => {
  const errs = (configYaml: unknown) => check(modelAPI('m', { mode: 'Proxy', proxyConfig: { configYaml } })).errors;
  t.same(errs({}), ['spec.proxyConfig.configYaml: Required value: must specify exactly one of fromString, fromSecretKeyRef']);
  t.same(errs({ fromString: 'model_list: [{model_name: a}]', fromSecretKeyRef: { name: 's', key: 'k' } }), [
    'spec.proxyConfig.configYaml.fromSecretKeyRef: Forbidden: may not be set when fromString is set',
  ]);
  t.same(errs({ fromString: 'model_list:\n  - model_name: "*"\n    litellm_params: {model: "*"}\n' }), []);
  const field = 'spec.proxyConfig.configYaml.fromString: Invalid value:';
  t.same(errs({ fromString: 'model_list:\n  - model_name: a\n   api_key: sk-secret\n' }), [
    `${field} must be valid YAML: bad indentation of a sequence entry at line 3, column 4`,
  ], 'the parser’s line, and the config (which may hold keys) is not echoed');
  t.same(errs({ fromString: 'a: 1\n---\nb: 2\n' }), [`${field} must be a single YAML document, not 2`]);
  t.same(errs({ fromString: '- a' }), [`${field} must be a YAML mapping with a model_list list`]);
  t.same(errs({ fromString: 'litellm_settings: {}' }), [`${field} must contain a model_list list`]);
  t.same(errs({ fromString: 'model_list:\n  - model_name: a\n  - litellm_params: {}\n  - x\n' }), [
    `${field} model_list[1] must have a model_name`,
    `${field} model_list[2] must have a model_name`,
  ]);
  t.same(errs({ fromString: 'models: &m\n  - model_name: a\nmodel_list: *m\n' }), [], 'an alias is read as LiteLLM reads it');
  t.same(errs({ fromString: 'defaults: &d\n  model_name: a\nmodel_list:\n  - <<: *d\n    litellm_params: {model: x}\n' }), [], 'so is a merge key');
  const bomb = 'a: &a [1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\nmodel_list: []\n';
  t.same(errs({ fromString: bomb }), [], 'aliases are references to one value, never expanded: a "billion laughs" costs its length');
});

t.test('MCPServer: exactly one tools source', async (t) => {
  const errs = (spec: unknown) => check(mcpServer('s', spec)).errors;
  t.same(errs({ type: 'python-runtime' }), ['spec.config.tools: Required value: must specify exactly one of fromPackage, fromString, fromSecretKeyRef']);
  t.same(errs({ type: 'python-runtime', config: { tools: { fromPackage: '' } } }).length, 1, 'an empty string is no source');
  t.same(errs({ type: 'python-runtime', config: { tools: { fromPackage: 'p', fromString: 'x', fromSecretKeyRef: { name: 's', key: 'k' } } } }), [
    'spec.config.tools.fromString: Forbidden: may not be set when fromPackage is set',
    'spec.config.tools.fromSecretKeyRef: Forbidden: may not be set when fromPackage is set',
  ]);
  t.same(errs({ type: 'python-runtime', config: { tools: { fromString: 'def echo(x): return x' } } }), []);
  t.same(errs({ type: 'python-runtime', config: { tools: { fromSecretKeyRef: { name: 's', key: 'k' } } } }), []);
});

t.test('MCPServer: fromString and fromSecretKeyRef only with python-runtime', async (t) => {
  const errs = (tools: unknown) => check(mcpServer('s', { type: 'node-runtime', config: { tools } })).errors;
  t.same(errs({ fromString: 'x' }), ['spec.config.tools.fromString: Forbidden: only supported when type is python-runtime']);
  t.same(errs({ fromSecretKeyRef: { name: 's', key: 'k' } }), ['spec.config.tools.fromSecretKeyRef: Forbidden: only supported when type is python-runtime']);
});

t.test('MCPServer: fromPackage is a package name for its runtime', async (t) => {
  const errs = (type: string, fromPackage: string) => check(mcpServer('s', { type, config: { tools: { fromPackage } } })).errors;
  const pypiOk = ['test-mcp-echo-server', 'mcp_server.fetch', 'pkg==1.2', 'pkg>=1', 'pkg>=1,<2', 'pkg~=1.4.2', 'pkg[cli]==2.0.0', 'Pkg2'];
  const pypiBad = ['pkg name', 'pkg;rm -rf /', '$(id)', 'pkg`id`', '-e', '--index-url=http://evil', 'pkg==', 'pkg|x', "pkg'", 'pkg&&x', 'pkg\n', ''];
  for (const p of pypiOk) t.same(errs('python-runtime', p), [], `python ok: ${p}`);
  for (const p of pypiBad.filter((p) => p !== '')) {
    const [e] = check(mcpServer('s', { type: 'python-runtime', config: { tools: { fromPackage: p } } })).raw;
    t.match(e, { type: 'FieldValueInvalid', field: 'spec.config.tools.fromPackage', badValue: p }, `python bad: ${JSON.stringify(p)}`);
  }
  t.same(errs('python-runtime', 'a b'), [
    `spec.config.tools.fromPackage: Invalid value: "a b": must be a PyPI package name with an optional version specifier and no spaces or shell characters (e.g. 'mcp-server-fetch' or 'mcp-server-fetch==1.2.0')`,
  ]);
  const npmOk = ['@modelcontextprotocol/server-everything', 'my-tools', 'my-tools@1.2.0', '@scope/x@^1.2', 'x@latest', 'x@>=1'];
  const npmBad = ['My-Tools', '@scope', '.hidden', '_x', 'x y', 'x;y', '@scope/x@1 || 2', 'x@$(id)', 'a'.repeat(215), '-c', '--yes', '@-x/y'];
  for (const p of npmOk) t.same(errs('node-runtime', p), [], `node ok: ${p}`);
  for (const p of npmBad) t.equal(errs('node-runtime', p).length, 1, `node bad: ${p.slice(0, 30)}`);
  t.match(errs('node-runtime', 'x y')[0], /must be an npm package name with an optional version and no spaces or shell characters/);
});

t.test('every problem is reported at once, schema first, in a stable order', async (t) => {
  const broken = agent('a1', {
    modelAPI: 'gpt',
    mcpServers: ['echo', 'x', 'echo'],
    agentNetwork: { access: ['a1'] },
    config: { reasoningLoopMaxSteps: 50 },
  }, { metadata: { annotations: { [REFERENCE_POLICY_KEY]: 'sometimes' } } });
  const expected = [
    'metadata.annotations[kaos.tools/reference-policy]: Unsupported value: "sometimes": supported values: "Enforce", "Warn"',
    'spec.config.reasoningLoopMaxSteps: Invalid value: 50: spec.config.reasoningLoopMaxSteps in body should be less than or equal to 20',
    'spec.modelAPI: Not found: "gpt"',
    'spec.mcpServers[1]: Not found: "x"',
    'spec.mcpServers[2]: Duplicate value: "echo"',
    'spec.agentNetwork.access[0]: Invalid value: "a1": an agent cannot list itself',
  ];
  t.same(check(broken).errors, expected);
  t.same(check(structuredClone(broken)).errors, expected, 'same input, same order');
});

t.test('DELETE: a warning per kind naming the objects that still use the object', async (t) => {
  const agents = (...names: string[]) => names.map((name) => ({ kind: 'Agent' as const, name }));
  const stores = (...names: string[]) => names.map((name) => ({ kind: 'MemoryStore' as const, name }));
  t.same(deletionWarnings('ModelAPI', 'm', []), []);
  t.same(deletionWarnings('ModelAPI', 'm', agents('a2', 'a1', 'a2')), ['ModelAPI "m" is still referenced by Agents: a1, a2'], 'sorted, each name once');
  t.same(deletionWarnings('MCPServer', 'echo', agents('a1')), ['MCPServer "echo" is still referenced by Agents: a1']);
  t.same(deletionWarnings('Agent', 'worker-1', agents('coordinator')), ['Agent "worker-1" is still listed as a peer by Agents: coordinator']);
  t.same(deletionWarnings('ModelAPI', 'm', stores('notes')), ['ModelAPI "m" is still referenced by MemoryStores: notes'], 'only stores: only their warning');
  t.same(deletionWarnings('ModelAPI', 'm', [...stores('notes', 'facts', 'notes'), ...agents('a1')]), [
    'ModelAPI "m" is still referenced by Agents: a1',
    'ModelAPI "m" is still referenced by MemoryStores: facts, notes',
  ], 'both kinds: a warning each, Agents first; a store binding it for both models named once');
  const many = agents(...Array.from({ length: 40 }, (_, i) => `agent-number-${i}`));
  const [w] = deletionWarnings('ModelAPI', 'm', many);
  t.ok(w !== undefined && w.length <= 120, `${w?.length} ≤ 120`);
  t.match(w, /^ModelAPI "m" is still referenced by Agents: agent-number-0, agent-number-1, .* and \d+ more$/);
  const [long] = deletionWarnings('ModelAPI', 'm'.repeat(200), agents('a1'));
  t.ok(long !== undefined && long.length === 120 && long.endsWith('...'));
  const m55 = 'm'.repeat(55);
  t.same(deletionWarnings('ModelAPI', m55, stores('a-store-name-too-long-to-fit')), [`ModelAPI "${m55}" is still referenced by MemoryStores: 1 MemoryStore`], 'not even one name fits: counted, in the kind named');
  t.same(deletionWarnings('ModelAPI', m55, stores('a-store-name-too-long-to-fit', 'b-store-name-too-long-to-fit')), [`ModelAPI "${m55}" is still referenced by MemoryStores: 2 MemoryStores`]);
});

t.test('a warning naming many objects costs the same as one naming a few', async (t) => {
  // Every count of names was tried from all of them down: a warning naming 10,000 Agents held the
  // event loop for seconds, and this one, minutes (npm run bench:fan-in). The guard is ten work budgets.
  const names = Array.from({ length: 100_000 }, (_, i) => ({ kind: 'Agent' as const, name: `agent-${String(i).padStart(6, '0')}` }));
  const cpu = threadCpuMs();
  const [warning] = deletionWarnings('ModelAPI', 'm', names);
  const [stranded] = strandedWarnings('m', names);
  const spent = threadCpuMs() - cpu;
  t.equal(warning, 'ModelAPI "m" is still referenced by Agents: agent-000000, agent-000001, agent-000002, agent-000003 and 99996 more');
  t.match(stranded, /^ModelAPI "m" no longer serves the model of Agents: agent-000000, .* and \d+ more$/);
  t.ok(spent < WORK_GUARD_MS, `${spent.toFixed(1)} ms of CPU < ${WORK_GUARD_MS} ms`);
});

t.test('all warnings stay within 120 characters', async (t) => {
  const n = 'x'.repeat(200);
  const r = check(agent('a1', { modelAPI: n, mcpServers: [n], agentNetwork: { access: [n] }, waitForDependencies: false }), {
    referencePolicy: 'Warn',
    existing: [],
  });
  t.ok(r.warnings.length >= 3);
  for (const w of r.warnings) t.ok(w.length <= 120, w);
});
