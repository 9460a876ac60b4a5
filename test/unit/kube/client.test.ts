import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { KubeClient, parseWarningHeader, type WatchEvent } from '../../../src/kube/client.ts';
import { ApiError, isGone, isNotFound } from '../../../src/kube/errors.ts';
import { NAMESPACE, DEPLOYMENT, CONFIG_MAP, resourcePath } from '../../../src/kube/paths.ts';
import { KAOS_TYPES, kaosPath } from '../../../src/cluster/kaos-resources.ts';
import { FakeApiServer, status } from '../../support/fake-apiserver.ts';
import { eventually } from '../../support/poll.ts';

t.test('paths for core, grouped, namespaced, cluster-scoped and KAOS resources', async (t) => {
  t.equal(resourcePath(NAMESPACE), '/api/v1/namespaces');
  t.equal(resourcePath(NAMESPACE, { name: 'team-a' }), '/api/v1/namespaces/team-a');
  t.equal(resourcePath(CONFIG_MAP, { namespace: 'ns', name: 'c' }), '/api/v1/namespaces/ns/configmaps/c');
  t.equal(resourcePath(DEPLOYMENT), '/apis/apps/v1/deployments');
  t.equal(resourcePath(DEPLOYMENT, { namespace: 'ns' }), '/apis/apps/v1/namespaces/ns/deployments');
  t.equal(kaosPath('Agent', { namespace: 'ns', name: 'a', subresource: 'status' }), '/apis/kaos.tools/v1alpha1/namespaces/ns/agents/a/status');
  t.equal(kaosPath('ModelAPI'), '/apis/kaos.tools/v1alpha1/modelapis');
  t.equal(kaosPath('MCPServer', { namespace: 'ns' }), '/apis/kaos.tools/v1alpha1/namespaces/ns/mcpservers');
  t.equal(resourcePath(CONFIG_MAP, { namespace: 'ns', name: 'a/../b' }), '/api/v1/namespaces/ns/configmaps/a%2F..%2Fb', 'names cannot escape');
  t.throws(() => resourcePath(NAMESPACE, { namespace: 'x', name: 'y' }), /cluster-scoped/);
  t.throws(() => resourcePath(CONFIG_MAP, { namespace: 'ns', name: '' }), /empty/);
});

t.test('ApiError from a Status body, from text, and the predicates', async (t) => {
  const e = ApiError.fromResponse(422, JSON.stringify({ ...status(422, 'Invalid', 'Agent.kaos.tools "a" is invalid'), details: { name: 'a', causes: [{ field: 'spec.modelAPI' }] } }));
  t.equal(e.code, 422);
  t.equal(e.reason, 'Invalid');
  t.equal(e.message, 'Agent.kaos.tools "a" is invalid');
  t.equal(e.details?.causes?.[0]?.field, 'spec.modelAPI');
  const text = ApiError.fromResponse(502, '<html>bad gateway</html>');
  t.equal(text.code, 502);
  t.match(text.message, /HTTP 502: <html>bad gateway/);
  t.ok(isNotFound(ApiError.fromResponse(404, '')));
  t.equal(ApiError.fromResponse(404, '').reason, 'NotFound');
  t.ok(isGone(ApiError.fromStatus({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old' })));
  t.ok(isGone(ApiError.fromStatus({ kind: 'Status', reason: 'Expired', message: 'too old' })), 'reason alone');
  t.notOk(isGone(new Error('x')));
});

t.test('Warning headers', async (t) => {
  t.same(parseWarningHeader('299 - "spec.x: deprecated"'), ['spec.x: deprecated']);
  t.same(parseWarningHeader('299 - "a, b", 299 - "say \\"hi\\""'), ['a, b', 'say "hi"']);
});

async function server(t: { teardown(fn: () => unknown): void }): Promise<{ fake: FakeApiServer; client: KubeClient; warnings: string[] }> {
  const fake = await new FakeApiServer().listen();
  fake.serve(KAOS_TYPES.Agent);
  const warnings: string[] = [];
  const client = new KubeClient({
    server: fake.url,
    authHeaders: async () => ({ Authorization: 'Bearer tok' }),
    onWarning: (w) => warnings.push(w),
  });
  t.teardown(async () => { client.close(); await fake.close(); });
  return { fake, client, warnings };
}

t.test('writes: create, replace, patch, server-side apply, delete, dry run; auth and accept headers', async (t) => {
  const { fake, client } = await server(t);
  const ok = (): boolean => true;
  // The fake answers unknown routes with 404; script 200s for the writes.
  for (let i = 0; i < 7; i++) fake.failNext(ok, 200, { kind: 'Agent', metadata: { name: 'a' } });
  const path = kaosPath('Agent', { namespace: 'ns', name: 'a' });
  await client.create(kaosPath('Agent', { namespace: 'ns' }), { metadata: { name: 'a' } }, { dryRun: true, fieldManager: 'fm' });
  await client.replace(path, { metadata: { name: 'a' } });
  await client.patch(path, { metadata: { labels: { x: 'y' } } }, 'merge');
  await client.patch(path, [{ op: 'add', path: '/metadata/labels/x', value: 'y' }], 'json', { dryRun: true });
  await client.apply(`${path}/status`, { apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name: 'a' } }, { fieldManager: 'kaos-operator', force: true });
  await client.delete(path, { propagationPolicy: 'Foreground', preconditions: { uid: 'u1' }, dryRun: true });
  await client.create(kaosPath('Agent', { namespace: 'ns' }), { metadata: { name: 'a' } }, { dryRun: true, metadataOnly: true });
  const [create, replace, merge, json, apply, del, metadataOnly] = fake.requests;
  t.equal(create?.method, 'POST');
  t.equal(create?.query.get('dryRun'), 'All');
  t.equal(create?.query.get('fieldManager'), 'fm');
  t.equal(create?.headers.authorization, 'Bearer tok');
  t.equal(create?.headers.accept, 'application/json');
  t.equal(create?.headers['content-type'], 'application/json');
  t.equal(replace?.method, 'PUT');
  t.equal(replace?.query.get('dryRun'), null);
  t.equal(merge?.headers['content-type'], 'application/merge-patch+json');
  t.equal(json?.headers['content-type'], 'application/json-patch+json');
  t.equal(json?.query.get('dryRun'), 'All');
  t.equal(apply?.method, 'PATCH');
  t.equal(apply?.path, '/apis/kaos.tools/v1alpha1/namespaces/ns/agents/a/status');
  t.equal(apply?.headers['content-type'], 'application/apply-patch+yaml');
  t.equal(apply?.query.get('fieldManager'), 'kaos-operator');
  t.equal(apply?.query.get('force'), 'true');
  t.same(JSON.parse(apply?.body ?? ''), { apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name: 'a' } });
  t.equal(del?.method, 'DELETE');
  t.equal(del?.query.get('dryRun'), 'All');
  t.same(JSON.parse(del?.body ?? ''), { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground', preconditions: { uid: 'u1' } });
  t.equal(metadataOnly?.headers.accept, 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json', 'a write answered with its metadata only');
});

t.test('get: 404 is an ApiError NotFound; a deadline becomes a 504 Timeout; abort rejects', async (t) => {
  const { fake, client } = await server(t);
  fake.put(KAOS_TYPES.Agent, { metadata: { name: 'a', namespace: 'ns' } });
  const got = await client.get<{ metadata: { resourceVersion: string } }>(kaosPath('Agent', { namespace: 'ns', name: 'a' }));
  t.equal(got.metadata.resourceVersion, '101');
  const missing = await client.get(kaosPath('Agent', { namespace: 'ns', name: 'b' })).catch((e: unknown) => e);
  t.ok(missing instanceof ApiError && missing.code === 404 && missing.reason === 'NotFound');

  // A watch never completes as a plain GET: a server that does not answer in time.
  const hang = await client.get(`${kaosPath('Agent')}?watch=1`, { timeoutMs: 100 }).catch((e: unknown) => e);
  t.ok(hang instanceof ApiError && hang.code === 504 && hang.reason === 'Timeout', 'deadline → 504 Timeout');
  const ac = new AbortController();
  const aborted = client.list(kaosPath('Agent'), { signal: ac.signal });
  ac.abort(new Error('caller gave up'));
  await t.rejects(aborted, /caller gave up/);
});

t.test('list passes its options', async (t) => {
  const { fake, client } = await server(t);
  fake.put(KAOS_TYPES.Agent, { metadata: { name: 'a', namespace: 'ns' } });
  const list = await client.list(kaosPath('Agent'), { labelSelector: 'app=x', limit: 10, continue: 'c1', resourceVersion: '0' });
  t.equal(list.metadata?.resourceVersion, '101');
  const q = fake.requests[0]!.query;
  t.equal(q.get('labelSelector'), 'app=x');
  t.equal(q.get('limit'), '10');
  t.equal(q.get('continue'), 'c1');
  t.equal(q.get('resourceVersion'), '0');
});

t.test('watch: events split across chunks, ERROR passed through, clean end resolves', async (t) => {
  const { fake, client } = await server(t);
  fake.manualWatches = true;
  const events: Array<WatchEvent<{ metadata: { name: string } }>> = [];
  const opened = fake.nextWatch();
  let onOpen = 0;
  const done = client.watch<{ metadata: { name: string } }>(kaosPath('Agent'), { resourceVersion: '5', allowWatchBookmarks: true, timeoutSeconds: 30, onOpen: () => onOpen++ }, (e) => events.push(e));
  const w = await opened;
  t.equal(w.query.get('watch'), '1');
  t.equal(w.query.get('resourceVersion'), '5');
  t.equal(w.query.get('allowWatchBookmarks'), 'true');
  t.equal(w.query.get('timeoutSeconds'), '30');
  const line = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } }) + '\n';
  w.res.write(line.slice(0, 10));
  await new Promise((r) => setTimeout(r, 20));
  w.res.write(line.slice(10) + JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', 'old') }) + '\n');
  await eventually('two watch events', () => events.length === 2);
  w.end();
  await done;
  t.equal(onOpen, 1);
  t.equal(events[0]?.type, 'ADDED');
  t.same(events[0]?.object, { metadata: { name: 'a' } });
  t.equal(events[1]?.type, 'ERROR');
  t.equal(events[1]?.type === 'ERROR' ? events[1].object.code : 0, 410);
});

t.test('watch: HTTP error is an ApiError; a cut connection, a throwing handler and silence reject; abort rejects', async (t) => {
  const { fake, client } = await server(t);
  fake.manualWatches = true;
  const path = kaosPath('Agent');
  fake.failNext(() => true, 403, status(403, 'Forbidden', 'agents.kaos.tools is forbidden'));
  const forbidden = await client.watch(path, {}, () => {}).catch((e: unknown) => e);
  t.ok(forbidden instanceof ApiError && forbidden.code === 403);

  let opened = fake.nextWatch();
  const cut = client.watch(path, {}, () => {});
  (await opened).destroy();
  await t.rejects(cut, /watch/);
  t.equal(client.dropWatchConnections(), 0, 'nothing left open');

  opened = fake.nextWatch();
  const throwing = client.watch(path, {}, () => { throw new Error('handler failed'); });
  (await opened).send('ADDED', { metadata: { name: 'x' } });
  await t.rejects(throwing, /handler failed/);

  opened = fake.nextWatch();
  const silent = client.watch(path, { idleTimeoutMs: 100 }, () => {});
  await opened;
  await t.rejects(silent, /no data for 100 ms/);

  opened = fake.nextWatch();
  const dropped = client.watch(path, {}, () => {});
  await opened;
  t.equal(client.dropWatchConnections(), 1);
  await t.rejects(dropped, /watch/);

  const ac = new AbortController();
  opened = fake.nextWatch();
  const aborted = client.watch(path, {}, () => {}, ac.signal);
  const w = await opened;
  ac.abort(new Error('stop'));
  await t.rejects(aborted, /stop/);
  await eventually('server saw the close', () => w.closed, { timeoutMs: 2000 });
});

t.test('Warning headers reach onWarning', async (t) => {
  const warnings: string[] = [];
  const http = await import('node:http');
  const srv = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json', Warning: '299 - "mind the gap"' });
    res.end('{}');
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  const c = new KubeClient({ server: `http://127.0.0.1:${port}`, onWarning: (w) => warnings.push(w) });
  await c.get('/api/v1/namespaces/x');
  c.close();
  srv.closeAllConnections();
  await new Promise<void>((r) => srv.close(() => r()));
  t.same(warnings, ['mind the gap']);
});

t.test('discardAnswer: a success is drained unread, a refusal still says why, the socket is reused', async (t) => {
  const http = await import('node:http');
  const sockets = new Set<unknown>();
  const srv = http.createServer((req, res) => {
    sockets.add(req.socket);
    // Not JSON: a write whose answer were parsed would fail on it.
    if (req.url?.startsWith('/ok')) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('x'.repeat(100_000));
      return;
    }
    res.writeHead(409, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'Conflict', code: 409, message: 'the object has been modified' }));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  const c = new KubeClient({ server: `http://127.0.0.1:${port}` });
  t.teardown(async () => {
    c.close();
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  t.equal(await c.replace('/ok/1', {}, { discardAnswer: true }), undefined);
  t.equal(await c.create('/ok/2', {}, { discardAnswer: true }), undefined);
  t.equal(await c.patch('/ok/3', {}, 'merge', { discardAnswer: true }), undefined);
  await t.rejects(c.replace('/ok/4', {}), /response is not JSON/, 'without it the answer is parsed');
  await t.rejects(c.replace('/conflict', {}, { discardAnswer: true }), { name: 'ApiError', code: 409, message: /the object has been modified/ });
  t.equal(sockets.size, 1, 'one keep-alive connection for all of them: each answer was read to its end');
});

t.test('fromKubeConfig: server, CA and token from a kubeconfig file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kaos-kc-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { fake } = await server(t);
  fake.put(KAOS_TYPES.Agent, { metadata: { name: 'a', namespace: 'ns' } });
  const path = join(dir, 'kubeconfig');
  await writeFile(path, [
    'apiVersion: v1', 'kind: Config', 'current-context: c',
    `clusters: [{name: k, cluster: {server: "${fake.url}", insecure-skip-tls-verify: true}}]`,
    'users: [{name: u, user: {token: secret-token}}]',
    'contexts: [{name: c, context: {cluster: k, user: u}}]',
  ].join('\n'));
  const client = await KubeClient.fromKubeConfig(path);
  t.teardown(() => client.close());
  t.equal(client.server.origin, fake.url);
  await client.get(kaosPath('Agent', { namespace: 'ns', name: 'a' }));
  t.equal(fake.requests.at(-1)?.headers.authorization, 'Bearer secret-token');
});
