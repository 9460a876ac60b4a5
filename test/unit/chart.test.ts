// The chart's generated parts cannot drift from their sources: chart/crds is crds/, the RBAC and
// webhook templates are what chart/generate.ts renders from src/cluster/rbac.ts and
// src/admission/webhook-configs.ts, every variable of docs/configuration.md is a value, and
// values.schema.json refuses what it should. (helm lint/template and the server dry-run:
// test/e2e/chart.test.ts.)
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import t from 'tap';
import { parse } from 'yaml';
import { CHART_DIR, CONFIG_ENV, SECURITY_ENV, STRUCTURAL_ENV, chartFiles, staleChartFiles } from '../../chart/generate.ts';
import { OPERATOR_RULES, rulesFor } from '../../src/cluster/rbac.ts';
import { BUILTIN_RUNTIMES, runtimesYaml } from '../../src/api/mcp-runtime-defaults.ts';
import { parseRuntimes } from '../../src/api/mcp-runtimes.ts';
import { BUILTIN_HARNESS_RUNTIMES, DEFAULT_HARNESS_PI_IMAGE } from '../../src/api/harness-runtime-defaults.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

t.test('the committed generated files match chart/generate.ts (npm run gen:chart)', async (t) => {
  t.same(await staleChartFiles(), []);
});

t.test('chart/crds is identical to crds/', async (t) => {
  const yamlIn = async (dir: string) => (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  const top = await yamlIn(join(ROOT, 'crds'));
  t.ok(top.length >= 3, 'the three kinds');
  t.same(await yamlIn(join(CHART_DIR, 'crds')), top, 'the same files');
  for (const file of top) {
    t.equal(await readFile(join(CHART_DIR, 'crds', file), 'utf8'), await readFile(join(ROOT, 'crds', file), 'utf8'), file);
  }
});

t.test('every OPERATOR_RULES rule lands in exactly one scope of the RBAC template', async (t) => {
  const scoped = [...rulesFor('cluster'), ...rulesFor('watched'), ...rulesFor('operator')];
  t.equal(scoped.length, OPERATOR_RULES.length);
  t.ok(rulesFor('operator').some((r) => r.resources.includes('leases')), 'the Lease is granted in the operator namespace only');
  t.notOk([...rulesFor('cluster'), ...rulesFor('watched')].some((r) => r.resources.includes('leases')));
  t.ok(rulesFor('cluster').some((r) => r.resources.includes('namespaces')), 'namespaces are cluster-scoped');
  const rbac = chartFiles().find((f) => f.file === 'templates/rbac.yaml')?.content ?? '';
  for (const rule of OPERATOR_RULES) {
    for (const resource of rule.resources) t.match(rbac, `- ${resource}\n`, `${resource} is in the template`);
  }
});

/** `VAR` names of the configuration table in docs/configuration.md (rows `| \`A\`, \`B\` | …`). */
async function documentedVariables(): Promise<string[]> {
  const doc = await readFile(join(ROOT, 'docs', 'configuration.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Environment variables'));
  const table = section.slice(0, section.indexOf('\n## ', 3));
  const names: string[] = [];
  for (const line of table.split('\n')) {
    const first = /^\| ([^|]+) \|/.exec(line)?.[1] ?? '';
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.push(m[1] as string);
  }
  return names;
}

t.test('every variable of the configuration table (docs/configuration.md) is a chart value or set by the chart', async (t) => {
  const variables = await documentedVariables();
  t.ok(variables.length >= 30, `found the table (${variables.length} variables)`);
  const covered = new Set([...CONFIG_ENV.map((c) => c.env), ...SECURITY_ENV.map((c) => c.env), ...Object.keys(STRUCTURAL_ENV)]);
  t.same(variables.filter((v) => !covered.has(v)), [], 'uncovered variables');
  t.same([...covered].filter((v) => !variables.includes(v)), [], 'variables docs/configuration.md does not know');

  const values = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as { config: Record<string, unknown> };
  const schema = JSON.parse(await readFile(join(CHART_DIR, 'values.schema.json'), 'utf8')) as { properties: { config: { properties: Record<string, unknown> } } };
  for (const { value } of CONFIG_ENV) {
    t.ok(value in values.config, `config.${value} is in values.yaml`);
    t.ok(value in schema.properties.config.properties, `config.${value} is in values.schema.json`);
  }
  t.same(Object.keys(values.config).sort(), CONFIG_ENV.map((c) => c.value).sort(), 'no config value without a variable');
});

/** The leaves of a values object, as dotted paths. */
function leafPaths(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || (prefix !== '' && Object.keys(value).length === 0)) return [prefix];
  return Object.entries(value).flatMap(([key, v]) => leafPaths(v, prefix === '' ? key : `${prefix}.${key}`));
}

/** The schema node at a dotted path of values, through `properties` and local `$ref`s. */
function schemaAt(schema: Record<string, unknown>, path: string): unknown {
  const deref = (node: unknown): Record<string, unknown> | undefined => {
    const ref = (node as { $ref?: string } | undefined)?.$ref;
    return (ref === undefined ? node : deref((schema['definitions'] as Record<string, unknown>)[ref.replace('#/definitions/', '')])) as Record<string, unknown> | undefined;
  };
  let node = deref(schema);
  for (const key of path.split('.')) node = deref((node?.['properties'] as Record<string, unknown> | undefined)?.[key]);
  return node;
}

t.test('every security value (KAOS\'s chart value names) is a variable, in values.yaml and values.schema.json, and back', async (t) => {
  const values = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as { security: Record<string, unknown> };
  const schema = JSON.parse(await readFile(join(CHART_DIR, 'values.schema.json'), 'utf8')) as Record<string, unknown>;
  t.same(leafPaths(values.security).sort(), SECURITY_ENV.map((c) => c.path).sort(), 'values.yaml security: one leaf per variable, none without');
  for (const { path } of SECURITY_ENV) t.ok(schemaAt(schema, `security.${path}`), `security.${path} is in values.schema.json`);
  t.equal((values.security['agentAuth'] as { identity: { provider: string } }).identity.provider, 'serviceaccount', 'ServiceAccount identity by default, as KAOS\'s chart');
});

t.test('values.schema.json refuses the security settings the operator refuses at start', async (t) => {
  const schema = JSON.parse(await readFile(join(CHART_DIR, 'values.schema.json'), 'utf8')) as object;
  const defaults = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as { security: Record<string, unknown> };
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  const agentAuth = (patch: Record<string, unknown>): unknown => ({ ...defaults, security: { ...defaults.security, agentAuth: patch } });
  t.ok(validate(agentAuth({ identity: { provider: '' } })), 'no identity provider');
  t.ok(validate(agentAuth({ identity: { provider: 'serviceaccount', serviceAccount: { expirationSeconds: 600, tokenPath: '/var/run/x/token' } }, extAuthzUrl: 'kaos-pdp.kaos-system.svc:9191' })), 'valid settings');
  t.notOk(validate(agentAuth({ identity: { provider: 'oidc' } })), 'oidc is not implemented');
  t.notOk(validate(agentAuth({ identity: { provider: 'aib' } })), 'aib is not implemented');
  t.notOk(validate(agentAuth({ identity: { serviceAccount: { expirationSeconds: 599 } } })), 'an expiration under 600');
  t.notOk(validate(agentAuth({ identity: { serviceAccount: { tokenPath: 'token' } } })), 'a relative token path');
  t.notOk(validate(agentAuth({ extAuthzUrl: 'http://kaos-pdp:9191' })), 'an ext_authz URL with a scheme');
  t.notOk(validate(agentAuth({ extAuthzUrl: 'kaos-pdp' })), 'an ext_authz URL without a port');
  t.notOk(validate(agentAuth({ extAuthzUrl: '10.0.0.5:9191' })), 'an IP address: not a Service name (a DNS-1035 label)');
  t.notOk(validate(agentAuth({ extAuthzUrl: '9pdp.kaos-system:9191' })), 'a Service name with a digit first');
  t.notOk(validate({ ...defaults, security: { ...defaults.security, pdp: { enable: true } } }), 'a misspelt key');
});

t.test('values.schema.json accepts the defaults and refuses wrong types and unknown keys', async (t) => {
  const schema = JSON.parse(await readFile(join(CHART_DIR, 'values.schema.json'), 'utf8')) as object;
  const defaults = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  t.ok(validate(defaults), JSON.stringify(validate.errors));
  t.notOk(validate({ ...defaults, replicaCount: 'two' }), 'replicaCount must be an integer');
  t.notOk(validate({ ...defaults, replica: 3 }), 'an unknown top-level key');
  t.notOk(validate({ ...defaults, watchNamespaces: ['Team_A'] }), 'a namespace that is no DNS-1123 label');
  t.notOk(validate({ ...defaults, config: { logLevel: 'loud' } }), 'a log level the operator does not know');
  t.notOk(validate({ ...defaults, config: { defaultAgentImag: 'x' } }), 'a misspelt config key');
});

t.test('the chart ships the built-in MCP runtimes of src/api/mcp-runtime-defaults.ts, and its registry parses', async (t) => {
  const values = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as { mcpRuntimes: { create: boolean; builtin: unknown; custom: unknown } };
  t.same(values.mcpRuntimes.builtin, BUILTIN_RUNTIMES, 'values.yaml mcpRuntimes.builtin');
  t.same(values.mcpRuntimes.custom, {}, 'no user entries by default');
  t.equal(values.mcpRuntimes.create, true);
  const state = parseRuntimes(runtimesYaml());
  t.same('registry' in state ? [...state.registry.entries.keys()] : state, ['python-string', 'kubernetes', 'slack']);
  const template = await readFile(join(CHART_DIR, 'templates', 'mcp-runtimes-configmap.yaml'), 'utf8');
  t.match(template, /name: kaos-mcp-runtimes\n/, 'the name the operator reads');
  t.match(template, /namespace: \{\{ \.Release\.Namespace \}\}/, 'in the operator\'s namespace');
  t.match(template, /mergeOverwrite \(deepCopy \.Values\.mcpRuntimes\.builtin\) \(deepCopy \.Values\.mcpRuntimes\.custom\)/, 'user entries merged over the built-in ones');

  const schema = JSON.parse(await readFile(join(CHART_DIR, 'values.schema.json'), 'utf8')) as object;
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  const defaults = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;
  const withRuntimes = (mcpRuntimes: unknown): unknown => ({ ...defaults, mcpRuntimes });
  t.ok(validate(withRuntimes({ create: true, builtin: {}, custom: { mine: { type: 'python', image: 'x/y:1' } } })), 'a user entry');
  t.notOk(validate(withRuntimes({ create: true, builtin: { bad: { type: 'python' } }, custom: {} })), 'a built-in entry without an image');
  t.notOk(validate(withRuntimes({ create: true, builtin: {}, custom: {}, extra: 1 })), 'an unknown key');
});

t.test('the chart ships the built-in harness runtimes of src/api/harness-runtime-defaults.ts', async (t) => {
  const values = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as { defaultImages: { harnessPi: string }; harnessRuntimes: { create: boolean; custom: unknown } };
  t.equal(values.defaultImages.harnessPi, DEFAULT_HARNESS_PI_IMAGE, 'values.yaml defaultImages.harnessPi');
  t.same(values.harnessRuntimes, { create: true, custom: {} }, 'no user entries by default');
  const template = await readFile(join(CHART_DIR, 'templates', 'harness-runtimes-configmap.yaml'), 'utf8');
  t.match(template, /name: kaos-harness-runtimes\n/, 'the name the operator reads');
  t.match(template, /namespace: \{\{ \.Release\.Namespace \}\}/, 'in the release namespace, the operator\'s SYSTEM_NAMESPACE');
  t.match(template, /"pi" \(dict "image" \.Values\.defaultImages\.harnessPi /, 'pi\'s image from defaultImages.harnessPi');
  for (const [name, entry] of Object.entries(BUILTIN_HARNESS_RUNTIMES)) {
    t.ok(template.includes(`"driver" "${entry.driver}" "description" "${entry.description ?? ''}"`), `${name}: its driver and description`);
  }
  t.match(template, /"claude" \(dict "image" "" /, 'claude without an image');
  t.match(template, /mergeOverwrite \$builtin \(deepCopy \.Values\.harnessRuntimes\.custom\)/, 'user entries merged over the built-in ones');

  const schema = JSON.parse(await readFile(join(CHART_DIR, 'values.schema.json'), 'utf8')) as object;
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  const defaults = parse(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;
  const withHarness = (harnessRuntimes: unknown): unknown => ({ ...defaults, harnessRuntimes });
  t.ok(validate(withHarness({ create: true, custom: { codex: { image: 'x/y:1', driver: 'codex' }, byo: { image: '', driver: 'byo' } } })), 'user entries, one bringing its own image');
  t.notOk(validate(withHarness({ create: true, custom: { codex: { image: 'x/y:1' } } })), 'an entry without a driver');
  t.notOk(validate(withHarness({ create: true, custom: {}, builtin: {} })), 'an unknown key');
  t.notOk(validate({ ...defaults, defaultImages: { harnessPi: 1 } }), 'an image that is no string');
});
