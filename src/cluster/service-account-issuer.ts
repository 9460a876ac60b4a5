// The cluster's ServiceAccount issuer and its keys, as the rest of the operator reads them
// (docs/api.md, "Agent identity by ServiceAccount": discovery): the AccessGrant projection puts
// them in the policy data, the SecurityPolicy of each route verifies agent tokens with them.
//
// Discovered from the API server at start (kube/oidc-discovery.ts), unless the settings name the
// issuer or the keys (SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_ISSUER / _JWKS: each replaces its own
// half), and discovered again every AUTHZ_JWKS_REFRESH_INTERVAL, so a rotation of the cluster's
// signing keys reaches the policies without a restart. A failed refresh keeps what was known and
// tries again a minute later; a listener hears only of a real change.
import { canonicalJSON } from '../render/hash.ts';
import type { ServiceAccountTokenSettings } from '../config/security.ts';
import type { Logger } from '../leaves/logger.ts';
import { errorMessage } from '../leaves/error-message.ts';
import { asKeySet, discoverIssuer, fetchKeySet, type DiscoveryClient, type JsonWebKeySet } from '../kube/oidc-discovery.ts';

/** The issuer of the Agents' ServiceAccount tokens, and the key set that verifies them. */
export interface ServiceAccountIssuer {
  readonly issuer: string;
  readonly jwks: JsonWebKeySet;
}

/** What the rest of the operator reads: the issuer and keys now, and word of each change. */
export interface ServiceAccountIssuerSource {
  /** The issuer and keys; undefined until the first discovery succeeds. */
  current(): ServiceAccountIssuer | undefined;
  /** Calls `listener` after each change of the issuer or its keys; returns the unsubscribe. */
  onChange(listener: (next: ServiceAccountIssuer) => void): () => void;
}

/** Timers, injectable so that a test moves time by hand. */
export interface IssuerTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface ServiceAccountIssuerOptions {
  readonly client: DiscoveryClient;
  /** The issuer and key-set overrides (`issuer` '' and `jwks` undefined: discover each). */
  readonly settings: Pick<ServiceAccountTokenSettings, 'issuer' | 'jwks'>;
  /** How long a discovered issuer and key set are kept before they are read again. */
  readonly refreshIntervalMs: number;
  /** After a failed discovery, how long until the next try. */
  readonly retryMs?: number;
  readonly logger: Logger;
  readonly timers?: IssuerTimers;
}

const RETRY_MS = 60_000;
const NODE_TIMERS: IssuerTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export class ServiceAccountIssuerDiscovery implements ServiceAccountIssuerSource {
  readonly #options: ServiceAccountIssuerOptions;
  readonly #timers: IssuerTimers;
  readonly #listeners = new Set<(next: ServiceAccountIssuer) => void>();
  #current: ServiceAccountIssuer | undefined;
  #timer: unknown;
  #stopped = false;
  readonly #abort = new AbortController();

  constructor(options: ServiceAccountIssuerOptions) {
    this.#options = options;
    this.#timers = options.timers ?? NODE_TIMERS;
  }

  current(): ServiceAccountIssuer | undefined {
    return this.#current;
  }

  onChange(listener: (next: ServiceAccountIssuer) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Nothing is discovered: the settings name both the issuer and the keys. */
  get static(): boolean {
    return this.#options.settings.issuer !== '' && this.#options.settings.jwks !== undefined;
  }

  /**
   * The first discovery; then refreshes run on their own until stop(). Resolves with the first
   * attempt's error, or undefined when it succeeded (the caller decides whether a failure is
   * fatal: with security enabled, policies cannot be written without the issuer).
   */
  async start(): Promise<Error | undefined> {
    return this.#attempt();
  }

  stop(): void {
    this.#stopped = true;
    this.#abort.abort();
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #attempt(): Promise<Error | undefined> {
    let error: Error | undefined;
    try {
      this.#set(await this.#discover());
    } catch (err) {
      error = err instanceof Error ? err : new Error(String(err));
      if (!this.#stopped) {
        this.#options.logger.warn(
          { err: errorMessage(err), retrySeconds: (this.#options.retryMs ?? RETRY_MS) / 1000, known: this.#current !== undefined },
          'ServiceAccount issuer discovery failed',
        );
      }
    }
    this.#schedule(error === undefined ? this.#options.refreshIntervalMs : (this.#options.retryMs ?? RETRY_MS));
    return error;
  }

  async #discover(): Promise<ServiceAccountIssuer> {
    const { client, settings } = this.#options;
    const signal = this.#abort.signal;
    const named = settings.jwks === undefined ? undefined : asKeySet(settings.jwks);
    if (settings.issuer !== '' && named !== undefined) return { issuer: settings.issuer, jwks: named };
    let issuer = settings.issuer;
    let jwksUri: string | undefined;
    if (issuer === '') ({ issuer, jwksUri } = await discoverIssuer(client, signal));
    return { issuer, jwks: named ?? (await fetchKeySet(client, jwksUri, signal)) };
  }

  #set(next: ServiceAccountIssuer): void {
    const before = this.#current;
    if (before !== undefined && before.issuer === next.issuer && canonicalJSON(before.jwks) === canonicalJSON(next.jwks)) return;
    this.#current = next;
    this.#options.logger.info({ issuer: next.issuer, keys: next.jwks.keys.length }, before === undefined ? 'ServiceAccount issuer discovered' : 'ServiceAccount issuer or keys changed');
    for (const listener of this.#listeners) listener(next);
  }

  #schedule(ms: number): void {
    if (this.#stopped || this.static) return;
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined;
      void this.#attempt();
    }, ms);
  }
}
