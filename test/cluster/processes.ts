// Child processes that are always cleaned up: started with their output in a log file, stopped
// by pid (SIGTERM, then SIGKILL after a grace period), and watched by a reaper that stops them
// if this process dies without doing it itself (SIGKILL, OOM, a crash).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import type { Socket } from 'node:net';

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Settles when the process has exited and been reaped. */
  readonly exited: Promise<ExitStatus>;
  hasExited(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /** The last lines of its log, for error messages. */
  tail(lines?: number): string;
}

export interface StartOptions {
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/**
 * Starts `binary` in its own process group (so a terminal's Ctrl-C reaches only the parent,
 * which then stops children in order), with stdout and stderr appended to `logFile` through a
 * file descriptor: no pipe ties the child's life to ours or fills up unread.
 */
export function startProcess(name: string, binary: string, args: readonly string[], options: StartOptions): ManagedProcess {
  const fd = openSync(options.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(binary, args, {
      stdio: ['ignore', fd, fd],
      detached: true,
      env: options.env ?? process.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
  } finally {
    closeSync(fd); // the child has its own copy
  }
  let exitStatus: ExitStatus | undefined;
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once('exit', (code, signal) => {
      exitStatus = { code, signal };
      resolve(exitStatus);
    });
    child.once('error', () => {
      // spawn failure (ENOENT, EACCES): no 'exit' follows.
      exitStatus ??= { code: -1, signal: null };
      resolve(exitStatus);
    });
  });
  const pid = child.pid;
  if (pid === undefined) {
    throw new Error(`${name}: could not start ${binary}`);
  }
  const hasExited = (): boolean => exitStatus !== undefined;
  return {
    name,
    pid,
    logFile: options.logFile,
    exited,
    hasExited,
    async stop(graceMs = 5000): Promise<void> {
      if (hasExited()) return;
      signal(pid, 'SIGTERM');
      const timer = setTimeout(() => signal(pid, 'SIGKILL'), graceMs);
      try {
        await exited;
      } finally {
        clearTimeout(timer);
      }
    },
    tail(lines = 30): string {
      return tailFile(options.logFile, lines);
    },
  };
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // ESRCH: already gone.
  }
}

export function tailFile(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** True while a process with this pid exists (zombies included). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// The reaper: a shell in its own session that reads "pid N" lines on stdin. A "done" line means
// the parent cleaned up itself. End of input without "done" means the parent died: it then stops
// the recorded pids in reverse order of start (as stop() does: the apiserver before etcd, or the
// apiserver's shutdown waits on its storage), each with TERM, up to 5 s, KILL, and removes the
// directory. Linux has no parent-death signal reachable from Node (PR_SET_PDEATHSIG), so the
// pipe closing is the signal. Limit: a pid recycled in the instant between the parent's death
// and the reaper's kill could be hit; the reaper checks nothing else.
const REAPER_SCRIPT = `
dir=$1; pids=
while IFS= read -r line; do
  case $line in
    "pid "*) pids="\${line#pid } $pids" ;;
    done) exit 0 ;;
  esac
done
alive() {
  # kill -0 succeeds on a zombie (an orphan that init has not reaped yet): exclude those.
  kill -0 "$1" 2>/dev/null && [ "$(sed -n 's/^[0-9]* (.*) \\([A-Za-z]\\).*/\\1/p' /proc/$1/stat 2>/dev/null)" != Z ]
}
for p in $pids; do
  kill -TERM "$p" 2>/dev/null || continue
  i=0
  while [ $i -lt 50 ] && alive "$p"; do sleep 0.1; i=$((i + 1)); done
  alive "$p" && kill -KILL "$p" 2>/dev/null
done
[ -n "$dir" ] && rm -rf -- "$dir"
`;

export interface Reaper {
  readonly pid: number;
  /** Records a pid to stop if this process dies. */
  watch(pid: number): void;
  /** Tells the reaper that cleanup is done, and waits for it to exit. */
  release(): Promise<void>;
}

export function startReaper(dir: string): Reaper {
  const child = spawn('sh', ['-c', REAPER_SCRIPT, 'kaos-reaper', dir], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start the reaper shell');
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  const stdin = child.stdin as Socket;
  stdin.on('error', () => {}); // EPIPE if it died: nothing to do about it
  // Neither the reaper nor its pipe may keep the parent alive.
  child.unref();
  stdin.unref();
  return {
    pid,
    watch(p: number): void {
      stdin.write(`pid ${p}\n`);
    },
    async release(): Promise<void> {
      // Referenced again so that the wait below keeps the event loop (and so the caller) alive.
      child.ref();
      stdin.ref();
      stdin.end('done\n');
      const timer = setTimeout(() => signal(pid, 'SIGKILL'), 5000);
      try {
        await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
