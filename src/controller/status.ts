// Pure: the status a reconcile writes (docs/api.md, "Status and conditions"). A reconciler states its outcome in the API's
// words (the builders below); nextStatus() turns it into phase, ready, message, the Deployment
// mirror, observedGeneration and the kstatus conditions Ready / Reconciling / Stalled, each
// with a lastTransitionTime that moves only when that condition's status moves; statusChanged()
// says whether the write is needed at all, so an idle controller writes nothing.
import { ENFORCED_CONDITION, type EnforcedState } from '../api/access-grants.ts';
import type { Phase } from '../api/enums.ts';
import { KIND_NAMES, SCALE_SUBRESOURCES, isWorkloadKind, type KaosKind } from '../api/kinds.ts';
import { declaredReplicas, isAutoscaled } from '../api/agent-scaling.ts';
import { selectorLabels } from '../render/labels.ts';
import type { Condition, DeploymentStatus } from '../api/schema/status.ts';
import { asRecord, jsonEqual } from '../api/json.ts';
import { formatTime } from '../leaves/meta-time.ts';
import { notServedMessage } from '../api/model-patterns.ts';

/** `status` of any of the four kinds, as the controller writes it. */
export interface KaosStatus {
  phase?: Phase;
  ready?: boolean;
  endpoint?: string;
  message?: string;
  observedGeneration?: number;
  deployment?: DeploymentStatus;
  conditions?: Condition[];
  /** Agents only: `{ modelapi: <name> }`, plus `memorystore: <name>` when bound. */
  linkedResources?: Record<string, string>;
  /** A kind with a scale subresource that declares its count: the Deployment's `status.replicas`. */
  replicas?: number;
  /** With `replicas`: the Deployment's selector as a string, which the scale subresource reports. */
  selector?: string;
}

/** A condition besides the kstatus three that a reconcile states (an Agent's MemoryDegraded). */
export interface ExtraCondition {
  type: (typeof EXTRA_CONDITION_TYPES)[number];
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** Where a reconcile got to: phase, why (a CamelCase reason) and the API's message. */
export interface Verdict {
  phase: Phase;
  /** metav1.Condition reason: CamelCase, e.g. `ModelAPINotReady`. */
  reason: string;
  message: string;
  /** Phase Failed only: retrying cannot fix it (kstatus `Stalled`); the user must act. */
  terminal?: boolean;
  /** Phase Pending only: where the user asked it to be, not on its way anywhere (kstatus `Reconciling` False). */
  settled?: boolean;
}

/** A verdict plus what the status reports besides. Absent fields are absent from the status. */
export interface Outcome extends Verdict {
  endpoint?: string;
  linkedResources?: Record<string, string>;
  deployment?: DeploymentStatus;
  /** Conditions of EXTRA_CONDITION_TYPES to report; one of those types left out is removed. */
  extraConditions?: readonly ExtraCondition[];
  /** status.replicas and status.selector (scaleStatus); absent: not reported. */
  replicas?: number;
  selector?: string;
}

// ---- the API's messages ----------------------------------------------------------------------

/** The API server's NotFound text, which KAOS puts after "Failed to resolve …: ". */
export function notFoundReason(kind: KaosKind, name: string): string {
  return `${KIND_NAMES[kind].plural}.kaos.tools "${name}" not found`;
}

/**
 * Not terminal: the ModelAPI's arrival wakes the Agent, and GitOps tools that apply the Agent
 * first must see "in progress", not "failed".
 */
export function modelAPIUnresolved(reason: string): Verdict {
  return { phase: 'Failed', reason: 'ModelAPIUnresolved', message: `Failed to resolve ModelAPI: ${reason}` };
}

export function modelAPINotReady(): Verdict {
  return { phase: 'Waiting', reason: 'ModelAPINotReady', message: 'ModelAPI is not ready' };
}

export function mcpServerUnresolved(name: string, reason: string): Verdict {
  return { phase: 'Failed', reason: 'MCPServerUnresolved', message: `Failed to resolve MCPServer ${name}: ${reason}` };
}

export function mcpServerNotReady(name: string): Verdict {
  return { phase: 'Waiting', reason: 'MCPServerNotReady', message: `MCPServer ${name} is not ready` };
}

/** A Secret the object reads (a Proxy's API key) does not exist; its creation wakes the object. */
export function secretUnresolved(name: string): Verdict {
  return { phase: 'Failed', reason: 'SecretUnresolved', message: `Failed to resolve Secret ${name}: secrets "${name}" not found` };
}

/** A ConfigMap the object reads (a Proxy's API key) does not exist; its creation wakes the object. */
export function configMapUnresolved(name: string): Verdict {
  return { phase: 'Failed', reason: 'ConfigMapUnresolved', message: `Failed to resolve ConfigMap ${name}: configmaps "${name}" not found` };
}

/**
 * KAOS's message for an Agent whose spec.model its ModelAPI does not serve (docs/api.md, "Newer KAOS shapes").
 * Terminal: retrying cannot fix it; a change of the Agent or of the ModelAPI wakes it.
 */
export function modelNotSupported(model: string, modelAPI: string, patterns: readonly string[]): Verdict {
  return failed('ModelNotSupported', notServedMessage(model, modelAPI, patterns), { terminal: true });
}

// ---- MemoryStore (docs/api.md, "MemoryStore") ----------------------------------------------

/** A model role's ModelAPI does not exist: Pending, nothing created meanwhile; its creation wakes the store. */
export function memoryModelAPIUnresolved(role: string, name: string): Verdict {
  return { phase: 'Pending', reason: 'ModelAPINotFound', message: `${role} ModelAPI "${name}" not found` };
}

/** A model role's ModelAPI is not Ready: Pending; its status change wakes the store. */
export function memoryModelAPINotReady(role: string, name: string): Verdict {
  return { phase: 'Pending', reason: 'ModelAPINotReady', message: `${role} ModelAPI "${name}" is not ready` };
}

/** A model role's ModelAPI does not serve its model: terminal; a change of either wakes the store. */
export function memoryModelNotSupported(role: string, model: string, modelAPI: string, patterns: readonly string[]): Verdict {
  return failed('ModelNotSupported', `${role} ${notServedMessage(model, modelAPI, patterns)}`, { terminal: true });
}

// ---- an Agent's remote memory (docs/api.md, "Agent remote memory") -------------------------

/** At first creation, with waitForDependencies: the Agent waits for its MemoryStore. */
export function memoryStoreNotFound(name: string): Verdict {
  return { phase: 'Waiting', reason: 'MemoryStoreNotFound', message: `MemoryStore ${name} not found` };
}

export function memoryStoreNotReady(name: string): Verdict {
  return { phase: 'Waiting', reason: 'MemoryStoreNotReady', message: `MemoryStore ${name} is not ready` };
}

/** The Agent reads further than its MemoryStore allows (KAOS's message): terminal, only a change fixes it. */
export function invalidMemoryReadScope(message: string): Verdict {
  return failed('InvalidMemoryReadScope', message, { terminal: true });
}

/**
 * An Agent whose harness runtime does not resolve (docs/api.md, "Agent harness"), with KAOS's
 * message: terminal, since a change of the registry (watched) or of the Agent wakes it.
 */
export function harnessRuntimeUnresolved(message: string): Verdict {
  return failed('HarnessRuntimeUnresolved', message, { terminal: true });
}

/**
 * MemoryDegraded: True while the bound MemoryStore is missing or not Ready (the Agent serves with
 * short-term memory only), False once it is Ready, or with no store to depend on.
 */
export function memoryDegraded(store: string | undefined, problem: 'missing' | 'not-ready' | undefined): ExtraCondition {
  if (store === undefined) return { type: 'MemoryDegraded', status: 'False', reason: 'MemoryHealthy', message: 'Memory is healthy' };
  if (problem === undefined) return { type: 'MemoryDegraded', status: 'False', reason: 'MemoryHealthy', message: `MemoryStore ${store} is ready` };
  const message = problem === 'missing' ? `MemoryStore ${store} not found` : `MemoryStore ${store} is not ready`;
  return { type: 'MemoryDegraded', status: 'True', reason: 'MemoryStoreNotReady', message };
}

/** Any other failure; `terminal` when only a change by the user can fix it. */
export function failed(reason: string, message: string, options: { terminal?: boolean } = {}): Verdict {
  return { phase: 'Failed', reason, message, terminal: options.terminal === true };
}

/** The part of a Deployment status reads; tolerant of anything, as cached objects are unchecked. */
export interface DeploymentLike {
  metadata?: unknown;
  spec?: unknown;
  status?: unknown;
}

/**
 * docs/api.md, "Status and conditions": `readyReplicas > 0` → Ready, else Pending; message `Deployment ready replicas:
 * <ready>/<replicas>` with the desired replicas (spec, default 1) as KAOS writes it; and the
 * `status.deployment` mirror. Refined where api.md is silent, as kstatus reads a Deployment:
 * - not Ready while a rollout replaces pods — the Deployment controller has not observed the
 *   current generation yet, or pods of an older template remain (`replicas > updatedReplicas`):
 *   ready old pods still serve the previous spec or config, so the parent is not Ready with the
 *   new one. Pending, reason `DeploymentRollingOut`;
 * - the same Pending `DeploymentRollingOut` while nothing is ready and the new pods are on their
 *   way (fewer updated than desired, or fewer available than updated: `kubectl rollout status`'s
 *   tests). So a new Deployment's sub-steps (not observed yet, observed, pods created, scheduled,
 *   starting) are one visible state with one message, `<counts> (rolling out)`, and cost one
 *   status write, not one per step;
 * - the Deployment's `Progressing` condition False with `ProgressDeadlineExceeded` (its pods did
 *   not become ready within `progressDeadlineSeconds`): Failed and terminal (kstatus Stalled),
 *   with the Deployment's own reason and message; a spec change that fixes it starts a new
 *   rollout, which the Deployment reports as progressing again;
 * - otherwise not ready: Pending with the reason of the Deployment's `Available` condition when it
 *   is False (e.g. `MinimumReplicasUnavailable`), else `DeploymentNotReady`.
 * Every message starts with api.md's `Deployment ready replicas: <ready>/<replicas>`.
 */
export function deploymentProgress(deployment: DeploymentLike): Verdict & { deployment: DeploymentStatus } {
  const mirror = mirrorDeployment(deployment);
  const ready = mirror.readyReplicas ?? 0;
  const desired = int(asRecord(deployment.spec)?.replicas) ?? 1;
  const counts = `Deployment ready replicas: ${ready}/${desired}`;
  const conditionOf = (type: string) => mirror.conditions?.find((c) => c.type === type);

  const progressing = conditionOf('Progressing');
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') {
    return { phase: 'Failed', reason: progressing.reason, message: `${counts}: ${progressing.message}`, terminal: true, deployment: mirror };
  }
  const rollout = rolloutState(deployment, mirror, desired);
  const rollingOut = { phase: 'Pending', reason: 'DeploymentRollingOut', message: `${counts} (rolling out)`, deployment: mirror } as const;
  if (rollout === 'replacing') return rollingOut;
  if (ready > 0) return { phase: 'Ready', reason: 'DeploymentReady', message: counts, deployment: mirror };
  if (rollout === 'starting') return rollingOut;
  const available = conditionOf('Available');
  return {
    phase: 'Pending',
    reason: available?.status === 'False' && available.reason !== 'Unknown' ? available.reason : 'DeploymentNotReady',
    message: counts,
    deployment: mirror,
  };
}

/**
 * Where the Deployment's rollout stands, by `kubectl rollout status`'s tests: `replacing` while
 * the controller has not observed the generation or pods of an older template remain; `starting`
 * while fewer replicas are updated than desired or fewer available than updated; else done.
 */
export function rolloutState(deployment: DeploymentLike, mirror: DeploymentStatus, desired: number): 'replacing' | 'starting' | undefined {
  const generation = int(asRecord(deployment.metadata)?.generation);
  const observed = int(asRecord(deployment.status)?.observedGeneration);
  const updated = mirror.updatedReplicas ?? 0;
  if ((generation !== undefined && (observed ?? 0) < generation) || (mirror.replicas ?? 0) > updated) return 'replacing';
  if (updated < desired || (mirror.availableReplicas ?? 0) < updated) return 'starting';
  return undefined;
}

/**
 * `status.deployment` from a Deployment's status: the four counts (0 when the Deployment omits
 * them) and its conditions as metav1.Condition. Only fields the CRD schema keeps, each valid, so
 * that what is written reads back equal and the next reconcile sees no change.
 */
export function mirrorDeployment(deployment: DeploymentLike): DeploymentStatus {
  const status = asRecord(deployment.status) ?? {};
  const mirror: DeploymentStatus = {
    replicas: int(status.replicas) ?? 0,
    readyReplicas: int(status.readyReplicas) ?? 0,
    availableReplicas: int(status.availableReplicas) ?? 0,
    updatedReplicas: int(status.updatedReplicas) ?? 0,
  };
  const conditions = Array.isArray(status.conditions) ? status.conditions.flatMap((c) => deploymentCondition(c)) : [];
  if (conditions.length > 0) mirror.conditions = conditions;
  return mirror;
}

function deploymentCondition(value: unknown): Condition[] {
  const c = asRecord(value);
  if (c === undefined || typeof c.type !== 'string' || c.type === '') return [];
  const status = c.status === 'True' || c.status === 'False' ? c.status : 'Unknown';
  const reason = typeof c.reason === 'string' && REASON.test(c.reason) ? c.reason : 'Unknown';
  const time = typeof c.lastTransitionTime === 'string' ? c.lastTransitionTime : typeof c.lastUpdateTime === 'string' ? c.lastUpdateTime : EPOCH;
  const message = typeof c.message === 'string' ? c.message.slice(0, MAX_CONDITION_MESSAGE) : '';
  return [{ type: c.type, status, lastTransitionTime: time, reason, message }];
}

// ---- the scale subresource (docs/api.md, "Agent replicas, kubectl scale and autoscaling") ------

/**
 * `status.replicas` (the Deployment's `status.replicas`) and `status.selector` (its selector as a
 * string, as `kubectl` and an HPA read it) of a kind with a scale subresource whose spec declares
 * its count (`replicas` or `autoscaling`). Nothing for any other object, whose status stays as it
 * was before scaling existed: an Agent that never declared a count is not written to on upgrade.
 */
export function scaleStatus(kind: KaosKind, name: string, spec: unknown, deployment: DeploymentLike | undefined): Pick<Outcome, 'replicas' | 'selector'> {
  if (SCALE_SUBRESOURCES[kind] === undefined || !isWorkloadKind(kind)) return {};
  if (declaredReplicas(spec) === undefined && !isAutoscaled(spec)) return {};
  const labels = selectorLabels(kind, name);
  const selector = Object.keys(labels).sort().map((key) => `${key}=${labels[key] ?? ''}`).join(',');
  return { replicas: int(asRecord(deployment?.status)?.replicas) ?? 0, selector };
}

/**
 * `spec.replicas: 0` on a kind with a scale subresource: not Ready, Pending by choice (kstatus
 * `Reconciling` False), and what is pointed at it is kept, to serve again once scaled up.
 */
export function scaledToZero(kind: KaosKind, spec: unknown): Verdict | undefined {
  if (SCALE_SUBRESOURCES[kind] === undefined || declaredReplicas(spec) !== 0) return undefined;
  return { phase: 'Pending', reason: 'ScaledToZero', message: `${kind} is scaled to zero replicas`, settled: true };
}

// ---- the next status -----------------------------------------------------------------------

export const CONDITION_TYPES = ['Ready', 'Reconciling', 'Stalled'] as const;
/** Conditions the controller owns besides the kstatus three: written when an outcome states them, removed when it does not. */
export const EXTRA_CONDITION_TYPES = ['MemoryDegraded', 'GatewayAuthorization'] as const;
const OWNED_CONDITION_TYPES: readonly string[] = [...CONDITION_TYPES, ...EXTRA_CONDITION_TYPES];

/** metav1.Condition's reason pattern (also in src/api/schema/status.ts, which the API server enforces). */
const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const MAX_CONDITION_MESSAGE = 32768;
const EPOCH = '1970-01-01T00:00:00Z';

/**
 * The status to write after a reconcile with `outcome`, given the current one (absent, the CRD's
 * default, or a previous write) and the object's metadata.generation. kstatus:
 * - `Ready` True iff phase Ready (what `kubectl wait --for=condition=Ready` waits for);
 * - `Reconciling` True while work is in flight: Pending, Waiting, or Failed but retried;
 * - `Stalled` True when Failed and terminal: retrying will not help.
 * All three carry the outcome's reason and message and the generation they describe.
 * Conditions of other types (written by someone else) are kept, after ours.
 */
export function nextStatus(prev: unknown, generation: number | undefined, outcome: Outcome, now: Date | number): KaosStatus {
  if (!REASON.test(outcome.reason)) throw new Error(`status: reason ${JSON.stringify(outcome.reason)} is not CamelCase (metav1.Condition reason)`);
  const previous = conditionsOf(prev);
  const time = formatTime(now);
  const inProgress =
    (outcome.phase === 'Pending' && outcome.settled !== true) || outcome.phase === 'Waiting' || (outcome.phase === 'Failed' && outcome.terminal !== true);
  const truth: Record<(typeof CONDITION_TYPES)[number], boolean> = {
    Ready: outcome.phase === 'Ready',
    Reconciling: inProgress,
    Stalled: outcome.phase === 'Failed' && outcome.terminal === true,
  };
  const message = outcome.message.slice(0, MAX_CONDITION_MESSAGE);
  const conditions: Condition[] = CONDITION_TYPES.map((type) => {
    const status = truth[type] ? 'True' : 'False';
    const before = previous.find((c) => c.type === type);
    return {
      type,
      status,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      lastTransitionTime: before !== undefined && before.status === status && typeof before.lastTransitionTime === 'string' ? before.lastTransitionTime : time,
      reason: outcome.reason,
      message,
    };
  });
  for (const extra of outcome.extraConditions ?? []) {
    const before = previous.find((c) => c.type === extra.type);
    conditions.push({
      type: extra.type,
      status: extra.status,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      lastTransitionTime: before !== undefined && before.status === extra.status && typeof before.lastTransitionTime === 'string' ? before.lastTransitionTime : time,
      reason: extra.reason,
      message: extra.message.slice(0, MAX_CONDITION_MESSAGE),
    });
  }
  for (const c of previous) if (!OWNED_CONDITION_TYPES.includes(c.type)) conditions.push(c);

  const status: KaosStatus = { phase: outcome.phase, ready: outcome.phase === 'Ready' };
  if (outcome.endpoint !== undefined && outcome.endpoint !== '') status.endpoint = outcome.endpoint;
  status.message = outcome.message;
  if (outcome.linkedResources !== undefined) status.linkedResources = { ...outcome.linkedResources };
  if (outcome.deployment !== undefined) status.deployment = outcome.deployment;
  if (outcome.replicas !== undefined) status.replicas = outcome.replicas;
  if (outcome.selector !== undefined) status.selector = outcome.selector;
  if (generation !== undefined) status.observedGeneration = generation;
  status.conditions = conditions;
  return status;
}

/**
 * Whether writing `next` is news: JSON equality, ignoring key order, the order of condition
 * lists (list-type map, keyed by type) and the `status.deployment` mirror. The mirror rides along
 * with every write but a change in it alone (counts, the Deployment's conditions) is not a
 * visible transition: the verdict it feeds (phase, reason, message with the ready count) is what
 * decides. A mirror that appears or disappears is news, so an object that gains or loses its
 * Deployment says so.
 */
export function statusChanged(prev: unknown, next: KaosStatus | GrantStatus): boolean {
  return !jsonEqual(canonical(prev), canonical(next));
}

function canonical(status: unknown): unknown {
  const s = asRecord(status);
  if (s === undefined) return status ?? {};
  const out: Record<string, unknown> = { ...s };
  if (Array.isArray(s.conditions)) out.conditions = sortByType(s.conditions);
  if (s.deployment !== undefined) out.deployment = true;
  return out;
}

function sortByType(list: unknown[]): unknown[] {
  const type = (c: unknown) => String(asRecord(c)?.type ?? '');
  return [...list].sort((a, b) => (type(a) < type(b) ? -1 : type(a) > type(b) ? 1 : 0));
}

function conditionsOf(status: unknown): Condition[] {
  const list = asRecord(status)?.conditions;
  if (!Array.isArray(list)) return [];
  return list.filter((c): c is Condition => typeof asRecord(c)?.type === 'string');
}

function int(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

// ---- the route's SecurityPolicy (docs/api.md, "Per-route SecurityPolicy and NetworkPolicy") ----

export const GATEWAY_AUTHORIZATION = 'GatewayAuthorization';

/** The SecurityPolicy of the route is applied: the route may be served. */
export function securityPolicyApplied(name: string): ExtraCondition {
  return { type: GATEWAY_AUTHORIZATION, status: 'True', reason: 'Applied', message: `SecurityPolicy ${name} is applied` };
}

/** Envoy Gateway's CRD is not installed: no policy can guard the route, so the route is withheld. */
export function securityPolicyCrdMissing(): ExtraCondition {
  return {
    type: GATEWAY_AUTHORIZATION,
    status: 'False',
    reason: 'CRDNotInstalled',
    message: "SecurityPolicy (gateway.envoyproxy.io/v1alpha1) is not installed: install Envoy Gateway's CRDs to enforce gateway authorization",
  };
}

/** The user plane's keys' URI is not known yet (no SECURITY_USER_AUTH_JWKS_URI, discovery not answered): the policy is held, the route withheld. */
export function securityPolicyUserIssuerUndiscovered(issuer: string): ExtraCondition {
  return {
    type: GATEWAY_AUTHORIZATION,
    status: 'False',
    reason: 'UserIssuerNotDiscovered',
    message: `The user issuer's OIDC discovery (${issuer.trim().replace(/\/+$/, '')}/.well-known/openid-configuration) has not answered yet: the SecurityPolicy's user provider needs its jwks_uri`,
  };
}

/** The API server refused the SecurityPolicy: the route is withheld until it is applied. */
export function securityPolicyApplyFailed(name: string, error: string): ExtraCondition {
  return { type: GATEWAY_AUTHORIZATION, status: 'False', reason: 'ApplyFailed', message: `Failed to apply SecurityPolicy ${name}: ${error}` };
}

// ---- AccessGrant (docs/api.md, "AccessGrant") --------------------------------------------------

/** `status` of an AccessGrant, as the controller writes it. */
export interface GrantStatus {
  observedGeneration?: number;
  conditions?: Condition[];
}

/**
 * The status after judging a grant `state` at `generation`: its Enforced condition (the
 * transition time moves only with its status), observedGeneration on both, other conditions kept.
 */
export function nextGrantStatus(prev: unknown, generation: number | undefined, state: EnforcedState, now: Date | number): GrantStatus {
  if (!REASON.test(state.reason)) throw new Error(`status: reason ${JSON.stringify(state.reason)} is not CamelCase (metav1.Condition reason)`);
  const previous = conditionsOf(prev);
  const before = previous.find((c) => c.type === ENFORCED_CONDITION);
  const enforced: Condition = {
    type: ENFORCED_CONDITION,
    status: state.status,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    lastTransitionTime: before !== undefined && before.status === state.status && typeof before.lastTransitionTime === 'string' ? before.lastTransitionTime : formatTime(now),
    reason: state.reason,
    message: state.message.slice(0, MAX_CONDITION_MESSAGE),
  };
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    conditions: [enforced, ...previous.filter((c) => c.type !== ENFORCED_CONDITION)],
  };
}
