// ServiceAccount issuer discovery against the API server: the issuer from its OIDC document, the
// keys from its jwks_uri when the API server serves that, else (or when it fails) from the API
// server's own /openid/v1/jwks.
import t from 'tap';
import { ApiError } from '../../../src/kube/errors.ts';
import { discoverIssuer, fetchKeySet, jwksPathOnServer, JWKS_ACCEPT, type DiscoveryClient } from '../../../src/kube/oidc-discovery.ts';

const SERVER = new URL('https://10.0.0.1:6443');
const KEYS = { keys: [{ kty: 'RSA', kid: 'a', n: 'x', e: 'AQAB' }] };

/** A client whose GETs answer from `routes` (path → body; an Error is thrown), recording each path. */
function client(routes: Record<string, unknown>, server = SERVER): DiscoveryClient & { asked: string[]; accepts: (string | undefined)[] } {
  const asked: string[] = [];
  const accepts: (string | undefined)[] = [];
  return {
    server,
    asked,
    accepts,
    get: async <T>(path: string, options?: { accept?: string }): Promise<T> => {
      asked.push(path);
      accepts.push(options?.accept);
      const body = routes[path];
      if (body === undefined) throw new ApiError(404, 'NotFound', `${path} not found`);
      if (body instanceof Error) throw body;
      return body as T;
    },
  } as DiscoveryClient & { asked: string[]; accepts: (string | undefined)[] };
}

t.test('jwksPathOnServer: relative, or on the API server\'s origin; another host is not followed', async (t) => {
  t.equal(jwksPathOnServer('https://10.0.0.1:6443/openid/v1/jwks', SERVER), '/openid/v1/jwks');
  t.equal(jwksPathOnServer('/custom/keys?v=2', SERVER), '/custom/keys?v=2');
  t.equal(jwksPathOnServer('keys', SERVER), '/keys', 'relative to the server');
  t.equal(jwksPathOnServer('https://kubernetes.default.svc.cluster.local/openid/v1/jwks', SERVER), undefined, 'the in-cluster name: another origin');
  t.equal(jwksPathOnServer('https://10.0.0.1:443/openid/v1/jwks', SERVER), undefined, 'another port is another origin');
  t.equal(jwksPathOnServer('https://s3.example/oidc/openid/v1/jwks', SERVER), undefined);
  t.equal(jwksPathOnServer('', SERVER), undefined);
  t.equal(jwksPathOnServer(42, SERVER), undefined);
  const behindProxy = new URL('https://proxy.example/k8s/');
  t.equal(jwksPathOnServer('https://proxy.example/k8s/openid/v1/jwks', behindProxy), '/openid/v1/jwks', 'the client adds the server\'s path prefix itself');
});

t.test('discoverIssuer: the document\'s issuer and jwks_uri; no issuer is an error', async (t) => {
  const c = client({ '/.well-known/openid-configuration': { issuer: 'https://kubernetes.default.svc.cluster.local', jwks_uri: 'https://10.0.0.1:6443/openid/v1/jwks' } });
  t.same(await discoverIssuer(c), { issuer: 'https://kubernetes.default.svc.cluster.local', jwksUri: 'https://10.0.0.1:6443/openid/v1/jwks' });
  t.same(c.asked, ['/.well-known/openid-configuration']);
  await t.rejects(discoverIssuer(client({ '/.well-known/openid-configuration': { issuer: '  ' } })), /names no issuer/);
  await t.rejects(discoverIssuer(client({})), /not found/, 'a 404 (issuer discovery not served) is an error');
});

t.test('fetchKeySet: jwks_uri on the server first, the API server\'s path when it fails or is elsewhere', async (t) => {
  const onServer = client({ '/keys': { keys: [] }, '/openid/v1/jwks': KEYS });
  t.same(await fetchKeySet(onServer, 'https://10.0.0.1:6443/keys'), { keys: [] });
  t.same(onServer.asked, ['/keys']);
  const elsewhere = client({ '/openid/v1/jwks': KEYS });
  t.same(await fetchKeySet(elsewhere, 'https://kubernetes.default.svc/openid/v1/jwks'), KEYS);
  t.same(elsewhere.asked, ['/openid/v1/jwks'], 'another host is never asked');
  const failing = client({ '/keys': new Error('connection reset'), '/openid/v1/jwks': KEYS });
  t.same(await fetchKeySet(failing, '/keys'), KEYS);
  t.same(failing.asked, ['/keys', '/openid/v1/jwks'], 'a failure falls back');
  const notKeys = client({ '/keys': { issuer: 'x' }, '/openid/v1/jwks': KEYS });
  t.same(await fetchKeySet(notKeys, '/keys'), KEYS, 'a document without keys falls back');
  t.same(await fetchKeySet(client({ '/openid/v1/jwks': KEYS }), undefined), KEYS, 'no jwks_uri');
  await t.rejects(fetchKeySet(client({ '/openid/v1/jwks': { nope: 1 } }), undefined), /no JSON Web Key Set/);
});

t.test('the key set is asked for as application/jwk-set+json, the only type the API server serves it as (else 406)', async (t) => {
  const c = client({ '/openid/v1/jwks': KEYS });
  await fetchKeySet(c, undefined);
  t.same(c.accepts, [JWKS_ACCEPT]);
  t.match(JWKS_ACCEPT, /^application\/jwk-set\+json\b/);
  const d = client({ '/.well-known/openid-configuration': { issuer: 'https://kubernetes.default.svc.cluster.local' } });
  await discoverIssuer(d);
  t.same(d.accepts, [undefined], 'the OIDC document is plain JSON');
});
