// A private /tmp for one process, as systemd's PrivateTmp= gives a service: the process runs in a
// mount namespace of its own where a directory of ours is mounted on /tmp. Why the control plane
// needs it: kube-controller-manager's host-path provisioner makes every volume at the fixed path
// /tmp/hostpath_pv/<uuid> (pkg/volume/hostpath in Kubernetes; no flag moves it), which would put
// them outside the control plane's directory, shared between control planes, and left behind by
// any that stops with claims still bound. With a private /tmp they live in the control plane's
// directory and go with it, even when the launcher is killed outright.
//
// util-linux's unshare makes the namespace (mount propagation private by default, so nothing is
// seen outside it); as root that is all, otherwise it also makes a user namespace mapping the user
// to root in it, which Linux lets an unprivileged user do where user namespaces are allowed. The
// shell it runs mounts, then execs the binary: the pid started is the binary's, so stopping it by
// pid (and the reaper) work unchanged, and the namespace ends with it.
import { spawnSync } from 'node:child_process';
import { isAbsolute, join, relative } from 'node:path';

/** A command line: what to spawn, with which arguments. */
export interface Command {
  file: string;
  args: string[];
}

/**
 * Mounts $1 on /tmp, after binding each directory of the pairs that follow (up to `--`: the
 * directory, its path relative to /tmp) back in at its path: the process still finds its binary,
 * kubeconfig and keys where they were. --rbind carries those binds onto /tmp with $1.
 */
const MOUNT_SCRIPT = `
set -e
tmp=$1; shift
while [ "$1" != -- ]; do mkdir -p "$tmp/$2"; mount --bind "$1" "$tmp/$2"; shift 2; done
shift
mount --rbind "$tmp" /tmp
exec "$@"
`;

/** unshare's flags for a mount namespace: a user namespace too unless we are root. */
export function unshareFlags(uid: number): string[] {
  return uid === 0 ? ['--mount'] : ['--user', '--map-root-user', '--mount'];
}

/** Whether `path` is strictly inside `dir` (both absolute and real). */
function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/**
 * The command that runs `file args` with `tmp` as its /tmp, keeping in view the directories it
 * reads (`keep`: the control plane's, the binary's) that are under /tmp, each once (one inside
 * another is kept with it). Paths must be real (no symlinks): the test against /tmp is by path.
 */
export function privateTmpCommand(tmp: string, keep: readonly string[], file: string, args: readonly string[], uid: number): Command {
  const under = [...new Set(keep)].filter((dir) => isInside(dir, '/tmp'));
  const outermost = under.filter((dir) => !under.some((other) => isInside(dir, other)));
  const pairs = outermost.flatMap((dir) => [dir, relative('/tmp', dir)]);
  return { file: 'unshare', args: [...unshareFlags(uid), 'sh', '-c', MOUNT_SCRIPT, 'kaos-private-tmp', tmp, ...pairs, '--', file, ...args] };
}

/** Where `path`, as the process with `tmp` for its /tmp sees it, is outside its namespace. */
export function outsidePath(tmp: string, path: string): string {
  return isInside(path, '/tmp') ? join(tmp, relative('/tmp', path)) : path;
}

/**
 * Whether this machine lets us make a private /tmp: tries the same unshare and a bind mount of
 * `dir` on itself. The reason when not (unshare missing, namespaces or mounts not permitted).
 */
export function privateTmpSupport(dir: string, uid: number): { ok: true } | { ok: false; reason: string } {
  const res = spawnSync('unshare', [...unshareFlags(uid), 'mount', '--bind', dir, dir], { encoding: 'utf8', timeout: 10_000 });
  if (res.error !== undefined) return { ok: false, reason: res.error.message };
  if (res.status !== 0) return { ok: false, reason: res.stderr.trim() || `unshare exited ${String(res.status ?? res.signal)}` };
  return { ok: true };
}
