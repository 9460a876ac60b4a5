// The policy projection (docs/api.md, "Projection" and "Policy ConfigMap"): one whole-world pass —
// the cached Agents, MCPServers, ModelAPIs, MemoryStores and AccessGrants of the projected
// namespaces, the settings and the issuers' keys, through render/authz-data.ts — into `data.json`
// of the PDP's policy ConfigMap, applied with server-side apply by its own field manager, forced,
// and only when it differs from what the ConfigMap holds. A pass runs when something it reads
// changes: a KAOS object created, deleted, or changed in its generation or labels; the policy
// ConfigMap or the Rego it copies; a key refresh that found other keys. Bursts coalesce
// (coalescer.ts); nothing runs on a timer while nothing changes. Only the leader projects.
//
// The outcome of each pass is what AccessGrants' Enforced condition reports past the gates
// (reconcile/accessgrant.ts): the grants the pass read are woken when what it says of them changed.
import { METRIC } from '../leaves/metric-names.ts';
import type { GrantGateFacts } from '../api/access-grants.ts';
import { grantGateFacts, projectionNamespaces } from '../config/grant-gates.ts';
import { accessGrantProjectionActive, serviceAccountIdentity, userPlaneEnabled, type SecurityConfig } from '../config/security.ts';
import { asRecord, asString } from '../api/json.ts';
import { KINDS, type KaosKind } from '../api/kinds.ts';
import type { KubeObject } from '../api/meta.ts';
import { refKey } from '../cluster/object-ref.ts';
import type { KubeClient } from '../kube/client.ts';
import { CONFIG_MAP, resourcePath, type ResourceType } from '../kube/paths.ts';
import type { ReflectorEvent } from '../kube/reflector.ts';
import type { Logger } from '../leaves/logger.ts';
import { Histogram, registerCollected, type Registry } from '../leaves/prometheus.ts';
import { projectPolicyData, type IssuerKeys, type ProjectionWorld } from '../render/authz-data.ts';
import { MANAGED_BY_LABEL } from '../render/index.ts';
import { Coalescer } from './coalescer.ts';
import type { Clock } from './queue.ts';
import type { GrantProjection, GrantProjectionReads } from './reconcile/context.ts';
import { every, type UserIssuerKeys } from './user-issuer.ts';

/** The field manager and managed-by label of the policy ConfigMap (KAOS's, so both operators agree on who writes it). */
export const AUTHZ_FIELD_MANAGER = 'kaos-operator-authz';
export const DATA_KEY = 'data.json';
export const POLICY_KEY = 'policy.rego';

/** A burst of changes waits this long for quiet, and at most maxWait, before a pass. */
export const PROJECTION_QUIET_MS = 1_000;
export const PROJECTION_MAX_WAIT_MS = 10_000;

export interface NamespacedName {
  readonly namespace: string;
  readonly name: string;
}

/** What the projection reads of the settings (docs/configuration.md, "Security"). */
export interface ProjectionSettings {
  /** The policy ConfigMap; undefined while the projection is not active (then nothing is written). */
  readonly configMap: NamespacedName | undefined;
  /** AUTHZ_PROJECTION_NAMESPACES; undefined: every namespace the cache watches. */
  readonly namespaces: readonly string[] | undefined;
  readonly gates: GrantGateFacts;
  readonly serviceAccountIdentity: boolean;
  /** The user plane, when enabled. */
  readonly user: { readonly issuer: string; readonly audience: string } | undefined;
  /** AUTHZ_POLICY_REGO_FROM: the ConfigMap and key whose text becomes `policy.rego`. */
  readonly regoFrom: (NamespacedName & { readonly key: string }) | undefined;
}

/**
 * Pure: the projection's settings. AUTHZ_POLICY_REGO_FROM names a ConfigMap and a key: it is read
 * in the policy ConfigMap's namespace, beside what it is copied into (the PDP's namespace).
 */
export function projectionSettings(s: SecurityConfig): ProjectionSettings {
  const { name, namespace } = s.projection.policyConfigMap;
  const configMap = accessGrantProjectionActive(s) ? { namespace, name } : undefined;
  const rego = s.authorization.policyRegoFrom;
  return {
    configMap,
    namespaces: projectionNamespaces(s),
    gates: grantGateFacts(s),
    serviceAccountIdentity: serviceAccountIdentity(s),
    user: userPlaneEnabled(s) ? { issuer: s.userAuth.issuer, audience: s.userAuth.audience } : undefined,
    regoFrom: configMap === undefined || rego === undefined ? undefined : { namespace: configMap.namespace, name: rego.name, key: rego.key },
  };
}

/** Where one-object watches are registered: the cache, before it starts. */
export interface OneObjectWatches {
  register(type: ResourceType, options: { namespace: string; fieldSelector: string }): ObjectWatch;
}

/**
 * The watches a pass compares with and copies from: the policy ConfigMap and AUTHZ_POLICY_REGO_FROM's,
 * each one object by name (RBAC: no other ConfigMap of their namespace is listed).
 */
export function registerProjectionWatches(cache: OneObjectWatches, settings: ProjectionSettings): Pick<AuthzProjectionOptions, 'policyConfigMap' | 'regoSource'> {
  const one = (where: NamespacedName): ObjectWatch => cache.register(CONFIG_MAP, { namespace: where.namespace, fieldSelector: `metadata.name=${where.name}` });
  return {
    ...(settings.configMap === undefined ? {} : { policyConfigMap: one(settings.configMap) }),
    ...(settings.regoFrom === undefined ? {} : { regoSource: one(settings.regoFrom) }),
  };
}

/** What the projection reads of the cache. */
export interface ProjectionCache {
  reflector(kind: KaosKind): { list(): readonly KubeObject[]; on(listener: (event: ReflectorEvent<KubeObject>) => void): () => void };
}

/** A one-object watch (the policy ConfigMap, the Rego's source). */
export interface ObjectWatch {
  list(): readonly KubeObject[];
  on(listener: (event: ReflectorEvent<KubeObject>) => void): () => void;
}

export interface AuthzProjectionOptions {
  cache: ProjectionCache;
  settings: ProjectionSettings;
  /** The ServiceAccount issuer's keys as last discovered; undefined before the first discovery. */
  serviceAccountKeys?: () => IssuerKeys | undefined;
  userKeys?: Pick<UserIssuerKeys, 'get' | 'refresh'>;
  /** How often the user issuer's keys are read again while this replica leads (AUTHZ_JWKS_REFRESH_INTERVAL). */
  refreshIntervalMs?: number;
  client: Pick<KubeClient, 'apply'>;
  /** A watch of the policy ConfigMap (what a pass compares with). */
  policyConfigMap?: ObjectWatch;
  /** A watch of AUTHZ_POLICY_REGO_FROM's ConfigMap. */
  regoSource?: ObjectWatch;
  logger: Logger;
  clock?: Clock;
  quietMs?: number;
  maxWaitMs?: number;
  /** Where the passes' metrics are served (kaos_authz_projection_*). */
  registry?: Registry;
}

/** A pass's duration buckets, seconds: a pass over a few objects to one over tens of thousands. */
const PASS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Pure: whether a change of a KAOS object can change the policy data — its creation or deletion,
 * a new generation (its spec) or other labels (selectors read them); never a status write.
 */
export function feedsProjection(event: ReflectorEvent<KubeObject>): boolean {
  if (event.type !== 'update') return true;
  const before = event.old.metadata;
  const after = event.object.metadata;
  return before?.generation !== after?.generation || !sameLabels(before?.labels, after?.labels);
}

function sameLabels(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => b?.[k] === a?.[k]);
}

/** Pure: the policy ConfigMap to apply: the managed-by label, the data, no owner. */
export function policyConfigMap(target: NamespacedName, data: string, rego: string | undefined): KubeObject & { data: Record<string, string> } {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: target.name, namespace: target.namespace, labels: { [MANAGED_BY_LABEL]: AUTHZ_FIELD_MANAGER } },
    data: { [DATA_KEY]: data, ...(rego === undefined ? {} : { [POLICY_KEY]: rego }) },
  };
}

/** Pure: whether `live` already holds every field `desired` applies (then the apply would change nothing). */
export function holdsPolicy(live: KubeObject | undefined, desired: ReturnType<typeof policyConfigMap>): boolean {
  if (live === undefined) return false;
  const liveData = asRecord((live as { data?: unknown }).data) ?? {};
  if (live.metadata?.labels?.[MANAGED_BY_LABEL] !== AUTHZ_FIELD_MANAGER) return false;
  return Object.entries(desired.data).every(([key, value]) => liveData[key] === value);
}

/**
 * Pure: whether the policy ConfigMap holds rules for the PDP: the policy.rego this operator copies
 * (AUTHZ_POLICY_REGO_FROM), else one Helm or the user wrote. Without them the PDP has data and no
 * rules, and with the SecurityPolicies' `failOpen: false` every gateway request is denied.
 */
export function policyRulesPresent(live: KubeObject | undefined, desired: ReturnType<typeof policyConfigMap>): boolean {
  const theirs = asString(asRecord((live as { data?: unknown } | undefined)?.data)?.[POLICY_KEY]);
  return (desired.data[POLICY_KEY] ?? theirs ?? '').trim() !== '';
}

/** The warning of a policy ConfigMap without rules (policyRulesPresent), naming what supplies them. */
export function policyRulesMissing(target: NamespacedName): string {
  return `the policy ConfigMap ${target.namespace}/${target.name} has data.json and no policy.rego: the PDP has data and no rules, so with the SecurityPolicies' failOpen: false every gateway request is denied. This operator writes only the data: set AUTHZ_POLICY_REGO_FROM (the chart's security.agentAuth.authorization.policyRegoFrom) to a ConfigMap key holding KAOS's policy, or write policy.rego into that ConfigMap with Helm or kubectl`;
}

export class AuthzProjection {
  readonly #o: AuthzProjectionOptions;
  /** Whether the last pass found the policy ConfigMap without rules; undefined before a pass. */
  #rulesMissing: boolean | undefined;
  readonly #namespaces: ReadonlySet<string> | undefined;
  #coalescer: Coalescer | undefined;
  /** The grants the last successful pass read, by `namespace/name`, with their generation. */
  #projected = new Map<string, number | undefined>();
  #failed = false;
  #wake: (keys: string[]) => void = () => undefined;
  /** Passes and ConfigMap writes so far (for the logs and the benchmark). */
  readonly counts = { passes: 0, failures: 0, writes: 0 };
  readonly #passSeconds = new Histogram(PASS_BUCKETS);

  constructor(options: AuthzProjectionOptions) {
    this.#o = options;
    this.#namespaces = options.settings.namespaces === undefined ? undefined : new Set(options.settings.namespaces);
    // Subscribed for the life of the process; a pass is asked for only while a term leads.
    for (const kind of KINDS) {
      options.cache.reflector(kind).on((event) => {
        if (this.#projects(event.object) && feedsProjection(event)) this.trigger();
      });
    }
    options.policyConfigMap?.on(() => this.trigger());
    options.regoSource?.on(() => this.trigger());
    if (options.registry !== undefined) this.#registerMetrics(options.registry);
  }

  #registerMetrics(registry: Registry): void {
    const { counts } = this;
    registerCollected(registry, {
      name: METRIC.projectionPasses,
      help: 'Passes of the AccessGrant policy projection, by result.',
      type: 'counter',
      values: () => [
        { value: counts.passes - counts.failures, labels: { result: 'success' } },
        { value: counts.failures, labels: { result: 'error' } },
      ],
    });
    registerCollected(registry, {
      name: METRIC.projectionWrites,
      help: 'Writes of the policy ConfigMap (a pass whose data is unchanged writes nothing).',
      type: 'counter',
      values: () => [{ value: counts.writes, labels: {} }],
    });
    registerCollected(registry, {
      name: METRIC.projectionPassSeconds,
      help: 'How long a pass takes: reading the world from the cache, the data, and the write when there is one.',
      type: 'histogram',
      values: () => this.#passSeconds.values(METRIC.projectionPassSeconds, {}),
    });
  }

  /** Who wakes the AccessGrants whose projection changed (the controller's queues). */
  onGrantsChanged(wake: (keys: string[]) => void): void {
    this.#wake = wake;
  }

  /** Whether the projection writes anything at all. */
  get active(): boolean {
    return this.#o.settings.configMap !== undefined;
  }

  /** What the AccessGrants' reconciler reads. */
  reads(): GrantProjectionReads {
    return { gates: this.#o.settings.gates, of: (namespace, name, generation) => this.#of(namespace, name, generation) };
  }

  #of(namespace: string, name: string, generation: number | undefined): GrantProjection {
    if (this.#namespaces !== undefined && !this.#namespaces.has(namespace)) return { state: 'unprojected' };
    if (this.#failed) return { state: 'failed' };
    const key = `${namespace}/${name}`;
    return this.#projected.has(key) && this.#projected.get(key) === generation ? { state: 'projected', generation } : { state: 'pending' };
  }

  /**
   * Projects while `signal` (a leader's term) lasts: a first pass at once, then one per burst of
   * changes. Inactive (no ConfigMap to write, docs/api.md "PolicyProjectionInactive"): nothing.
   */
  lead(signal: AbortSignal): void {
    if (!this.active || signal.aborted) return;
    const coalescer = new Coalescer({
      run: (s) => this.#pass(s),
      quietMs: this.#o.quietMs ?? PROJECTION_QUIET_MS,
      maxWaitMs: this.#o.maxWaitMs ?? PROJECTION_MAX_WAIT_MS,
      signal,
      logger: this.#o.logger,
      name: 'authz-projection',
      ...(this.#o.clock === undefined ? {} : { clock: this.#o.clock }),
    });
    this.#coalescer = coalescer;
    // A refresh that finds other keys asks for a pass; one that finds the same asks for nothing.
    const { userKeys, refreshIntervalMs } = this.#o;
    if (userKeys !== undefined && refreshIntervalMs !== undefined) {
      every(refreshIntervalMs, signal, () => void userKeys.refresh(signal).then((changed) => { if (changed) this.trigger(); }));
    }
    signal.addEventListener('abort', () => {
      if (this.#coalescer === coalescer) this.#coalescer = undefined;
    }, { once: true });
    coalescer.trigger();
  }

  /** Asks for a pass (a key refresh that found other keys, a change of what a pass reads). */
  trigger(): void {
    this.#coalescer?.trigger();
  }

  #projects(object: KubeObject): boolean {
    return this.#namespaces === undefined || this.#namespaces.has(object.metadata?.namespace ?? '');
  }

  /** Every projected object, from the cache. */
  #world(): ProjectionWorld {
    const list = (kind: KaosKind): KubeObject[] => this.#o.cache.reflector(kind).list().filter((o) => this.#projects(o));
    return { agents: list('Agent'), mcpServers: list('MCPServer'), modelAPIs: list('ModelAPI'), memoryStores: list('MemoryStore'), accessGrants: list('AccessGrant') };
  }

  /** The Rego to copy (AUTHZ_POLICY_REGO_FROM), or undefined when none is configured; a missing one fails the pass. */
  #rego(): string | undefined {
    const from = this.#o.settings.regoFrom;
    if (from === undefined) return undefined;
    const source = this.#o.regoSource?.list().find((o) => o.metadata?.name === from.name);
    if (source === undefined) throw new Error(`AUTHZ_POLICY_REGO_FROM: ConfigMap ${from.namespace}/${from.name} not found`);
    const text = asString(asRecord((source as { data?: unknown }).data)?.[from.key]);
    if (text === undefined) throw new Error(`AUTHZ_POLICY_REGO_FROM: ConfigMap ${from.namespace}/${from.name} has no key ${from.key}`);
    return text;
  }

  async #pass(signal: AbortSignal): Promise<void> {
    const target = this.#o.settings.configMap;
    if (target === undefined) return;
    const started = performance.now();
    const world = this.#world();
    this.counts.passes++;
    try {
      const { settings } = this.#o;
      const user = settings.user === undefined ? undefined : { ...settings.user, keys: await this.#userKeys(signal) };
      const serviceAccountKeys = this.#o.serviceAccountKeys?.();
      const data = projectPolicyData(world, {
        serviceAccountIdentity: settings.serviceAccountIdentity,
        ...(serviceAccountKeys === undefined ? {} : { serviceAccountKeys }),
        ...(user === undefined ? {} : { user }),
        grantsEnforced: settings.gates.securityEnabled && settings.gates.userPlaneEnabled,
      });
      const desired = policyConfigMap(target, data.json, this.#rego());
      const live = this.#o.policyConfigMap?.list().find((o) => o.metadata?.name === target.name);
      this.#sayRules(target, settings.gates.securityEnabled && !policyRulesPresent(live, desired));
      if (!holdsPolicy(live, desired)) {
        await this.#o.client.apply(resourcePath(CONFIG_MAP, target), desired, { fieldManager: AUTHZ_FIELD_MANAGER, force: true, signal });
        this.counts.writes++;
        this.#o.logger.info(
          { configMap: `${target.namespace}/${target.name}`, agents: world.agents.length, accessGrants: world.accessGrants.length, bytes: data.json.length, durationMs: ms(started) },
          'policy data projected',
        );
      }
      this.#settle(world.accessGrants, false);
    } catch (err) {
      this.counts.failures++;
      if (!signal.aborted) this.#settle(world.accessGrants, true);
      throw err;
    } finally {
      this.#passSeconds.observe((performance.now() - started) / 1000);
    }
  }

  /** Logs a policy ConfigMap without rules once when found so (the first pass: at start), and once when it has them again. */
  #sayRules(target: NamespacedName, missing: boolean): void {
    if (missing === this.#rulesMissing || (this.#rulesMissing === undefined && !missing)) {
      this.#rulesMissing = missing;
      return;
    }
    this.#rulesMissing = missing;
    if (missing) this.#o.logger.warn({ configMap: `${target.namespace}/${target.name}` }, policyRulesMissing(target));
    else this.#o.logger.info({ configMap: `${target.namespace}/${target.name}` }, 'the policy ConfigMap has policy.rego: the PDP has rules');
  }

  async #userKeys(signal: AbortSignal): Promise<IssuerKeys> {
    if (this.#o.userKeys === undefined) throw new Error('the user plane is enabled but its issuer keys have no source');
    return this.#o.userKeys.get(signal);
  }

  /** Records a pass's outcome and wakes the grants whose word changed. */
  #settle(grants: readonly KubeObject[], failed: boolean): void {
    const next = new Map<string, number | undefined>();
    const wake: string[] = [];
    for (const grant of grants) {
      const { namespace = '', name = '', generation } = grant.metadata ?? {};
      const key = `${namespace}/${name}`;
      if (!failed) next.set(key, generation);
      const changed = failed !== this.#failed || !this.#projected.has(key) || this.#projected.get(key) !== generation;
      if (changed) wake.push(refKey('AccessGrant', namespace, name));
    }
    this.#failed = failed;
    if (!failed) this.#projected = next;
    if (wake.length > 0) this.#wake(wake);
  }
}

function ms(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}
