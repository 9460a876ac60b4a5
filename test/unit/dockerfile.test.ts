// The Dockerfile, checked without a container engine: the runtime stage copies only paths that
// exist after `npm run build` (or come from a stage that makes them), nothing dev-only reaches
// it, and it runs `node dist/main.js` as a non-root user under an init on the project's Node
// major. .dockerignore keeps host artefacts and secrets out of the build context.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
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

t.test('the stages: build with every dependency, production dependencies alone, then the runtime', async (t) => {
  t.same(stages.map((s) => s.name), ['build', 'prod-deps', 'runtime']);
  const runs = (s: Stage | undefined): string => (s?.instructions ?? []).filter((i) => i.op === 'RUN').map((i) => i.args).join('\n');
  t.match(runs(stage('build')), /npm ci(?! [^\n]*--omit=dev)/, 'build: npm ci with dev dependencies');
  t.match(runs(stage('build')), /npm run build/, 'build: npm run build');
  t.match(runs(stage('prod-deps')), /npm ci [^\n]*--omit=dev/, 'prod-deps: production dependencies only');
});

t.test('every stage runs the Node major the project runs on', async (t) => {
  const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; devDependencies: Record<string, string> };
  const major = /\d+/.exec(pkg.devDependencies['node'] ?? '')?.[0];
  t.equal(/\d+/.exec(pkg.engines.node)?.[0], major, 'engines and the node devDependency agree');
  for (const s of stages) t.match(s.from, new RegExp(`^node:${major}(\\b|-)`), `${s.name}: ${s.from}`);
});

t.test('every path the runtime stage copies exists after npm run build', async (t) => {
  const copies = runtime.instructions.filter((i) => i.op === 'COPY' || i.op === 'ADD').map((i) => ({ op: i.op, ...copyOf(i.args) }));
  t.ok(copies.length >= 3, `${copies.length} COPY instructions`);
  t.notOk(copies.some((c) => c.op === 'ADD'), 'COPY, never ADD');
  t.ok(existsSync(join(ROOT, 'dist', 'main.js')), 'dist/main.js exists (run npm run build before this test)');
  for (const c of copies) {
    for (const source of c.sources) {
      if (c.from === undefined) {
        t.ok(existsSync(join(ROOT, source)), `${source} (from the context) exists`);
        continue;
      }
      const from = stage(c.from);
      t.ok(from, `stage ${c.from} exists`);
      if (from === undefined) continue;
      const relative = source.startsWith(`${WORKDIR(from)}/`) ? source.slice(WORKDIR(from).length + 1) : source;
      // node_modules is made by the stage's own npm ci; everything else is the build's output.
      if (relative === 'node_modules') t.equal(c.from, 'prod-deps', 'node_modules comes from the production-only stage');
      else t.ok(existsSync(join(ROOT, relative)), `${relative} (from ${c.from}) exists after npm run build`);
    }
  }
});

t.test('the runtime stage copies nothing dev-only', async (t) => {
  const sources = runtime.instructions.filter((i) => i.op === 'COPY').flatMap((i) => {
    const c = copyOf(i.args);
    return c.sources.map((s) => ({ from: c.from, path: s.replace(/^\/app\//, '').replace(/^\.\//, '') }));
  });
  for (const { from, path } of sources) {
    t.notOk(/^(src|test|scripts|docs|chart|certs|tsconfig.*|\.ci)(\/|$)|^\.$/.test(path), `${path}: not dev-only`);
    if (path === 'node_modules') t.not(from, 'build', 'not the build stage\'s node_modules (it holds the dev dependencies)');
  }
  t.same(sources.map((s) => s.path).sort(), ['dist', 'node_modules', 'package.json'], 'dist, production node_modules and package.json ("type": "module")');
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
  for (const source of copied) t.notOk(ignored.includes(source), `${source} is in the context`);
});
