// The Agent harness in the API (docs/api.md, "Agent harness"), one test per rule: the registry's
// parse and KAOS's words for each way a runtime does not resolve, the image precedence, the
// admission rules (the runtime against the registry on create or when the harness or the image
// changes, the workspace's repository and branch, every problem at once), the schema, the shape
// a harness gives an Agent, and the webhook choosing no image for it.
import t from 'tap';
import { defaultObject } from '../../../src/api/defaulting/default-object.ts';
import { BUILTIN_HARNESS_RUNTIMES, harnessRuntimesConfigMap } from '../../../src/api/harness-runtime-defaults.ts';
import {
  HARNESS_REGISTRY_NOT_READ,
  harnessFailure,
  harnessRegistryFromConfigMap,
  harnessRuntimeNames,
  parseHarnessRuntimes,
  resolveHarness,
  type HarnessRegistryState,
} from '../../../src/api/harness-runtimes.ts';
import { DEFAULTED_ANNOTATION } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { runtimesYaml } from '../../../src/api/mcp-runtime-defaults.ts';
import { MAX_REGISTRY_LENGTH } from '../../../src/api/runtime-registry.ts';
import { shapeOf } from '../../../src/api/shapes.ts';
import { branchNameProblems, repoURLProblem } from '../../../src/api/validation/agent-harness.ts';
import { validateObject } from '../../../src/api/validation/validate-object.ts';
import { threadCpuMs, WORK_GUARD_MS } from '../../support/work-budget.ts';
import { HOSTILE_YAML } from '../../support/worst-cases.ts';
import { agent, CONFIG, deepFreeze, hosted, referencesIn } from './objects.ts';

const entries = (state: HarnessRegistryState) => ('registry' in state ? Object.fromEntries(state.registry.entries) : state);
const broken = (state: HarnessRegistryState) => ('registry' in state ? Object.fromEntries(state.registry.broken) : state);
/** The pi image KAOS's chart pins (`defaultImages.harnessPi` beside harness_runtime.go @9c12be82), written out. */
const PI_IMAGE = 'ghcr.io/axsaucedo/kaos-harness-pi:0.1.0';
/** The registry the chart ships: pi with an image, claude without. */
const BUILTIN = parseHarnessRuntimes(runtimesYaml(BUILTIN_HARNESS_RUNTIMES));

t.test('the built-in registry parses back to pi (with the chart\'s image) and claude (bring your own)', async (t) => {
  t.same(entries(BUILTIN), {
    pi: { image: PI_IMAGE, driver: 'pi', description: 'pi coding harness (MIT)' },
    claude: { image: '', driver: 'claude', description: 'Claude Code (proprietary, bring your own image)' },
  });
  t.same(entries(harnessRegistryFromConfigMap(harnessRuntimesConfigMap('kaos'))), entries(BUILTIN), 'from its ConfigMap');
  t.same(harnessRuntimeNames(BUILTIN), ['claude', 'pi'], 'names sorted');
});

t.test('an entry: image (absent reads as "", as KAOS reads it), driver required, description optional; unknown keys ignored', async (t) => {
  const state = parseHarnessRuntimes([
    'runtimes:',
    '  byo: {driver: byo}',
    '  full: {image: r/full:1, driver: full, description: d, someFutureField: 1}',
    '  nodriver: {image: r/x:1}',
    '  emptydriver: {image: r/x:1, driver: ""}',
    '  wrongtypes: {image: [1], driver: 2, description: {}}',
    '  scalar: just a string',
  ].join('\n'));
  t.same(entries(state), { byo: { image: '', driver: 'byo' }, full: { image: 'r/full:1', driver: 'full', description: 'd' } });
  t.same(broken(state), {
    nodriver: 'failed to parse harness runtime registry: runtimes.nodriver.driver: required',
    emptydriver: 'failed to parse harness runtime registry: runtimes.emptydriver.driver: must be a non-empty string',
    wrongtypes:
      'failed to parse harness runtime registry: runtimes.wrongtypes.image: must be a string; runtimes.wrongtypes.driver: must be a non-empty string; ' +
      'runtimes.wrongtypes.description: must be a string',
    scalar: 'failed to parse harness runtime registry: runtimes.scalar: must be a mapping',
  }, 'every reason of a broken entry, in KAOS\'s words');
});

t.test('a registry that cannot be read, in KAOS\'s words', async (t) => {
  t.same(harnessRegistryFromConfigMap(undefined), { problem: 'failed to get harness runtime registry ConfigMap: configmaps "kaos-harness-runtimes" not found' });
  t.same(harnessRegistryFromConfigMap({ data: { 'other.yaml': '' } }), { problem: 'runtimes.yaml key not found in ConfigMap' });
  t.same(harnessRegistryFromConfigMap({}), { problem: 'runtimes.yaml key not found in ConfigMap' }, 'no data at all');
  const cases: [string, string][] = [
    ['runtimes: [a, b', 'failed to parse harness runtime registry: not valid YAML: '],
    ['a: 1\n---\nb: 2\n', 'failed to parse harness runtime registry: 2 YAML documents, not one'],
    ['other: {}', 'failed to parse harness runtime registry: must be a mapping with a "runtimes" mapping of name to entry'],
    [`runtimes: {}\n${'#'.repeat(MAX_REGISTRY_LENGTH)}`, `failed to parse harness runtime registry: longer than ${MAX_REGISTRY_LENGTH} characters`],
  ];
  for (const [yaml, prefix] of cases) {
    const state = harnessRegistryFromConfigMap({ data: { 'runtimes.yaml': yaml } });
    t.ok('problem' in state && state.problem.startsWith(prefix), `${JSON.stringify(yaml.slice(0, 20))}: ${'problem' in state ? state.problem : 'parsed'}`);
    t.same(resolveHarness(state, 'pi', undefined), { kind: 'unreadable', reason: 'problem' in state ? state.problem : '' }, 'nothing is unknown in a registry that cannot be read');
  }
});

t.test('a hostile registry at its length limit is read within the guard', async (t) => {
  for (const unit of HOSTILE_YAML) {
    const text = `runtimes:\n  ${unit.repeat(Math.ceil(MAX_REGISTRY_LENGTH / unit.length))}`.slice(0, MAX_REGISTRY_LENGTH);
    const cpu = threadCpuMs();
    parseHarnessRuntimes(text);
    t.ok(threadCpuMs() - cpu < WORK_GUARD_MS, JSON.stringify(unit));
  }
});

t.test('image precedence: spec.container.image, else the entry\'s; an entry without one needs spec.container.image', async (t) => {
  t.same(resolveHarness(BUILTIN, 'pi', undefined), { kind: 'resolved', image: PI_IMAGE, driver: 'pi' });
  t.same(resolveHarness(BUILTIN, 'pi', ''), { kind: 'resolved', image: PI_IMAGE, driver: 'pi' }, 'an empty image is none');
  t.same(resolveHarness(BUILTIN, 'pi', 'me/pi:9'), { kind: 'resolved', image: 'me/pi:9', driver: 'pi' });
  t.same(resolveHarness(BUILTIN, 'claude', undefined), { kind: 'no-image' });
  t.same(resolveHarness(BUILTIN, 'claude', 'me/claude-code:1'), { kind: 'resolved', image: 'me/claude-code:1', driver: 'claude' });
  t.same(resolveHarness(BUILTIN, 'codex', 'me/codex:1'), { kind: 'unknown' }, 'an image of its own does not make a runtime known');
});

t.test('the status messages are KAOS\'s, each behind "Failed to resolve harness runtime: "', async (t) => {
  const message = (state: HarnessRegistryState, runtime: string, image?: string): string => {
    const resolution = resolveHarness(state, runtime, image);
    if (resolution.kind === 'resolved') throw new Error('resolved');
    return harnessFailure(runtime, resolution);
  };
  t.equal(message(harnessRegistryFromConfigMap(undefined), 'pi'),
    'Failed to resolve harness runtime: failed to get harness runtime registry ConfigMap: configmaps "kaos-harness-runtimes" not found');
  t.equal(message(harnessRegistryFromConfigMap({ data: {} }), 'pi'), 'Failed to resolve harness runtime: runtimes.yaml key not found in ConfigMap');
  t.match(message(parseHarnessRuntimes('runtimes: ['), 'pi'), /^Failed to resolve harness runtime: failed to parse harness runtime registry: not valid YAML: /);
  t.equal(message(BUILTIN, 'codex'), 'Failed to resolve harness runtime: unknown harness runtime: codex (not found in registry)');
  t.equal(message(BUILTIN, 'claude'), 'Failed to resolve harness runtime: harness runtime claude requires a user-supplied spec.container.image');
  t.equal(message(HARNESS_REGISTRY_NOT_READ, 'pi'), 'Failed to resolve harness runtime: failed to get harness runtime registry ConfigMap: the operator has not read it yet');
});

const WORLD = [hosted('m', 'smollm2:135m')];
const spec = (harness: unknown, extra: Record<string, unknown> = {}) => ({ modelAPI: 'm', model: 'smollm2:135m', harness, ...extra });
/** `runtimes` null: no registry known at all. */
const judge = (object: KubeObject, runtimes: HarnessRegistryState | null = BUILTIN, oldObject?: KubeObject) => {
  const result = validateObject('Agent', object, {
    referencePolicy: 'Enforce',
    references: referencesIn(WORLD, object.spec),
    ...(runtimes === null ? {} : { harnessRuntimes: runtimes }),
    ...(oldObject === undefined ? {} : { oldObject }),
  });
  return { errors: result.errors.map((e) => e.errorString()), warnings: result.warnings };
};

t.test('admission: the runtime against a readable registry, in Kubernetes\' words', async (t) => {
  t.same(judge(agent('a', spec({ runtime: 'pi' }))), { errors: [], warnings: [] }, 'a known runtime with an image');
  t.same(judge(agent('a', spec({ runtime: 'x' }))).errors, ['spec.harness.runtime: Unsupported value: "x": supported values: "claude", "pi"']);
  t.same(judge(agent('a', spec({ runtime: 'claude' }))).errors, ['spec.container.image: Required value: harness runtime "claude" has no image']);
  t.same(judge(agent('a', spec({ runtime: 'claude' }, { container: { image: 'me/claude-code:1' } }))), { errors: [], warnings: [] }, 'claude with an image of its own');
  t.same(judge(agent('a', spec({ runtime: 'x' }, { container: { image: 'me/x:1' } }))).errors,
    ['spec.harness.runtime: Unsupported value: "x": supported values: "claude", "pi"'], 'an image does not make a runtime known');
  const emptyRegistry = parseHarnessRuntimes('runtimes: {}');
  t.same(judge(agent('a', spec({ runtime: 'pi' })), emptyRegistry).errors, ['spec.harness.runtime: Unsupported value: "pi"'], 'an empty registry knows no runtime');
});

t.test('admission: a registry that cannot be read (or an entry of it) only warns', async (t) => {
  t.same(judge(agent('a', spec({ runtime: 'pi' })), harnessRegistryFromConfigMap(undefined)), {
    errors: [],
    warnings: ['spec.harness.runtime "pi" not checked: configmaps "kaos-harness-runtimes" not found'],
  }, 'KAOS\'s words, less its prefix, within the 120 characters of a warning');
  const brokenPi = parseHarnessRuntimes('runtimes: {pi: {image: r/pi:1}, claude: {driver: claude}}');
  t.same(judge(agent('a', spec({ runtime: 'pi' })), brokenPi), {
    errors: [],
    warnings: ['spec.harness.runtime "pi" not checked: runtimes.pi.driver: required'],
  }, 'the entry\'s problem');
  t.same(judge(agent('a', spec({ runtime: 'pi' })), HARNESS_REGISTRY_NOT_READ).warnings,
    ['spec.harness.runtime "pi" not checked: the operator has not read it yet'], 'before the cache has synced');
  t.same(judge(agent('a', spec({ runtime: 'pi' })), null).warnings,
    ['spec.harness.runtime "pi" not checked: the harness runtime registry is not known here'], 'no registry at all (lint without one)');
});

t.test('admission: the runtime is judged on create and when the harness or spec.container.image changes, not otherwise', async (t) => {
  const stored = agent('a', spec({ runtime: 'gone' }));
  const relabelled = agent('a', spec({ runtime: 'gone' }, { config: { description: 'now described' } }));
  t.same(judge(relabelled, BUILTIN, stored), { errors: [], warnings: [] }, 'a runtime that left the registry since does not block other edits');
  t.same(judge(agent('a', spec({ runtime: 'gone', workspace: { repoURL: 'https://example.com/r.git' } })), BUILTIN, stored).errors,
    ['spec.harness.runtime: Unsupported value: "gone": supported values: "claude", "pi"'], 'the harness changed');
  const claude = agent('a', spec({ runtime: 'claude' }, { container: { image: 'me/claude:1' } }));
  t.same(judge(agent('a', spec({ runtime: 'claude' }, { container: { image: '' } })), BUILTIN, claude).errors,
    ['spec.container.image: Required value: harness runtime "claude" has no image'], 'the image changed');
});

t.test('admission: the repository is an https://, http:// or ssh:// URL, or git@host:path', async (t) => {
  for (const url of ['https://github.com/acme/repo.git', 'http://git.internal/r', 'ssh://git@github.com/acme/repo.git', 'git@github.com:acme/repo.git']) {
    t.equal(repoURLProblem(url), undefined, url);
  }
  const wrongScheme = 'must be an https://, http:// or ssh:// URL, or git@<host>:<path>';
  const cases: [string, string][] = [
    ['file:///etc', wrongScheme],
    ['ext::sh -c touch% /tmp/pwned', 'must not contain whitespace or control characters'],
    ['--upload-pack=touch /tmp/x', 'must not contain whitespace or control characters'],
    ['--upload-pack=x', wrongScheme],
    ['ext::sh', wrongScheme],
    ['-uhttps://x', wrongScheme],
    ['/srv/repo.git', wrongScheme],
    ['https://', wrongScheme],
    ['git@:path', wrongScheme],
    ['git@host', wrongScheme],
    ['https://example.com/r\n.git', 'must not contain whitespace or control characters'],
  ];
  for (const [url, problem] of cases) t.equal(repoURLProblem(url), problem, JSON.stringify(url));
  t.same(judge(agent('a', spec({ runtime: 'pi', workspace: { repoURL: 'file:///etc' } }))).errors,
    [`spec.harness.workspace.repoURL: Invalid value: "file:///etc": ${wrongScheme}`]);
});

t.test('admission: the branch is a git branch name, never an option', async (t) => {
  for (const name of ['main', 'feature/x', 'release-1.2', 'v1.0_rc', 'a.b/c-d']) t.same(branchNameProblems(name), [], name);
  const cases: [string, string[]][] = [
    ['-x', ['must not start with "-"']],
    ['--upload-pack=touch', ['must not start with "-"']],
    ['a..b', ['must not contain ".."']],
    ['a b', ['must not contain whitespace or control characters']],
    ['a~b^c:d', ['must not contain "~", "^", ":"']],
    ['x?*[', ['must not contain "?", "*", "["']],
    ['back\\slash', ['must not contain "\\\\"']],
    ['a@{1}', ['must not contain "@{"']],
    ['@', ['must not be "@"']],
    ['a//b', ['must not contain "//"']],
    ['/a', ['must not start or end with "/"']],
    ['a/', ['must not start or end with "/"']],
    ['a.', ['must not end with "."']],
    ['.hidden', ['no part between slashes may start with "."']],
    ['a/.b', ['no part between slashes may start with "."']],
    ['x.lock', ['no part between slashes may end with ".lock"']],
    // `$(…)` is a ref name's right: it reaches the clone only as the value of WORKSPACE_BRANCH, never as shell code.
    ['-$(id)', ['must not start with "-"']],
  ];
  for (const [name, problems] of cases) t.same(branchNameProblems(name), problems, JSON.stringify(name));
  t.same(judge(agent('a', spec({ runtime: 'pi', workspace: { repoURL: 'https://example.com/r.git', branch: '-x' } }))).errors,
    ['spec.harness.workspace.branch: Invalid value: "-x": must be a git branch name: must not start with "-"']);
});

t.test('admission: every problem at once, schema and rules together', async (t) => {
  t.same(judge(agent('a', spec({ runtime: 'x', workspace: { repoURL: 'ftp://h/r', branch: 'a..b' } }))).errors, [
    'spec.harness.workspace.repoURL: Invalid value: "ftp://h/r": must be an https://, http:// or ssh:// URL, or git@<host>:<path>',
    'spec.harness.workspace.branch: Invalid value: "a..b": must be a git branch name: must not contain ".."',
    'spec.harness.runtime: Unsupported value: "x": supported values: "claude", "pi"',
  ]);
  t.same(judge(agent('a', spec({ workspace: { branch: 'main' } }))).errors, [
    'spec.harness.runtime: Required value',
    'spec.harness.workspace.repoURL: Required value',
  ], 'the schema: runtime, and repoURL in a workspace, are required');
  t.same(judge(agent('a', spec({ runtime: '' }))).errors, ['spec.harness.runtime: Invalid value: "": spec.harness.runtime in body should be at least 1 chars long']);
});

t.test('a harness makes an Agent newer-shape (its env follows LOG_LEVEL)', async (t) => {
  t.equal(shapeOf('Agent', { modelAPI: 'm', harness: { runtime: 'pi' } }), 'new');
  t.equal(shapeOf('Agent', { modelAPI: 'm' }), 'original');
});

const run = (object: KubeObject, oldObject?: KubeObject) =>
  defaultObject('Agent', deepFreeze(object), { config: CONFIG, modelAPI: WORLD[0], ...(oldObject === undefined ? {} : { oldObject }) });
const imageOf = (o: KubeObject): unknown => (o.spec as { container?: { image?: unknown } }).container?.image;
const recorded = (o: KubeObject): string | undefined => o.metadata?.annotations?.[DEFAULTED_ANNOTATION];

t.test('defaulting: no image is chosen for a harness Agent; the branch defaults to main', async (t) => {
  const created = run(agent('a', spec({ runtime: 'pi', workspace: { repoURL: 'https://example.com/r.git' } })));
  t.equal(imageOf(created.object), undefined, 'the runtime\'s image applies, so none is written');
  t.equal((created.object.spec as { container?: unknown }).container, undefined, 'and no container block for it');
  t.notOk(recorded(created.object)?.includes('spec.container.image'));
  t.equal((created.object.spec as { harness: { workspace: { branch?: string } } }).harness.workspace.branch, 'main');
  const own = run(agent('a', spec({ runtime: 'claude' }, { container: { image: 'me/claude:1' } })));
  t.equal(imageOf(own.object), 'me/claude:1', 'the user\'s image stays');
});

t.test('defaulting: the agent image chosen earlier goes with the request that adds a harness; one the user wrote stays', async (t) => {
  const before = run(agent('a', { modelAPI: 'm', model: 'smollm2:135m' })).object;
  t.equal(imageOf(before), CONFIG.images.agent, 'a plain Agent gets the default image, recorded');
  t.match(recorded(before), /spec\.container\.image/);
  const withHarness = { ...before, spec: { ...(before.spec as object), harness: { runtime: 'pi' } } };
  const after = run(withHarness, before).object;
  t.equal((after.spec as { container?: unknown }).container, undefined, 'the chosen image and its block are gone');
  t.notOk(recorded(after)?.includes('spec.container.image'), 'and no longer recorded');
  t.same(run(after, after).object, after, 'idempotent');

  const exported = run(agent('a', spec({ runtime: 'pi' }, { container: { image: CONFIG.images.agent } }), { metadata: { name: 'a', annotations: { [DEFAULTED_ANNOTATION]: 'spec.container.image' } } }));
  t.equal(imageOf(exported.object), undefined, 'on create, the recorded default image goes too (a manifest exported with it)');

  const userImage = { ...before, spec: { ...(before.spec as object), harness: { runtime: 'pi' }, container: { image: 'me/pi:2' } } };
  t.equal(imageOf(run(userImage, before).object), 'me/pi:2', 'an image the request changed is the user\'s');
});
