// The operator's image, built from the repository's Dockerfile by `npm run image` (the README's
// command; a real engine, podman from Debian's packages where the machine has none) and run as
// the chart runs it (test/support/chart-pod.ts reads the Deployment `helm template` renders):
// user 1000 with the fsGroup, a read-only root filesystem, every capability dropped, no new
// privileges, the chart's memory limit, env and grace period, its certificate Secret and a
// kubeconfig mounted. Against the local control plane, on the host's network: the webhooks answer
// through the API server, the controller brings a sample to Ready, metrics and health answer,
// and `<engine> stop` ends it with exit 0 within the grace period, its Lease released; then, with
// a kubeconfig only @kubernetes/client-node reads (an exec credential plugin), it loads
// client-node from the image's node_modules and leads. And what the image holds: the bundle, its
// source map (a stack trace maps to src/ with --enable-source-maps), and exactly the packages the
// bundle imports and what they need, at their locked versions; no dev tools, no package-manager
// caches, no shell at run time. Never skipped: an engine that cannot build or run the image fails
// this file with the engine's own message.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import t from 'tap';
import { parse, stringify } from 'yaml';
import type { KubeObject } from '../../src/api/lookup.ts';
import { LEASE, resourcePath } from '../../src/kube/paths.ts';
import type { Lease } from '../../src/kube/leader-election.ts';
import { engineOk, engineRun } from '../../scripts/image/engine.ts';
import { IMAGE, ROOT } from '../../scripts/image/build.ts';
import { operatorArgs } from '../../scripts/operator-command.ts';
import { startLocalStack } from '../../scripts/local-stack.ts';
import { operatorContainer, quantity } from '../support/chart-pod.ts';
import {
  bundleImports, CHART_NAMESPACE, CHART_OLLAMA_IMAGE, exportImage, imageConfig, installedPackages, lockedPackages, nodeOf, prepareImage, reachablePackages, rssMiB, startContainerOperator, type ContainerOperator,
} from './support/container.ts';
import { metricSum, scrape, waitForStatus } from './support/lifecycle.ts';
import { procInfo } from './support/proc.ts';
import { eventually } from '../support/poll.ts';

// A cold build (a local base from Debian's packages, then every npm ci of the Dockerfile) takes
// minutes beyond the files' usual 10.
t.setTimeout(40 * 60_000);

const log = (line: string): void => t.comment(line);
const { printed, engine, deployment } = await prepareImage(log);
const pod = deployment.spec.template.spec;
const grace = pod.terminationGracePeriodSeconds ?? 30;

t.test('npm run image prints the image and its size', async (t) => {
  const line = printed.trim().split('\n').at(-1) ?? '';
  const m = /^(\S+) ([\d.]+) MiB \((podman|docker)\)$/.exec(line);
  t.ok(m, `the last line names the image and its size: ${line}`);
  t.equal(m?.[1], IMAGE, 'the image is tagged with the package version');
  t.equal(operatorContainer(deployment).image, IMAGE, 'the chart, given the docs\' values, runs that image');
  t.comment(`image ${IMAGE}: ${m?.[2]} MiB (${engine.name})`);
});

t.test('what the image holds', async (t) => {
  const config = await imageConfig(engine, IMAGE);
  t.equal(config.User, '1000:1000', 'USER 1000:1000');
  t.same(config.Entrypoint, ['/usr/bin/tini', '--'], 'tini as PID 1, exec form');
  t.same(config.Cmd, ['node', ...operatorArgs('dist/main.js')], 'node dist/main.js, exec form: no shell between');
  const fs = await exportImage(engine, IMAGE);
  t.teardown(fs.remove);
  const at = (path: string): string => join(fs.dir, path);

  // The bundle, its map, and what the bundle loads from node_modules: nothing else.
  t.same(readdirSync(at('app')).sort(), ['dist', 'node_modules', 'package.json'], '/app: dist, node_modules, package.json');
  t.same(readdirSync(at('app/dist')).sort(), ['admission-worker.js', 'admission-worker.js.map', 'main.js', 'main.js.map'], '/app/dist: the two bundles and their source maps (nothing of tsc\'s)');
  const manifest = JSON.parse(readFileSync(at('app/package.json'), 'utf8')) as { type?: string; dependencies?: Record<string, string> };
  t.equal(manifest.type, 'module', 'package.json: "type": "module" (dist/main.js is an ES module)');
  t.notOk('scripts' in manifest || 'devDependencies' in manifest, 'and none of the project\'s scripts or dev dependencies');
  const imports = [...new Set((await Promise.all(['main.js', 'admission-worker.js'].map((b) => bundleImports(at(`app/dist/${b}`))))).flat())].sort();
  t.ok(imports.length > 0, `the image's bundles import ${imports.join(', ')}`);
  t.same(Object.keys(manifest.dependencies ?? {}).sort(), imports, 'package.json depends on exactly the packages the bundles import');

  // Exactly the packages Node can reach from those, each at the version package-lock.json locked
  // for its place in the tree; none of the files Node never loads.
  const locked = await lockedPackages();
  const installed = installedPackages(at('app'));
  const { reached, missing } = reachablePackages(at('app'), imports);
  t.same(missing, [], 'every package they need is installed');
  t.same([...installed.keys()].filter((p) => !reached.has(p)), [], 'every package installed is one they need');
  t.same([...installed].filter(([p, v]) => locked.get(p)?.version !== v || locked.get(p)?.dev !== false), [], 'each at its locked version, a production one');
  const notLoaded = readdirSync(at('app/node_modules'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(d\.[mc]?ts(\.map)?|[mc]?js\.map)$/.test(e.name)).map((e) => relative(at('app'), join(e.parentPath, e.name)));
  t.same(notLoaded.slice(0, 5), [], 'no type declarations or source maps in node_modules');
  t.comment(`${installed.size} packages: ${imports.join(', ')} and what ${imports.length === 1 ? 'it needs' : 'they need'}, of the lockfile's ${locked.size}`);

  // No package managers.
  for (const tool of ['npm', 'npx', 'corepack', 'yarn', 'yarnpkg']) t.notOk(existsSync(at(`usr/local/bin/${tool}`)), `no ${tool}`);
  t.notOk(existsSync(at('usr/local/lib/node_modules')), 'no global node_modules');

  // No package-manager caches.
  for (const cache of ['root/.npm', 'home/node/.npm', 'root/.cache', 'home/node/.cache', 'usr/local/share/.cache', 'root/.yarn']) t.notOk(existsSync(at(cache)), `no ${cache}`);
  t.same(readdirSync(at('var/lib/apt/lists')).filter((f) => f !== 'partial' && f !== 'lock'), [], 'no apt lists');
  const aptCache = readdirSync(at('var/cache/apt'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name !== 'lock');
  t.same(aptCache.map((e) => e.name), [], 'no apt cache (package indexes, .debs)');
  t.same(readdirSync(at('tmp')), [], 'an empty /tmp');

  const du = (dir: string): number => readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile()).reduce((sum, e) => sum + statSync(join(e.parentPath, e.name)).size, 0);
  t.comment(`/app/node_modules ${(du(at('app/node_modules')) / 2 ** 20).toFixed(1)} MiB, /app/dist ${(du(at('app/dist')) / 2 ** 20).toFixed(1)} MiB, node ${(statSync(at('usr/local/bin/node')).size / 2 ** 20).toFixed(1)} MiB`);
});

t.test('NODE_OPTIONS=--enable-source-maps maps a stack trace to src/ through the image\'s dist/main.js.map', async (t) => {
  // A kubeconfig without a current context fails the startup in src/kube/kubeconfig.ts, and the
  // operator logs the stack.
  const startupFailure = async (env: string[]): Promise<string> => {
    const r = await engineRun(engine, ['run', '--rm', ...engine.containerArgs, '--env', 'KUBECONFIG=/app/package.json', ...env.flatMap((e) => ['--env', e]), IMAGE]);
    t.equal(r.code, 1, `exit 1 (${env.join(' ') || 'no NODE_OPTIONS'})`);
    return (JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as { err?: { stack?: string } }).err?.stack ?? r.stdout + r.stderr;
  };
  t.match(await startupFailure(['NODE_OPTIONS=--enable-source-maps']), /at kubeconfigConnection \(\/app\/src\/kube\/kubeconfig\.ts:\d+:\d+\)/, 'the frame names src/kube/kubeconfig.ts');
  t.match(await startupFailure([]), /at kubeconfigConnection \(file:\/\/\/app\/dist\/main\.js:\d+:\d+\)/, 'without it, dist/main.js');
});

const stack = await startLocalStack({
  log,
  launch: (o) => startContainerOperator(engine, deployment, { ...o, podName: 'kaos-operator-0' }),
});
t.teardown(async () => {
  if (!t.passing()) t.comment(`container log (tail):\n${stack.operator.log().split('\n').slice(-40).join('\n')}`);
  await stack.stop();
});
const operator = stack.operator as ContainerOperator;
const node = nodeOf(operator.pid);
const startupRss = rssMiB(node.pid);
const { plane, client } = stack;

t.test('it runs as the chart says', async (t) => {
  t.comment(`startup RSS of the container's node: ${startupRss.toFixed(1)} MiB`);
  const init = procInfo(operator.pid);
  t.equal(init?.argv[0], '/usr/bin/tini', 'tini is the container\'s first process');
  t.same(node.argv, ['node', ...operatorArgs('dist/main.js')], 'node dist/main.js under it, started without a shell');
  const status = readFileSync(`/proc/${node.pid}/status`, 'utf8');
  const field = (name: string): string => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1]?.trim() ?? '';
  const sc = { ...pod.securityContext, ...operatorContainer(deployment).securityContext };
  t.same(field('Uid').split(/\s+/), Array(4).fill(String(sc.runAsUser)), `uid ${sc.runAsUser}`);
  t.same(field('Gid').split(/\s+/), Array(4).fill(String(sc.runAsGroup)), `gid ${sc.runAsGroup}`);
  t.ok(field('Groups').split(/\s+/).includes(String(pod.securityContext?.fsGroup)), `fsGroup ${pod.securityContext?.fsGroup} among its groups`);
  t.equal(field('CapEff'), '0000000000000000', 'no capabilities');
  t.equal(field('CapBnd'), '0000000000000000', 'none to gain');
  t.equal(field('NoNewPrivs'), '1', 'no new privileges');
  t.equal(field('Seccomp'), '2', 'a seccomp filter (the engine\'s default profile)');
  // Written by node itself in the container: no shell needed for that either.
  const write = (path: string): Promise<string> => engineRun(engine, ['exec', operator.name, 'node', '-e', `require('fs').writeFileSync(${JSON.stringify(path)}, 'x'); console.log('written')`])
    .then((r) => (r.stdout + r.stderr).trim());
  t.match(await write('/app/dist/x'), /EROFS/, 'the root filesystem is read-only');
  t.equal(await write('/tmp/x'), 'written', '/tmp (the chart\'s emptyDir) is writable');
  const limit = operatorContainer(deployment).resources?.limits?.memory;
  const memory = Number((await engineOk(engine, ['inspect', '--format', '{{.HostConfig.Memory}}', operator.name])).trim());
  t.equal(memory, quantity(limit ?? '0'), `the chart's memory limit (${limit})`);
});

t.test('the webhooks answer through the API server', async (t) => {
  const sample = join(ROOT, 'test', 'fixtures', 'samples', '1-simple-echo-agent.yaml');
  const applied = await plane.kubectl(['apply', '-f', sample]);
  t.equal(applied.code, 0, `kubectl apply -f 1-simple-echo-agent.yaml: ${applied.stderr}`);
  const modelApi = await client.get<KubeObject & { spec: { container?: { image?: string } } }>('/apis/kaos.tools/v1alpha1/namespaces/kaos-simple/modelapis/simple-modelapi');
  t.equal(modelApi.spec.container?.image, CHART_OLLAMA_IMAGE, 'defaulted by the mutating webhook with the image the chart\'s config gave');
  t.match(modelApi.metadata?.annotations?.['kaos.tools/defaulted'] ?? '', /spec\.container\.image/, 'and recorded as defaulted');
  const bad = { apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name: 'bad', namespace: 'kaos-simple' }, spec: { modelAPI: 'gpt' } };
  const refused = await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(bad) });
  t.not(refused.code, 0, 'kubectl apply of an Agent whose ModelAPI does not exist fails');
  // In Kubernetes' own format; a reference to another object is no schema's to check.
  t.equal(refused.stderr.trim(), 'The Agent "bad" is invalid: spec.modelAPI: Not found: "gpt"', 'with the field and the reason');
  // The log reaches its file through `<engine> logs --follow`, a moment later.
  const line = await eventually('the refusal in the container\'s log', () => operator.log().split('\n')
    .find((l) => l.includes('"webhook":"/validate-kaos-tools-v1alpha1-agent"') && l.includes('"name":"bad"')), { timeoutMs: 10_000, intervalMs: 100 });
  t.match(line, /"code":422/, 'refused by the container\'s validating webhook');
});

t.test('the controller brings the sample to Ready', async (t) => {
  for (const [kind, name] of [['ModelAPI', 'simple-modelapi'], ['MCPServer', 'simple-echo-mcp'], ['Agent', 'simple-agent']] as const) {
    const ready = await waitForStatus(client, kind, 'kaos-simple', name, (o) => o.status?.phase === 'Ready', 'Ready', 120_000);
    t.equal(ready.status?.phase, 'Ready', `${kind} ${name} Ready`);
  }
});

t.test('metrics and health answer', async (t) => {
  const c = operatorContainer(deployment);
  for (const [probe, path] of [['readiness', c.readinessProbe?.httpGet?.path], ['liveness', c.livenessProbe?.httpGet?.path]] as const) {
    t.ok(path, `the chart has a ${probe} probe`);
    const r = await fetch(`http://127.0.0.1:${operator.metricsPort}${path ?? ''}`);
    t.equal(r.status, 200, `${probe} probe ${path} answers 200`);
  }
  const metrics = await scrape(operator.metricsPort);
  t.equal(metricSum(metrics, 'leader_election_master_status'), 1, 'it leads (the chart turns leader election on)');
  t.ok((metricSum(metrics, 'controller_runtime_reconcile_total') ?? 0) >= 3, 'and has reconciled the sample');
});

t.test(`${engine.name} stop: exit 0 within the grace period, the Lease released`, async (t) => {
  const lease = (): Promise<Lease> => client.get<Lease>(resourcePath(LEASE, { namespace: CHART_NAMESPACE, name: 'kaos-operator' }));
  t.equal((await lease()).spec?.holderIdentity, operator.podName, `the Lease names ${operator.podName}`);
  const started = Date.now();
  const code = await operator.stop();
  const seconds = (Date.now() - started) / 1000;
  t.equal(code, 0, 'exit code 0: SIGTERM reached node through tini and the shutdown ran');
  t.ok(seconds < grace, `stopped in ${seconds.toFixed(1)} s, within the chart's ${grace} s`);
  t.equal((await lease()).spec?.holderIdentity, '', 'the Lease is released');
  t.match(operator.log(), /"msg":"shutting down"/, 'it logged its shutdown');
});

t.test('a kubeconfig only client-node reads (an exec credential plugin): it loads from the image and the operator leads', async (t) => {
  // The operator's own token, handed out by a plugin that node runs in the container (the image
  // has no shell) and that leaves a mark in /tmp each time it runs. src/kube/kubeconfig.ts reads
  // no exec user, so client.ts imports @kubernetes/client-node: from /app/node_modules, with
  // everything it needs there.
  const config = parse(await readFile(stack.operatorKubeconfig, 'utf8')) as { users: Array<{ name: string; user: Record<string, unknown> }> };
  const token = config.users[0]?.user.token;
  t.type(token, 'string', 'the stack\'s kubeconfig has a token to hand out');
  const credential = { apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token } };
  const plugin = `require('fs').appendFileSync('/tmp/exec-plugin-runs', 'x'); process.stdout.write(${JSON.stringify(JSON.stringify(credential))})`;
  config.users = config.users.map((u) => ({ name: u.name, user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'node', args: ['-e', plugin], interactiveMode: 'Never' } } }));
  const kubeconfig = join(plane.dir, 'exec.kubeconfig');
  await writeFile(kubeconfig, stringify(config), { mode: 0o600 });

  const exec = await startContainerOperator(engine, deployment, { kubeconfig, certDir: stack.certDir, logFile: join(plane.dir, 'operator-exec.log'), podName: 'kaos-operator-exec' });
  t.teardown(async () => {
    if (!t.passing()) t.comment(`exec container log (tail):\n${exec.log().split('\n').slice(-30).join('\n')}`);
    await exec.stop();
  });
  const runs = await engineRun(engine, ['exec', exec.name, 'node', '-e', 'process.stdout.write(require("fs").readFileSync("/tmp/exec-plugin-runs", "utf8"))']);
  t.ok(runs.code === 0 && runs.stdout.length >= 1, `the plugin ran (${runs.stdout.length} times): ${runs.stderr.trim()}`);
  const ready = await fetch(`http://127.0.0.1:${exec.metricsPort}/readyz`);
  t.equal(ready.status, 200, 'it is ready: its cache listed and watches every kind with the plugin\'s token');
  const lease = await eventually('kaos-operator-exec to hold the Lease', async () => {
    const l = await client.get<Lease>(resourcePath(LEASE, { namespace: CHART_NAMESPACE, name: 'kaos-operator' }));
    return l.spec?.holderIdentity === exec.podName ? l : undefined;
  }, { timeoutMs: 30_000, intervalMs: 200 });
  t.equal(lease.spec?.holderIdentity, exec.podName, 'it leads: its writes authenticate with the plugin\'s token');
  const execRss = rssMiB(nodeOf(exec.pid).pid);
  t.comment(`RSS of the container's node with client-node loaded: ${execRss.toFixed(1)} MiB (without: ${startupRss.toFixed(1)} MiB at startup)`);
  t.equal(await exec.stop(), 0, 'it stops with exit 0');
});
