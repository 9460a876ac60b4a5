// What /proc says about processes, for tests that must prove a command left nothing running:
// which processes a command started (its descendants), which mention a path, and whether the
// very same process (pid and start time, so a recycled pid is not mistaken for it) still runs.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcInfo {
  readonly pid: number;
  readonly ppid: number;
  /** Clock ticks since boot at which it started: with the pid, identifies the process. */
  readonly startTime: string;
  /** R, S, D, Z, … */
  readonly state: string;
  readonly argv: readonly string[];
}

/** The process with this pid, or undefined when there is none (or it vanished while read). */
export function procInfo(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may hold anything: the fields follow the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (argv.at(-1) === '') argv.pop();
    return { pid, ppid: Number(fields[1]), startTime: fields[19] ?? '', state: fields[0] ?? '', argv };
  } catch {
    return undefined;
  }
}

/** Every process on the machine (zombies included). */
export function allProcesses(): ProcInfo[] {
  const found: ProcInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const info = procInfo(Number(entry));
    if (info !== undefined) found.push(info);
  }
  return found;
}

/** Live (non-zombie) processes other than this one whose command line contains `needle`. */
export function processesMentioning(needle: string): ProcInfo[] {
  return allProcesses().filter((p) => p.pid !== process.pid && p.state !== 'Z' && p.argv.some((a) => a.includes(needle)));
}

/** Live descendants of `pid` (children, their children, …), not `pid` itself. */
export function descendants(pid: number): ProcInfo[] {
  const all = allProcesses();
  const result: ProcInfo[] = [];
  let frontier = [pid];
  while (frontier.length > 0) {
    const next = all.filter((p) => frontier.includes(p.ppid) && p.state !== 'Z');
    result.push(...next);
    frontier = next.map((p) => p.pid);
  }
  return result;
}

/** True while that very process runs (a zombie has ended; a recycled pid is another process). */
export function stillRunning(proc: ProcInfo): boolean {
  const now = procInfo(proc.pid);
  return now !== undefined && now.startTime === proc.startTime && now.state !== 'Z';
}

/** The value of one variable in a process's environment (readable for our own user's processes). */
export function environOf(pid: number, name: string): string | undefined {
  try {
    const entry = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((e) => e.startsWith(`${name}=`));
    return entry?.slice(name.length + 1);
  } catch {
    return undefined;
  }
}

/** SIGKILL, ignoring a process that is already gone. */
export function killHard(proc: ProcInfo): void {
  if (!stillRunning(proc)) return;
  try {
    process.kill(proc.pid, 'SIGKILL');
  } catch {
    // gone meanwhile
  }
}

export function describe(proc: ProcInfo): string {
  return `${proc.pid} ${proc.argv.join(' ').slice(0, 160)}`;
}
