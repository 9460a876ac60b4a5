// The Dockerfile, checked without a container engine: each npm ci installs from a manifest derived
// from package.json (never package.json itself), the runtime stage copies only paths that exist
// after `npm run build` (or that a stage's RUN makes), nothing dev-only reaches it, and it runs
// `node dist/main.js` as a non-root user under an init on the project's Node major. .dockerignore
// keeps host artefacts and secrets out of the build context.
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { INSTALL_MANIFEST_FILES, RUNTIME_DEPS_DIR } from '../../scripts/build.ts';
import { OPERATOR_PROCESS_ENV, operatorArgs } from '../../scripts/operator-command.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

interface Instruction { op: string; args: string }
interface Stage { name: string; from: string; instructions: Instruction[] }

/** Stages of a Dockerfile: instructions with continuations joined, comments dropped, ARGs before the first FROM substituted. */
function parseDockerfile(text: string): Stage[] {
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op = '', args = ''] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    const expanded = args.replace(/\$\{(\w+)\}/g, (m, name: string) => globalArgs.get(name) ?? m);
    if (op.toUpperCase() === 'FROM') {
      const [, from = '', name = String(stages.length)] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(expanded) ?? [];
      stages.push({ name, from, instructions: [] });
    } else if (stages.length === 0 && op.toUpperCase() === 'ARG') {
      const [name = '', value = ''] = args.split('=');
      globalArgs.set(name, value);
    } else {
      stages.at(-1)?.instructions.push({ op: op.toUpperCase(), args: expanded });
    }
  }
  return stages;
}

/** A COPY's flags, sources and destination. */
function copyOf(args: string): { from?: string; sources: string[]; dest: string } {
  const words = args.split(/\s+/);
  const flags = words.filter((w) => w.startsWith('--'));
  const paths = words.filter((w) => !w.startsWith('--'));
  const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
  return { ...(from === undefined ? {} : { from }), sources: paths.slice(0, -1), dest: paths.at(-1) ?? '' };
}

const stages = parseDockerfile(read('Dockerfile'));
const runtime = stages.at(-1) as Stage;
const stage = (name: string): Stage | undefined => stages.find((s) => s.name === name);
const WORKDIR = (s: Stage): string => s.instructions.filter((i) => i.op === 'WORKDIR').at(-1)?.args ?? '/';

/** dist/runtime-deps: where `npm run build` writes the runtime's install manifest. */
const RUNTIME_DEPS = relative(ROOT, RUNTIME_DEPS_DIR);
const runs = (s: Stage | undefined): string => (s?.instructions ?? []).filter((i) => i.op === 'RUN').map((i) => i.args).join('\n');
const copies = (s: Stage): Array<{ from?: string; sources: string[]; dest: string }> => s.instructions.filter((i) => i.op === 'COPY').map((i) => copyOf(i.args));

t.test('the stages: manifests, the bundle, its runtime dependencies, then the runtime', async (t) => {
  t.same(stages.map((s) => s.name), ['manifests', 'build', 'runtime-deps', 'runtime']);
  t.match(runs(stage('manifests')), /^node scripts\/image\/build-manifest\.ts (\S+)$/, 'manifests: the build stage\'s package.json and lockfile, derived');
  t.match(runs(stage('build')), /npm ci /, 'build: npm ci');
  t.match(runs(stage('build')), /node scripts\/build\.ts --bundle-only/, 'build: the bundle alone (the image ships nothing of tsc\'s)');
  t.match(runs(stage('runtime-deps')), /npm ci [^\n]*--omit=dev/, 'runtime-deps: production dependencies only');
});

t.test('every npm ci installs a derived manifest, so an edit of a script reruns none', async (t) => {
  const fromContext = stages.flatMap((s) => copies(s).filter((c) => c.from === undefined && c.sources.some((src) => basename(src) === 'package.json')).map(() => s.name));
  t.same(fromContext, ['manifests'], 'only the manifests stage copies package.json from the context');
  const out = /build-manifest\.ts (\S+)/.exec(runs(stage('manifests')))?.[1] ?? '';
  const build = stage('build') as Stage;
  const firstRun = build.instructions.findIndex((i) => i.op === 'RUN');
  t.match(build.instructions[firstRun]?.args ?? '', /^npm ci /, 'the build stage\'s first RUN is npm ci');
  t.same(build.instructions.slice(0, firstRun).filter((i) => i.op === 'COPY').map((i) => copyOf(i.args)), [{ from: 'manifests', sources: [`${out}/`], dest: './' }], 'and all it has then is what build-manifest.ts wrote');
  const deps = stage('runtime-deps') as Stage;
  t.same(copies(deps), [{ from: 'build', sources: [`${posix.join(WORKDIR(build), RUNTIME_DEPS)}/`], dest: './' }], `runtime-deps installs what the bundle step wrote into ${RUNTIME_DEPS}/`);
  const directories = stages.flatMap((s) => copies(s).flatMap((c) => c.sources.filter((src) => src.endsWith('/')).map((src) => `${c.from ?? ''}:${src}`)));
  t.same(directories, [`manifests:${out}/`, `build:${posix.join(WORKDIR(build), RUNTIME_DEPS)}/`], 'the only directories copied whole are those two manifests (origin() below counts on it)');
});

/**
 * Where the file at `path` (absolute) of stage `s` comes from: a COPY from the build context or
 * another stage (followed there), or else that stage's RUN steps, which for the build stage are
 * `npm run build`'s (the path under its WORKDIR). A directory copied whole is an install manifest
 * (asserted above), which holds INSTALL_MANIFEST_FILES.
 */
function origin(s: Stage, path: string): { context: string } | { made: string; stage: string } {
  const cwd = WORKDIR(s);
  for (const c of copies(s).reverse()) {
    const dest = posix.resolve(cwd, c.dest);
    for (const source of c.sources) {
      const inDirectory = (INSTALL_MANIFEST_FILES as readonly string[]).map((f) => posix.join(dest, f)).includes(path) ? basename(path) : undefined;
      const rest = source.endsWith('/') ? inDirectory : (path === posix.join(dest, basename(source)) ? '' : undefined);
      if (rest === undefined) continue;
      if (c.from === undefined) return { context: posix.join(source, rest) };
      const from = stage(c.from);
      if (from === undefined) throw new Error(`COPY --from=${c.from}: no such stage`);
      return origin(from, posix.join(source, rest));
    }
  }
  return { made: path.startsWith(`${cwd}/`) ? path.slice(cwd.length + 1) : path, stage: s.name };
}

t.test('every path the runtime stage copies exists after npm run build', async (t) => {
  t.ok(existsSync(join(ROOT, 'dist', 'main.js')), 'dist/main.js exists (run npm run build before this test)');
  t.notOk(runtime.instructions.some((i) => i.op === 'ADD'), 'COPY, never ADD');
  const paths = copies(runtime).flatMap((c) => c.sources.map((source) => ({ c, source })));
  t.ok(paths.length >= 4, `${paths.length} paths copied`);
  for (const { c, source } of paths) {
    const from = c.from === undefined ? { context: source } : origin(stage(c.from) as Stage, source);
    if ('context' in from) t.ok(existsSync(join(ROOT, from.context)), `${source}: ${from.context} (from the context) exists`);
    else if (from.made === 'node_modules') t.equal(from.stage, 'runtime-deps', `${source}: made by runtime-deps's npm ci`);
    else t.ok(existsSync(join(ROOT, from.made)), `${source}: ${from.made} (made in ${from.stage}) exists after npm run build`);
  }
});

t.test('the runtime stage copies the bundles, their maps and their runtime dependencies, nothing else', async (t) => {
  const copied = copies(runtime).flatMap((c) => c.sources.map((source) => {
    const from = c.from === undefined ? { context: source } : origin(stage(c.from) as Stage, source);
    return 'context' in from ? `context:${from.context}` : `${from.stage}:${from.made}`;
  }));
  t.same(copied.sort(), ['build:dist/admission-worker.js', 'build:dist/admission-worker.js.map', 'build:dist/main.js', 'build:dist/main.js.map', `build:${RUNTIME_DEPS}/package.json`, 'runtime-deps:node_modules'],
    'the two bundles (dist/main.js and the admission thread it starts) and their maps, and the package.json ("type": "module") and node_modules of what they load');
});

t.test('the runtime stage runs node dist/main.js as a non-root user under an init', async (t) => {
  const last = (op: string): string | undefined => runtime.instructions.filter((i) => i.op === op).at(-1)?.args;
  t.same(JSON.parse(last('CMD') ?? 'null'), ['node', ...operatorArgs('dist/main.js')], 'CMD: node with the operator\'s V8 flags (scripts/operator-command.ts)');
  const env = new Map(runtime.instructions.filter((i) => i.op === 'ENV').map((i) => i.args.split('=', 2) as [string, string]));
  for (const [name, value] of Object.entries(OPERATOR_PROCESS_ENV)) t.equal(env.get(name), value, `ENV ${name}=${value} (scripts/operator-command.ts)`);
  const entrypoint = JSON.parse(last('ENTRYPOINT') ?? 'null') as string[] | null;
  t.match(entrypoint?.[0] ?? '', /tini$/, 'tini is PID 1: it forwards SIGTERM and reaps');
  t.match(runtime.instructions.filter((i) => i.op === 'RUN').map((i) => i.args).join('\n'), /install [^\n]*tini/, 'tini installed');
  const user = last('USER') ?? '';
  t.ok(user !== '' && !/^(root|0)(:|$)/.test(user), `USER ${user} is not root`);
  t.match(user, /^1000(:1000)?$/, 'the uid the chart runs as (runAsUser 1000)');
  t.ok(runtime.instructions.findIndex((i) => i.op === 'USER') > runtime.instructions.findLastIndex((i) => i.op === 'RUN'), 'no RUN after USER needs root');
});

t.test('.dockerignore keeps host artefacts and secrets out of the context, but not what the build copies', async (t) => {
  const ignored = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  for (const p of ['.git', 'node_modules', 'dist', 'certs', '*.key', '*.pem']) t.ok(ignored.includes(p), `${p} ignored`);
  const copied = stages.flatMap((s) => s.instructions.filter((i) => i.op === 'COPY').map((i) => copyOf(i.args)).filter((c) => c.from === undefined).flatMap((c) => c.sources));
  for (const source of copied) t.notOk(isIgnored(ignored, source), `${source} is in the context`);
  t.ok(isIgnored(ignored, 'scripts/test.ts') && isIgnored(ignored, 'test/unit/dockerfile.test.ts'), 'the reading of .dockerignore below ignores what it should');
});

/**
 * Whether the build context leaves out `path` under `rules` (.dockerignore's lines, in order), as
 * the builder reads them: a pattern names a path or a directory and everything under it, `*`
 * matches within one path segment and `**` across them, and the last rule that matches wins, a
 * `!` rule putting the path back.
 */
function isIgnored(rules: readonly string[], path: string): boolean {
  let ignored = false;
  for (const rule of rules) {
    const negated = rule.startsWith('!');
    const pattern = (negated ? rule.slice(1) : rule).replace(/^\/+|\/+$/g, '');
    const source = pattern.split('**').map((part) => part.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')).join('.*');
    if (new RegExp(`^${source}(/.*)?$`).test(path.replace(/\/+$/, ''))) ignored = !negated;
  }
  return ignored;
}
