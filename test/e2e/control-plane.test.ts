// The launcher itself, against the real binaries: it starts, kubectl works with its kubeconfig,
// and every way of ending it (stop(), a failed start, SIGTERM, SIGKILL of the parent) leaves no
// process, no temporary directory and no listening port behind. Never skipped: if the control
// plane cannot start, these tests fail with the reason.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { eventually } from '../support/poll.ts';
import { buildBinaries, startControlPlane } from '../cluster/control-plane.ts';
import { expectedKubeVersion } from '../cluster/kube-version.ts';
import { pidAlive } from '../cluster/processes.ts';

const LAUNCHER = fileURLToPath(new URL('../cluster/control-plane.ts', import.meta.url));
const log = (line: string): void => { t.comment(line); };

/** Pids of live (non-zombie) processes whose command line mentions `needle`. */
function processesMentioning(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const state = /^\d+ \(.*\) (\S)/.exec(readFileSync(`/proc/${entry}/stat`, 'utf8'))?.[1];
      if (cmdline.includes(needle) && state !== 'Z') found.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

const binDir = await buildBinaries(log);

t.test('starts, serves kubectl, and stop() leaves no process, directory or port', async (t) => {
  const started = Date.now();
  const plane = await startControlPlane({ binDir, log });
  const startMs = Date.now() - started;
  t.comment(`control plane started in ${(startMs / 1000).toFixed(1)} s`);
  const pids = plane.pids();
  const port = Number(new URL(plane.server).port);
  try {
    t.ok(existsSync(plane.kubeconfigPath), 'kubeconfig written');
    t.ok(existsSync(join(binDir, 'kubectl')), 'kubectl in binDir');
    const ns = await plane.kubectl(['get', 'ns', '-o', 'name']);
    t.equal(ns.code, 0, `kubectl get ns: ${ns.stderr}`);
    t.match(ns.stdout, /namespace\/default/);
    t.match(ns.stdout, /namespace\/kube-system/);
    const version = await plane.kubectl(['version', '-o', 'json']);
    t.equal(JSON.parse(version.stdout).serverVersion.gitVersion, expectedKubeVersion(), 'the server reports its stamped version');
    const whoami = await plane.kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.groups}']);
    t.match(whoami.stdout, /system:masters/, 'the kubeconfig is the admin');
    // The namespace controller runs: a deleted namespace goes away instead of hanging Terminating.
    t.equal((await plane.kubectl(['create', 'ns', 'doomed'])).code, 0);
    const del = await plane.kubectl(['delete', 'ns', 'doomed', '--wait=true', '--timeout=60s']);
    t.equal(del.code, 0, `namespace deletion completes: ${del.stderr}`);
    // Workloads run: the scheduler places pods on the kwok nodes, kwok makes them Ready, the
    // Deployment controller reports the rollout complete.
    const nodes = await plane.kubectl(['get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}']);
    t.equal(nodes.stdout.trim(), plane.nodes.map((n) => `${n}=True`).join(' '), 'every kwok node Ready');
    t.equal((await plane.kubectl(['create', 'deployment', 'web', '--image=example.invalid/web:1', '--replicas=2'])).code, 0);
    const rollout = await plane.kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s'], { timeoutMs: 90_000 });
    t.equal(rollout.code, 0, `the Deployment rolls out: ${rollout.stdout}${rollout.stderr}`);
    const pods = await plane.kubectl(['get', 'pods', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.status.phase}/{.spec.nodeName}/{.spec.serviceAccountName} {end}']);
    t.match(pods.stdout.trim(), /^Running\/kwok-node-\d\/default Running\/kwok-node-\d\/default$/, 'two pods Running on kwok nodes, with the default ServiceAccount');
    for (const [name, pid] of Object.entries(pids)) t.ok(pidAlive(pid), `${name} (${pid}) running`);
    t.ok(await portOpen(port), 'apiserver listening');
  } finally {
    await plane.stop();
  }
  for (const [name, pid] of Object.entries(pids)) t.notOk(pidAlive(pid), `${name} (${pid}) gone`);
  t.notOk(existsSync(plane.dir), 'temporary directory removed');
  t.notOk(await portOpen(port), 'apiserver port closed');
  t.same(processesMentioning(plane.dir), [], 'no process mentions the directory');
  await plane.stop(); // idempotent
});

t.test('extra static tokens authenticate as their user', async (t) => {
  const plane = await startControlPlane({ binDir, log, extraTokens: [{ token: 'op-token', user: 'system:serviceaccount:kaos-system:kaos-operator', uid: 'op-uid', groups: ['system:serviceaccounts'] }] });
  t.teardown(() => plane.stop());
  const res = await plane.kubectl(['--token', 'op-token', 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
  t.equal(res.stdout, 'system:serviceaccount:kaos-system:kaos-operator');
  const denied = await plane.kubectl(['--token', 'op-token', 'get', 'ns']);
  t.not(denied.code, 0, 'RBAC is on: the new identity has no rights yet');
  t.match(denied.stderr, /forbidden/i);
});

t.test('a failed start cleans up what it had started and says why', async (t) => {
  const fakeBin = await mkdtemp(join(tmpdir(), 'kaos-fakebin-'));
  const tmpRoot = await mkdtemp(join(tmpdir(), 'kaos-root-'));
  t.teardown(async () => {
    await rm(fakeBin, { recursive: true, force: true });
    await rm(tmpRoot, { recursive: true, force: true });
  });
  for (const bin of ['etcd', 'kube-controller-manager', 'kube-scheduler', 'kwok', 'kubectl']) await symlink(join(binDir, bin), join(fakeBin, bin));
  await writeFile(join(fakeBin, 'kube-apiserver'), '#!/bin/sh\necho "E0101 fake apiserver: cannot start" >&2\nexit 3\n');
  await chmod(join(fakeBin, 'kube-apiserver'), 0o755);
  await t.rejects(startControlPlane({ binDir: fakeBin, log, tmpRoot }), /kube-apiserver exited \(code 3[\s\S]*fake apiserver: cannot start/);
  t.same(readdirSync(tmpRoot), [], 'temporary directory removed');
  t.same(processesMentioning(tmpRoot), [], 'etcd (started before the failure) is gone');
});

/** Runs the launcher standalone in a child process; resolves once it printed its kubeconfig. */
async function standalone(t: { teardown(fn: () => unknown): void }): Promise<{ pid: number; dir: string; exited: Promise<{ code: number | null; signal: string | null }> }> {
  const child = spawn(process.execPath, [LAUNCHER], { env: { ...process.env, KAOS_K8S_BIN_DIR: binDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => { err += c; });
  const dir = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const m = /KUBECONFIG=(\S+)\/kubeconfig/.exec(out);
      if (m?.[1] !== undefined) resolve(m[1]);
    });
    void exited.then((s) => reject(new Error(`launcher exited early (${JSON.stringify(s)}):\n${err}`)));
  });
  if (child.pid === undefined) throw new Error('no pid');
  return { pid: child.pid, dir, exited };
}

t.test('standalone: SIGTERM stops the control plane, then the process ends by that signal', async (t) => {
  const run = await standalone(t);
  t.ok(processesMentioning(run.dir).length >= 3, 'etcd, apiserver and controller-manager running');
  process.kill(run.pid, 'SIGTERM');
  const status = await run.exited;
  t.equal(status.signal, 'SIGTERM', 'the signal is re-raised after cleanup');
  t.notOk(existsSync(run.dir), 'directory removed before exit');
  t.same(processesMentioning(run.dir), [], 'no children left when it exits');
});

t.test('standalone: SIGKILL of the parent — the reaper stops the children and removes the directory', async (t) => {
  const run = await standalone(t);
  const children = processesMentioning(run.dir);
  t.ok(children.length >= 4, 'children and the reaper running');
  const killed = Date.now();
  process.kill(run.pid, 'SIGKILL');
  await run.exited;
  await eventually('the reaper to clean up', () => processesMentioning(run.dir).length === 0 && !existsSync(run.dir), { timeoutMs: 30_000, intervalMs: 100 });
  t.comment(`reaper cleaned up ${((Date.now() - killed) / 1000).toFixed(1)} s after the SIGKILL`);
  t.same(processesMentioning(run.dir), [], `all of ${children.join(', ')} gone`);
});
