// The runtime registry parser (src/api/mcp-runtimes.ts): what runtimes.yaml may hold, what a
// runtime name resolves to, and the errors a broken registry or entry gives.
import t from 'tap';
import { BUILTIN_RUNTIMES, runtimesConfigMap, runtimesYaml } from '../../../src/api/mcp-runtime-defaults.ts';
import {
  MAX_REGISTRY_LENGTH,
  parseRuntimes,
  registryFromConfigMap,
  registryProblems,
  resolveRuntime,
  runtimeNames,
  type RegistryState,
} from '../../../src/api/mcp-runtimes.ts';
import { threadCpuMs, WORK_GUARD_MS } from '../../support/work-budget.ts';
import { HOSTILE_YAML } from '../../support/worst-cases.ts';

const entries = (state: RegistryState) => ('registry' in state ? Object.fromEntries(state.registry.entries) : state);
const broken = (state: RegistryState) => ('registry' in state ? Object.fromEntries(state.registry.broken) : state);

t.test('the built-in registry parses back to the built-in entries', async (t) => {
  t.same(entries(parseRuntimes(runtimesYaml())), BUILTIN_RUNTIMES);
  t.same(broken(parseRuntimes(runtimesYaml())), {});
  t.same(entries(registryFromConfigMap(runtimesConfigMap('kaos-system'), 'kaos-system/kaos-mcp-runtimes')), BUILTIN_RUNTIMES, 'from its ConfigMap');
});

t.test('every field of an entry is read; unknown keys are ignored (a newer KAOS may add some)', async (t) => {
  const yaml = [
    'runtimes:',
    '  full:',
    '    type: python',
    '    image: r/full:1',
    '    description: all of it',
    '    command: [python, -m, srv]',
    '    args: [--port, "8000"]',
    '    paramsEnvVar: TOOLS',
    '    transport: http',
    '    requiredEnv: [A_TOKEN, B.KEY]',
    '    someFutureField: 1',
    '  minimal: {type: go, image: r/min:2}',
  ].join('\n');
  t.same(entries(parseRuntimes(yaml)), {
    full: {
      type: 'python',
      image: 'r/full:1',
      description: 'all of it',
      command: ['python', '-m', 'srv'],
      args: ['--port', '8000'],
      paramsEnvVar: 'TOOLS',
      transport: 'http',
      requiredEnv: ['A_TOKEN', 'B.KEY'],
    },
    minimal: { type: 'go', image: 'r/min:2' },
  });
});

t.test('a broken entry is kept apart with every reason; the others still resolve', async (t) => {
  const yaml = [
    'runtimes:',
    '  ok: {type: go, image: r/ok:1}',
    '  noimage: {type: go}',
    '  wrongtypes: {type: go, image: "", command: python, args: [1], requiredEnv: ["has space"], paramsEnvVar: "1=2"}',
    '  scalar: just a string',
    '  custom: {type: go, image: r/c:1}',
  ].join('\n');
  const state = parseRuntimes(yaml);
  t.same(Object.keys(entries(state)), ['ok']);
  t.same(broken(state), {
    noimage: 'runtimes.noimage.image: required',
    wrongtypes:
      'runtimes.wrongtypes.image: must be a non-empty string; runtimes.wrongtypes.paramsEnvVar: must be an env var name; ' +
      'runtimes.wrongtypes.command: must be a list of strings; runtimes.wrongtypes.args: must be a list of strings; ' +
      'runtimes.wrongtypes.requiredEnv: must be a list of env var names',
    scalar: 'runtimes.scalar: must be a mapping',
    custom: 'runtimes.custom: the name "custom" is reserved (spec.container gives its image)',
  });
  t.same(resolveRuntime(state, 'ok'), { kind: 'entry', entry: { type: 'go', image: 'r/ok:1' } });
  t.same(resolveRuntime(state, 'noimage'), { kind: 'unreadable', reason: 'runtimes.noimage.image: required' }, 'a broken entry is neither known nor unknown');
  t.same(resolveRuntime(state, 'other'), { kind: 'unknown' });
  t.same(resolveRuntime(state, 'custom'), { kind: 'custom' }, 'custom is never a registry entry');
  t.same(runtimeNames(state), ['ok', 'custom']);
  t.equal(registryProblems(state).length, 4);
});

t.test('a registry that cannot be read: nothing is unknown, everything is unreadable (custom aside)', async (t) => {
  const cases: [string, string][] = [
    ['runtimes: [a, b', 'runtimes.yaml: not valid YAML: '],
    ['a: 1\n---\nb: 2\n', 'runtimes.yaml: 2 YAML documents, not one'],
    ['other: {}', 'runtimes.yaml: must be a mapping with a "runtimes" mapping of name to entry'],
    ['runtimes: [python-string]', 'runtimes.yaml: must be a mapping with a "runtimes" mapping of name to entry'],
    [`runtimes: {}\n${'#'.repeat(MAX_REGISTRY_LENGTH)}`, `runtimes.yaml: longer than ${MAX_REGISTRY_LENGTH} characters`],
  ];
  for (const [yaml, prefix] of cases) {
    const state = parseRuntimes(yaml);
    t.ok('problem' in state && state.problem.startsWith(prefix), `${JSON.stringify(yaml.slice(0, 20))}: ${'problem' in state ? state.problem : 'parsed'}`);
    t.equal(resolveRuntime(state, 'python-string').kind, 'unreadable');
    t.equal(resolveRuntime(state, 'custom').kind, 'custom');
    t.same(runtimeNames(state), ['custom']);
  }
  t.same(registryFromConfigMap(undefined, 'ns/kaos-mcp-runtimes'), { problem: 'ConfigMap ns/kaos-mcp-runtimes not found' });
  t.same(registryFromConfigMap({ data: {} }, 'ns/kaos-mcp-runtimes'), { problem: 'ConfigMap ns/kaos-mcp-runtimes has no key runtimes.yaml' });
  t.same(registryFromConfigMap({ data: { 'runtimes.yaml': 'x: 1' } }, 'ns/kaos-mcp-runtimes'), {
    problem: 'ConfigMap ns/kaos-mcp-runtimes: runtimes.yaml: must be a mapping with a "runtimes" mapping of name to entry',
  });
});

t.test('a hostile registry at its length limit is read within the guard (one edit of it cannot stall the controller)', async (t) => {
  let costliest = { cpuMs: 0, what: '' };
  for (const unit of HOSTILE_YAML) {
    const text = `runtimes:\n  ${unit.repeat(Math.ceil(MAX_REGISTRY_LENGTH / unit.length))}`.slice(0, MAX_REGISTRY_LENGTH);
    const cpu = threadCpuMs();
    const state = parseRuntimes(text);
    const cpuMs = threadCpuMs() - cpu;
    if (cpuMs > costliest.cpuMs) costliest = { cpuMs, what: JSON.stringify(unit) };
    t.ok(cpuMs < WORK_GUARD_MS, `${JSON.stringify(unit)}: ${'problem' in state ? state.problem.slice(0, 80) : 'read'}`);
  }
  t.comment(`the costliest took ${costliest.cpuMs.toFixed(0)} ms of CPU: ${costliest.what}`);
});
