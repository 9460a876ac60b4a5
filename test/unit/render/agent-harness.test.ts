// Rendering an Agent's harness (docs/api.md, "Agent harness"), expectations written from the
// contract: the runtime's image unless spec.container names one, HARNESS_* right after LOG_LEVEL,
// and with a workspace the emptyDir volumes `workspace` and `state` mounted in `agent` and the
// `workspace-clone` initContainer, whose repository, branch and token reach the shell only as env
// — checked here by running its script in a real sh with a stand-in git.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { WORKSPACE_CLONE_SCRIPT } from '../../../src/render/harness.ts';
import { renderAgent } from '../../../src/render/agent.ts';
import type { AgentDeps, AgentInput } from '../../../src/render/inputs.ts';
import type { Deployment } from '../../../src/render/k8s.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { config, mainContainer } from './helpers.ts';

const meta = { name: 'coder', namespace: 'ns', uid: 'uid-coder' };
const deps: AgentDeps = { modelAPI: { endpoint: 'http://modelapi-m.ns.svc.cluster.local:8000' }, mcpServers: [], peers: [], harness: { image: 'r/pi:1', driver: 'pi' } };
const harnessAgent = (spec: Partial<AgentInput['spec']> = {}): AgentInput => ({ metadata: meta, spec: { modelAPI: 'm', model: 'smollm2:135m', harness: { runtime: 'pi' }, ...spec } });
const podOf = (d: Deployment) => d.spec.template.spec;
const HARDENED = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };

t.test('no workspace: the runtime\'s image, HARNESS_* after LOG_LEVEL, no init container or volume', async (t) => {
  const deployment = renderAgent(harnessAgent(), deps, config).deployment;
  const main = mainContainer(deployment);
  t.equal(main.image, 'r/pi:1');
  t.strictSame(main.env, [
    { name: 'AGENT_NAME', value: 'coder' },
    { name: 'MODEL_API_URL', value: 'http://modelapi-m.ns.svc.cluster.local:8000' },
    { name: 'MODEL_NAME', value: 'smollm2:135m' },
    { name: 'LOG_LEVEL', value: 'INFO' },
    { name: 'HARNESS_DRIVER', value: 'pi' },
    { name: 'HARNESS_WORKSPACE', value: '/workspace' },
    { name: 'HARNESS_STATE_DIR', value: '/state' },
  ]);
  t.equal(main.volumeMounts, undefined);
  t.equal(podOf(deployment).initContainers, undefined);
  t.equal(podOf(deployment).volumes, undefined);
});

t.test('KAOS 2026\'s probe timings for a harness Agent; the original ones for an Agent without', async (t) => {
  const main = mainContainer(renderAgent(harnessAgent(), deps, config).deployment);
  t.strictSame(main.livenessProbe, { httpGet: { path: '/health', port: 8000, scheme: 'HTTP' }, initialDelaySeconds: 5, periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 });
  t.strictSame(main.readinessProbe, { httpGet: { path: '/ready', port: 8000, scheme: 'HTTP' }, initialDelaySeconds: 3, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 2 });
  const plain = mainContainer(renderAgent({ metadata: meta, spec: { modelAPI: 'm' } }, deps, config).deployment);
  t.strictSame(plain.livenessProbe, { httpGet: { path: '/health', port: 8000, scheme: 'HTTP' }, initialDelaySeconds: 30, periodSeconds: 10 });
  t.strictSame(plain.readinessProbe, { httpGet: { path: '/ready', port: 8000, scheme: 'HTTP' }, initialDelaySeconds: 10, periodSeconds: 5 });
});

t.test('spec.container.image wins over the entry\'s; spec.container.env wins over HARNESS_*', async (t) => {
  const main = mainContainer(renderAgent(harnessAgent({ container: { image: 'me/pi:9', env: [{ name: 'HARNESS_DRIVER', value: 'mine' }] } }), deps, config).deployment);
  t.equal(main.image, 'me/pi:9');
  t.same(main.env?.filter((e) => e.name.startsWith('HARNESS_') || e.name === 'LOG_LEVEL'), [
    { name: 'HARNESS_DRIVER', value: 'mine' },
    { name: 'LOG_LEVEL', value: 'INFO' },
    { name: 'HARNESS_WORKSPACE', value: '/workspace' },
    { name: 'HARNESS_STATE_DIR', value: '/state' },
  ], 'the user\'s entry in its own place (newer shape: container.env after the prompts), the generated one left out');
  const atTrace = mainContainer(renderAgent(harnessAgent(), deps, loadConfig({ DEFAULT_LOG_LEVEL: 'TRACE' })).deployment).env ?? [];
  t.same(atTrace.slice(-4).map((e) => e.name), ['LOG_LEVEL', 'HARNESS_DRIVER', 'HARNESS_WORKSPACE', 'HARNESS_STATE_DIR'], 'HARNESS_* last, right after LOG_LEVEL');
});

t.test('a workspace: volumes, mounts and the clone, field by field; the branch defaults to main', async (t) => {
  const deployment = renderAgent(harnessAgent({ harness: { runtime: 'pi', workspace: { repoURL: 'https://github.com/acme/repo.git' } } }), deps, config).deployment;
  const pod = podOf(deployment);
  t.strictSame(pod.volumes, [
    { name: 'workspace', emptyDir: {} },
    { name: 'state', emptyDir: {} },
  ]);
  t.strictSame(mainContainer(deployment).volumeMounts, [
    { name: 'workspace', mountPath: '/workspace' },
    { name: 'state', mountPath: '/state' },
  ]);
  t.strictSame(pod.initContainers, [{
    name: 'workspace-clone',
    image: 'alpine/git:2.45.2',
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', WORKSPACE_CLONE_SCRIPT],
    env: [
      { name: 'WORKSPACE_REPO_URL', value: 'https://github.com/acme/repo.git' },
      { name: 'WORKSPACE_BRANCH', value: 'main' },
    ],
    volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
    securityContext: HARDENED,
  }], 'hardened like every generated container');
  t.notOk(WORKSPACE_CLONE_SCRIPT.includes('github.com'), 'the repository is not in the script');
});

t.test('credentials: GIT_TOKEN from the Secret key, by reference only', async (t) => {
  const deployment = renderAgent(harnessAgent({
    harness: { runtime: 'pi', workspace: { repoURL: 'https://github.com/acme/repo.git', branch: 'feature/x', credentialsSecretRef: { name: 'git-creds', key: 'token' } } },
  }), deps, config).deployment;
  t.strictSame(podOf(deployment).initContainers?.[0]?.env, [
    { name: 'WORKSPACE_REPO_URL', value: 'https://github.com/acme/repo.git' },
    { name: 'WORKSPACE_BRANCH', value: 'feature/x' },
    { name: 'GIT_TOKEN', valueFrom: { secretKeyRef: { name: 'git-creds', key: 'token' } } },
  ]);
});

t.test('it all precedes spec.podSpec: a user can change the clone, the volumes and the mounts there', async (t) => {
  const deployment = renderAgent(harnessAgent({
    harness: { runtime: 'pi', workspace: { repoURL: 'https://github.com/acme/repo.git' } },
    podSpec: {
      initContainers: [{ name: 'workspace-clone', image: 'me/git:2' }],
      volumes: [{ name: 'state', persistentVolumeClaim: { claimName: 'coder-state' } }],
    },
  }), deps, config).deployment;
  const pod = podOf(deployment);
  t.equal(pod.initContainers?.[0]?.image, 'me/git:2', 'the clone\'s image replaced, by name');
  t.same(pod.initContainers?.[0]?.command, ['sh', '-c', WORKSPACE_CLONE_SCRIPT], 'the rest kept');
  t.strictSame(pod.volumes, [{ name: 'workspace', emptyDir: {} }, { name: 'state', persistentVolumeClaim: { claimName: 'coder-state' } }], 'a volume replaced whole, by name');
});

t.test('under ServiceAccount identity: the token volume before the workspace\'s, HARNESS_* then AGENT_AUTH_* last, the clone without the token', async (t) => {
  const identity = loadConfig({ SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount' });
  const rendered = renderAgent(harnessAgent({ harness: { runtime: 'pi', workspace: { repoURL: 'https://github.com/acme/repo.git' } } }), deps, identity);
  const pod = podOf(rendered.deployment);
  t.equal(rendered.serviceAccount?.metadata.name, 'kaos-agent-coder');
  t.equal(pod['serviceAccountName'], 'kaos-agent-coder');
  t.same(pod.volumes?.map((v) => v.name), ['agent-auth-token', 'workspace', 'state'], 'the token volume first');
  t.strictSame(mainContainer(rendered.deployment).volumeMounts, [
    { name: 'agent-auth-token', mountPath: '/var/run/secrets/kaos-agent', readOnly: true },
    { name: 'workspace', mountPath: '/workspace' },
    { name: 'state', mountPath: '/state' },
  ]);
  t.same((mainContainer(rendered.deployment).env ?? []).slice(-5), [
    { name: 'HARNESS_DRIVER', value: 'pi' },
    { name: 'HARNESS_WORKSPACE', value: '/workspace' },
    { name: 'HARNESS_STATE_DIR', value: '/state' },
    { name: 'AGENT_AUTH_IDENTITY', value: 'kaos://agent/ns/coder' },
    { name: 'AGENT_AUTH_TOKEN_FILE', value: '/var/run/secrets/kaos-agent/token' },
  ]);
  t.strictSame(pod.initContainers?.[0]?.volumeMounts, [{ name: 'workspace', mountPath: '/workspace' }], 'the clone sees the workspace only');
});

t.test('an original-shape Agent renders as before (no harness, nothing new)', async (t) => {
  const plain: AgentInput = { metadata: meta, spec: { modelAPI: 'm' } };
  const deployment = renderAgent(plain, { ...deps, harness: undefined }, config).deployment;
  t.equal(mainContainer(deployment).image, config.images.agent);
  t.notOk((mainContainer(deployment).env ?? []).some((e) => e.name.startsWith('HARNESS_') || e.name === 'LOG_LEVEL'));
});

const exec = promisify(execFile);

/** Runs the clone script with `env` in a real sh, a stand-in git recording its arguments; returns them and what else happened. */
async function runClone(env: Record<string, string>): Promise<{ args: string[]; files: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'kaos-clone-'));
  try {
    const bin = join(dir, 'bin');
    await exec('mkdir', [bin]);
    // One argument per line, NUL-free: printf '%s\n' keeps each exactly as git would get it.
    await writeFile(join(bin, 'git'), `#!/bin/sh\nprintf '%s\\n' "$@" > "${join(dir, 'args')}"\n`);
    await chmod(join(bin, 'git'), 0o755);
    await exec('sh', ['-c', WORKSPACE_CLONE_SCRIPT], { cwd: dir, env: { PATH: `${bin}:/usr/bin:/bin`, ...env } });
    const args = (await readFile(join(dir, 'args'), 'utf8')).split('\n').slice(0, -1);
    return { args, files: (await readdir(dir)).sort() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

t.test('the clone script: URL and branch reach git as one argument each, never run by the shell', async (t) => {
  const hostile = 'https://example.com/r.git$(touch pwned)`touch pwned2`;touch pwned3';
  const { args, files } = await runClone({ WORKSPACE_REPO_URL: hostile, WORKSPACE_BRANCH: 'main$(touch pwned4)' });
  t.strictSame(args, ['clone', '--depth', '1', '--single-branch', '--branch', 'main$(touch pwned4)', '--', hostile, '/workspace']);
  t.strictSame(files, ['args', 'bin'], 'no command in them ran');
});

t.test('the clone script: a token goes into an https:// URL as KAOS puts it there, and nowhere else', async (t) => {
  const https = await runClone({ WORKSPACE_REPO_URL: 'https://github.com/acme/repo.git', WORKSPACE_BRANCH: 'dev', GIT_TOKEN: 'ghp_$(id)' });
  t.equal(https.args[7], 'https://x-access-token:ghp_$(id)@github.com/acme/repo.git');
  const ssh = await runClone({ WORKSPACE_REPO_URL: 'git@github.com:acme/repo.git', WORKSPACE_BRANCH: 'dev', GIT_TOKEN: 't' });
  t.equal(ssh.args[7], 'git@github.com:acme/repo.git', 'not into an ssh one');
  const none = await runClone({ WORKSPACE_REPO_URL: 'https://github.com/acme/repo.git', WORKSPACE_BRANCH: 'dev' });
  t.equal(none.args[7], 'https://github.com/acme/repo.git', 'without a token, the URL as written');
  const empty = await runClone({ WORKSPACE_REPO_URL: 'https://github.com/acme/repo.git', WORKSPACE_BRANCH: 'dev', GIT_TOKEN: '' });
  t.equal(empty.args[7], 'https://github.com/acme/repo.git', 'an empty token is none');
});
