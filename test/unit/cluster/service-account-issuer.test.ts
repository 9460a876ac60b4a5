// The issuer and keys the rest of the operator reads: discovered at start unless the settings name
// them, refreshed on the interval, retried a minute after a failure keeping what was known, and a
// listener told only of a real change.
import t from 'tap';
import { ServiceAccountIssuerDiscovery, type IssuerTimers } from '../../../src/cluster/service-account-issuer.ts';
import type { DiscoveryClient } from '../../../src/kube/oidc-discovery.ts';
import { silentLogger } from '../../../src/leaves/logger.ts';

const KEYS_A = { keys: [{ kty: 'RSA', kid: 'a' }] };
const KEYS_B = { keys: [{ kty: 'RSA', kid: 'b' }] };
const DOC = { issuer: 'https://kubernetes.default.svc.cluster.local', jwks_uri: 'https://kubernetes.default.svc.cluster.local/openid/v1/jwks' };

/** A server whose answers the test changes; `down` makes every GET fail. */
function server() {
  const state = { doc: DOC as unknown, keys: KEYS_A as unknown, down: false, asked: [] as string[] };
  const client: DiscoveryClient = {
    server: new URL('https://127.0.0.1:6443'),
    get: async <T>(path: string): Promise<T> => {
      state.asked.push(path);
      if (state.down) throw new Error('connect ECONNREFUSED');
      if (path === '/.well-known/openid-configuration') return state.doc as T;
      if (path === '/openid/v1/jwks') return state.keys as T;
      throw new Error(`unexpected ${path}`);
    },
  } as DiscoveryClient;
  return { state, client };
}

/** Timers the test fires by hand: `due()` lists the pending delays, `fire()` runs the next one. */
function manualTimers() {
  const pending: { fn: () => void; ms: number; id: number }[] = [];
  let next = 0;
  const timers: IssuerTimers = {
    setTimeout: (fn, ms) => {
      const id = ++next;
      pending.push({ fn, ms, id });
      return id;
    },
    clearTimeout: (handle) => {
      const i = pending.findIndex((p) => p.id === handle);
      if (i >= 0) pending.splice(i, 1);
    },
  };
  return {
    timers,
    due: () => pending.map((p) => p.ms),
    fire: async () => {
      const p = pending.shift();
      p?.fn();
      await new Promise((r) => setImmediate(r));
    },
  };
}

t.test('discovered at start, refreshed on the interval; a change reaches listeners, the same keys do not', async (t) => {
  const { state, client } = server();
  const clock = manualTimers();
  const d = new ServiceAccountIssuerDiscovery({ client, settings: { issuer: '' }, refreshIntervalMs: 600_000, logger: silentLogger, timers: clock.timers });
  const heard: string[] = [];
  d.onChange((next) => heard.push(String((next.jwks.keys[0] as { kid: string }).kid)));
  t.equal(d.current(), undefined, 'nothing before start');
  t.equal(await d.start(), undefined, 'the first discovery succeeded');
  t.same(d.current(), { issuer: DOC.issuer, jwks: KEYS_A });
  t.same(state.asked, ['/.well-known/openid-configuration', '/openid/v1/jwks'], 'a jwks_uri on another host: the API server\'s own path');
  t.same(clock.due(), [600_000], 'the next refresh after the interval');
  await clock.fire();
  t.same(heard, ['a'], 'the same issuer and keys again: no second word');
  state.keys = KEYS_B;
  await clock.fire();
  t.same(heard, ['a', 'b'], 'rotated keys are heard');
  t.same(d.current()?.jwks, KEYS_B);
  d.stop();
  t.same(clock.due(), [], 'stop cancels the refresh');
});

t.test('a failure keeps what was known and is retried a minute later', async (t) => {
  const { state, client } = server();
  const clock = manualTimers();
  const d = new ServiceAccountIssuerDiscovery({ client, settings: { issuer: '' }, refreshIntervalMs: 600_000, logger: silentLogger, timers: clock.timers });
  state.down = true;
  const first = await d.start();
  t.match(first?.message, /ECONNREFUSED/, 'start reports the first failure (the caller decides if it is fatal)');
  t.equal(d.current(), undefined);
  t.same(clock.due(), [60_000], 'retried each minute');
  await clock.fire();
  t.same(clock.due(), [60_000], 'and again');
  state.down = false;
  await clock.fire();
  t.same(d.current(), { issuer: DOC.issuer, jwks: KEYS_A }, 'found once the server answers');
  t.same(clock.due(), [600_000], 'then on the interval');
  state.down = true;
  await clock.fire();
  t.same(d.current(), { issuer: DOC.issuer, jwks: KEYS_A }, 'a failed refresh keeps the keys');
  t.same(clock.due(), [60_000]);
  d.stop();
});

t.test('the settings replace discovery, each its own half', async (t) => {
  const named = { keys: [{ kty: 'EC', kid: 'mine' }] };
  {
    const { state, client } = server();
    const clock = manualTimers();
    const d = new ServiceAccountIssuerDiscovery({ client, settings: { issuer: 'https://issuer.example', jwks: named }, refreshIntervalMs: 600_000, logger: silentLogger, timers: clock.timers });
    t.equal(await d.start(), undefined);
    t.same(d.current(), { issuer: 'https://issuer.example', jwks: named });
    t.same(state.asked, [], 'both named: nothing asked');
    t.same(clock.due(), [], 'and nothing to refresh');
  }
  {
    const { state, client } = server();
    const d = new ServiceAccountIssuerDiscovery({ client, settings: { issuer: 'https://issuer.example' }, refreshIntervalMs: 600_000, logger: silentLogger, timers: manualTimers().timers });
    await d.start();
    t.same(d.current(), { issuer: 'https://issuer.example', jwks: KEYS_A });
    t.same(state.asked, ['/openid/v1/jwks'], 'the issuer named: only the keys are fetched');
  }
  {
    const { state, client } = server();
    const d = new ServiceAccountIssuerDiscovery({ client, settings: { issuer: '', jwks: named }, refreshIntervalMs: 600_000, logger: silentLogger, timers: manualTimers().timers });
    await d.start();
    t.same(d.current(), { issuer: DOC.issuer, jwks: named });
    t.same(state.asked, ['/.well-known/openid-configuration'], 'the keys named: only the issuer is discovered');
  }
});
