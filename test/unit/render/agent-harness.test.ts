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
import { renderAgent } from '../../../src/render/agent.ts';
import type { AgentDeps, AgentInput } from '../../../src/render/inputs.ts';
import type { Deployment } from '../../../src/render/k8s.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { config, mainContainer } from './helpers.ts';

/**
 * The clone, written out: the repository and branch only from the env (docs/api.md, "Agent
 * harness"), and a token, for an https:// URL only, handed to git by a credential helper that reads
 * GIT_TOKEN when git asks, instead of spliced into the URL (where it would be in git's arguments
 * and stay in /workspace/.git/config); the helper, holding no secret, is stored for pushes.
 */
const HELPER = '!f() { if [ "$1" = get ] && [ -n "${GIT_TOKEN:-}" ]; then echo username=x-access-token; echo "password=${GIT_TOKEN}"; fi; }; f';
const CLONE_SCRIPT = `set -e
set -- clone --depth 1 --single-branch --branch "$WORKSPACE_BRANCH" -- "$WORKSPACE_REPO_URL" /workspace
helper=
if [ -n "\${GIT_TOKEN:-}" ]; then
  case "$WORKSPACE_REPO_URL" in
    https://*) helper='${HELPER}' ;;
  esac
fi
if [ -z "$helper" ]; then exec git "$@"; fi
git -c credential.helper="$helper" "$@"
exec git -C /workspace config credential.helper "$helper"`;

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
    command: ['sh', '-c', CLONE_SCRIPT],
    env: [
      { name: 'WORKSPACE_REPO_URL', value: 'https://github.com/acme/repo.git' },
      { name: 'WORKSPACE_BRANCH', value: 'main' },
    ],
    volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
    securityContext: HARDENED,
  }], 'hardened like every generated container');
  t.notOk(CLONE_SCRIPT.includes('github.com'), 'the repository is not in the script');
});

t.test('credentials: GIT_TOKEN from the Secret key, by reference only, in the clone and (for pushes) in agent after HARNESS_*', async (t) => {
  const deployment = renderAgent(harnessAgent({
    harness: { runtime: 'pi', workspace: { repoURL: 'https://github.com/acme/repo.git', branch: 'feature/x', credentialsSecretRef: { name: 'git-creds', key: 'token' } } },
  }), deps, config).deployment;
  t.strictSame(podOf(deployment).initContainers?.[0]?.env, [
    { name: 'WORKSPACE_REPO_URL', value: 'https://github.com/acme/repo.git' },
    { name: 'WORKSPACE_BRANCH', value: 'feature/x' },
    { name: 'GIT_TOKEN', valueFrom: { secretKeyRef: { name: 'git-creds', key: 'token' } } },
  ]);
  t.strictSame((mainContainer(deployment).env ?? []).slice(-4), [
    { name: 'HARNESS_DRIVER', value: 'pi' },
    { name: 'HARNESS_WORKSPACE', value: '/workspace' },
    { name: 'HARNESS_STATE_DIR', value: '/state' },
    { name: 'GIT_TOKEN', valueFrom: { secretKeyRef: { name: 'git-creds', key: 'token' } } },
  ]);
  const without = renderAgent(harnessAgent({ harness: { runtime: 'pi', workspace: { repoURL: 'https://github.com/acme/repo.git' } } }), deps, config).deployment;
  t.notOk((mainContainer(without).env ?? []).some((e) => e.name === 'GIT_TOKEN'), 'no credentials, no GIT_TOKEN');
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
  t.same(pod.initContainers?.[0]?.command, ['sh', '-c', CLONE_SCRIPT], 'the rest kept');
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

/** Runs the clone script with `env` in a real sh, a stand-in git recording each call's arguments; returns them and what else happened. */
async function runClone(env: Record<string, string>): Promise<{ calls: string[][]; files: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'kaos-clone-'));
  try {
    const bin = join(dir, 'bin');
    await exec('mkdir', [bin]);
    // One argument per line, a line `--end--` after each call: printf '%s\n' keeps each argument exactly as git would get it.
    await writeFile(join(bin, 'git'), `#!/bin/sh\nprintf '%s\\n' "$@" --end-- >> "${join(dir, 'args')}"\n`);
    await chmod(join(bin, 'git'), 0o755);
    await exec('sh', ['-c', CLONE_SCRIPT], { cwd: dir, env: { PATH: `${bin}:/usr/bin:/bin`, ...env } });
    const lines = (await readFile(join(dir, 'args'), 'utf8')).split('\n').slice(0, -1);
    const calls: string[][] = [[]];
    for (const line of lines) {
      if (line === '--end--') calls.push([]);
      else calls[calls.length - 1]?.push(line);
    }
    return { calls: calls.slice(0, -1), files: (await readdir(dir)).sort() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const CLONE_ARGS = (branch: string, url: string): string[] => ['clone', '--depth', '1', '--single-branch', '--branch', branch, '--', url, '/workspace'];

t.test('the clone script: URL and branch reach git as one argument each, never run by the shell', async (t) => {
  const hostile = 'https://example.com/r.git$(touch pwned)`touch pwned2`;touch pwned3';
  const { calls, files } = await runClone({ WORKSPACE_REPO_URL: hostile, WORKSPACE_BRANCH: 'main$(touch pwned4)' });
  t.strictSame(calls, [CLONE_ARGS('main$(touch pwned4)', hostile)]);
  t.strictSame(files, ['args', 'bin'], 'no command in them ran');
});

t.test('the clone script: a token reaches git through the credential helper, never in an argument or the URL; only for https://', async (t) => {
  const token = 'ghp_$(id)';
  const https = await runClone({ WORKSPACE_REPO_URL: 'https://github.com/acme/repo.git', WORKSPACE_BRANCH: 'dev', GIT_TOKEN: token });
  t.strictSame(https.calls, [
    ['-c', `credential.helper=${HELPER}`, ...CLONE_ARGS('dev', 'https://github.com/acme/repo.git')],
    ['-C', '/workspace', 'config', 'credential.helper', HELPER],
  ], 'the clone with the helper, the URL as written; then the helper stored in the repository for pushes');
  t.notOk(https.calls.flat().some((a) => a.includes('ghp_')), 'the token is in no argument');
  const ssh = await runClone({ WORKSPACE_REPO_URL: 'git@github.com:acme/repo.git', WORKSPACE_BRANCH: 'dev', GIT_TOKEN: 't' });
  t.strictSame(ssh.calls, [CLONE_ARGS('dev', 'git@github.com:acme/repo.git')], 'not for an ssh URL');
  const http = await runClone({ WORKSPACE_REPO_URL: 'http://git.example/acme/repo.git', WORKSPACE_BRANCH: 'dev', GIT_TOKEN: 't' });
  t.strictSame(http.calls, [CLONE_ARGS('dev', 'http://git.example/acme/repo.git')], 'not for plain http, where it would cross the network in the clear');
  const none = await runClone({ WORKSPACE_REPO_URL: 'https://github.com/acme/repo.git', WORKSPACE_BRANCH: 'dev' });
  t.strictSame(none.calls, [CLONE_ARGS('dev', 'https://github.com/acme/repo.git')], 'without a token, no helper');
  const empty = await runClone({ WORKSPACE_REPO_URL: 'https://github.com/acme/repo.git', WORKSPACE_BRANCH: 'dev', GIT_TOKEN: '' });
  t.strictSame(empty.calls, [CLONE_ARGS('dev', 'https://github.com/acme/repo.git')], 'an empty token is none');
});

t.test("the credential helper, run by a real git: KAOS's user and the token from the env of the container that runs git, nothing without one", async (t) => {
  const fill = (env: Record<string, string>) => new Promise<{ code: number; stdout: string }>((resolve) => {
    const child = execFile('git', ['-c', `credential.helper=${HELPER}`, 'credential', 'fill'], { env: { PATH: '/usr/bin:/bin', HOME: tmpdir(), GIT_TERMINAL_PROMPT: '0', ...env } }, (err, stdout) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout });
    });
    child.stdin?.end('protocol=https\nhost=github.com\npath=acme/repo.git\n\n');
  });
  const answered = await fill({ GIT_TOKEN: 'ghp_$(id) x' });
  t.equal(answered.code, 0);
  t.equal(answered.stdout, 'protocol=https\nhost=github.com\nusername=x-access-token\npassword=ghp_$(id) x\n', 'the token as written, no command in it run');
  const unanswered = await fill({});
  t.not(unanswered.code, 0, 'no GIT_TOKEN: git has no credential (and may not prompt)');
  t.notMatch(unanswered.stdout, 'password=');
});
