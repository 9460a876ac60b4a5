// The API server's ServiceAccount token issuer and the keys that verify its tokens, as Kubernetes'
// ServiceAccount issuer discovery publishes them: `/.well-known/openid-configuration` (its
// `issuer` and `jwks_uri`) and the JSON Web Key Set, read with the client's own credentials (the
// ClusterRole `system:service-account-issuer-discovery` grants the two non-resource URLs).
import type { KubeClient } from './client.ts';

export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const API_SERVER_JWKS_PATH = '/openid/v1/jwks';
/** The Accept header of a key set's GET: its own media type (RFC 7517), then JSON for a server that serves that. */
export const JWKS_ACCEPT = 'application/jwk-set+json, application/json';

/** A JSON Web Key Set: an object with a `keys` list (other members kept as served). */
export type JsonWebKeySet = Readonly<Record<string, unknown>> & { readonly keys: readonly unknown[] };

/** What discovery reads through: a client's GET and the server it talks to. */
export type DiscoveryClient = Pick<KubeClient, 'get' | 'server'>;

/** Pure: `value` as a key set, else undefined. */
export function asKeySet(value: unknown): JsonWebKeySet | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return Array.isArray((value as { keys?: unknown }).keys) ? (value as JsonWebKeySet) : undefined;
}

/**
 * Pure: the API path at which `server` serves the keys `jwks_uri` names — a relative reference,
 * or an absolute URL on the server's own origin — else undefined (another host: the API server's
 * own `/openid/v1/jwks` serves the same keys, and the operator may not reach that host at all).
 */
export function jwksPathOnServer(jwksUri: unknown, server: URL): string | undefined {
  if (typeof jwksUri !== 'string' || jwksUri === '') return undefined;
  const prefix = server.pathname.replace(/\/+$/, '');
  const absolute = /^[a-z][a-z0-9+.-]*:/i.test(jwksUri);
  let url: URL;
  try {
    url = new URL(jwksUri, new URL(`${prefix}/`, server));
  } catch {
    return undefined;
  }
  if (absolute && url.origin !== server.origin) return undefined;
  // The client prepends the server's path prefix itself.
  const path = prefix !== '' && url.pathname.startsWith(`${prefix}/`) ? url.pathname.slice(prefix.length) : url.pathname;
  return path + url.search;
}

/** The issuer `/.well-known/openid-configuration` names, and its `jwks_uri` as served. */
export async function discoverIssuer(client: DiscoveryClient, signal?: AbortSignal): Promise<{ issuer: string; jwksUri?: string }> {
  const document = await client.get<Record<string, unknown>>(OPENID_CONFIGURATION_PATH, signal === undefined ? {} : { signal });
  const issuer = document?.['issuer'];
  if (typeof issuer !== 'string' || issuer.trim() === '') throw new Error(`${OPENID_CONFIGURATION_PATH} names no issuer`);
  const jwksUri = document['jwks_uri'];
  return typeof jwksUri === 'string' ? { issuer: issuer.trim(), jwksUri } : { issuer: issuer.trim() };
}

/**
 * The key set: from `jwksUri` when the API server serves it (jwksPathOnServer), else — or when
 * that read fails — from the API server's `/openid/v1/jwks`.
 */
export async function fetchKeySet(client: DiscoveryClient, jwksUri: string | undefined, signal?: AbortSignal): Promise<JsonWebKeySet> {
  // The API server serves the keys only as application/jwk-set+json: asked for application/json
  // alone it answers 406 Not Acceptable.
  const options = { accept: JWKS_ACCEPT, ...(signal === undefined ? {} : { signal }) };
  const read = async (path: string): Promise<JsonWebKeySet> => {
    const keys = asKeySet(await client.get<unknown>(path, options));
    if (keys === undefined) throw new Error(`${path} is no JSON Web Key Set (no "keys" list)`);
    return keys;
  };
  const named = jwksPathOnServer(jwksUri, client.server);
  if (named !== undefined && named !== API_SERVER_JWKS_PATH) {
    try {
      return await read(named);
    } catch {
      // The API server's own path serves the same keys.
    }
  }
  return read(API_SERVER_JWKS_PATH);
}
