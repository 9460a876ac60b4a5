// The run command (`node scripts/start.ts`, what `npm start` runs after building) as a child
// process of a test: its output captured as the user's terminal would show it, waits on what it
// prints, and a cleanup that ends it and everything it started, by pid, whatever state it is in.
import { spawn } from 'node:child_process';
import { statSync, readdirSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { runCommand } from '../../cluster/control-plane.ts';
import { ROOT } from '../../../scripts/local-stack.ts';
import { descendants, killHard, processesMentioning, stillRunning, type ProcInfo } from './proc.ts';

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunCommand {
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  /** Settles when the process has exited. */
  readonly exited: Promise<ExitStatus>;
  hasExited(): boolean;
  /**
   * Resolves with the match once `pattern` matches the whole stderr so far; rejects when the
   * process exits first or after `timeoutMs` (a deadline against hanging, not an assertion).
   */
  waitForStderr(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  /** Same, for stdout (the operator's JSON log lines). */
  waitForStdout(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  /** Ctrl-C in a terminal: SIGINT to the whole foreground process group. */
  interrupt(): void;
  /** Resolves with the exit status, or rejects after `timeoutMs`. */
  waitForExit(timeoutMs: number): Promise<ExitStatus>;
  /**
   * Cleanup for t.teardown: SIGKILL to every process it started that is still running (its
   * descendants, and anything mentioning `alsoMentioning`, e.g. the control plane's directory),
   * then itself. Safe to call in any state, and more than once.
   */
  killAll(alsoMentioning?: string): Promise<void>;
}

/** Environment for the command: this one's, minus everything that would steer it or the test runner's hooks. */
export function cleanEnv(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(KUBECONFIG|WEBHOOK_|METRICS_|KAOS_|NODE_OPTIONS$|NODE_V8_COVERAGE$|TAP|_TAPJS|LOG_LEVEL$|REFERENCE_POLICY$|DEFAULT_|GATEWAY_|SECURITY_|AUTHZ_|AIB_|TOKEN_EXCHANGE_ENABLED$)/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

export function startRunCommand(env: NodeJS.ProcessEnv): RunCommand {
  // Its own process group, as a shell runs a foreground job, so that interrupt() reaches it and
  // the children that share its group exactly as Ctrl-C would.
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'start.ts')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start scripts/start.ts');
  let out = '';
  let err = '';
  let status: ExitStatus | undefined;
  const listeners = new Set<() => void>();
  const changed = (): void => { for (const l of listeners) l(); };
  child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; changed(); });
  child.stderr.setEncoding('utf8').on('data', (c: string) => { err += c; changed(); });
  // Settles on 'close', when every byte it wrote has been read, or a moment after 'exit' if a
  // process it left behind still holds its stdout or stderr (which the test then reports).
  const exited = new Promise<ExitStatus>((resolve) => {
    const settle = (s: ExitStatus): void => { if (status === undefined) { status = s; changed(); resolve(s); } };
    child.once('exit', (code, signal) => { setTimeout(() => settle({ code, signal }), 5000); });
    child.once('close', (code, signal) => settle({ code, signal }));
  });
  let known: ProcInfo[] = [];
  const remember = (more: readonly ProcInfo[]): void => {
    for (const p of more) if (!known.some((k) => k.pid === p.pid && k.startTime === p.startTime)) known.push(p);
  };

  const waitFor = (what: 'stdout' | 'stderr', pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const m = pattern.exec(what === 'stdout' ? out : err);
        if (m !== null) return done(() => resolve(m));
        if (status !== undefined) {
          return done(() => reject(new Error(`scripts/start.ts exited (${JSON.stringify(status)}) before its ${what} matched ${pattern}; stderr:\n${err}`)));
        }
      };
      const timer = setTimeout(() => done(() => reject(new Error(`no match for ${pattern} on ${what} after ${timeoutMs} ms; stderr:\n${err}`))), timeoutMs);
      const done = (settle: () => void): void => { clearTimeout(timer); listeners.delete(check); settle(); };
      listeners.add(check);
      check();
    });

  return {
    pid,
    stdout: () => out,
    stderr: () => err,
    exited,
    hasExited: () => status !== undefined,
    waitForStderr: (pattern, timeoutMs) => waitFor('stderr', pattern, timeoutMs),
    waitForStdout: (pattern, timeoutMs) => waitFor('stdout', pattern, timeoutMs),
    interrupt(): void {
      remember(descendants(pid));
      process.kill(-pid, 'SIGINT');
    },
    async waitForExit(timeoutMs: number): Promise<ExitStatus> {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`scripts/start.ts still running ${timeoutMs} ms later; stderr:\n${err}`)), timeoutMs);
      });
      try {
        return await Promise.race([exited, deadline]);
      } finally {
        clearTimeout(timer);
      }
    },
    async killAll(alsoMentioning?: string): Promise<void> {
      if (status === undefined) remember(descendants(pid));
      if (alsoMentioning !== undefined) remember(processesMentioning(alsoMentioning));
      for (const p of known) killHard(p);
      if (status === undefined) {
        try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
        await exited;
      }
      const deadline = Date.now() + 10_000;
      while (known.some(stillRunning) && Date.now() < deadline) await sleep(100);
      known = known.filter(stillRunning);
    },
  };
}

/** Runs a command line as printed for the user (words separated by spaces), with `env`. */
export function runPrinted(line: string, env: NodeJS.ProcessEnv, input?: string): ReturnType<typeof runCommand> {
  const [bin, ...args] = line.trim().split(/ +/);
  if (bin === undefined) throw new Error('empty command line');
  return runCommand(bin, args, { env, ...(input === undefined ? {} : { input }) });
}

export function httpStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 2000, agent: false }, (r) => { r.resume(); resolve(r.statusCode ?? 0); });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Newest modification time (ms) of the files under `dir` whose names end with `suffix`. */
export function newestMtime(dir: string, suffix: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(suffix)) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}
