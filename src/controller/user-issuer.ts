// The user plane's issuer (docs/api.md, "Policy ConfigMap": `jwks`): its OIDC discovery must
// announce the issuer as configured, and its keys are read from SECURITY_USER_AUTH_JWKS_URI. Read
// without the operator's credentials (it is not the API server), when a projection pass first needs
// them and again every AUTHZ_JWKS_REFRESH_INTERVAL; a refresh that finds other keys asks for a pass,
// one that finds the same asks for nothing, and one that fails keeps the keys it had.
import { asRecord, asString, jsonEqual } from '../api/json.ts';
import type { JsonGet } from '../kube/json-get.ts';
import type { Logger } from '../leaves/logger.ts';
import { errorFields } from '../leaves/logger.ts';
import type { IssuerKeys } from '../render/authz-data.ts';

/** Reads the issuer's discovery document, checks its `issuer`, and fetches the keys at `jwksUri`. */
export async function discoverIssuerKeys(issuer: string, jwksUri: string, get: JsonGet, signal?: AbortSignal): Promise<IssuerKeys> {
  const configured = issuer.trim();
  const endpoint = `${configured.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const options = signal === undefined ? {} : { signal };
  let discovery: unknown;
  try {
    discovery = await get(endpoint, options);
  } catch (err) {
    throw new Error(`discovering issuer from ${endpoint}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const discovered = (asString(asRecord(discovery)?.issuer) ?? '').trim();
  if (discovered === '') throw new Error(`OIDC discovery at ${endpoint} returned an empty issuer`);
  if (discovered !== configured) throw new Error(`configured issuer "${configured}" does not match OIDC discovery issuer "${discovered}"`);
  let jwks: unknown;
  try {
    jwks = await get(jwksUri.trim(), options);
  } catch (err) {
    throw new Error(`fetching JWKS: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (asRecord(jwks) === undefined) throw new Error(`the JWKS at ${jwksUri} is not a JSON object`);
  return { issuer: discovered, jwks };
}

/** The user issuer's keys, fetched on first need and refreshed on a timer while a leader projects. */
export class UserIssuerKeys {
  readonly #issuer: string;
  readonly #jwksUri: string;
  readonly #get: JsonGet;
  readonly #log: Logger;
  #keys: IssuerKeys | undefined;

  constructor(options: { issuer: string; jwksUri: string; get: JsonGet; logger: Logger }) {
    this.#issuer = options.issuer;
    this.#jwksUri = options.jwksUri;
    this.#get = options.get;
    this.#log = options.logger;
  }

  /** The keys, fetched now if none are held (a failure rejects: the pass fails and is retried). */
  async get(signal?: AbortSignal): Promise<IssuerKeys> {
    this.#keys ??= await discoverIssuerKeys(this.#issuer, this.#jwksUri, this.#get, signal);
    return this.#keys;
  }

  /**
   * Fetches again; true when the keys changed (then a pass is due). A failure keeps the keys held:
   * they were good at the last pass, and a flapping issuer must not empty the policy.
   */
  async refresh(signal?: AbortSignal): Promise<boolean> {
    try {
      const keys = await discoverIssuerKeys(this.#issuer, this.#jwksUri, this.#get, signal);
      const changed = this.#keys === undefined || !jsonEqual(this.#keys, keys);
      this.#keys = keys;
      return changed;
    } catch (err) {
      this.#log.warn({ issuer: this.#issuer, ...errorFields(err) }, 'user issuer keys not refreshed; keeping the keys held');
      return false;
    }
  }
}

/**
 * Runs `tick` every `intervalMs` until `signal` aborts (an unref'd timer: it never keeps the
 * process alive). Nothing else happens on the timer: `tick` decides whether anything changed.
 */
export function every(intervalMs: number, signal: AbortSignal, tick: () => void): void {
  if (signal.aborted || !(intervalMs > 0)) return;
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}
