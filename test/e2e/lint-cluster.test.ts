// `kaos-operator lint --cluster` against a real control plane: an Agent whose ModelAPI exists
// only in the cluster is clean with --cluster and refused without; an unreachable cluster exits 2.
// Never skipped: if the control plane cannot start, this fails with the reason.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startControlPlane } from '../cluster/control-plane.ts';
import { spawnCli } from '../unit/cli/support.ts';

const NS = 'e2e-lint';
const CRDS = fileURLToPath(new URL('../../crds/', import.meta.url));
const plane = await startControlPlane({ log: (line) => t.comment(line) });
const dir = await mkdtemp(join(tmpdir(), 'kaos-lint-e2e-'));
t.teardown(async () => {
  await plane.stop();
  await rm(dir, { recursive: true, force: true });
});

const must = async (args: string[], input?: string): Promise<void> => {
  const r = await plane.kubectl(args, input === undefined ? {} : { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
};
await must(['apply', '-f', CRDS]);
await must(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
await must(['create', 'namespace', NS]);
await must(['apply', '-f', '-'], `apiVersion: kaos.tools/v1alpha1
kind: ModelAPI
metadata: {name: cluster-model, namespace: ${NS}}
spec: {mode: Hosted, hostedConfig: {model: "llama3:8b"}}
`);

const agentFile = join(dir, 'agent.yaml');
await writeFile(agentFile, `apiVersion: kaos.tools/v1alpha1
kind: Agent
metadata: {name: a1}
spec: {modelAPI: cluster-model}
`);
const env = { PATH: process.env.PATH ?? '', KUBECONFIG: plane.kubeconfigPath };

t.test('--cluster finds the ModelAPI the cluster holds: clean', async (t) => {
  const out = await spawnCli(['lint', '--cluster', '-n', NS, agentFile], { env });
  t.equal(out.code, 0, out.stdout + out.stderr);
  t.equal(out.stdout, '1 kaos.tools object in 1 file: 0 errors, 0 warnings\n');
});

t.test('without --cluster the set alone has no such ModelAPI: error', async (t) => {
  const out = await spawnCli(['lint', '-n', NS, agentFile], { env });
  t.equal(out.code, 1);
  t.equal(out.stdout.split('\n')[0], `${agentFile}:1 (line 1) Agent/${NS}/a1: error: spec.modelAPI: Not found: "cluster-model"`);
});

t.test('default --cluster takes MODEL_NAME from the cluster\'s ModelAPI', async (t) => {
  const out = await spawnCli(['default', '--cluster', '-n', NS, agentFile], { env });
  t.equal(out.code, 0, out.stderr);
  t.match(out.stdout, /- name: MODEL_NAME\n\s+value: llama3:8b/);
});

t.test('an unreachable cluster: a clear message and exit 2', async (t) => {
  const kubeconfig = join(dir, 'dead.kubeconfig');
  await writeFile(kubeconfig, `apiVersion: v1
kind: Config
clusters: [{name: dead, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: dead, context: {cluster: dead, user: u}}]
current-context: dead
`);
  const out = await spawnCli(['lint', '--cluster', agentFile], { env: { PATH: env.PATH, KUBECONFIG: kubeconfig } });
  t.equal(out.code, 2);
  t.match(out.stderr, /^kaos-operator: cannot read the cluster at https:\/\/127\.0\.0\.1:9 \(kubeconfig .*dead\.kubeconfig\): /);
  t.equal(out.stdout, '');
});
