// The user issuer's keys (docs/api.md, "Policy ConfigMap": jwks): its discovery must announce the
// configured issuer, the keys come from SECURITY_USER_AUTH_JWKS_URI, and a refresh says whether
// they changed (and keeps what it had when it fails).
import t from 'tap';
import { discoverIssuerKeys, UserIssuerKeys } from '../../../src/controller/user-issuer.ts';
import type { JsonGet } from '../../../src/kube/json-get.ts';
import { silentLogger } from '../../../src/leaves/logger.ts';

const ISSUER = 'https://idp.example/realms/kaos';
const JWKS_URI = `${ISSUER}/protocol/openid-connect/certs`;

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

t.test('discovery at <issuer>/.well-known/openid-configuration, keys from the configured JWKS URI', async (t) => {
  const keys = { keys: [{ kid: 'k1' }] };
  const s = server({ [`${ISSUER}/.well-known/openid-configuration`]: { issuer: ISSUER, jwks_uri: 'https://elsewhere/keys' }, [JWKS_URI]: keys });
  t.same(await discoverIssuerKeys(`${ISSUER}/`.replace(/\/$/, ''), JWKS_URI, s.get), { issuer: ISSUER, jwks: keys });
  t.same(s.asked, [`${ISSUER}/.well-known/openid-configuration`, JWKS_URI], "the setting's URI, not the document's jwks_uri");
});

t.test('an issuer that announces another issuer, none, or no keys is an error naming it', async (t) => {
  const other = server({ [`${ISSUER}/.well-known/openid-configuration`]: { issuer: 'https://impostor' } });
  await t.rejects(discoverIssuerKeys(ISSUER, JWKS_URI, other.get), { message: `configured issuer "${ISSUER}" does not match OIDC discovery issuer "https://impostor"` });
  const empty = server({ [`${ISSUER}/.well-known/openid-configuration`]: {} });
  await t.rejects(discoverIssuerKeys(ISSUER, JWKS_URI, empty.get), { message: `OIDC discovery at ${ISSUER}/.well-known/openid-configuration returned an empty issuer` });
  const down = server({});
  await t.rejects(discoverIssuerKeys(ISSUER, JWKS_URI, down.get), { message: /^discovering issuer from https:\/\/idp\.example\/realms\/kaos\/\.well-known\/openid-configuration: GET .*404/ });
  const noKeys = server({ [`${ISSUER}/.well-known/openid-configuration`]: { issuer: ISSUER } });
  await t.rejects(discoverIssuerKeys(ISSUER, JWKS_URI, noKeys.get), { message: /^fetching JWKS: GET .*404/ });
});

t.test('fetched once, then only by refresh: a change says so, the same keys do not, a failure keeps them', async (t) => {
  const documents: Record<string, unknown> = { [`${ISSUER}/.well-known/openid-configuration`]: { issuer: ISSUER }, [JWKS_URI]: { keys: [{ kid: 'k1' }] } };
  const s = server(documents);
  const keys = new UserIssuerKeys({ issuer: ISSUER, jwksUri: JWKS_URI, get: s.get, logger: silentLogger });
  const first = await keys.get();
  await keys.get();
  t.equal(s.asked.length, 2, 'the second get reads nothing');
  t.equal(await keys.refresh(), false, 'the same keys');
  documents[JWKS_URI] = { keys: [{ kid: 'k2' }] };
  t.equal(await keys.refresh(), true, 'rotated');
  delete documents[JWKS_URI];
  t.equal(await keys.refresh(), false, 'a failed refresh is no change');
  t.same(await keys.get(), { issuer: ISSUER, jwks: { keys: [{ kid: 'k2' }] } }, 'and keeps the keys it had');
  t.not(first, await keys.get());
});
