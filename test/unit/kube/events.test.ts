import t from 'tap';
import { silentLogger } from '../../../src/leaves/logger.ts';
import type { PatchType, WriteOptions } from '../../../src/kube/client.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import { EventRecorder, buildEvent, eventKey, type EventInput, type KubeEvent } from '../../../src/kube/events.ts';
import { eventually } from '../../support/poll.ts';

const regarding = { apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', name: 'a1', namespace: 'ns', uid: 'u1' };
const failed: EventInput = { regarding, type: 'Warning', reason: 'ReconcileFailed', action: 'Reconcile', note: 'apply Deployment agent-a1: 500' };

t.test('buildEvent: named like client-go, in the regarding namespace, within the API limits', async (t) => {
  const now = new Date('2026-03-01T10:00:00.123Z');
  const e = buildEvent(failed, 'pod-1', now);
  t.equal(e.metadata.name, `a1.${(BigInt(now.getTime()) * 1_000_000n).toString(16)}`);
  t.equal(e.metadata.namespace, 'ns');
  t.equal(e.eventTime, '2026-03-01T10:00:00.123000Z');
  t.equal(e.reportingController, 'kaos.tools/kaos-operator');
  t.equal(e.reportingInstance, 'pod-1');
  t.same(e.regarding, regarding);
  t.notOk('series' in e, 'a first occurrence has no series');
  t.not(buildEvent(failed, 'pod-1', now, 1).metadata.name, e.metadata.name, 'two events in one millisecond get two names');
  const long = buildEvent({ ...failed, note: 'é'.repeat(1000), reason: 'R'.repeat(300) }, 'x'.repeat(300), now);
  t.ok(Buffer.byteLength(long.note) <= 1024 && long.note.endsWith('...'), 'note ≤ 1 kB');
  t.equal(long.reason.length, 128);
  t.equal(long.reportingInstance.length, 128);
  t.equal(buildEvent({ ...failed, regarding: { ...regarding, namespace: '' } }, 'p', now).metadata.namespace, 'default');
});

t.test('eventKey: what makes two occurrences the same event', async (t) => {
  t.equal(eventKey(failed), eventKey({ ...failed }));
  t.not(eventKey(failed), eventKey({ ...failed, note: 'other' }), "a Warning's note is: another error is news");
  const updated: EventInput = { regarding, type: 'Normal', reason: 'Updated', action: 'Apply', note: 'Updated Deployment agent-a1' };
  t.equal(eventKey(updated), eventKey({ ...updated, note: 'Updated Deployment agent-a1, Service agent-a1' }), "a Normal event's is not (client-go: neither)");
  t.not(eventKey(failed), eventKey({ ...failed, action: 'Apply' }));
  t.not(eventKey(failed), eventKey({ ...failed, reason: 'Other' }));
  t.not(eventKey(failed), eventKey({ ...failed, regarding: { ...regarding, uid: 'u2' } }), 'a recreated parent is another object');
});

class Recording {
  created: KubeEvent[] = [];
  patches: Array<{ path: string; patch: unknown }> = [];
  failCreate = false;
  patchStatus: number | undefined;
  async create<T>(_path: string, body: unknown, _options?: WriteOptions): Promise<T> {
    if (this.failCreate) throw new ApiError(500, 'InternalError', 'boom');
    this.created.push(body as KubeEvent);
    return body as T;
  }
  async patch<T>(path: string, patch: unknown, _type: PatchType, _options?: WriteOptions): Promise<T> {
    if (this.patchStatus !== undefined) throw new ApiError(this.patchStatus, 'X', 'patch failed');
    this.patches.push({ path, patch });
    return {} as T;
  }
}

t.test('repeats within the window patch the series; one Event, never one per retry', async (t) => {
  const client = new Recording();
  let now = Date.parse('2026-03-01T10:00:00Z');
  const recorder = new EventRecorder({ client, instance: 'pod-1', windowMs: 60_000, now: () => new Date(now) });
  // Concurrent occurrences: the creation happens first, then the patches in order.
  await Promise.all([recorder.record(failed), recorder.record(failed), recorder.record(failed)]);
  t.equal(client.created.length, 1);
  const name = client.created[0]?.metadata.name ?? '';
  t.same(client.patches.map((p) => p.patch), [
    { series: { count: 2, lastObservedTime: '2026-03-01T10:00:00.000000Z' } },
    { series: { count: 3, lastObservedTime: '2026-03-01T10:00:00.000000Z' } },
  ]);
  t.equal(client.patches[0]?.path, `/apis/events.k8s.io/v1/namespaces/ns/events/${name}`);
  now += 59_000;
  await recorder.record(failed);
  t.equal(client.created.length, 1, 'within the window of the last occurrence');
  now += 60_000;
  await recorder.record(failed);
  t.equal(client.created.length, 2, 'a repeat after the window is a new Event');
  await recorder.record({ ...failed, note: 'another failure' });
  t.equal(client.created.length, 3, 'another error is another Event');
  const updated = (note: string): EventInput => ({ regarding, type: 'Normal', reason: 'Updated', action: 'Apply', note });
  await recorder.record(updated('Updated Deployment agent-a1'));
  await recorder.record(updated('Updated Deployment agent-a1, Service agent-a1'));
  t.equal(client.created.length, 4, 'a parent updated twice: one Updated Event');
  t.same(client.patches.at(-1)?.patch, { series: { count: 2, lastObservedTime: '2026-03-01T10:01:59.000000Z' } }, 'its series counts both (the note of an Event cannot change)');
});

t.test('a gone Event is created again; failures are logged, never thrown', async (t) => {
  const client = new Recording();
  const warnings: string[] = [];
  const logger = { ...silentLogger, warn: (_o: Record<string, unknown>, msg: string) => { warnings.push(msg); } };
  const recorder = new EventRecorder({ client, instance: 'pod-1', logger });
  await recorder.record(failed);
  client.patchStatus = 404;
  await recorder.record(failed);
  t.equal(client.created.length, 2, 'expired Event (TTL) created afresh');
  client.patchStatus = 500;
  await recorder.record(failed);
  t.same(warnings, ['could not update an event series']);
  client.failCreate = true;
  await recorder.record({ ...failed, note: 'new' });
  t.equal(warnings.at(-1), 'could not record an event');
  client.failCreate = false;
  await recorder.record({ ...failed, note: 'new' });
  t.equal(client.created.at(-1)?.note, 'new', 'a failed creation is not remembered: the next occurrence creates it');
});

t.test('memory is bounded: the least recently seen event is forgotten first', async (t) => {
  const client = new Recording();
  const recorder = new EventRecorder({ client, instance: 'pod-1', maxEntries: 2 });
  const note = (n: string): EventInput => ({ ...failed, note: n });
  await recorder.record(note('1'));
  await recorder.record(note('2'));
  await recorder.record(note('1')); // 1 is now the most recent
  await recorder.record(note('3')); // evicts 2
  t.equal(recorder.size, 2);
  await recorder.record(note('1'));
  t.equal(client.created.length, 3, '1 was remembered');
  await recorder.record(note('2'));
  t.equal(client.created.length, 4, '2 was forgotten: created again');
  t.throws(() => new EventRecorder({ client, instance: 'x', maxEntries: 0 }), /maxEntries/);
});

t.test('a burst is written a few at a time, and beyond the backlog occurrences are dropped and counted', async (t) => {
  let inFlight = 0;
  let most = 0;
  const release: Array<() => void> = [];
  const created: string[] = [];
  const client = {
    async create<T>(_path: string, body: unknown): Promise<T> {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((resolve) => release.push(resolve));
      inFlight--;
      created.push((body as KubeEvent).regarding.name);
      return body as T;
    },
    async patch<T>(): Promise<T> {
      return {} as T;
    },
  };
  const recorder = new EventRecorder({ client, instance: 'pod-1', maxInFlight: 2, maxBacklog: 3, logger: silentLogger });
  const burst = Array.from({ length: 8 }, (_, i) => recorder.record({ ...failed, regarding: { ...regarding, name: `a${i}`, uid: `u${i}` } }));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(inFlight, 2, 'two writes in flight');
  t.equal(recorder.dropped, 3, '2 in flight + 3 waiting: the other 3 are dropped');
  // Release one write at a time until the five kept ones are written (a bounded wait: a recorder
  // that lost one would otherwise spin here for ever).
  await eventually('the five kept Events written', () => {
    release.shift()?.();
    return created.length >= 5;
  }, { timeoutMs: 5000, intervalMs: 1 });
  await Promise.all(burst);
  t.equal(most, 2, 'never more than maxInFlight at once');
  t.same(created, ['a0', 'a1', 'a2', 'a3', 'a4'], 'written in arrival order');
  // A dropped occurrence was forgotten, so the next one of the same event is a fresh create.
  const again = recorder.record({ ...failed, regarding: { ...regarding, name: 'a7', uid: 'u7' } });
  await new Promise((resolve) => setImmediate(resolve));
  release.shift()?.();
  await again;
  t.equal(created.at(-1), 'a7', 'a dropped event is recorded at its next occurrence');
});
