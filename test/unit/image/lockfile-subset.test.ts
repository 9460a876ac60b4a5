// The install manifests the image is built from (scripts/lockfile-subset.ts, the build stage's
// scripts/image/build-manifest.ts, the runtime's from scripts/build.ts): the packages some
// dependencies reach, cut from the project's lockfile with npm's flags worked out again, and
// unchanged by an edit that changes no install.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Metafile } from 'esbuild';
import { BUNDLER_PACKAGES, bundleExternals, runtimeDeps } from '../../../scripts/build.ts';
import { buildManifest } from '../../../scripts/image/build-manifest.ts';
import { ROOT } from '../../../scripts/image/build.ts';
import {
  dependencyFlags, lockfileSubset, manifestSubset, NOT_INSTALLED_FIELDS, packageName, resolveIn, writtenFlags, type LockEntry, type Lockfile, type Manifest,
} from '../../../scripts/lockfile-subset.ts';

const read = <T>(file: string): T => JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as T;
const pkg = read<Manifest>('package.json');
const lock = read<Lockfile>('package-lock.json');
const FLAG_NAMES = ['dev', 'optional', 'devOptional', 'peer'] as const;
const flagsOf = (e: LockEntry): Record<string, true> => Object.fromEntries(FLAG_NAMES.filter((f) => e[f] === true).map((f) => [f, true]));

t.test('the flags worked out for the project\'s whole tree are the ones npm wrote', async (t) => {
  const flags = dependencyFlags(lock.packages);
  const differ = Object.entries(lock.packages).filter(([path]) => path !== '').flatMap(([path, entry]) => {
    const mine = flags.get(path);
    const theirs = flagsOf(entry);
    return mine !== undefined && JSON.stringify(writtenFlags(mine)) === JSON.stringify(theirs) ? [] : [`${path}: ${JSON.stringify(mine && writtenFlags(mine))} ≠ ${JSON.stringify(theirs)}`];
  });
  t.same(differ, [], `all ${Object.keys(lock.packages).length - 1} packages`);
});

/** A small lockfile: a → b (nested copy) and c (optional, one platform's), d a dev tool → e, p peer-depended. */
const small: Lockfile = {
  name: 'x',
  lockfileVersion: 3,
  requires: true,
  packages: {
    '': { name: 'x', dependencies: { a: '^1.0.0', q: '^1.0.0' }, devDependencies: { d: '^1.0.0' } },
    'node_modules/a': { version: '1.0.0', integrity: 'sha512-a', dependencies: { b: '^2.0.0' }, optionalDependencies: { c: '^1.0.0', gone: '^1.0.0' } },
    'node_modules/a/node_modules/b': { version: '2.0.0', integrity: 'sha512-b2' },
    'node_modules/b': { version: '1.0.0', integrity: 'sha512-b1', dev: true },
    'node_modules/c': { version: '1.0.0', integrity: 'sha512-c', optional: true, os: ['linux'] },
    'node_modules/d': { version: '1.0.0', integrity: 'sha512-d', dev: true, dependencies: { b: '^1.0.0', e: '^1.0.0' } },
    'node_modules/e': { version: '1.0.0', integrity: 'sha512-e', dev: true },
    'node_modules/q': { version: '1.0.0', integrity: 'sha512-q', peerDependencies: { p: '*', maybe: '*' }, peerDependenciesMeta: { maybe: { optional: true } } },
    'node_modules/p': { version: '1.0.0', integrity: 'sha512-p', peer: true },
  },
};

t.test('a subset holds what its dependencies reach, resolved as Node resolves, with the smaller tree\'s flags', async (t) => {
  const justA = lockfileSubset({ name: 'x', dependencies: { a: '^1.0.0' } }, small);
  t.same(Object.keys(justA.packages), ['', 'node_modules/a', 'node_modules/a/node_modules/b', 'node_modules/c'], 'a, its own b (not the top-level one), its optional c; no missing optional one');
  t.same(justA.packages[''], { name: 'x', dependencies: { a: '^1.0.0' } });
  t.same(justA.packages['node_modules/a'], small.packages['node_modules/a'], 'each entry as the lockfile has it');
  t.same(flagsOf(justA.packages['node_modules/c'] ?? {}), { optional: true }, 'optional stays optional');
  const withTool = lockfileSubset({ name: 'x', dependencies: { a: '^1.0.0' }, devDependencies: { d: '^1.0.0' } }, small);
  t.same(Object.keys(withTool.packages).slice(1), ['node_modules/a', 'node_modules/a/node_modules/b', 'node_modules/b', 'node_modules/c', 'node_modules/d', 'node_modules/e']);
  t.same(flagsOf(withTool.packages['node_modules/e'] ?? {}), { dev: true }, 'a dev tool\'s dependency is dev');
  const peers = lockfileSubset({ name: 'x', dependencies: { q: '^1.0.0' } }, small);
  t.same(Object.keys(peers.packages).slice(1), ['node_modules/q', 'node_modules/p'], 'a peer is installed, a missing optional peer is not');
  t.same(flagsOf(peers.packages['node_modules/p'] ?? {}), { peer: true });
});

t.test('what a subset refuses', async (t) => {
  t.throws(() => lockfileSubset({ name: 'x', dependencies: { a: '^2.0.0' } }, small), /resolved for a@\^1\.0\.0 in dependencies, not \^2\.0\.0: run npm install/, 'a spec the lockfile was not resolved for');
  const broken: Lockfile = { ...small, packages: { ...small.packages, 'node_modules/a': { version: '1.0.0', dependencies: { nowhere: '^1.0.0' } } } };
  t.throws(() => lockfileSubset({ name: 'x', dependencies: { a: '^1.0.0' } }, broken), /node_modules\/a depends on nowhere, which it does not hold/);
  t.throws(() => lockfileSubset({ name: 'x' }, { lockfileVersion: 1, packages: {} }), /lockfileVersion 1/);
  t.throws(() => manifestSubset({ ...pkg, overrides: { b: '1.0.0' } }, []), /package\.json field "overrides": .* does not know whether it changes what npm ci installs/, 'a package.json field it does not know');
  t.throws(() => manifestSubset(pkg, ['left-pad']), /left-pad is not among package\.json's dependencies/);
});

t.test('resolveIn and packageName', async (t) => {
  t.equal(resolveIn(small.packages, 'node_modules/a', 'b'), 'node_modules/a/node_modules/b', 'the nearest node_modules first');
  t.equal(resolveIn(small.packages, 'node_modules/d', 'b'), 'node_modules/b', 'then up to the root\'s');
  t.equal(resolveIn(small.packages, 'node_modules/a/node_modules/b', 'c'), 'node_modules/c');
  t.equal(resolveIn(small.packages, '', 'nowhere'), undefined);
  t.same(['@kubernetes/client-node', '@kubernetes/client-node/dist/gen', 'ajv/dist/runtime/equal', 'ws'].map(packageName), ['@kubernetes/client-node', '@kubernetes/client-node', 'ajv', 'ws']);
});

t.test('the build stage installs the production dependencies and the bundler, nothing else', async (t) => {
  const { manifest, lock: built } = buildManifest(pkg, lock);
  t.same(manifest.dependencies, pkg.dependencies, 'every production dependency');
  t.same(Object.keys(manifest.devDependencies ?? {}), [...BUNDLER_PACKAGES], `of the devDependencies, ${BUNDLER_PACKAGES.join(', ')}`);
  t.equal(manifest.type, 'module', 'scripts/build.ts is an ES module');
  const dev = Object.entries(built.packages).filter(([, e]) => e.dev === true).map(([p]) => p);
  t.ok(dev.every((p) => /node_modules\/(esbuild|@esbuild\/[^/]+)$/.test(p)), `its dev packages are esbuild and its platform binaries (${dev.length})`);
  t.ok(Object.keys(built.packages).length < Object.keys(lock.packages).length / 2, `${Object.keys(built.packages).length - 1} of the lockfile's ${Object.keys(lock.packages).length - 1} packages`);
});

t.test('an edit that changes no install leaves both manifests as they were, byte for byte', async (t) => {
  const edited: Manifest = { ...pkg, version: '9.9.9', description: 'other', scripts: { ...(pkg.scripts as object), 'bench:new': 'node x.ts' }, devDependencies: { ...pkg.devDependencies, tap: '^99.0.0' } };
  const lockFor = (p: Manifest): Lockfile => ({ ...lock, packages: { ...lock.packages, '': { ...lock.packages[''], devDependencies: p.devDependencies } } });
  t.equal(JSON.stringify(buildManifest(edited, lockFor(edited))), JSON.stringify(buildManifest(pkg, lock)), 'the build stage\'s (a script, the version, a test tool\'s version)');
  t.equal(JSON.stringify(runtimeDeps(edited, lockFor(edited), ['@kubernetes/client-node'])), JSON.stringify(runtimeDeps(pkg, lock, ['@kubernetes/client-node'])), 'the runtime\'s');
  const bumped: Manifest = { ...pkg, dependencies: { ...pkg.dependencies, ajv: '^8.99.0' } };
  t.not(JSON.stringify(manifestSubset(bumped, Object.keys(bumped.dependencies ?? {}))), JSON.stringify(manifestSubset(pkg, Object.keys(pkg.dependencies ?? {}))), 'a production dependency\'s spec does change it');
  t.ok([...NOT_INSTALLED_FIELDS].every((f) => f in pkg), 'every field said not to change an install is one package.json has');
});

t.test('the bundle\'s externals: imports esbuild left outside, Node\'s builtins aside, by package', async (t) => {
  const output = (imports: Metafile['outputs'][string]['imports']): Metafile => ({
    inputs: {},
    outputs: { 'dist/main.js': { bytes: 1, inputs: {}, imports, exports: [], entryPoint: 'src/main.ts' }, 'dist/main.js.map': { bytes: 1, inputs: {}, imports: [], exports: [] } },
  });
  t.same(bundleExternals(output([
    { path: 'node:fs', kind: 'import-statement', external: true },
    { path: 'util', kind: 'require-call', external: true },
    { path: '@kubernetes/client-node', kind: 'dynamic-import', external: true },
    { path: 'supports-color', kind: 'require-call', external: true },
    { path: 'ajv/dist/runtime/equal', kind: 'require-call', external: true },
    { path: 'src/x.ts', kind: 'import-statement' },
  ])), ['@kubernetes/client-node', 'ajv', 'supports-color']);
});

t.test('the runtime installs the externals package.json depends on; the others it runs without', async (t) => {
  const { manifest, lock: runtime, absent } = runtimeDeps(pkg, lock, ['@kubernetes/client-node', 'supports-color']);
  t.same(manifest, { name: pkg.name, private: true, type: 'module', dependencies: { '@kubernetes/client-node': pkg.dependencies?.['@kubernetes/client-node'] } }, 'package.json: the type and client-node, no version');
  t.same(absent, ['supports-color'], 'supports-color is no production package: esbuild left debug\'s optional require of it outside');
  t.notOk(Object.keys(runtime.packages).some((p) => p.endsWith('/express') || p.endsWith('/pino')), 'nothing that is bundled');
  t.ok(Object.keys(runtime.packages).includes('node_modules/openid-client'), 'client-node\'s own dependencies');
  t.throws(() => runtimeDeps({ ...pkg, dependencies: {} }, lock, []), /@kubernetes\/client-node is not among package\.json's dependencies/, 'an EXTERNAL package must be a dependency');
});
