// The user issuer's keys (docs/api.md, "Operator settings" and "Policy ConfigMap": jwks): its
// discovery must announce the configured issuer, the keys come from the discovery document's
// jwks_uri unless SECURITY_USER_AUTH_JWKS_URI overrides it (any OIDC provider, not only Keycloak's
// path), a refresh says whether they changed, and an identity provider that fails after start
// keeps the keys held while saying so: a log line per failure with the keys' age, the last
// success as a metric, and once past the bound a stale notice (a Warning Event in main.ts).
import t from 'tap';
import { discoverIssuerKeys, formatAge, registerUserIssuerMetrics, UserIssuerKeys, type UserIssuerKeysOptions } from '../../../src/controller/user-issuer.ts';
import type { JsonGet } from '../../../src/kube/json-get.ts';
import { createRegistry } from '../../../src/leaves/prometheus.ts';
import { silentLogger, type Logger } from '../../../src/leaves/logger.ts';

const ISSUER = 'https://idp.example/tenant-1/v2.0';
const DISCOVERY = `${ISSUER}/.well-known/openid-configuration`;
/** Not Keycloak's `<issuer>/protocol/openid-connect/certs`: Dex, Auth0 and Entra each name their own. */
const DISCOVERED_JWKS = 'https://keys.idp.example/tenant-1/discovery/v2.0/keys';

function server(documents: Record<string, unknown>): { get: JsonGet; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    get: async (url) => {
      asked.push(url);
      if (!(url in documents)) throw new Error(`GET ${url}: unexpected status 404 Not Found`);
      return documents[url];
    },
  };
}

t.test("the keys come from the discovery document's jwks_uri, wherever it points", async (t) => {
  const keys = { keys: [{ kid: 'k1' }] };
  const s = server({ [DISCOVERY]: { issuer: ISSUER, jwks_uri: DISCOVERED_JWKS }, [DISCOVERED_JWKS]: keys });
  t.same(await discoverIssuerKeys(ISSUER, '', s.get), { keys: { issuer: ISSUER, jwks: keys }, jwksUri: DISCOVERED_JWKS });
  t.same(s.asked, [DISCOVERY, DISCOVERED_JWKS]);
});

t.test('SECURITY_USER_AUTH_JWKS_URI overrides the document\'s jwks_uri', async (t) => {
  const keys = { keys: [{ kid: 'k1' }] };
  const override = 'https://mirror.example/keys.json';
  const s = server({ [DISCOVERY]: { issuer: ISSUER, jwks_uri: DISCOVERED_JWKS }, [override]: keys });
  t.same(await discoverIssuerKeys(ISSUER, ` ${override} `, s.get), { keys: { issuer: ISSUER, jwks: keys }, jwksUri: override });
  t.same(s.asked, [DISCOVERY, override], "the setting's URI, not the document's");
});

t.test('an issuer that announces another issuer, none, no or a bad jwks_uri, or no keys is an error naming it', async (t) => {
  const other = server({ [DISCOVERY]: { issuer: 'https://impostor', jwks_uri: DISCOVERED_JWKS } });
  await t.rejects(discoverIssuerKeys(ISSUER, '', other.get), { message: `configured issuer "${ISSUER}" does not match OIDC discovery issuer "https://impostor"` });
  const empty = server({ [DISCOVERY]: {} });
  await t.rejects(discoverIssuerKeys(ISSUER, '', empty.get), { message: `OIDC discovery at ${DISCOVERY} returned an empty issuer` });
  const down = server({});
  await t.rejects(discoverIssuerKeys(ISSUER, '', down.get), { message: `discovering issuer from ${DISCOVERY}: GET ${DISCOVERY}: unexpected status 404 Not Found` });
  const noUri = server({ [DISCOVERY]: { issuer: ISSUER } });
  await t.rejects(discoverIssuerKeys(ISSUER, '', noUri.get), { message: `OIDC discovery at ${DISCOVERY} names no jwks_uri (set SECURITY_USER_AUTH_JWKS_URI)` });
  const fileUri = server({ [DISCOVERY]: { issuer: ISSUER, jwks_uri: 'file:///etc/passwd' } });
  await t.rejects(discoverIssuerKeys(ISSUER, '', fileUri.get), { message: `OIDC discovery at ${DISCOVERY} names a jwks_uri that is not an http(s) URL: "file:///etc/passwd"` });
  t.same(fileUri.asked, [DISCOVERY], 'such a URI is never fetched');
  const noKeys = server({ [DISCOVERY]: { issuer: ISSUER, jwks_uri: DISCOVERED_JWKS } });
  await t.rejects(discoverIssuerKeys(ISSUER, '', noKeys.get), { message: `fetching JWKS from ${DISCOVERED_JWKS}: GET ${DISCOVERED_JWKS}: unexpected status 404 Not Found` });
});

const options = (get: JsonGet, extra: Partial<UserIssuerKeysOptions> = {}): UserIssuerKeysOptions => ({ issuer: ISSUER, jwksUri: '', get, logger: silentLogger, staleAfterMs: 30 * 60_000, ...extra });

t.test('fetched once, then only by refresh: a change says so, the same keys do not, a failure keeps them', async (t) => {
  const documents: Record<string, unknown> = { [DISCOVERY]: { issuer: ISSUER, jwks_uri: DISCOVERED_JWKS }, [DISCOVERED_JWKS]: { keys: [{ kid: 'k1' }] } };
  const s = server(documents);
  const keys = new UserIssuerKeys(options(s.get));
  const first = await keys.get();
  await keys.get();
  t.equal(s.asked.length, 2, 'the second get reads nothing');
  t.equal(await keys.refresh(), false, 'the same keys');
  documents[DISCOVERED_JWKS] = { keys: [{ kid: 'k2' }] };
  t.equal(await keys.refresh(), true, 'rotated');
  delete documents[DISCOVERED_JWKS];
  t.equal(await keys.refresh(), false, 'a failed refresh is no change');
  t.same(await keys.get(), { issuer: ISSUER, jwks: { keys: [{ kid: 'k2' }] } }, 'and keeps the keys it had');
  t.not(first, await keys.get());
});

t.test('jwksUri: the setting at once; else unknown until discovered, then the discovered one, and a move is told', async (t) => {
  const documents: Record<string, unknown> = { [DISCOVERY]: { issuer: ISSUER, jwks_uri: DISCOVERED_JWKS }, [DISCOVERED_JWKS]: { keys: [] } };
  const s = server(documents);
  t.equal(new UserIssuerKeys(options(s.get, { jwksUri: 'https://mirror.example/keys' })).jwksUri(), 'https://mirror.example/keys');
  const keys = new UserIssuerKeys(options(s.get));
  let told = 0;
  keys.onChange(() => told++);
  t.equal(keys.jwksUri(), undefined, 'nothing discovered yet');
  await keys.refresh();
  t.equal(keys.jwksUri(), DISCOVERED_JWKS);
  t.equal(told, 1, 'found: told');
  await keys.refresh();
  t.equal(told, 1, 'the same URI again: not told');
  const moved = 'https://keys2.idp.example/keys';
  documents[DISCOVERY] = { issuer: ISSUER, jwks_uri: moved };
  documents[moved] = { keys: [] };
  await keys.refresh();
  t.equal(keys.jwksUri(), moved);
  t.equal(told, 2, 'moved: told');
});

t.test('an identity provider that fails after start: the keys are kept and their age is logged, measured and, past the bound, told once; a success tells the recovery', async (t) => {
  const documents: Record<string, unknown> = { [DISCOVERY]: { issuer: ISSUER, jwks_uri: DISCOVERED_JWKS }, [DISCOVERED_JWKS]: { keys: [{ kid: 'k1' }] } };
  const s = server(documents);
  let nowMs = Date.UTC(2026, 10, 29, 6, 0, 0);
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const logger: Logger = { ...silentLogger, warn: (fields: Record<string, unknown>, message: string) => void warnings.push({ fields, message }) } as Logger;
  const notices: { stale: boolean; message: string }[] = [];
  const keys = new UserIssuerKeys(options(s.get, { logger, now: () => nowMs, staleAfterMs: 30 * 60_000, onStale: (n) => notices.push(n) }));
  const registry = createRegistry();
  registerUserIssuerMetrics(registry, keys);
  t.notMatch(await registry.metrics(), '\nkaos_authz_user_issuer_keys_last_success_timestamp_seconds ', 'no sample before the first read');
  await keys.get();
  t.match(await registry.metrics(), '\nkaos_authz_user_issuer_keys_last_success_timestamp_seconds 1795932000\n', 'the last success, in Unix seconds');

  delete documents[DISCOVERY];
  for (const minutes of [10, 20, 30]) {
    nowMs += 10 * 60_000;
    t.equal(await keys.refresh(), false);
    t.same(warnings.at(-1), { fields: { issuer: ISSUER, err: `discovering issuer from ${DISCOVERY}: GET ${DISCOVERY}: unexpected status 404 Not Found`, keysAgeSeconds: minutes * 60 }, message: 'user issuer keys not refreshed; keeping the keys held' }, `${minutes} minutes: logged with the keys' age`);
  }
  t.same(notices, [], 'at the bound (30 minutes), not yet past it');
  t.same(await keys.get(), { issuer: ISSUER, jwks: { keys: [{ kid: 'k1' }] } }, 'the keys held are still served');
  t.match(await registry.metrics(), '\nkaos_authz_user_issuer_keys_last_success_timestamp_seconds 1795932000\n', 'the metric still says when they were read: its age is the alert');
  nowMs += 10 * 60_000;
  await keys.refresh();
  nowMs += 10 * 60_000;
  await keys.refresh();
  t.same(notices, [{
    stale: true,
    message: `The user issuer's keys could not be refreshed for 40m (last success 2026-11-29T06:00:00.000Z): the policy keeps the keys it had; discovering issuer from ${DISCOVERY}: GET ${DISCOVERY}: unexpected status 404 Not Found`,
  }], 'past the bound: told once, not at every failure');

  documents[DISCOVERY] = { issuer: ISSUER, jwks_uri: DISCOVERED_JWKS };
  nowMs += 10 * 60_000;
  t.equal(await keys.refresh(), false, 'the same keys again');
  t.same(notices.at(-1), { stale: false, message: `The user issuer's keys were refreshed from ${DISCOVERED_JWKS}` }, 'the recovery, told once');
  t.equal(notices.length, 2);
  t.match(await registry.metrics(), `\nkaos_authz_user_issuer_keys_last_success_timestamp_seconds ${(nowMs / 1000).toString()}\n`);
});

t.test('an identity provider down from the start: logged, nothing held, nothing stale to tell', async (t) => {
  const warnings: string[] = [];
  const notices: unknown[] = [];
  const logger: Logger = { ...silentLogger, warn: (_fields: Record<string, unknown>, message: string) => void warnings.push(message) } as Logger;
  const keys = new UserIssuerKeys(options(server({}).get, { logger, onStale: (n) => notices.push(n) }));
  t.equal(await keys.refresh(), false);
  t.same(warnings, ['user issuer keys not read; none held yet']);
  t.equal(keys.jwksUri(), undefined);
  t.equal(keys.ageSeconds(), undefined);
  t.same(notices, []);
  await t.rejects(keys.get(), { message: `discovering issuer from ${DISCOVERY}: GET ${DISCOVERY}: unexpected status 404 Not Found` }, 'a pass that needs them fails (ProjectionFailed)');
});

t.test('formatAge', async (t) => {
  t.equal(formatAge(40), '40s');
  t.equal(formatAge(12 * 60 + 5), '12m');
  t.equal(formatAge(3900), '1h5m');
});
