// Admission of MCPServers in both shapes (docs/api.md, "MCPServer runtimes"): exactly one of spec.type and
// spec.runtime, each shape's fields refused beside the other's, and a runtime judged against the
// registry: unknown, custom without an image, a missing requiredEnv refused; an unreadable
// registry only warned about.
import t from 'tap';
import { createValidatingHandler } from '../../../src/admission/validate.ts';
import { runtimesYaml } from '../../../src/api/mcp-runtime-defaults.ts';
import { parseRuntimes, type RegistryState } from '../../../src/api/mcp-runtimes.ts';
import { validateObject } from '../../../src/api/validation/validate-object.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { admissionRequest } from '../../support/admission-request.ts';
import { MemoryLookup } from '../../support/memory-lookup.ts';
import { CONFIG, mcpServer, NS } from './objects.ts';

const REGISTRY = parseRuntimes(runtimesYaml());
const UNREADABLE: RegistryState = { problem: 'ConfigMap kaos-system/kaos-mcp-runtimes not found' };

function check(spec: unknown, mcpRuntimes: RegistryState | undefined = REGISTRY) {
  const result = validateObject('MCPServer', mcpServer('s', spec), { referencePolicy: 'Enforce', ...(mcpRuntimes === undefined ? {} : { mcpRuntimes }) });
  return { errors: result.errors.map((e) => e.errorString()), warnings: result.warnings };
}

t.test('a runtime from the registry, with params and a service account, is valid', async (t) => {
  t.same(check({ runtime: 'python-string', params: 'def echo(x): return x', serviceAccountName: 'tools' }), { errors: [], warnings: [] });
  t.same(check({ runtime: 'kubernetes', serviceAccountName: 'k8s-reader' }), { errors: [], warnings: [] });
  t.same(check({ runtime: 'custom', container: { image: 'me/mcp:1', args: ['--port', '8000'] } }), { errors: [], warnings: [] });
});

t.test('exactly one of spec.type and spec.runtime; the minority shape\'s fields are named', async (t) => {
  t.same(check({}).errors, ['spec: Required value: must specify exactly one of spec.type (with spec.config) or spec.runtime']);
  t.same(check({ type: 'python-runtime', runtime: 'python-string', config: { tools: { fromString: 'x' } } }).errors, [
    'spec.runtime: Forbidden: may not be set together with spec.type',
  ]);
  t.same(check({ type: 'python-runtime', params: 'x', serviceAccountName: 'sa', config: { tools: { fromString: 'x' } } }).errors, [
    'spec.params: Forbidden: may not be set together with spec.type',
    'spec.serviceAccountName: Forbidden: may not be set together with spec.type',
  ]);
  t.same(check({ runtime: 'python-string', config: { env: [{ name: 'A', value: '1' }] } }).errors, [
    'spec.config: Forbidden: may not be set together with spec.runtime',
  ]);
  t.same(check({ type: 'python-runtime' }).errors, ['spec.config.tools: Required value: must specify exactly one of fromPackage, fromString, fromSecretKeyRef'], 'the original rules stand');
});

t.test('an unknown runtime is refused, naming what the registry offers', async (t) => {
  t.same(check({ runtime: 'discord' }).errors, [
    'spec.runtime: Unsupported value: "discord": supported values: "kubernetes", "python-string", "slack", "custom"',
  ]);
});

t.test('custom needs spec.container.image', async (t) => {
  t.same(check({ runtime: 'custom' }).errors, ['spec.container.image: Required value: runtime custom takes its image from spec.container']);
  t.same(check({ runtime: 'custom', container: { image: '' } }).errors.length, 1, 'an empty image is none');
  t.same(check({ runtime: 'custom', params: 'x', container: { image: 'me/mcp:1' } }).warnings, ['spec.params is not used: runtime custom has no paramsEnvVar']);
});

t.test('requiredEnv: each name must be in spec.container.env', async (t) => {
  t.same(check({ runtime: 'slack' }).errors, [
    'spec.container.env: Required value: runtime slack requires env SLACK_BOT_TOKEN',
    'spec.container.env: Required value: runtime slack requires env SLACK_TEAM_ID',
  ]);
  const token = { name: 'SLACK_BOT_TOKEN', valueFrom: { secretKeyRef: { name: 'slack', key: 'token' } } };
  t.same(check({ runtime: 'slack', container: { env: [token] } }).errors, ['spec.container.env: Required value: runtime slack requires env SLACK_TEAM_ID']);
  t.same(check({ runtime: 'slack', container: { env: [token, { name: 'SLACK_TEAM_ID', value: 'T1' }] } }).errors, []);
  t.same(check({ runtime: 'kubernetes', params: 'x' }).warnings, ['spec.params is not used: runtime kubernetes has no paramsEnvVar']);
});

t.test('a registry that cannot be read (or a broken entry) warns and never denies', async (t) => {
  t.same(check({ runtime: 'slack' }, UNREADABLE), {
    errors: [],
    warnings: ['spec.runtime "slack" not checked: ConfigMap kaos-system/kaos-mcp-runtimes not found'],
  });
  const broken = parseRuntimes('runtimes:\n  slack: {type: nodejs}\n');
  t.same(check({ runtime: 'slack' }, broken), { errors: [], warnings: ['spec.runtime "slack" not checked: runtimes.slack.image: required'] });
  t.same(check({ runtime: 'custom' }, UNREADABLE).errors, ['spec.container.image: Required value: runtime custom takes its image from spec.container'], 'custom needs no registry');
  const noRegistry = validateObject('MCPServer', mcpServer('s', { runtime: 'slack' }), { referencePolicy: 'Enforce' });
  t.same(noRegistry.errors, [], 'no registry known at all: not judged');
  t.same(noRegistry.warnings, ['spec.runtime "slack" not checked: the runtime registry is not known here']);
});

/** A lookup whose cache holds `state` as the registry. */
function lookupWith(state: RegistryState): MemoryLookup & { mcpRuntimes(): RegistryState } {
  const lookup = new MemoryLookup().setNamespace(NS) as MemoryLookup & { mcpRuntimes(): RegistryState };
  lookup.mcpRuntimes = () => state;
  return lookup;
}

t.test('the validating webhook reads the registry from its lookup (the cache) and ratchets unchanged specs', async (t) => {
  const handler = createValidatingHandler('MCPServer', { lookup: lookupWith(REGISTRY), config: CONFIG });
  const unknown: KubeObject = mcpServer('s', { runtime: 'discord' });
  const denied = await handler(admissionRequest('MCPServer', unknown));
  t.equal(denied.allowed, false);
  t.match(denied.status?.message, 'MCPServer.kaos.tools "s" is invalid: spec.runtime: Unsupported value: "discord"');
  const relabelled = { ...unknown, metadata: { ...unknown.metadata, labels: { a: 'b' } } };
  t.same(await handler(admissionRequest('MCPServer', relabelled, { operation: 'UPDATE', oldObject: unknown })), { allowed: true }, 'an unchanged spec is not judged again');

  const unreadable = createValidatingHandler('MCPServer', { lookup: lookupWith(UNREADABLE), config: CONFIG });
  t.same(await unreadable(admissionRequest('MCPServer', mcpServer('s', { runtime: 'slack' }))), {
    allowed: true,
    warnings: ['spec.runtime "slack" not checked: ConfigMap kaos-system/kaos-mcp-runtimes not found'],
  });
});
