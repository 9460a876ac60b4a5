// The user plane's issuer (docs/api.md, "Policy ConfigMap": `jwks`): its OIDC discovery document,
// `<issuer>/.well-known/openid-configuration`, must announce the issuer as configured and names
// where its keys are (`jwks_uri`, unless SECURITY_USER_AUTH_JWKS_URI says otherwise), so any OIDC
// provider works, not only Keycloak's path. The same URI is the `user` JWT provider's
// `remoteJWKS.uri` in every route's SecurityPolicy. Read without the operator's credentials (it is
// not the API server), when first needed and again every AUTHZ_JWKS_REFRESH_INTERVAL; a refresh
// that finds other keys or another URI says so, one that finds the same says nothing, and one that
// fails keeps what it had: keeping the keys serves users through an identity provider's outage,
// and how long they have been kept is observable (the last success, a metric, a log line per
// failure, and a Warning Event once they are older than the bound).
import { asRecord, asString, jsonEqual } from '../api/json.ts';
import type { JsonGet } from '../kube/json-get.ts';
import type { Logger } from '../leaves/logger.ts';
import { errorFields } from '../leaves/logger.ts';
import type { IssuerKeys } from '../render/authz-data.ts';
import { registerCollected, type Registry } from '../leaves/prometheus.ts';
import { METRIC } from '../leaves/metric-names.ts';

/** What discovery found: the issuer's keys and the URI they were read from. */
export interface DiscoveredIssuer {
  readonly keys: IssuerKeys;
  readonly jwksUri: string;
}

/** Pure: `value` as an absolute http(s) URL, else undefined (a discovered `jwks_uri` is the provider's word, checked before use). */
function httpURL(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads the issuer's discovery document, checks its `issuer`, and fetches the keys at
 * `jwksUriOverride` when set, else at the document's `jwks_uri`.
 */
export async function discoverIssuerKeys(issuer: string, jwksUriOverride: string, get: JsonGet, signal?: AbortSignal): Promise<DiscoveredIssuer> {
  const configured = issuer.trim();
  const endpoint = `${configured.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const options = signal === undefined ? {} : { signal };
  let discovery: unknown;
  try {
    discovery = await get(endpoint, options);
  } catch (err) {
    throw new Error(`discovering issuer from ${endpoint}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const document = asRecord(discovery);
  const discovered = (asString(document?.issuer) ?? '').trim();
  if (discovered === '') throw new Error(`OIDC discovery at ${endpoint} returned an empty issuer`);
  if (discovered !== configured) throw new Error(`configured issuer "${configured}" does not match OIDC discovery issuer "${discovered}"`);
  const announced = (asString(document?.jwks_uri) ?? '').trim();
  const jwksUri = jwksUriOverride.trim() !== '' ? jwksUriOverride.trim() : httpURL(announced);
  if (jwksUri === undefined) {
    throw new Error(announced === ''
      ? `OIDC discovery at ${endpoint} names no jwks_uri (set SECURITY_USER_AUTH_JWKS_URI)`
      : `OIDC discovery at ${endpoint} names a jwks_uri that is not an http(s) URL: "${announced}"`);
  }
  let jwks: unknown;
  try {
    jwks = await get(jwksUri, options);
  } catch (err) {
    throw new Error(`fetching JWKS from ${jwksUri}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (asRecord(jwks) === undefined) throw new Error(`the JWKS at ${jwksUri} is not a JSON object`);
  return { keys: { issuer: discovered, jwks }, jwksUri };
}

/** How often discovery is tried while the keys' URI is not known yet (no override, no success). */
export const UNDISCOVERED_RETRY_MS = 60_000;

export interface UserIssuerKeysOptions {
  readonly issuer: string;
  /** SECURITY_USER_AUTH_JWKS_URI: '' reads the discovery document's `jwks_uri`. */
  readonly jwksUri: string;
  readonly get: JsonGet;
  readonly logger: Logger;
  /** Keys held longer than this since their last successful read are stale (a Warning). */
  readonly staleAfterMs: number;
  /** Told once when the keys become stale, and once when a refresh succeeds again (operator Events). */
  readonly onStale?: (stale: { stale: boolean; message: string }) => void;
  /** Default Date.now. */
  readonly now?: () => number;
}

/** The user issuer's keys and their URI, fetched on first need and refreshed on a timer. */
export class UserIssuerKeys {
  readonly #o: UserIssuerKeysOptions;
  readonly #now: () => number;
  readonly #listeners: (() => void)[] = [];
  #held: DiscoveredIssuer | undefined;
  #lastSuccessMs: number | undefined;
  #stale = false;

  constructor(options: UserIssuerKeysOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  /** The keys, fetched now if none are held (a failure rejects: the pass fails and is retried). */
  async get(signal?: AbortSignal): Promise<IssuerKeys> {
    if (this.#held === undefined) this.#hold(await discoverIssuerKeys(this.#o.issuer, this.#o.jwksUri, this.#o.get, signal));
    return (this.#held as DiscoveredIssuer).keys;
  }

  /**
   * The URI of the keys, the `user` provider's `remoteJWKS.uri`: the setting, else the one the
   * last successful discovery named; undefined before any.
   */
  jwksUri(): string | undefined {
    const override = this.#o.jwksUri.trim();
    return override !== '' ? override : this.#held?.jwksUri;
  }

  /** When the last read of the keys succeeded (ms since the epoch); undefined before any. */
  lastSuccessMs(): number | undefined {
    return this.#lastSuccessMs;
  }

  /** Listens for a change of jwksUri() (found, or moved): the SecurityPolicies name it. */
  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Fetches again; true when the keys changed (then a pass is due). A failure keeps the keys held:
   * they were good at the last pass, and a flapping issuer must not empty the policy. Each failure
   * is logged with the keys' age; past the bound, once, a stale warning is told.
   */
  async refresh(signal?: AbortSignal): Promise<boolean> {
    try {
      const found = await discoverIssuerKeys(this.#o.issuer, this.#o.jwksUri, this.#o.get, signal);
      const changed = this.#held === undefined || !jsonEqual(this.#held.keys, found.keys);
      this.#hold(found);
      return changed;
    } catch (err) {
      const age = this.ageSeconds();
      this.#o.logger.warn(
        { issuer: this.#o.issuer, ...errorFields(err), ...(age === undefined ? {} : { keysAgeSeconds: Math.round(age) }) },
        age === undefined ? 'user issuer keys not read; none held yet' : 'user issuer keys not refreshed; keeping the keys held',
      );
      if (age !== undefined && !this.#stale && age * 1000 > this.#o.staleAfterMs) {
        this.#stale = true;
        this.#o.onStale?.({ stale: true, message: `The user issuer's keys could not be refreshed for ${formatAge(age)} (last success ${new Date(this.#lastSuccessMs ?? 0).toISOString()}): the policy keeps the keys it had; ${errorMessageOf(err)}` });
      }
      return false;
    }
  }

  /** Seconds since the last successful read; undefined before any. */
  ageSeconds(): number | undefined {
    return this.#lastSuccessMs === undefined ? undefined : (this.#now() - this.#lastSuccessMs) / 1000;
  }

  /**
   * Tries discovery now and every minute until the keys' URI is known (no override, and nothing
   * read yet: a SecurityPolicy cannot name it before). The regular refresh takes over after.
   */
  discoverUntilKnown(signal: AbortSignal): void {
    if (this.jwksUri() !== undefined || signal.aborted) return;
    const attempt = (): void => {
      if (this.jwksUri() !== undefined || signal.aborted) return;
      void this.refresh(signal).then(() => {
        if (this.jwksUri() === undefined && !signal.aborted) setTimeout(attempt, UNDISCOVERED_RETRY_MS).unref();
      });
    };
    attempt();
  }

  #hold(found: DiscoveredIssuer): void {
    const before = this.jwksUri();
    this.#held = found;
    this.#lastSuccessMs = this.#now();
    if (this.#stale) {
      this.#stale = false;
      this.#o.onStale?.({ stale: false, message: `The user issuer's keys were refreshed from ${found.jwksUri}` });
    }
    if (this.jwksUri() !== before) for (const listener of this.#listeners) listener();
  }
}

function errorMessageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Pure: seconds as `1h5m`, `12m`, `40s`. */
export function formatAge(seconds: number): string {
  const s = Math.floor(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h}h${m}m`;
  return m > 0 ? `${m}m` : `${s}s`;
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

/** Keys held past this many refresh intervals without a successful read are stale (a Warning Event). */
export const STALE_AFTER_REFRESHES = 3;

/** The metric an alert on stale user issuer keys reads: `time() - it` is the keys' age. */
export const USER_KEYS_LAST_SUCCESS_METRIC = METRIC.userIssuerKeysLastSuccess;

/**
 * Registers USER_KEYS_LAST_SUCCESS_METRIC: no sample until the keys were read once, and none at
 * all without a user identity provider (`keys` undefined), so the family is always exported.
 */
export function registerUserIssuerMetrics(registry: Registry, keys: Pick<UserIssuerKeys, 'lastSuccessMs'> | undefined): void {
  registerCollected(registry, {
    name: USER_KEYS_LAST_SUCCESS_METRIC,
    help: "When the user issuer's keys were last read successfully (Unix seconds); a failed refresh keeps the keys held and leaves it unchanged.",
    type: 'gauge',
    values: () => {
      const at = keys?.lastSuccessMs();
      return at === undefined ? [] : [{ value: at / 1000, labels: {} }];
    },
  });
}
