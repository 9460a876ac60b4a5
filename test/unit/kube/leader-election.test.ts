import t from 'tap';
import { eventually } from '../../support/poll.ts';
import { createRegistry } from '../../../src/leaves/prometheus.ts';
import type { CallOptions, WriteOptions } from '../../../src/kube/client.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import {
  LeaderElector,
  acquiredSpec,
  canAcquire,
  createLeaderElectionMetrics,
  defaultIdentity,
  releasedSpec,
  validateTimings,
  type Lease,
  type LeaseClient,
} from '../../../src/kube/leader-election.ts';
import { formatMicroTime } from '../../../src/leaves/meta-time.ts';

const NOW = new Date('2026-03-01T10:00:00.123Z');

t.test('canAcquire: free, released, ours, or unchanged for a whole lease duration', async (t) => {
  t.ok(canAcquire(undefined, 'me', 0, 0, 15_000), 'no lease');
  t.ok(canAcquire({ holderIdentity: '' }, 'me', 0, 0, 15_000), 'released');
  t.ok(canAcquire({ holderIdentity: 'me' }, 'me', 0, 0, 15_000), 'ours');
  t.notOk(canAcquire({ holderIdentity: 'other' }, 'me', 1000, 15_999, 15_000), 'held, observed change 14.999 s ago');
  t.ok(canAcquire({ holderIdentity: 'other' }, 'me', 1000, 16_000, 15_000), 'held, unchanged for 15 s');
  t.notOk(canAcquire({ holderIdentity: 'other', leaseDurationSeconds: 60 }, 'me', 1000, 16_000, 15_000), 'the holder\'s 60 s lease, not our 15 s, decides');
  t.ok(canAcquire({ holderIdentity: 'other', leaseDurationSeconds: 60 }, 'me', 1000, 61_000, 15_000), 'held, unchanged for the holder\'s 60 s');
  t.ok(canAcquire({ holderIdentity: 'other', leaseDurationSeconds: 5 }, 'me', 1000, 6_000, 15_000), 'a shorter lease of the holder expires sooner');
});

t.test('acquiredSpec and releasedSpec', async (t) => {
  const first = acquiredSpec(undefined, 'me', NOW, 15_000);
  t.same(first, { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: '2026-03-01T10:00:00.123000Z', renewTime: '2026-03-01T10:00:00.123000Z', leaseTransitions: 0 });
  const later = new Date(NOW.getTime() + 2000);
  const renewed = acquiredSpec(first, 'me', later, 15_000);
  t.equal(renewed.acquireTime, first.acquireTime, 'a renew keeps acquireTime');
  t.equal(renewed.renewTime, formatMicroTime(later));
  t.equal(renewed.leaseTransitions, 0);
  const taken = acquiredSpec(renewed, 'other', later, 1500);
  t.equal(taken.leaseTransitions, 1, 'a new holder is a transition');
  t.equal(taken.acquireTime, formatMicroTime(later));
  t.equal(taken.leaseDurationSeconds, 2, 'whole seconds, rounded up');
  const released = releasedSpec(taken, later);
  t.same(released, { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: formatMicroTime(later), renewTime: formatMicroTime(later), leaseTransitions: 1 });
  t.equal(acquiredSpec(released, 'me', later, 15_000).leaseTransitions, 2);
});

t.test('timings and identity', async (t) => {
  t.doesNotThrow(() => validateTimings(15_000, 10_000, 2_000));
  t.throws(() => validateTimings(10_000, 10_000, 2_000), /leaseDuration \(10000 ms\) must be greater than renewDeadline/);
  t.throws(() => validateTimings(15_000, 2_000, 2_000), /renewDeadline .* must be greater than retryPeriod/);
  t.throws(() => validateTimings(15_000, 10_000, 0), /retryPeriod must be a positive/);
  t.equal(defaultIdentity({ POD_NAME: 'kaos-operator-7d9f-abc' }), 'kaos-operator-7d9f-abc');
  t.match(defaultIdentity({}), new RegExp(`_${process.pid}$`));
});

t.test('leader_election_master_status{name}', async (t) => {
  const registry = createRegistry({ defaultMetrics: false });
  const a = createLeaderElectionMetrics(registry);
  const b = createLeaderElectionMetrics(registry);
  a.setLeading('kaos-operator', true);
  b.setLeading('other', false);
  const text = await registry.metrics();
  t.match(text, /leader_election_master_status\{name="kaos-operator"\} 1/);
  t.match(text, /leader_election_master_status\{name="other"\} 0/);
});

/** An in-memory Lease store with resourceVersions; `hang` makes every request hang until aborted. */
class MemoryLeases implements LeaseClient {
  lease: Lease | undefined;
  rv = 0;
  hang = false;
  writes: string[] = [];
  async #gate(options?: CallOptions): Promise<void> {
    if (!this.hang) return;
    await new Promise((_, reject) => options?.signal?.addEventListener('abort', () => reject(options.signal?.reason), { once: true }));
  }
  async get<T>(_path: string, options?: CallOptions): Promise<T> {
    await this.#gate(options);
    if (this.lease === undefined) throw new ApiError(404, 'NotFound', 'not found');
    return structuredClone(this.lease) as T;
  }
  async create<T>(_path: string, body: unknown, options?: WriteOptions): Promise<T> {
    await this.#gate(options);
    if (this.lease !== undefined) throw new ApiError(409, 'AlreadyExists', 'exists');
    const lease = structuredClone(body) as Lease;
    this.lease = { ...lease, metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } };
    this.writes.push(`create ${lease.spec?.holderIdentity}`);
    return structuredClone(this.lease) as T;
  }
  async replace<T>(_path: string, body: unknown, options?: WriteOptions): Promise<T> {
    await this.#gate(options);
    const lease = structuredClone(body) as Lease;
    if (lease.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion) throw new ApiError(409, 'Conflict', 'the object has been modified');
    this.lease = { ...lease, metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } };
    this.writes.push(`update ${lease.spec?.holderIdentity}`);
    return structuredClone(this.lease) as T;
  }
}

const FAST = { leaseDurationMs: 800, renewDeadlineMs: 500, retryPeriodMs: 100 };

t.test('a leader that cannot renew stops at the renew deadline and writes nothing after', async (t) => {
  const store = new MemoryLeases();
  const events: string[] = [];
  let leadSignal: AbortSignal | undefined;
  const elector = new LeaderElector({
    client: store, namespace: 'ns', name: 'l', identity: 'a', ...FAST,
    onStartedLeading: (signal) => { leadSignal = signal; events.push('started'); },
    onStoppedLeading: () => events.push('stopped'),
  });
  elector.start();
  await eventually('leading', () => elector.isLeader());
  t.same(store.writes.slice(0, 1), ['create a']);
  await eventually('renewals', () => store.writes.length >= 3);
  store.hang = true; // the API server stops answering
  await eventually('loss of leadership', () => !elector.isLeader());
  t.ok(leadSignal?.aborted, 'the signal aborted');
  t.match(String((leadSignal?.reason as Error).message), /renew deadline passed/);
  t.same(events, ['started', 'stopped']);
  const writes = store.writes.length;
  await elector.stop({ release: false });
  t.equal(store.writes.length, writes, 'no write after losing the lease');
});

t.test('a leader that sees another holder stops; stop() waits for the work, then releases', async (t) => {
  const store = new MemoryLeases();
  let finished = false;
  const elector = new LeaderElector({
    client: store, namespace: 'ns', name: 'l', identity: 'a', ...FAST,
    onStartedLeading: async (signal) => {
      await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
      await new Promise((r) => setTimeout(r, 50));
      finished = true;
    },
  });
  elector.start();
  await eventually('leading', () => elector.isLeader());
  await elector.stop();
  t.ok(finished, 'the work ended before stop() returned');
  t.equal(store.lease?.spec?.holderIdentity, '', 'released');
  t.equal(store.writes.at(-1), 'update ');

  // Someone else holds it: a new elector waits; a takeover behind a leader's back ends its term.
  const b = new LeaderElector({ client: store, namespace: 'ns', name: 'l', identity: 'b', ...FAST, onStartedLeading: () => {} });
  b.start();
  await eventually('b leads the released lease', () => b.isLeader());
  const lease = store.lease as Lease;
  store.lease = { ...lease, spec: { ...lease.spec, holderIdentity: 'intruder' }, metadata: { ...lease.metadata, resourceVersion: String(++store.rv) } };
  await eventually('b sees the intruder', () => !b.isLeader());
  await b.stop();
  t.equal(store.lease?.spec?.holderIdentity, 'intruder', 'b does not release what it does not hold');
});
