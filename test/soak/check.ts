// The invariants of a quiet cluster, over what the soak's own cache of it holds (cluster-view.ts:
// the operator's KaosCache and reflectors, so the checker reads the cluster as the controller
// does). Two kinds of check:
// - a reconcile pass that writes nothing: each object's own reconciler (controller/reconcile/,
//   with the dependencies it resolves and the renderer it calls) runs against the cache with
//   writes that only record. A converged operator has nothing left to write, so each write it
//   would make is a violation: a child missing or not what the renderer produces (names,
//   labels, owner, env, hashes: every applied field), a child to prune, a status to rewrite, a
//   legacy finalizer left on an object being deleted;
// - rules that read the objects directly, without the controller's code: every child has one
//   living controller owner at a name that owner can own; observedGeneration is current; a status
//   says Ready only over a rolled-out ready Deployment, Waiting only while a dependency is
//   missing or not ready, a dependency failure only while one is missing.
// Kind-generic: WORKLOAD_KINDS, RECONCILERS and the kind table (children, dependencies) say everything per kind.
import { asRecord, getIn } from '../../src/api/json.ts';
import { WORKLOAD_KINDS, isWorkloadKind, type WorkloadKind } from '../../src/api/kinds.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import { ensureChild, pruneOwned } from '../../src/cluster/child-apply.ts';
import { KIND_TABLE, dependenciesOf, possibleChildren, type DependencyTypeKind } from '../../src/cluster/kind-table.ts';
import type { ReconcileContext, ReconcileReads } from '../../src/controller/reconcile/context.ts';
import { RECONCILERS } from '../../src/controller/reconcile/index.ts';
import { statusChanged, type KaosStatus } from '../../src/controller/status.ts';
import { controllerUid, type ObjectLike } from '../../src/kube/apply.ts';
import { silentLogger } from '../../src/leaves/logger.ts';
import type { Child, RenderConfig } from '../../src/render/index.ts';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../../src/render/index.ts';

/** The invariants the report counts, each with what it means. */
export const INVARIANTS = {
  children: 'children are what the renderer produces from the spec and dependencies',
  owners: 'no child without a living owner',
  status: 'no status contradicting its children and dependencies',
  generation: 'observedGeneration current',
  writes: 'every write a client saw succeed is what the cluster holds',
  denials: 'every denial a documented rule (no timeout, no 500)',
  quiet: 'no operator write in the quiet minute',
  replicas: 'no replica exits unless a fault kills it',
} as const;

export type Invariant = keyof typeof INVARIANTS;

export interface Violation {
  readonly invariant: Invariant;
  /** `Kind namespace/name`. */
  readonly subject: string;
  readonly detail: string;
}

export interface ClusterState {
  /** The cache's reads, bound as the controller binds them (controller/context-binding.ts). */
  readonly reads: ReconcileReads;
  /** Every KAOS object of a kind. */
  objects(kind: WorkloadKind): readonly KubeObject[];
  /** Every object of the owned types in the namespaces checked, labelled or not (a list, not the cache). */
  readonly children: readonly ObjectLike[];
  readonly config: RenderConfig;
}

const subjectOf = (kind: string, object: KubeObject | ObjectLike): string => `${kind} ${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

/** Every violation of the cluster's invariants (those about its state: not writes, denials or quiet). */
export async function checkCluster(state: ClusterState): Promise<Violation[]> {
  const violations: Violation[] = [];
  for (const kind of WORKLOAD_KINDS) {
    for (const object of state.objects(kind)) {
      violations.push(...await reconcileWritesNothing(state, kind, object));
      if (object.metadata?.deletionTimestamp !== undefined) continue;
      violations.push(...generationRule(kind, object), ...statusRules(state.reads, kind, object));
    }
  }
  violations.push(...ownerRules(state));
  return violations;
}

// ---- a reconcile pass that writes nothing ----------------------------------------------------

async function reconcileWritesNothing(state: ClusterState, kind: WorkloadKind, object: KubeObject): Promise<Violation[]> {
  const subject = subjectOf(kind, object);
  const found: Violation[] = [];
  const record = (invariant: Invariant, detail: string): void => void found.push({ invariant, subject, detail });
  const ctx: ReconcileContext = {
    reads: state.reads,
    config: state.config,
    now: () => new Date(),
    logger: silentLogger,
    events: { record: () => undefined },
    // The controller's own apply and prune decisions (cluster/child-apply.ts), with clients that
    // record the request instead of sending it.
    writes: {
      ensureChild(desired: Child, live: ObjectLike | undefined) {
        const name = `${desired.kind} ${desired.metadata.name}`;
        const recording = {
          async apply<T>(_path: string, intent: unknown): Promise<T> {
            record('children', live === undefined
              ? `${name} is missing (or not labelled ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE})`
              : `${name} is not what the renderer produces: ${difference(live, intent) ?? 'a field owned by another manager'}`);
            return (live ?? intent) as T;
          },
          // The release before an apply that drops an element (kube/fields-v1.ts): the cache's
          // child has only the operator's field set, so no other manager's share is seen to release.
          async get<T>(): Promise<T> {
            return live as T;
          },
          async patch<T>(): Promise<T> {
            return live as T;
          },
        };
        return ensureChild<ObjectLike>(recording, desired, live);
      },
      pruneChildren(existing, ownerUid, desired) {
        const why = ownerUid === object.metadata?.uid ? 'is no longer desired' : `was left by an earlier ${kind} of this name (uid ${ownerUid})`;
        const recording = {
          async delete<T>(path: string): Promise<T> {
            record('children', `${path.split('/').slice(-2).join(' ')} ${why}, but still there`);
            return {} as T;
          },
        };
        return pruneOwned(recording, existing, ownerUid, desired);
      },
      async writeStatus(_kind, current: KubeObject, status: KaosStatus) {
        if (statusChanged(current.status, status)) record('status', `the status is not what its children and dependencies say: ${statusDifference(current.status, status)}`);
      },
      async removeFinalizers(_kind, _object, finalizers) {
        record('writes', `being deleted, but still holds ${finalizers.join(', ')}`);
      },
      // The state read is the API server's, so what it holds under the name is the live answer.
      async liveUid(kind, namespace, name) {
        return state.reads.kaos(kind, namespace, name)?.metadata?.uid;
      },
    },
  };
  try {
    await RECONCILERS[kind](ctx, { kind, namespace: object.metadata?.namespace ?? '', name: object.metadata?.name ?? '' }, new AbortController().signal);
  } catch (err) {
    record('children', `its reconcile fails: ${err instanceof Error ? err.message : String(err)}`);
  }
  return found;
}

/** The first place (a path) where `live` does not hold `desired`'s value; undefined when none is found by value. */
export function difference(live: unknown, desired: unknown, path = ''): string | undefined {
  if (desired === undefined || desired === null) return undefined;
  if (Array.isArray(desired)) {
    if (!Array.isArray(live)) return `${path}: missing`;
    for (let i = 0; i < desired.length; i++) {
      const d: unknown = desired[i];
      const name = asRecord(d)?.name;
      // Lists keyed by name (containers, env, volumes) are matched by it, the rest by position.
      const l: unknown = typeof name === 'string' ? live.find((x) => asRecord(x)?.name === name) : live[i];
      const at = typeof name === 'string' ? `${path}[${name}]` : `${path}[${i}]`;
      if (l === undefined) return `${at}: missing`;
      const inner = difference(l, d, at);
      if (inner !== undefined) return inner;
    }
    return undefined;
  }
  if (typeof desired === 'object') {
    const l = asRecord(live);
    if (l === undefined) return `${path}: missing`;
    for (const [key, value] of Object.entries(desired)) {
      const inner = difference(l[key], value, path === '' ? key : `${path}.${key}`);
      if (inner !== undefined) return inner;
    }
    return undefined;
  }
  return live === desired || String(live) === String(desired) ? undefined : `${path}: ${JSON.stringify(live)}, rendered ${JSON.stringify(desired)}`;
}

function statusDifference(current: unknown, next: KaosStatus): string {
  const now = asRecord(current) ?? {};
  const fields = (['phase', 'message', 'endpoint', 'observedGeneration', 'linkedResources'] as const).filter((f) => JSON.stringify(now[f]) !== JSON.stringify(next[f]));
  const shown = fields.map((f) => `${f} ${JSON.stringify(now[f])} → ${JSON.stringify(next[f])}`);
  return shown.length > 0 ? shown.join(', ') : 'its conditions or Deployment mirror';
}

// ---- rules read off the objects ----------------------------------------------------------------

function generationRule(kind: WorkloadKind, object: KubeObject): Violation[] {
  const generation = object.metadata?.generation;
  const status = asRecord(object.status) ?? {};
  const stale: string[] = [];
  if (status.observedGeneration !== generation) stale.push(`status.observedGeneration ${String(status.observedGeneration)}`);
  for (const c of Array.isArray(status.conditions) ? status.conditions : []) {
    const condition = asRecord(c) ?? {};
    if (condition.observedGeneration !== generation) stale.push(`condition ${String(condition.type)} at ${String(condition.observedGeneration)}`);
  }
  return stale.length === 0 ? [] : [{ invariant: 'generation', subject: subjectOf(kind, object), detail: `generation ${String(generation)}, but ${stale.join(', ')}` }];
}

/** Whether a dependency of a type the kinds depend on (a Secret, a ConfigMap) exists, by type. */
const DEPENDENCY_EXISTS: Readonly<Record<DependencyTypeKind, (reads: ReconcileReads, namespace: string, name: string) => boolean>> = {
  Secret: (reads, namespace, name) => reads.secretResourceVersion(namespace, name) !== undefined,
  ConfigMap: (reads, namespace, name) => reads.configMapResourceVersion(namespace, name) !== undefined,
};

function statusRules(reads: ReconcileReads, kind: WorkloadKind, object: KubeObject): Violation[] {
  const status = asRecord(object.status) ?? {};
  const phase = status.phase;
  const namespace = object.metadata?.namespace ?? '';
  const problems: string[] = [];
  if (phase !== undefined && status.ready !== (phase === 'Ready')) problems.push(`ready ${String(status.ready)} with phase ${String(phase)}`);
  if (phase === 'Ready') {
    const deployment = ownedDeployment(reads, kind, object);
    if (deployment === undefined) problems.push('Ready without a Deployment it owns');
    else if (!rolledOutAndReady(deployment)) problems.push(`Ready, but its Deployment is not rolled out and ready (${JSON.stringify(pick(deployment.status, ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas']))}, generation ${String(generationOf(deployment))})`);
  }
  const dependencies = dependenciesOf(kind, object, KIND_TABLE).map((d) => {
    const ns = d.namespace ?? namespace;
    if (isWorkloadKind(d.kind)) {
      const target = reads.kaos(d.kind, ns, d.name);
      return { ...d, exists: target !== undefined, ready: getIn(target?.status, 'ready') === true };
    }
    if (d.kind === 'AccessGrant') return { ...d, exists: reads.kaos('AccessGrant', ns, d.name) !== undefined, ready: true };
    return { ...d, exists: DEPENDENCY_EXISTS[d.kind](reads, ns, d.name), ready: true };
  });
  if (phase === 'Waiting' && !dependencies.some((d) => isWorkloadKind(d.kind) && (!d.exists || !d.ready))) {
    problems.push('Waiting, but every dependency exists and is ready');
  }
  const reason = conditionReason(status);
  if (phase === 'Failed' && reason?.endsWith('Unresolved') === true && !dependencies.some((d) => !d.exists)) {
    problems.push(`Failed (${reason}), but every dependency exists`);
  }
  return problems.map((detail) => ({ invariant: 'status' as const, subject: subjectOf(kind, object), detail }));
}

function ownedDeployment(reads: ReconcileReads, kind: WorkloadKind, object: KubeObject): ObjectLike | undefined {
  const at = possibleChildren(kind, object.metadata?.name ?? '', KIND_TABLE).find((c) => c.kind === 'Deployment');
  const deployment = at === undefined ? undefined : reads.child('Deployment', object.metadata?.namespace ?? '', at.name);
  return deployment !== undefined && controllerUid(deployment) === object.metadata?.uid ? deployment : undefined;
}

/** docs/api.md, "Status and conditions": a ready replica, and no rollout under way. */
function rolledOutAndReady(deployment: ObjectLike): boolean {
  const s = asRecord(deployment.status) ?? {};
  const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
  return num(s.readyReplicas) > 0 && num(s.observedGeneration) >= num(generationOf(deployment)) && num(s.updatedReplicas) === num(s.replicas);
}

function generationOf(object: ObjectLike): unknown {
  return asRecord(object.metadata)?.generation;
}

function conditionReason(status: Record<string, unknown>): string | undefined {
  const ready = (Array.isArray(status.conditions) ? status.conditions : []).map(asRecord).find((c) => c?.type === 'Ready');
  return typeof ready?.reason === 'string' ? ready.reason : undefined;
}

function pick(value: unknown, fields: readonly string[]): Record<string, unknown> {
  const r = asRecord(value) ?? {};
  return Object.fromEntries(fields.map((f) => [f, r[f]]));
}

/**
 * Every object of an owned type that is the operator's (its label, or a kaos.tools controller
 * owner): one controller owner, a KAOS object that exists with that uid, at a name the kind
 * table says that owner can own. (The garbage collector removes a child whose owner is gone; one
 * left behind is a child without a living owner.)
 */
function ownerRules(state: ClusterState): Violation[] {
  const violations: Violation[] = [];
  for (const child of state.children) {
    const refs = child.metadata?.ownerReferences ?? [];
    const kaosRefs = refs.filter((r) => r.apiVersion?.startsWith('kaos.tools/') === true);
    const labelled = child.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE;
    if (!labelled && kaosRefs.length === 0) continue;
    const subject = subjectOf(child.kind ?? 'child', child);
    const controllers = refs.filter((r) => r.controller === true);
    const owner = controllers[0];
    const fail = (detail: string): void => void violations.push({ invariant: 'owners', subject, detail });
    if (controllers.length !== 1 || owner === undefined) {
      fail(`${controllers.length} controller owners`);
      continue;
    }
    if (!isWorkloadKind(owner.kind) || owner.name === undefined) {
      fail(`its controller owner is a ${owner.kind ?? '?'}, not a KAOS object`);
      continue;
    }
    const parent = state.reads.kaos(owner.kind, child.metadata?.namespace ?? '', owner.name);
    if (parent === undefined || parent.metadata?.uid !== owner.uid) {
      fail(`its owner ${owner.kind} ${owner.name} (uid ${owner.uid}) does not exist`);
    } else if (!possibleChildren(owner.kind, owner.name, KIND_TABLE).some((c) => c.kind === child.kind && c.name === child.metadata?.name)) {
      fail(`${owner.kind} ${owner.name} cannot own a ${child.kind ?? 'child'} of this name`);
    }
  }
  return violations;
}

