import t from 'tap';
import { Backoff } from '../../../src/kube/backoff.ts';

t.test('doubles per failure with equal jitter, capped', async (t) => {
  const lo = new Backoff({ initialMs: 100, maxMs: 1000, random: () => 0 });
  t.same([1, 2, 3, 4, 5, 6].map(() => lo.next()), [50, 100, 200, 400, 500, 500], 'random 0: half of each step');
  const hi = new Backoff({ initialMs: 100, maxMs: 1000, random: () => 0.999999 });
  t.same([1, 2, 3, 4, 5, 6].map(() => hi.next()), [100, 200, 400, 800, 1000, 1000], 'random ~1: the full step, never above the cap');
});

t.test('defaults: 500 ms first, capped at 30 s', async (t) => {
  const b = new Backoff({ random: () => 0.999999 });
  const delays = Array.from({ length: 12 }, () => b.next());
  t.equal(delays[0], 500);
  t.equal(Math.max(...delays), 30_000);
});

t.test('resets after a healthy period, not after a short one', async (t) => {
  let now = 0;
  const b = new Backoff({ initialMs: 100, maxMs: 10_000, resetAfterMs: 60_000, random: () => 0.999999, now: () => now });
  b.next(); b.next(); b.next();
  t.equal(b.attempts, 3);
  b.healthy();
  now += 1000; // healthy for a second only: keeps growing
  t.equal(b.next(), 800);
  b.healthy();
  now += 60_000; // healthy for a minute: starts over
  t.equal(b.next(), 100);
  t.equal(b.attempts, 1);
});

t.test('healthy() keeps the start of the healthy period', async (t) => {
  let now = 0;
  const b = new Backoff({ initialMs: 100, resetAfterMs: 1000, random: () => 0.999999, now: () => now });
  b.next(); b.next();
  b.healthy();
  now = 600;
  b.healthy(); // a later watch opening does not restart the clock
  now = 1100;
  t.equal(b.next(), 100);
});
