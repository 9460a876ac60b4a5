import t from 'tap';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { KubeClient } from '../../../src/kube/client.ts';
import { NAMESPACE } from '../../../src/kube/paths.ts';
import { KAOS_TYPES } from '../../../src/cluster/kaos-resources.ts';
import { Reflector, type ReflectorEvent } from '../../../src/kube/reflector.ts';
import { FakeApiServer, status } from '../../support/fake-apiserver.ts';
import { eventually } from '../../support/poll.ts';

const AGENT = KAOS_TYPES.Agent;

function agent(name: string, namespace = 'ns', spec: Record<string, unknown> = { modelAPI: 'm' }): KubeObject {
  return { apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name, namespace }, spec };
}

interface Harness {
  fake: FakeApiServer;
  reflector: Reflector;
  events: Array<ReflectorEvent<KubeObject>>;
  summary: () => string[];
}

async function setup(t: { teardown(fn: () => unknown): void }, prepare: (fake: FakeApiServer) => void = () => {}, pageSize = 500): Promise<Harness> {
  const fake = await new FakeApiServer().listen();
  fake.serve(AGENT);
  fake.serve(NAMESPACE);
  prepare(fake);
  const client = new KubeClient({ server: fake.url });
  const reflector = new Reflector({
    client,
    type: AGENT,
    pageSize,
    watchTimeoutSeconds: 300,
    // Fast and deterministic backoff for tests.
    backoff: { initialMs: 20, maxMs: 200, random: () => 0.5 },
  });
  const events: Array<ReflectorEvent<KubeObject>> = [];
  reflector.on((e) => events.push(e));
  t.teardown(async () => {
    await reflector.stop();
    client.close();
    await fake.close();
  });
  const summary = (): string[] =>
    events.map((e) => `${e.type} ${e.object.metadata?.name}${e.type === 'update' ? ` ${e.old.metadata?.resourceVersion}->${e.object.metadata?.resourceVersion}` : ''}`);
  return { fake, reflector, events, summary };
}

t.test('lists (paginated), syncs, then watches from the list resourceVersion with bookmarks', async (t) => {
  const h = await setup(t, (fake) => {
    for (const n of ['a', 'b', 'c']) fake.put(AGENT, agent(n));
  }, 2);
  const watch = h.fake.nextWatch();
  h.reflector.start();
  await h.reflector.waitForSync();
  t.ok(h.reflector.isSynced());
  t.same(h.reflector.keys().sort(), ['ns/a', 'ns/b', 'ns/c']);
  t.same(h.summary(), ['add a', 'add b', 'add c']);
  const lists = h.fake.listRequests(AGENT);
  t.equal(lists.length, 2, 'two pages');
  t.equal(lists[0]!.query.get('limit'), '2');
  t.equal(lists[1]!.query.get('continue'), '2');
  const w = await watch;
  t.equal(w.query.get('resourceVersion'), '103');
  t.equal(w.query.get('allowWatchBookmarks'), 'true');
  const timeout = Number(w.query.get('timeoutSeconds'));
  t.ok(timeout >= 240 && timeout <= 360, `timeoutSeconds ${timeout} jittered around 300`);
  t.equal(h.reflector.resourceVersion, '103');
});

t.test('applies ADDED, MODIFIED, DELETED; BOOKMARK only moves the resourceVersion', async (t) => {
  const h = await setup(t, (fake) => { fake.put(AGENT, agent('a')); });
  const watch = h.fake.nextWatch();
  h.reflector.start();
  await h.reflector.waitForSync();
  const w = await watch;
  h.fake.put(AGENT, agent('b'));
  h.fake.put(AGENT, agent('a', 'ns', { modelAPI: 'other' }));
  h.fake.remove(AGENT, 'ns', 'b');
  await eventually('four events', () => h.events.length === 4);
  t.same(h.summary(), ['add a', 'add b', 'update a 101->103', 'delete b']);
  t.same(h.reflector.keys(), ['ns/a']);
  t.same((h.reflector.get('ns/a')?.spec as { modelAPI: string }).modelAPI, 'other');
  t.equal(h.reflector.resourceVersion, '104');

  w.send('BOOKMARK', { kind: 'Agent', apiVersion: 'kaos.tools/v1alpha1', metadata: { resourceVersion: '150' } });
  await eventually('bookmark RV', () => h.reflector.resourceVersion === '150');
  t.equal(h.events.length, 4, 'a bookmark emits nothing');
  t.equal(h.reflector.size, 1);
});

t.test('stored objects are frozen and self-describing', async (t) => {
  const fake = await new FakeApiServer().listen();
  fake.serve(NAMESPACE);
  fake.put(NAMESPACE, { metadata: { name: 'team-a', labels: { x: 'y' } } });
  const client = new KubeClient({ server: fake.url });
  const r = new Reflector({ client, type: NAMESPACE });
  t.teardown(async () => { await r.stop(); client.close(); await fake.close(); });
  r.start();
  await r.waitForSync();
  const ns = r.getByName(undefined, 'team-a');
  t.equal(ns?.kind, 'Namespace', 'kind filled in for core list items');
  t.equal(ns?.apiVersion, 'v1');
  t.ok(Object.isFrozen(ns));
  t.ok(Object.isFrozen(ns?.metadata?.labels));
  t.throws(() => { (ns!.metadata!.labels as Record<string, string>).x = 'z'; });
});

t.test('a clean watch end resumes from the last resourceVersion (bookmark included), without relisting', async (t) => {
  const h = await setup(t, (fake) => { fake.put(AGENT, agent('a')); });
  const first = h.fake.nextWatch();
  h.reflector.start();
  await h.reflector.waitForSync();
  const w1 = await first;
  h.fake.put(AGENT, agent('b')); // rv 102
  await eventually('two objects in the reflector', () => h.reflector.size === 2);
  w1.send('BOOKMARK', { metadata: { resourceVersion: '102' } });
  await eventually('resourceVersion 102', () => h.reflector.resourceVersion === '102');
  // Changes while no watch is open are replayed by the server from the resourceVersion.
  h.fake.manualWatches = true;
  const second = h.fake.nextWatch();
  w1.end();
  const w2 = await second;
  t.equal(w2.query.get('resourceVersion'), '102');
  t.equal(h.fake.listRequests(AGENT).length, 1, 'no relist');
  t.equal(h.reflector.stats.errors, 0, 'a server timeout is not an error');
  t.equal(h.reflector.stats.lists, 1);
});

t.test('a dropped connection backs off, then resumes the watch from the last resourceVersion', async (t) => {
  const h = await setup(t, (fake) => { fake.put(AGENT, agent('a')); });
  const first = h.fake.nextWatch();
  h.reflector.start();
  await h.reflector.waitForSync();
  const w1 = await first;
  h.fake.put(AGENT, agent('b'));
  await eventually('two objects in the reflector', () => h.reflector.size === 2);
  const second = h.fake.nextWatch();
  // Events that happen while disconnected must arrive after the reconnect.
  h.fake.manualWatches = true;
  w1.destroy();
  h.fake.put(AGENT, agent('c'));
  h.fake.manualWatches = false;
  const w2 = await second;
  t.equal(w2.query.get('resourceVersion'), '102', 'resumes where it was');
  await eventually('replayed ADDED c', () => h.reflector.size === 3);
  t.equal(h.reflector.stats.errors, 1);
  t.equal(h.fake.listRequests(AGENT).length, 1, 'no relist after a plain error');
  t.same(h.summary(), ['add a', 'add b', 'add c']);
});

t.test('ERROR event 410 (Expired) relists; the relist emits the differences', async (t) => {
  const h = await setup(t, (fake) => {
    fake.put(AGENT, agent('keep'));
    fake.put(AGENT, agent('change'));
    fake.put(AGENT, agent('gone'));
  });
  const first = h.fake.nextWatch();
  h.reflector.start();
  await h.reflector.waitForSync();
  const w1 = await first;
  // While the watch is silent (manual), the world changes and the log is compacted.
  h.fake.manualWatches = true;
  h.fake.put(AGENT, agent('change', 'ns', { modelAPI: 'new' }));
  h.fake.remove(AGENT, 'ns', 'gone');
  h.fake.put(AGENT, agent('new'));
  h.fake.compact(AGENT);
  h.fake.manualWatches = false;
  const second = h.fake.nextWatch();
  w1.send('ERROR', status(410, 'Expired', 'too old resource version: 103 (107)'));
  const w2 = await second;
  t.equal(h.reflector.stats.relists, 1);
  t.equal(h.fake.listRequests(AGENT).length, 2, 'listed again');
  t.equal(w2.query.get('resourceVersion'), String(h.fake.rv), 'watches from the new list');
  t.same(h.summary().slice(3).sort(), ['add new', 'delete gone', 'update change 102->104']);
  t.same(h.reflector.keys().sort(), ['ns/change', 'ns/keep', 'ns/new']);
  t.equal(h.reflector.stats.errors, 0, '410 is not counted as an error');
});

t.test('HTTP 410 on the watch request relists too', async (t) => {
  const h = await setup(t, (fake) => { fake.put(AGENT, agent('a')); });
  h.fake.failNext((r) => r.query.get('watch') === '1', 410, status(410, 'Gone', 'gone'));
  const watch = h.fake.nextWatch();
  h.reflector.start();
  await h.reflector.waitForSync();
  await watch;
  t.equal(h.fake.listRequests(AGENT).length, 2);
  t.equal(h.reflector.stats.relists, 1);
});

t.test('a watch replayed from a compacted resourceVersion gets 410 from the server and relists', async (t) => {
  const h = await setup(t, (fake) => { fake.put(AGENT, agent('a')); });
  const first = h.fake.nextWatch();
  h.reflector.start();
  await h.reflector.waitForSync();
  const w1 = await first;
  h.fake.manualWatches = true;
  h.fake.put(AGENT, agent('b'));
  h.fake.compact(AGENT);
  h.fake.manualWatches = false;
  w1.destroy(); // the reconnect asks for rv 101, older than the compaction: ERROR 410
  await eventually('b via relist', () => h.reflector.size === 2);
  t.equal(h.reflector.stats.relists, 1);
  t.equal(h.reflector.stats.errors, 1, 'the dropped connection');
});

t.test('list errors back off and retry until the list succeeds; never gives up', async (t) => {
  const h = await setup(t, (fake) => { fake.put(AGENT, agent('a')); });
  for (let i = 0; i < 4; i++) h.fake.failNext((r) => r.query.get('watch') === null, 500, status(500, 'InternalError', 'etcd down'));
  h.fake.failNext((r) => r.query.get('watch') === null, 403, status(403, 'Forbidden', 'agents is forbidden'));
  const started = Date.now();
  h.reflector.start();
  t.notOk(h.reflector.isSynced());
  await h.reflector.waitForSync();
  const elapsed = Date.now() - started;
  t.equal(h.fake.listRequests(AGENT).length, 6);
  t.equal(h.reflector.stats.errors, 5);
  // 20, 40, 80, 160, 200 (cap) ms × 0.75 (random 0.5, equal jitter) = 375 ms in all.
  t.ok(elapsed >= 370, `backed off exponentially (${elapsed} ms)`);
  t.equal(h.reflector.size, 1);
});

t.test('watch errors (HTTP 500, ERROR event 500, garbage) back off and re-watch from the same resourceVersion', async (t) => {
  const h = await setup(t, (fake) => { fake.put(AGENT, agent('a')); });
  h.fake.failNext((r) => r.query.get('watch') === '1', 500, status(500, 'InternalError', 'boom'));
  const first = h.fake.nextWatch();
  h.reflector.start();
  await h.reflector.waitForSync();
  const w1 = await first;
  t.equal(h.reflector.stats.errors, 1);
  const second = h.fake.nextWatch();
  w1.send('ERROR', status(500, 'InternalError', 'watch chan error'));
  const w2 = await second;
  const third = h.fake.nextWatch();
  w2.res.write('this is not json\n');
  const w3 = await third;
  t.equal(h.reflector.stats.errors, 3);
  for (const w of [w1, w2, w3]) t.equal(w.query.get('resourceVersion'), '101');
  t.equal(h.fake.listRequests(AGENT).length, 1);
});

t.test('a watch that closes at once without events is a failure (no hot loop)', async (t) => {
  const h = await setup(t, (fake) => { fake.put(AGENT, agent('a')); });
  h.fake.manualWatches = true;
  let n = 0;
  const closer = (): void => {
    void h.fake.nextWatch().then((w) => {
      n++;
      w.end();
      if (n < 3) closer();
    });
  };
  closer();
  h.reflector.start();
  await eventually('three quick closes', () => n >= 3 && h.reflector.stats.errors >= 2);
  t.ok(h.reflector.stats.errors >= 2, 'counted as errors, so backed off');
});

t.test('a listener that throws does not stop the reflector', async (t) => {
  const h = await setup(t, (fake) => { fake.put(AGENT, agent('a')); });
  h.reflector.on(() => { throw new Error('listener bug'); });
  h.reflector.start();
  await h.reflector.waitForSync();
  h.fake.put(AGENT, agent('b'));
  await eventually('two objects in the reflector', () => h.reflector.size === 2);
  t.same(h.summary(), ['add a', 'add b']);
});

t.test('stop() closes the watch, ends the loop and makes no further requests', async (t) => {
  const h = await setup(t, (fake) => { fake.put(AGENT, agent('a')); });
  const watch = h.fake.nextWatch();
  h.reflector.start();
  await h.reflector.waitForSync();
  const w = await watch;
  await h.reflector.stop();
  await eventually('watch connection closed', () => w.closed, { timeoutMs: 2000 });
  const count = h.fake.requests.length;
  await new Promise((r) => setTimeout(r, 100));
  t.equal(h.fake.requests.length, count, 'quiet after stop');
  t.throws(() => h.reflector.start(), /stopped/);
});

t.test('stop() during backoff ends promptly; waitForSync rejects when stopped before sync', async (t) => {
  const h = await setup(t);
  for (let i = 0; i < 100; i++) h.fake.failNext(() => true, 503, status(503, 'ServiceUnavailable', 'not yet'));
  h.reflector.start();
  const waiting = h.reflector.waitForSync();
  await eventually('an error counted', () => h.reflector.stats.errors >= 1);
  const started = Date.now();
  await h.reflector.stop();
  t.ok(Date.now() - started < 500, 'no waiting out the backoff');
  await t.rejects(waiting, /stopped before it synced/);
});

t.test('waitForSync honours its signal', async (t) => {
  const h = await setup(t);
  for (let i = 0; i < 100; i++) h.fake.failNext(() => true, 503, status(503, 'ServiceUnavailable', 'not yet'));
  h.reflector.start();
  await t.rejects(h.reflector.waitForSync(AbortSignal.timeout(50)), /timeout|aborted/i);
});
