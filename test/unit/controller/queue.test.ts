import t from 'tap';
import { silentLogger } from '../../../src/leaves/logger.ts';
import { ExponentialRateLimiter, WorkQueue, type ReconcileResult, type Reconciler } from '../../../src/controller/queue.ts';
import { createControllerMetrics, type ControllerMetrics, type ReconcileResultLabel } from '../../../src/controller/metrics.ts';
import { createRegistry } from '../../../src/leaves/prometheus.ts';
import { FakeClock, deferred, settle } from './fake-clock.ts';

/** A reconciler whose runs a test holds open and ends by hand, recording each start. */
function heldReconciler() {
  const runs: { key: string; signal: AbortSignal; done: ReturnType<typeof deferred<ReconcileResult>> }[] = [];
  const reconcile: Reconciler = (key, signal) => {
    const done = deferred<ReconcileResult>();
    runs.push({ key, signal, done });
    return done.promise;
  };
  return { runs, reconcile, keys: () => runs.map((r) => r.key) };
}

/** Metrics as a list of calls, to assert what the queue reports. */
function recordingMetrics() {
  const results: { result: ReconcileResultLabel; seconds: number }[] = [];
  const started: number[] = [];
  const counts = { added: 0, retried: 0, depth: 0, active: 0, max: 0, failing: 0 };
  const reasons: string[] = [];
  const metrics: ControllerMetrics = {
    added: () => void counts.added++,
    depth: (n) => void (counts.depth = n),
    started: (s) => void started.push(s),
    retried: () => void counts.retried++,
    reconciled: (result, seconds) => void results.push({ result, seconds }),
    failed: (reason) => void reasons.push(reason),
    failing: (n) => void (counts.failing = n),
    activeWorkers: (n) => void (counts.active = n),
    maxConcurrentReconciles: (n) => void (counts.max = n),
  };
  return { metrics, results, started, counts, reasons };
}

t.test('duplicate adds of a waiting key merge into one run', async (t) => {
  const clock = new FakeClock();
  const r = heldReconciler();
  const m = recordingMetrics();
  const q = new WorkQueue({ name: 'agent', reconcile: r.reconcile, clock, metrics: m.metrics });
  q.add('Agent/ns/a');
  q.add('Agent/ns/a');
  q.add('Agent/ns/b');
  q.add('Agent/ns/a');
  t.equal(q.depth, 2);
  t.equal(m.counts.added, 2, 'merged adds are not counted');
  q.start();
  await settle();
  t.same(r.keys(), ['Agent/ns/a', 'Agent/ns/b'], 'in order of first arrival');
  t.equal(q.depth, 0);
  t.equal(m.counts.depth, 0);
});

t.test('a key never runs twice at once; added while running, it runs once more after', async (t) => {
  const clock = new FakeClock();
  const r = heldReconciler();
  const q = new WorkQueue({ name: 'agent', reconcile: r.reconcile, clock, concurrency: 4 });
  q.start();
  q.add('k');
  await settle();
  t.equal(r.runs.length, 1);
  q.add('k');
  q.add('k');
  await settle();
  t.equal(r.runs.length, 1, 'not started again while running, though workers are free');
  t.equal(q.depth, 1, 'waits, merged');
  r.runs[0]?.done.resolve();
  await settle();
  t.equal(r.runs.length, 2, 'runs once more after');
  r.runs[1]?.done.resolve();
  await settle();
  t.equal(r.runs.length, 2, 'and only once');
  await q.whenIdle();
});

t.test('concurrency bounds the reconciles running at once; default 4', async (t) => {
  const clock = new FakeClock();
  const r = heldReconciler();
  const m = recordingMetrics();
  const q = new WorkQueue({ name: 'agent', reconcile: r.reconcile, clock, concurrency: 2, metrics: m.metrics });
  t.equal(m.counts.max, 2, 'reports its maximum');
  q.start();
  for (const k of ['a', 'b', 'c', 'd', 'e']) q.add(k);
  await settle();
  t.same(r.keys(), ['a', 'b']);
  t.equal(q.active, 2);
  t.equal(m.counts.active, 2);
  t.equal(q.depth, 3);
  r.runs[1]?.done.resolve();
  await settle();
  t.same(r.keys(), ['a', 'b', 'c'], 'a free worker takes the next key in order');

  const r4 = heldReconciler();
  const q4 = new WorkQueue({ name: 'mcpserver', reconcile: r4.reconcile, clock });
  q4.start();
  for (const k of ['a', 'b', 'c', 'd', 'e', 'f']) q4.add(k);
  await settle();
  t.equal(r4.runs.length, 4);
  t.throws(() => new WorkQueue({ name: 'x', reconcile: r.reconcile, concurrency: 0 }), /concurrency must be a positive integer, got 0/);
  t.throws(() => new WorkQueue({ name: 'x', reconcile: r.reconcile, concurrency: 1.5 }), /positive integer/);
});

t.test('a failing key backs off 5 ms doubling; a success resets it', async (t) => {
  const clock = new FakeClock();
  let fail = true;
  const runs: string[] = [];
  const m = recordingMetrics();
  const q = new WorkQueue({
    name: 'agent',
    clock,
    metrics: m.metrics,
    reconcile: (key) => {
      runs.push(key);
      if (fail) throw new Error('conflict');
    },
  });
  q.start();
  q.add('k');
  await settle();
  t.equal(runs.length, 1);
  t.same(clock.pending, [5], 'first retry after 5 ms');
  clock.advance(4);
  await settle();
  t.equal(runs.length, 1, 'not before');
  clock.advance(1);
  await settle();
  t.equal(runs.length, 2);
  t.same(clock.pending, [10]);
  clock.advance(10);
  await settle();
  t.same(clock.pending, [20]);
  clock.advance(20);
  await settle();
  t.same(clock.pending, [40]);
  t.equal(m.counts.retried, 4);
  t.same(m.results.map((r) => r.result), ['error', 'error', 'error', 'error']);
  t.same(m.reasons, ['Internal', 'Internal', 'Internal', 'Internal'], 'a thrown Error that is no API error fails for reason Internal');
  t.equal(m.counts.failing, 1, 'one key failing');

  fail = false;
  clock.advance(40);
  await settle();
  t.same(m.results.at(-1)?.result, 'success');
  t.same(clock.pending, [], 'nothing more after a success');
  t.equal(m.counts.failing, 0, 'a success ends its failing');
  fail = true;
  q.add('k');
  await settle();
  t.same(clock.pending, [5], 'backoff starts over after the success');
});

t.test('a new add of a key in backoff runs it at once (a dependency appeared)', async (t) => {
  const clock = new FakeClock();
  const runs: string[] = [];
  const q = new WorkQueue({
    name: 'agent',
    clock,
    reconcile: (key) => {
      runs.push(key);
      if (runs.length === 1) return Promise.reject(new Error('ModelAPI missing'));
      return undefined;
    },
  });
  q.start();
  q.add('k');
  await settle();
  t.same(clock.pending, [5]);
  q.add('k');
  await settle();
  t.equal(runs.length, 2, 'did not wait for the backoff');
});

t.test('the rate limiter doubles up to its cap of 1,000 s and forgets per key', async (t) => {
  const limiter = new ExponentialRateLimiter();
  const delays = Array.from({ length: 25 }, () => limiter.when('a'));
  t.same(delays.slice(0, 4), [5, 10, 20, 40]);
  t.equal(delays[17], 5 * 2 ** 17, '655 s: still doubling');
  t.equal(delays[18], 1_000_000, 'then capped at 1,000 s');
  t.equal(delays[24], 1_000_000);
  t.equal(limiter.failures('a'), 25);
  t.equal(limiter.when('b'), 5, 'per key');
  limiter.forget('a');
  t.equal(limiter.when('a'), 5);
  for (let i = 0; i < 2000; i++) limiter.when('c');
  t.equal(limiter.when('c'), 1_000_000, 'no overflow after many failures');
  t.throws(() => new ExponentialRateLimiter({ baseMs: 0 }), /need 0 < baseMs <= maxMs/);
  t.throws(() => new ExponentialRateLimiter({ baseMs: 10, maxMs: 5 }), /need 0 < baseMs <= maxMs/);
});

t.test('a reconciler that throws synchronously or rejects is a retry, never a crash', async (t) => {
  const clock = new FakeClock();
  const logged: Record<string, unknown>[] = [];
  const logger = { ...silentLogger, error: (obj: Record<string, unknown>) => void logged.push(obj) };
  const m = recordingMetrics();
  const q = new WorkQueue({
    name: 'agent',
    clock,
    logger,
    metrics: m.metrics,
    reconcile: (key) => {
      if (key === 'sync') throw new Error('boom');
      if (key === 'string') return Promise.reject('not an Error');
      return Promise.reject(new Error('later'));
    },
  });
  q.start();
  q.add('sync');
  q.add('async');
  q.add('string');
  await settle();
  t.same(m.results.map((r) => r.result), ['error', 'error', 'error']);
  t.same(clock.pending, [5, 5, 5], 'each retried with its own backoff');
  t.same(
    logged.map((l) => [l.key, l.err, l.retryInMs]),
    [['sync', 'boom', 5], ['async', 'later', 5], ['string', 'not an Error', 5]],
  );
  t.equal(logged[0]?.controller, 'agent');
});

t.test('requeueAfter puts the key back after that delay and resets its backoff', async (t) => {
  const clock = new FakeClock();
  const results: (ReconcileResult | Error)[] = [new Error('x'), { requeueAfter: 30_000 }, undefined];
  const runs: string[] = [];
  const m = recordingMetrics();
  const q = new WorkQueue({
    name: 'agent',
    clock,
    metrics: m.metrics,
    reconcile: (key) => {
      runs.push(key);
      const r = results.shift();
      if (r instanceof Error) throw r;
      return r;
    },
  });
  q.start();
  q.add('k');
  await settle();
  clock.advance(5);
  await settle();
  t.same(m.results.map((r) => r.result), ['error', 'requeue_after']);
  t.same(clock.pending, [30_000]);
  clock.advance(29_999);
  await settle();
  t.equal(runs.length, 2);
  clock.advance(1);
  await settle();
  t.equal(runs.length, 3);
  t.same(m.results.at(-1)?.result, 'success');
});

t.test('a key waiting for later keeps the earlier of two deadlines', async (t) => {
  const clock = new FakeClock();
  const q = new WorkQueue({ name: 'agent', clock, reconcile: () => undefined });
  q.addAfter('k', 10_000);
  q.addAfter('k', 50_000);
  t.same(clock.pending, [10_000]);
  q.addAfter('k', 1_000);
  t.same(clock.pending, [1_000], 'an earlier deadline replaces the later one');
  t.equal(q.delayed, 1);
  q.addAfter('k', 0);
  t.equal(q.depth, 1, 'no delay: queued at once');
  q.addAfter('j', 2 ** 40);
  t.same(clock.pending.at(-1), 2 ** 31 - 1, 'beyond what a Node timer holds: clamped, never overflowing');
});

t.test('requeue: true retries with backoff without counting an error; invalid requeueAfter is an error', async (t) => {
  const clock = new FakeClock();
  const m = recordingMetrics();
  const results: ReconcileResult[] = [{ requeue: true }, { requeue: true }, { requeueAfter: -1 }, { requeueAfter: Number.NaN }, { requeueAfter: 0 }];
  const q = new WorkQueue({ name: 'agent', clock, metrics: m.metrics, reconcile: () => results.shift() });
  q.start();
  q.add('k');
  await settle();
  t.same(clock.pending, [5]);
  clock.advance(5);
  await settle();
  t.same(clock.pending, [10], 'backoff grows');
  clock.advance(10);
  await settle();
  clock.advance(20);
  await settle();
  clock.advance(40);
  await settle();
  t.same(m.results.map((r) => r.result), ['requeue', 'requeue', 'error', 'error', 'success'], 'requeueAfter 0 is done');
});

t.test('each reconcile gets an AbortSignal; stop({ abort }) aborts it and does not retry', async (t) => {
  const clock = new FakeClock();
  const m = recordingMetrics();
  const reconcile: Reconciler = (_key, signal) =>
    new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
  const q = new WorkQueue({ name: 'agent', clock, metrics: m.metrics, reconcile });
  q.start();
  q.add('a');
  q.add('b');
  await settle();
  t.equal(q.active, 2);
  await q.stop({ abort: true });
  t.equal(q.active, 0);
  t.same(m.results, [], 'an aborted reconcile is neither a result nor an error');
  t.same(clock.pending, [], 'nor retried');
  q.add('a');
  t.equal(q.depth, 0, 'a stopped queue takes no work');
});

t.test('stop() without abort waits for running reconciles, drops waiting and delayed keys', async (t) => {
  const clock = new FakeClock();
  const r = heldReconciler();
  const m = recordingMetrics();
  const q = new WorkQueue({ name: 'agent', clock, concurrency: 1, reconcile: r.reconcile, metrics: m.metrics });
  q.start();
  q.add('a');
  q.add('b');
  q.addAfter('c', 1000);
  await settle();
  let stopped = false;
  const stopping = q.stop().then(() => (stopped = true));
  t.equal(q.stop(), q.stop(), 'one stop, however often asked');
  await settle();
  t.notOk(stopped, 'waits for the running reconcile');
  t.notOk(r.runs[0]?.signal.aborted, 'without aborting it');
  t.equal(q.depth, 0);
  t.equal(m.counts.depth, 0);
  t.same(clock.pending, []);
  q.add('d');
  r.runs[0]?.done.resolve({ requeueAfter: 5 });
  await stopping;
  t.ok(stopped);
  t.same(r.keys(), ['a'], 'nothing else ran');
  t.same(clock.pending, [], 'a requeue after stop is dropped');
});

t.test('an aborted options.signal stops the queue and aborts running reconciles', async (t) => {
  const clock = new FakeClock();
  const r = heldReconciler();
  const ac = new AbortController();
  const q = new WorkQueue({ name: 'agent', clock, reconcile: r.reconcile, signal: ac.signal });
  q.start();
  q.add('a');
  await settle();
  ac.abort();
  t.ok(r.runs[0]?.signal.aborted);
  r.runs[0]?.done.reject(new Error('aborted'));
  await q.stop();
  q.add('b');
  await settle();
  t.equal(r.runs.length, 1);

  const dead = new WorkQueue({ name: 'agent', clock, reconcile: r.reconcile, signal: AbortSignal.abort() });
  dead.start();
  dead.add('x');
  await settle();
  t.equal(r.runs.length, 1, 'an already-aborted signal: never runs');
});

t.test('keys added before start wait; whenIdle resolves after the work is done', async (t) => {
  const clock = new FakeClock();
  const r = heldReconciler();
  const q = new WorkQueue({ name: 'agent', clock, reconcile: r.reconcile });
  q.add('a');
  await settle();
  t.equal(r.runs.length, 0, 'not before start');
  q.start();
  await settle();
  let idle = false;
  const waiting = q.whenIdle().then(() => (idle = true));
  await settle();
  t.notOk(idle);
  r.runs[0]?.done.resolve();
  await waiting;
  t.ok(idle);
});

t.test('queue and reconcile durations come from the clock', async (t) => {
  const clock = new FakeClock();
  const r = heldReconciler();
  const m = recordingMetrics();
  const q = new WorkQueue({ name: 'agent', clock, reconcile: r.reconcile, metrics: m.metrics });
  q.add('a');
  clock.advance(250);
  q.start();
  await settle();
  t.same(m.started, [0.25], 'waited 250 ms in the queue');
  clock.advance(1500);
  r.runs[0]?.done.resolve();
  await settle();
  t.same(m.results, [{ result: 'success', seconds: 1.5 }]);
});

t.test('metrics render under controller-runtime names and labels', async (t) => {
  const registry = createRegistry({ defaultMetrics: false });
  const factory = createControllerMetrics(registry);
  const clock = new FakeClock();
  let n = 0;
  const q = new WorkQueue({
    name: 'agent',
    clock,
    metrics: factory.forController('agent'),
    reconcile: () => {
      n++;
      if (n === 1) throw new Error('x');
      if (n === 2) return { requeueAfter: 1000 };
      return undefined;
    },
  });
  factory.forController('modelapi');
  t.throws(() => factory.forController('agent'), /"agent" is registered twice/);
  q.add('a');
  q.add('b');
  q.add('a');
  q.start();
  q.add('c');
  await settle();
  clock.advance(5);
  await settle();

  const text = await registry.metrics();
  const line = (name: string, labels: string): number => {
    const m = new RegExp(`^${name}\\{${labels.replace(/[+.]/g, '\\$&')}\\} (\\S+)$`, 'm').exec(text);
    if (m === null) throw new Error(`no ${name}{${labels}} in\n${text}`);
    return Number(m[1]);
  };
  const q1 = 'name="agent",controller="agent"';
  t.equal(line('workqueue_adds_total', q1), 4, 'a, b, c and the retry of a');
  t.equal(line('workqueue_retries_total', q1), 1);
  t.equal(line('workqueue_depth', q1), 0);
  t.equal(line('workqueue_queue_duration_seconds_count', q1), 4);
  t.equal(line('workqueue_queue_duration_seconds_bucket', `le="+Inf",${q1}`), 4);
  t.equal(line('controller_runtime_reconcile_total', 'controller="agent",result="error"'), 1);
  t.equal(line('controller_runtime_reconcile_total', 'controller="agent",result="requeue_after"'), 1);
  t.equal(line('controller_runtime_reconcile_total', 'controller="agent",result="success"'), 2);
  t.equal(line('controller_runtime_reconcile_total', 'controller="agent",result="requeue"'), 0, 'every result exists from the start');
  t.equal(line('controller_runtime_reconcile_total', 'controller="modelapi",result="success"'), 0);
  t.equal(line('controller_runtime_reconcile_errors_total', 'controller="agent"'), 1);
  t.equal(line('kaos_operator_reconcile_errors_total', 'controller="agent",reason="Internal"'), 1, 'the error by reason');
  t.equal(line('kaos_operator_reconcile_failing_objects', 'controller="agent"'), 0, 'its retry succeeded');
  t.notMatch(text, /kaos_operator_reconcile_errors_total\{controller="modelapi"/, 'no reason series before an error');
  t.equal(line('controller_runtime_reconcile_time_seconds_count', 'controller="agent"'), 4);
  t.equal(line('controller_runtime_reconcile_time_seconds_bucket', 'le="0.005",controller="agent"'), 4, 'fake time: all took 0 s');
  t.equal(line('controller_runtime_max_concurrent_reconciles', 'controller="agent"'), 4);
  t.equal(line('controller_runtime_active_workers', 'controller="agent"'), 0);
  t.match(text, /# TYPE workqueue_queue_duration_seconds histogram/);
  t.match(text, /# TYPE controller_runtime_reconcile_total counter/);
  t.match(text, /# TYPE workqueue_depth gauge/);
  registry.resetMetrics();
  t.equal(
    (await registry.metrics()).match(/^controller_runtime_reconcile_total\{controller="agent",result="success"\} (\S+)$/m)?.[1],
    '0',
    'reset clears the counts',
  );
});
