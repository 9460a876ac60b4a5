// The policy projection's runner (docs/api.md, "Projection"): what wakes a pass, what it writes
// and how (server-side apply, its own field manager, forced, the managed-by label, no owner), that
// it writes nothing when the data is the same, that a burst of changes coalesces, and what it
// tells the AccessGrants.
import t from 'tap';
import type { KaosKind } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/meta.ts';
import { AuthzProjection, feedsProjection, policyConfigMap, policyRulesPresent, type ObjectWatch, type ProjectionSettings } from '../../../src/controller/authz-projection.ts';
import type { ReflectorEvent } from '../../../src/kube/reflector.ts';
import { silentLogger, type Logger } from '../../../src/leaves/logger.ts';
import { FakeClock, settle } from './fake-clock.ts';

type Listener = (event: ReflectorEvent<KubeObject>) => void;

class FakeStore implements ObjectWatch {
  readonly objects = new Map<string, KubeObject>();
  readonly #listeners = new Set<Listener>();
  list(): KubeObject[] {
    return [...this.objects.values()];
  }
  on(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  put(object: KubeObject): void {
    const key = `${object.metadata?.namespace}/${object.metadata?.name}`;
    const old = this.objects.get(key);
    this.objects.set(key, object);
    for (const l of this.#listeners) l(old === undefined ? { type: 'add', object } : { type: 'update', old, object });
  }
}

const NS = 'team-a';
const TARGET = { namespace: 'kaos-system', name: 'kaos-authz-policy' };
const SETTINGS: ProjectionSettings = {
  configMap: TARGET,
  namespaces: undefined,
  gates: { securityEnabled: true, userPlaneEnabled: true, projectionActive: true },
  serviceAccountIdentity: true,
  user: undefined,
  regoFrom: undefined,
};

let version = 0;
const kaos = (kind: KaosKind, name: string, spec: unknown, extra: { generation?: number; labels?: Record<string, string>; status?: unknown } = {}): KubeObject => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind,
  metadata: { name, namespace: NS, generation: extra.generation ?? 1, resourceVersion: String(++version), ...(extra.labels === undefined ? {} : { labels: extra.labels }) },
  spec,
  ...(extra.status === undefined ? {} : { status: extra.status }),
});

function setup(settings: ProjectionSettings = SETTINGS, more: { userKeys?: { get: () => Promise<{ issuer: string; jwks: unknown }>; refresh: () => Promise<boolean> }; rego?: FakeStore; logger?: Logger } = {}) {
  const stores = new Map<KaosKind, FakeStore>();
  const store = (kind: KaosKind): FakeStore => {
    let s = stores.get(kind);
    if (s === undefined) stores.set(kind, (s = new FakeStore()));
    return s;
  };
  const policy = new FakeStore();
  const applies: { path: string; body: KubeObject; options: unknown }[] = [];
  const clock = new FakeClock();
  const woken: string[][] = [];
  const projection = new AuthzProjection({
    cache: { reflector: store },
    settings,
    serviceAccountKeys: () => ({ issuer: 'https://kubernetes.default.svc', jwks: { keys: [] } }),
    ...(more.userKeys === undefined ? {} : { userKeys: more.userKeys }),
    client: {
      apply: async <T>(path: string, body: unknown, options: unknown): Promise<T> => {
        applies.push({ path, body: body as KubeObject, options });
        // The API server's answer, and the watch event it makes: server-side apply keeps the keys
        // other managers own (a policy.rego written by Helm).
        const previous = policy.objects.get(`${TARGET.namespace}/${TARGET.name}`) as { data?: Record<string, string> } | undefined;
        const applied = body as KubeObject & { data?: Record<string, string> };
        const live = { ...applied, metadata: { ...applied.metadata, resourceVersion: String(++version) }, data: { ...previous?.data, ...applied.data } };
        policy.put(live);
        return live as T;
      },
    },
    policyConfigMap: policy,
    ...(more.rego === undefined ? {} : { regoSource: more.rego }),
    logger: more.logger ?? silentLogger,
    clock,
  });
  projection.onGrantsChanged((keys) => woken.push(keys));
  const abort = new AbortController();
  const run = async (ms: number): Promise<void> => {
    for (let elapsed = 0; elapsed < ms; elapsed += 250) {
      clock.advance(250);
      await settle();
    }
  };
  return { store, policy, applies, woken, projection, abort, run, clock };
}

const dataOf = (applied: { body: KubeObject } | undefined): unknown => JSON.parse(String((applied?.body as { data?: Record<string, string> } | undefined)?.data?.['data.json']));

t.test('a change feeds the projection when it creates, deletes, or changes a generation or labels; never a status write', async (t) => {
  const a = kaos('Agent', 'a', { modelAPI: 'm' });
  t.ok(feedsProjection({ type: 'add', object: a }));
  t.ok(feedsProjection({ type: 'delete', object: a }));
  t.notOk(feedsProjection({ type: 'update', old: a, object: { ...a, status: { ready: true } } }));
  t.ok(feedsProjection({ type: 'update', old: a, object: { ...a, metadata: { ...a.metadata, generation: 2 } } }));
  t.ok(feedsProjection({ type: 'update', old: a, object: { ...a, metadata: { ...a.metadata, labels: { team: 'x' } } } }));
  t.notOk(feedsProjection({ type: 'update', old: a, object: { ...a, metadata: { ...a.metadata, resourceVersion: '999', annotations: { x: 'y' } } } }));
});

t.test('the leader projects: server-side apply by kaos-operator-authz, forced, the managed-by label, no owner, data.json only', async (t) => {
  const { store, applies, projection, abort, run, woken } = setup();
  store('Agent').put(kaos('Agent', 'a', { modelAPI: 'm' }));
  store('AccessGrant').put(kaos('AccessGrant', 'g', { subjects: [{ kind: 'User', name: 'alice' }], resources: [{ kind: 'Agent', name: 'a' }] }, { generation: 3 }));
  await run(5000);
  t.same(applies, [], 'nothing before this replica leads');
  projection.lead(abort.signal);
  await run(1000);
  t.equal(applies.length, 1);
  const applied = applies[0];
  t.equal(applied?.path, '/api/v1/namespaces/kaos-system/configmaps/kaos-authz-policy');
  t.same(applied?.options, { fieldManager: 'kaos-operator-authz', force: true, signal: abort.signal });
  t.same(applied?.body.metadata, { name: 'kaos-authz-policy', namespace: 'kaos-system', labels: { 'app.kubernetes.io/managed-by': 'kaos-operator-authz' } });
  t.same(Object.keys((applied?.body as { data: object }).data), ['data.json'], 'policy.rego is not ours: a Helm-written one stays');
  t.same((dataOf(applied) as { kaos: { grants: unknown } }).kaos.grants, { 'kaos://agent/team-a/a': ['kaos://modelapi/team-a/m'] });
  t.same(woken, [['AccessGrant/team-a/g']], 'the grant the pass read is woken');
  t.same(projection.reads().of(NS, 'g', 3), { state: 'projected', generation: 3 });
  t.same(projection.reads().of(NS, 'g', 4), { state: 'pending' }, 'a newer generation waits for the next pass');
  abort.abort();
});

t.test('zero idle writes: the write\'s own watch event, a status write, a resync-like repeat cost a pass at most, and no write', async (t) => {
  const { store, applies, projection, abort, run, woken } = setup();
  const agent = kaos('Agent', 'a', { modelAPI: 'm' });
  store('Agent').put(agent);
  projection.lead(abort.signal);
  await run(3000);
  t.equal(applies.length, 1);
  store('Agent').put({ ...agent, status: { ready: true }, metadata: { ...agent.metadata, resourceVersion: '500' } });
  await run(60_000);
  t.equal(applies.length, 1, 'a status write wakes nothing');
  store('Agent').put({ ...agent, metadata: { ...agent.metadata, labels: { tier: 'x' }, resourceVersion: '501' } });
  await run(5000);
  t.equal(applies.length, 1, 'a label change is a pass, but the data is the same: no write');
  t.same(woken, [], 'no grant to tell anything');
  abort.abort();
});

t.test('someone else\'s edit of data.json is put back; their other keys stay theirs', async (t) => {
  const { store, applies, policy, projection, abort, run } = setup();
  store('Agent').put(kaos('Agent', 'a', { modelAPI: 'm' }));
  projection.lead(abort.signal);
  await run(2000);
  const ours = applies[0]?.body as KubeObject & { data: Record<string, string> };
  policy.put({ ...ours, metadata: { ...ours.metadata, resourceVersion: '900' }, data: { ...ours.data, 'data.json': '{}', 'policy.rego': 'package kaos.authz' } });
  await run(2000);
  t.equal(applies.length, 2);
  t.same(Object.keys((applies[1]?.body as { data: object }).data), ['data.json']);
  abort.abort();
});

t.test('a burst of 1,000 Agent creates over 20 s is a few passes and a few writes, not one per Agent', async (t) => {
  const { store, applies, projection, abort, run } = setup();
  projection.lead(abort.signal);
  await run(2000);
  const before = { passes: projection.counts.passes, writes: applies.length };
  for (let i = 0; i < 1000; i++) {
    store('Agent').put(kaos('Agent', `a-${i}`, { modelAPI: 'm' }));
    if (i % 50 === 49) await run(1000 - 250); // 50 Agents every ~0.75 s
  }
  await run(5000);
  const passes = projection.counts.passes - before.passes;
  const writes = applies.length - before.writes;
  t.ok(passes <= 4, `passes: ${passes}`);
  t.ok(writes <= 3, `writes: ${writes}`);
  t.equal(Object.keys((dataOf(applies.at(-1)) as { kaos: { grants: object } }).kaos.grants).length, 1000, 'the last write has every Agent');
  abort.abort();
});

t.test('a failed pass: every grant it read is told, nothing is written, and the retry heals it', async (t) => {
  let failing = true;
  const userKeys = {
    get: async () => {
      if (failing) throw new Error('discovering issuer from https://idp.example/.well-known/openid-configuration: connection refused');
      return { issuer: 'https://idp.example', jwks: { keys: [] } };
    },
    refresh: async () => false,
  };
  const { store, applies, projection, abort, run, woken } = setup({ ...SETTINGS, user: { issuer: 'https://idp.example', audience: '' } }, { userKeys });
  store('AccessGrant').put(kaos('AccessGrant', 'g', { subjects: [{ kind: 'User', name: 'alice' }], resources: [{ kind: 'Agent', name: 'a' }] }));
  projection.lead(abort.signal);
  await run(1000);
  t.same(applies, []);
  t.same(projection.reads().of(NS, 'g', 1), { state: 'failed' });
  t.same(woken, [['AccessGrant/team-a/g']]);
  failing = false;
  await run(5000);
  t.equal(applies.length, 1, 'retried after the backoff, with no new trigger');
  t.same(projection.reads().of(NS, 'g', 1), { state: 'projected', generation: 1 });
  t.same(woken, [['AccessGrant/team-a/g'], ['AccessGrant/team-a/g']]);
  t.same((dataOf(applies[0]) as { kaos: { user_grants: unknown } }).kaos.user_grants, { 'user:alice': ['kaos://agent/team-a/a'] });
  abort.abort();
});

t.test('AUTHZ_POLICY_REGO_FROM: policy.rego copied verbatim, and again when it changes; a missing source fails the pass', async (t) => {
  const rego = new FakeStore();
  const from = { namespace: 'kaos-system', name: 'my-rego', key: 'authz.rego' };
  const { applies, projection, abort, run } = setup({ ...SETTINGS, regoFrom: from }, { rego });
  projection.lead(abort.signal);
  await run(1000);
  t.same(applies, [], 'no source yet: nothing written');
  rego.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'my-rego', namespace: 'kaos-system' }, data: { 'authz.rego': 'package kaos.authz\n\ndefault allow := false\n' } } as KubeObject);
  await run(5000);
  t.equal(applies.length, 1);
  t.equal((applies[0]?.body as { data: Record<string, string> }).data['policy.rego'], 'package kaos.authz\n\ndefault allow := false\n');
  rego.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'my-rego', namespace: 'kaos-system' }, data: { 'authz.rego': 'package kaos.authz\n' } } as KubeObject);
  await run(2000);
  t.equal(applies.length, 2);
  t.equal((applies[1]?.body as { data: Record<string, string> }).data['policy.rego'], 'package kaos.authz\n');
  abort.abort();
});

t.test('inactive (no ConfigMap to write): no pass, no write; grants read the gates', async (t) => {
  const { store, applies, projection, abort, run } = setup({ ...SETTINGS, configMap: undefined, gates: { ...SETTINGS.gates, projectionActive: false } });
  store('Agent').put(kaos('Agent', 'a', { modelAPI: 'm' }));
  projection.lead(abort.signal);
  await run(30_000);
  t.same(applies, []);
  t.equal(projection.counts.passes, 0);
  t.equal(projection.reads().gates.projectionActive, false);
  abort.abort();
});

t.test('AUTHZ_PROJECTION_NAMESPACES: other namespaces are neither read nor judged', async (t) => {
  const { store, applies, projection, abort, run } = setup({ ...SETTINGS, namespaces: ['elsewhere'] });
  store('Agent').put(kaos('Agent', 'a', { modelAPI: 'm' }));
  projection.lead(abort.signal);
  await run(2000);
  const data = (dataOf(applies[0]) as { kaos: { grants: object; agents?: object } }).kaos;
  t.same(data.grants, {});
  t.notOk('agents' in data);
  t.same(projection.reads().of(NS, 'g', 1), { state: 'unprojected' });
  abort.abort();
});

t.test('a policy ConfigMap without policy.rego is said once at the first pass (the PDP would deny every request), and once when it has rules', async (t) => {
  const lines: [string, unknown, string][] = [];
  const logger = { ...silentLogger, warn: (fields: unknown, message: string) => void lines.push(['warn', fields, message]), info: (fields: unknown, message: string) => void lines.push(['info', fields, message]) } as Logger;
  const { store, policy, applies, projection, abort, run } = setup(SETTINGS, { logger });
  store('Agent').put(kaos('Agent', 'a', { modelAPI: 'm' }));
  projection.lead(abort.signal);
  await run(2000);
  const said = lines.filter(([, , m]) => m !== 'policy data projected');
  t.same(said, [['warn', { configMap: 'kaos-system/kaos-authz-policy' }, "the policy ConfigMap kaos-system/kaos-authz-policy has data.json and no policy.rego: the PDP has data and no rules, so with the SecurityPolicies' failOpen: false every gateway request is denied. This operator writes only the data: set AUTHZ_POLICY_REGO_FROM (the chart's security.agentAuth.authorization.policyRegoFrom) to a ConfigMap key holding KAOS's policy, or write policy.rego into that ConfigMap with Helm or kubectl"]]);
  store('Agent').put(kaos('Agent', 'b', { modelAPI: 'm' }));
  await run(2000);
  t.equal(lines.filter(([level]) => level === 'warn').length, 1, 'not again at the next pass');
  const ours = applies.at(-1)?.body as KubeObject & { data: Record<string, string> };
  policy.put({ ...ours, metadata: { ...ours.metadata, resourceVersion: '950' }, data: { ...ours.data, 'policy.rego': 'package kaos.authz\n' } });
  store('Agent').put(kaos('Agent', 'c', { modelAPI: 'm' }));
  await run(2000);
  t.same(lines.filter(([, , m]) => m !== 'policy data projected').at(-1), ['info', { configMap: 'kaos-system/kaos-authz-policy' }, 'the policy ConfigMap has policy.rego: the PDP has rules']);
  abort.abort();
});

t.test('policyRulesPresent: the copied policy.rego, else one someone else wrote; a blank one is none', async (t) => {
  const desired = (rego?: string) => policyConfigMap(TARGET, '{}', rego);
  const live = (rego: string): KubeObject => ({ ...desired(), data: { 'data.json': '{}', 'policy.rego': rego } } as KubeObject);
  t.equal(policyRulesPresent(undefined, desired()), false, 'no ConfigMap yet');
  t.equal(policyRulesPresent(live('package kaos.authz'), desired()), true, 'Helm\'s or the user\'s');
  t.equal(policyRulesPresent(live('  \n'), desired()), false, 'blank');
  t.equal(policyRulesPresent(undefined, desired('package kaos.authz')), true, 'AUTHZ_POLICY_REGO_FROM\'s');
});
