// A burst of triggers is one pass: quiet for quietMs, never more than maxWaitMs after the first;
// triggers during a pass make one more; a failure retries after a backoff; no trigger, no pass.
import t from 'tap';
import { Backoff } from '../../../src/kube/backoff.ts';
import { silentLogger } from '../../../src/leaves/logger.ts';
import { Coalescer } from '../../../src/controller/coalescer.ts';
import { deferred, FakeClock, settle } from './fake-clock.ts';

function setup(run: () => Promise<void> = async () => undefined) {
  const clock = new FakeClock();
  const abort = new AbortController();
  let passes = 0;
  const coalescer = new Coalescer({
    run: async () => {
      passes++;
      await run();
    },
    quietMs: 1000,
    maxWaitMs: 10_000,
    signal: abort.signal,
    logger: silentLogger,
    name: 'test',
    clock,
    backoff: new Backoff({ initialMs: 500, maxMs: 8000, jitter: 'none', now: () => clock.now() }),
  });
  return { clock, abort, coalescer, passes: () => passes };
}

t.test('nothing runs until something asks, and nothing ticks while nothing changes', async (t) => {
  const { clock, passes } = setup();
  clock.advance(60_000);
  await settle();
  t.equal(passes(), 0);
  t.same(clock.pending, []);
});

t.test('a burst waits for a quiet second, but at most 10 s: 200 triggers 100 ms apart are two passes, not 200', async (t) => {
  const { clock, coalescer, passes } = setup();
  for (let i = 0; i < 200; i++) {
    coalescer.trigger();
    clock.advance(100);
    await settle();
  }
  clock.advance(1000);
  await settle();
  t.equal(passes(), 2, 'at 10 s (the cap) and at 20 s (the cap again, which the last trigger at 19.9 s makes)');
  clock.advance(60_000);
  await settle();
  t.equal(passes(), 2, 'then nothing');
});

t.test('one trigger is one pass after the quiet time', async (t) => {
  const { clock, coalescer, passes } = setup();
  coalescer.trigger();
  clock.advance(999);
  await settle();
  t.equal(passes(), 0);
  clock.advance(1);
  await settle();
  t.equal(passes(), 1);
});

t.test('triggers during a pass make exactly one more pass after it', async (t) => {
  const hold = deferred();
  let first = true;
  const { clock, coalescer, passes } = setup(async () => {
    if (first) {
      first = false;
      await hold.promise;
    }
  });
  coalescer.trigger();
  clock.advance(1000);
  await settle();
  t.equal(passes(), 1);
  for (let i = 0; i < 5; i++) coalescer.trigger();
  clock.advance(5000);
  await settle();
  t.equal(passes(), 1, 'never two at once');
  hold.resolve();
  await settle();
  clock.advance(1000);
  await settle();
  t.equal(passes(), 2);
  clock.advance(60_000);
  await settle();
  t.equal(passes(), 2);
});

t.test('a failed pass is retried after its backoff (or the quiet second, whichever is later), doubling; a success ends it', async (t) => {
  let fail = 3;
  const at: number[] = [];
  const { clock, coalescer, passes } = setup(async () => {
    at.push(clock.now());
    if (fail-- > 0) throw new Error('boom');
  });
  coalescer.trigger();
  for (let i = 0; i < 20; i++) {
    clock.advance(500);
    await settle();
  }
  t.same(at, [1000, 2000, 3000, 5000], 'failed at 1 s (retry after the quiet second), at 2 s (backoff 1 s), at 3 s (backoff 2 s), then succeeded at 5 s');
  clock.advance(60_000);
  await settle();
  t.equal(passes(), 4, 'then nothing');
  coalescer.trigger();
  clock.advance(1000);
  await settle();
  t.equal(passes(), 5, 'the backoff starts over after a success');
});

t.test('an aborted term runs nothing more', async (t) => {
  const { clock, coalescer, abort, passes } = setup();
  coalescer.trigger();
  abort.abort();
  clock.advance(60_000);
  await settle();
  t.equal(passes(), 0);
  coalescer.trigger();
  t.same(clock.pending, []);
});
