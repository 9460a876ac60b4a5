import { NO_GRANT_PROJECTION } from '../../../src/controller/reconcile/context.ts';
import type { KaosKind } from '../../../src/api/kinds.ts';
import type { KaosObjects } from '../../../src/api/schema/index.ts';
import t from 'tap';
import type { KubeObject } from '../../../src/api/meta.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { bindReconcileContext, removeFinalizersPatch, statusBody, type WriteClient } from '../../../src/controller/context-binding.ts';
import type { KaosStatus } from '../../../src/controller/status.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import type { ObjectLike } from '../../../src/kube/apply.ts';
import { silentLogger } from '../../../src/leaves/logger.ts';

interface Call { method: string; path: string; body: unknown; options: unknown; args: unknown[] }

function fakeClient(fail?: ApiError): WriteClient & { calls: Call[] } {
  const calls: Call[] = [];
  const record = (method: string) => async (path: string, body: unknown, ...rest: unknown[]) => {
    calls.push({ method, path, body, options: rest.at(-1), args: rest });
    if (fail !== undefined) throw fail;
    return body as never;
  };
  return {
    calls,
    apply: record('apply') as WriteClient['apply'],
    replace: record('replace') as WriteClient['replace'],
    patch: record('patch') as WriteClient['patch'],
    get: (async (path: string, options: unknown) => {
      calls.push({ method: 'get', path, body: undefined, options, args: [options] });
      if (fail !== undefined) throw fail;
      return {};
    }) as WriteClient['get'],
    delete: (async (path: string, options: unknown) => {
      calls.push({ method: 'delete', path, body: undefined, options, args: [options] });
      if (fail !== undefined) throw fail;
      return {};
    }) as WriteClient['delete'],
  };
}

const agent: KubeObject = Object.freeze({
  apiVersion: 'kaos.tools/v1alpha1',
  kind: 'Agent',
  metadata: { name: 'a1', namespace: 'ns', uid: 'u1', resourceVersion: '42', generation: 3, finalizers: ['kaos.tools/agent-finalizer', 'other/keep'], managedFields: [{ manager: 'x' }] },
  spec: { modelAPI: 'm' },
  status: { phase: 'Pending' },
});
const status: KaosStatus = { phase: 'Ready', ready: true, observedGeneration: 3 };

function context(client: WriteClient, events: unknown[] = []) {
  const deployment: ObjectLike = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'agent-a1', namespace: 'ns', resourceVersion: '7' } };
  const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns', resourceVersion: '99' } };
  return bindReconcileContext({
    cache: { cached: <K extends KaosKind>(kind: K, ns: string, name: string) => (kind === 'Agent' && ns === 'ns' && name === 'a1' ? agent as KaosObjects[K] : undefined) },
    children: { Deployment: { getByName: (ns, name) => (ns === 'ns' && name === 'agent-a1' ? deployment as KubeObject : undefined) } },
    secrets: { getByName: (ns, name) => (ns === 'ns' && name === 's' ? secret : undefined) },
    configMaps: { getByName: (ns, name) => (ns === 'ns' && name === 'c' ? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', resourceVersion: '98' } } : undefined) },
    httpRoutesServed: false,
    grantProjection: () => NO_GRANT_PROJECTION,
    client,
    events: { record: (e) => { events.push(e); } },
    config: loadConfig({}),
    logger: silentLogger,
  });
}

t.test('writeStatus: PUT of the status subresource with the cached object, its resourceVersion and the new status', async (t) => {
  const client = fakeClient();
  await context(client).writes.writeStatus('Agent', agent, status, new AbortController().signal);
  t.equal(client.calls.length, 1);
  const [call] = client.calls;
  t.equal(call?.method, 'replace');
  t.equal(call?.path, '/apis/kaos.tools/v1alpha1/namespaces/ns/agents/a1/status');
  const body = call?.body as KubeObject;
  t.equal(body.metadata?.resourceVersion, '42', 'guarded by the cached resourceVersion');
  t.same(body.status, status);
  t.same(body.spec, agent.spec);
  t.notOk('managedFields' in (body.metadata ?? {}), 'managedFields left out (the server keeps them)');
  t.match(call?.options, { fieldManager: 'kaos-operator' });
});

t.test('writeStatus: a 409 is thrown (the queue retries); a 404 (object gone) is nothing to do', async (t) => {
  await t.rejects(
    context(fakeClient(new ApiError(409, 'Conflict', 'the object has been modified'))).writes.writeStatus('Agent', agent, status, new AbortController().signal),
    { code: 409 },
  );
  await context(fakeClient(new ApiError(404, 'NotFound', 'gone'))).writes.writeStatus('Agent', agent, status, new AbortController().signal);
  t.throws(() => statusBody({ metadata: { name: 'x', namespace: 'ns' } }, status), /no resourceVersion/);
});

t.test('writeStatus: a second write guarded by the resourceVersion our first one replaced is refused without a request', async (t) => {
  const client = fakeClient();
  const ctx = context(client);
  const signal = new AbortController().signal;
  await ctx.writes.writeStatus('Agent', agent, status, signal);
  await t.rejects(ctx.writes.writeStatus('Agent', agent, { ...status, message: 'later' }, signal), { code: 409 }, 'the cache has not seen the first write');
  t.equal(client.calls.length, 1, 'no request for a write sure to be refused');
  const fresher: KubeObject = { ...agent, metadata: { ...agent.metadata, resourceVersion: '43' } };
  await ctx.writes.writeStatus('Agent', fresher, { ...status, message: 'later' }, signal);
  t.equal(client.calls.length, 2, 'once the cache has it, writes go out again');
  await ctx.writes.writeStatus('Agent', { ...agent, metadata: { ...agent.metadata, name: 'a2' } }, status, signal);
  t.equal(client.calls.length, 3, 'per object');
});

t.test('removeFinalizers: a JSON patch testing the cached list, then replacing it without the named ones', async (t) => {
  t.same(removeFinalizersPatch(agent, ['kaos.tools/agent-finalizer']), [
    { op: 'test', path: '/metadata/finalizers', value: ['kaos.tools/agent-finalizer', 'other/keep'] },
    { op: 'replace', path: '/metadata/finalizers', value: ['other/keep'] },
  ]);
  t.equal(removeFinalizersPatch(agent, ['kaos.tools/modelapi-finalizer']), undefined, 'none of them there: no patch');
  t.equal(removeFinalizersPatch({ metadata: {} }, ['kaos.tools/agent-finalizer']), undefined);
  const client = fakeClient();
  await context(client).writes.removeFinalizers('Agent', agent, ['kaos.tools/agent-finalizer'], new AbortController().signal);
  t.same(client.calls.map((c) => [c.method, c.path]), [['patch', '/apis/kaos.tools/v1alpha1/namespaces/ns/agents/a1']]);
  t.equal(client.calls[0]?.args[0], 'json', 'as a JSON patch');
  const none = fakeClient();
  await context(none).writes.removeFinalizers('Agent', agent, ['nope'], new AbortController().signal);
  t.equal(none.calls.length, 0, 'no request when there is nothing to remove');
});

t.test('reads come from the cache: KAOS objects, children by kind, Secret and ConfigMap resourceVersions', async (t) => {
  const ctx = context(fakeClient());
  t.equal(ctx.reads.kaos('Agent', 'ns', 'a1'), agent);
  t.equal(ctx.reads.kaos('ModelAPI', 'ns', 'a1'), undefined);
  t.equal(ctx.reads.child('Deployment', 'ns', 'agent-a1')?.metadata?.resourceVersion, '7');
  t.equal(ctx.reads.child('HTTPRoute', 'ns', 'agent-a1'), undefined, 'HTTPRoutes not watched');
  t.equal(ctx.reads.secretResourceVersion('ns', 's'), '99');
  t.equal(ctx.reads.secretResourceVersion('ns', 'other'), undefined);
  t.equal(ctx.reads.configMapResourceVersion('ns', 'c'), '98', 'ConfigMaps from their dependency reflector');
  t.equal(ctx.reads.configMapResourceVersion('ns', 's'), undefined, 'not from the Secrets');
  t.equal(ctx.reads.httpRoutesServed(), false);
});

t.test('ensureChild applies with force through the client; an unchanged child costs no request; pruning deletes with a uid precondition', async (t) => {
  const client = fakeClient();
  const events: unknown[] = [];
  const ctx = context(client, events);
  const desired = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'agent-a1', namespace: 'ns' }, spec: { ports: [{ port: 80 }] } };
  const signal = new AbortController().signal;
  await ctx.writes.ensureChild(desired as never, undefined, signal);
  t.same(client.calls.map((c) => [c.method, c.path]), [['apply', '/api/v1/namespaces/ns/services/agent-a1']]);
  t.match(client.calls[0]?.options, { fieldManager: 'kaos-operator', force: true });
  await ctx.writes.ensureChild(desired as never, desired, signal);
  t.equal(client.calls.length, 1, 'the live child holds every field: no write');
  await ctx.writes.writeStatus('Agent', agent, status, signal);
  await ctx.writes.pruneChildren(
    [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'old', namespace: 'ns', uid: 'c1', ownerReferences: [{ controller: true, uid: 'u1' }] } }],
    'u1', [], signal,
  );
  t.same(client.calls.at(-1)?.path, '/api/v1/namespaces/ns/configmaps/old');
  t.match(client.calls.at(-1)?.options, { preconditions: { uid: 'c1' } });
  ctx.events.record({ regarding: { apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', name: 'a1', namespace: 'ns' }, type: 'Normal', reason: 'R', action: 'A', note: 'n' });
  t.equal(events.length, 1, 'events go to the recorder');
});

t.test('liveUid: a GET of the KAOS object past the cache; its uid, or undefined on a 404; other errors thrown', async (t) => {
  const signal = new AbortController().signal;
  const client = fakeClient();
  client.get = (async (path: string, options: unknown) => {
    client.calls.push({ method: 'get', path, body: undefined, options, args: [options] });
    return { metadata: { name: 'a1', namespace: 'ns', uid: 'u-now' } };
  }) as WriteClient['get'];
  t.equal(await context(client).writes.liveUid('Agent', 'ns', 'a1', signal), 'u-now');
  t.match(client.calls, [{ method: 'get', path: '/apis/kaos.tools/v1alpha1/namespaces/ns/agents/a1', options: { signal } }]);
  t.equal(await context(fakeClient(new ApiError(404, 'NotFound', 'gone'))).writes.liveUid('Agent', 'ns', 'a1', signal), undefined);
  await t.rejects(context(fakeClient(new ApiError(503, 'ServiceUnavailable', 'down'))).writes.liveUid('Agent', 'ns', 'a1', signal), { code: 503 });
});
