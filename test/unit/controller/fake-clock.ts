// A Clock whose time moves only when a test says so; timers fire in order of their deadline.
import type { Clock } from '../../../src/controller/queue.ts';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  #now = 0;
  #seq = 0;
  readonly #timers = new Set<Timer>();

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const timer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn };
    this.#timers.add(timer);
    return timer;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as Timer);
  }

  /** Pending timers' delays from now, soonest first. */
  get pending(): number[] {
    return [...this.#timers].sort((a, b) => a.at - b.at || a.seq - b.seq).map((t) => t.at - this.#now);
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      const due = [...this.#timers].filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      this.#timers.delete(due);
      this.#now = due.at;
      due.fn();
    }
    this.#now = end;
  }
}

/** Lets every pending promise callback run (reconcilers here resolve within a few turns). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A promise with its resolve/reject exposed, to hold a reconcile open. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (err: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
