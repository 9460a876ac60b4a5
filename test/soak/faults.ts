// The faults of the soak, injected at times a seed plans (planFaults, pure), each logged with its
// time when it begins and when it is over:
// - kill-leader: SIGKILL of the replica holding the Lease (no release, requests in flight cut),
//   started again under a new name a few seconds later, as a Deployment would;
// - freeze-replica: SIGSTOP of a replica (the leader more often than not) for longer than the
//   Lease (15 s), then SIGCONT: it wakes up believing it still leads;
// - restart-apiserver: kube-apiserver stopped and started again on the same port and etcd;
// - cut-watches: every connection of the replicas to the API server reset at once;
// - pods: under kwok, some pods made unready for a while (their readiness fails), others deleted;
// - drift: a burst of writes by another field manager to fields the operator owns on children
//   (an image, an env value, a label, a Service's targetPort or selector, a ConfigMap's data).
// Faults that take a replica away are never two at once (one replica always serves admission, as
// a PodDisruptionBudget of one would ensure); two API server restarts never overlap either.
import { setTimeout as sleep } from 'node:timers/promises';
import { NOT_READY_ANNOTATION } from '../cluster/control-plane.ts';
import { isRecord } from '../../src/api/json.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import { KIND_TABLE } from '../../src/cluster/kind-table.ts';
import { OWNED_SELECTOR } from '../../src/controller/watches.ts';
import { MANAGED_BY_LABEL } from '../../src/render/index.ts';
import { resourcePath, type ResourceType } from '../../src/kube/paths.ts';
import { seconds } from './clock.ts';
import type { Random } from './random.ts';
import type { SoakStack } from './stack.ts';

export const FAULT_KINDS = ['kill-leader', 'freeze-replica', 'restart-apiserver', 'cut-watches', 'pods', 'drift'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The lease a replica holds (LEADER_ELECT's 15 s): a freeze lasts longer. */
const LEASE_MS = 15_000;
/** Another writer of the children's owned fields. */
export const DRIFT_MANAGER = 'soak-drift';
const POD: ResourceType = { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };

export interface PlannedFault {
  readonly kind: FaultKind;
  /** When, from the start of the traffic it runs under. */
  readonly atMs: number;
}

/**
 * Pure: the faults of a window of `windowMs` of traffic, at random times within it (leaving its
 * first 3 s and last 5 s alone): every kind once, in random order, and more of them at random,
 * about one per `meanIntervalMs` in all.
 */
export function planFaults(rng: Random, windowMs: number, meanIntervalMs = 20_000): PlannedFault[] {
  const count = Math.max(FAULT_KINDS.length, Math.round(windowMs / meanIntervalMs));
  const kinds = [...rng.shuffle(FAULT_KINDS), ...Array.from({ length: count - FAULT_KINDS.length }, () => rng.pick(FAULT_KINDS))];
  const [from, to] = [Math.min(3000, windowMs / 10), Math.max(windowMs - 5000, windowMs * 0.8)];
  const times = kinds.map(() => Math.round(rng.between(from, to))).sort((x, y) => x - y);
  return rng.shuffle(kinds).map((kind, i) => ({ kind, atMs: times[i] as number }));
}

export interface FaultRecord {
  readonly kind: FaultKind;
  /** ms since the soak's start. */
  readonly startedMs: number;
  endedMs?: number;
  detail: string;
  /** Set when the fault could not be injected (then it is not counted). */
  failed?: string;
}

export interface FaultOptions {
  readonly stack: SoakStack;
  readonly namespaces: readonly string[];
  /** ms since the soak's start. */
  readonly clock: () => number;
  readonly log: (line: string) => void;
}

export class FaultInjector {
  readonly records: FaultRecord[] = [];
  readonly #o: FaultOptions;
  /** API server outages: [from, to] in ms since the start; `to` undefined while it lasts. */
  readonly #outages: { from: number; to?: number }[] = [];
  #replicaTurn: Promise<unknown> = Promise.resolve();
  #apiServerTurn: Promise<unknown> = Promise.resolve();
  readonly #running = new Set<Promise<void>>();

  constructor(options: FaultOptions) {
    this.#o = options;
  }

  /** Injects `plan` (times from `startMs`), each at its time; resolves when all are over. */
  async run(plan: readonly PlannedFault[], startMs: number, rng: Random): Promise<void> {
    for (const fault of plan) {
      const wait = startMs + fault.atMs - this.#o.clock();
      if (wait > 0) await sleep(wait);
      const running = this.#inject(fault.kind, rng.fork(`${fault.kind}@${fault.atMs}`));
      this.#running.add(running);
      void running.finally(() => this.#running.delete(running));
    }
    await this.settled();
  }

  /** Resolves when every fault begun is over. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /** Whether [fromMs, toMs] overlapped an API server outage (its restart, and 2 s after it was ready). */
  apiServerDown(fromMs: number, toMs: number): boolean {
    return this.#outages.some((o) => fromMs <= (o.to ?? Infinity) + 2000 && toMs >= o.from);
  }

  /** Faults injected (not those that failed), by kind. */
  counts(): Record<FaultKind, number> {
    const out = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
    for (const r of this.records) if (r.failed === undefined) out[r.kind]++;
    return out;
  }

  /** When the last fault ended (ms since the start), 0 if none did. */
  lastEndedMs(): number {
    return Math.max(0, ...this.records.map((r) => r.endedMs ?? r.startedMs));
  }

  async #inject(kind: FaultKind, rng: Random): Promise<void> {
    const serialize = kind === 'kill-leader' || kind === 'freeze-replica' ? 'replica' : kind === 'restart-apiserver' ? 'apiserver' : undefined;
    const body = async (): Promise<void> => {
      // A replica is taken away only while the other serves, and is over once both serve again.
      if (serialize === 'replica') await this.#allServing();
      const record: FaultRecord = { kind, startedMs: this.#o.clock(), detail: '' };
      this.records.push(record);
      try {
        await FAULTS[kind].call(this, rng, record, (detail) => {
          record.detail = detail;
          this.#o.log(`[${seconds(record.startedMs)}] fault ${kind}: ${detail}`);
        });
        if (serialize === 'replica') await this.#allServing();
        record.endedMs = this.#o.clock();
        this.#o.log(`[${seconds(record.endedMs)}] fault ${kind} over (${((record.endedMs - record.startedMs) / 1000).toFixed(1)} s)`);
      } catch (err) {
        record.endedMs = this.#o.clock();
        record.failed = err instanceof Error ? err.message : String(err);
        this.#o.log(`[${seconds(record.endedMs)}] fault ${kind} could not be injected: ${record.failed}`);
      }
    };
    if (serialize === 'replica') await (this.#replicaTurn = this.#replicaTurn.then(body, body));
    else if (serialize === 'apiserver') await (this.#apiServerTurn = this.#apiServerTurn.then(body, body));
    else await body();
  }

  /** Waits (up to a minute) until every replica is in the webhook Service's rotation. */
  async #allServing(): Promise<void> {
    const { stack } = this.#o;
    const deadline = this.#o.clock() + 60_000;
    while (!stack.replicas().every((r) => stack.webhooks.isReady(r.name))) {
      if (this.#o.clock() > deadline) {
        this.#o.log(`[${seconds(this.#o.clock())}] a replica has been out of the webhook Service for a minute`);
        return;
      }
      await sleep(100);
    }
  }

  // ---- the faults --------------------------------------------------------------------------

  async killLeader(rng: Random, _record: FaultRecord, begin: (detail: string) => void): Promise<void> {
    const { stack } = this.#o;
    const holder = await stack.leader().catch(() => undefined);
    const victim = holder ?? rng.pick(stack.replicas());
    begin(`SIGKILL ${victim.name} (pid ${victim.process.pid}${holder === undefined ? ', no Lease holder found: a replica' : ', the Lease holder'})`);
    victim.exitExpected = true;
    process.kill(victim.process.pid, 'SIGKILL');
    await victim.process.stop();
    // As a Deployment's replacement pod: scheduled and started a little later.
    await sleep(rng.between(1000, 5000));
    const next = await stack.startReplica(victim.slot);
    this.#o.log(`[${seconds(this.#o.clock())}] fault kill-leader: ${next.name} started in its place`);
  }

  async freezeReplica(rng: Random, _record: FaultRecord, begin: (detail: string) => void): Promise<void> {
    const { stack } = this.#o;
    const leader = await stack.leader().catch(() => undefined);
    const replica = leader !== undefined && rng.chance(0.7) ? leader : rng.pick(stack.replicas());
    const ms = Math.round(rng.between(LEASE_MS + 3000, LEASE_MS + 15_000));
    begin(`SIGSTOP ${replica.name}${replica === leader ? ' (the Lease holder)' : ''} for ${(ms / 1000).toFixed(1)} s`);
    process.kill(replica.process.pid, 'SIGSTOP');
    try {
      await sleep(ms);
    } finally {
      process.kill(replica.process.pid, 'SIGCONT');
    }
  }

  async restartApiServer(_rng: Random, _record: FaultRecord, begin: (detail: string) => void): Promise<void> {
    const outage: { from: number; to?: number } = { from: this.#o.clock() };
    this.#outages.push(outage);
    begin('kube-apiserver stopped and started again');
    try {
      await this.#o.stack.installation.plane.restartApiServer();
    } finally {
      outage.to = this.#o.clock();
    }
  }

  async cutWatches(_rng: Random, _record: FaultRecord, begin: (detail: string) => void): Promise<void> {
    begin(`${this.#o.stack.apiProxy.cut()} connections of the replicas to the API server reset`);
  }

  async pods(rng: Random, _record: FaultRecord, begin: (detail: string) => void): Promise<void> {
    const { client } = this.#o.stack.installation;
    const pods = await this.#list(POD);
    if (pods.length === 0) {
      begin('no pod to disturb');
      return;
    }
    const chosen = rng.some(pods, 4);
    if (chosen.length === 0) chosen.push(rng.pick(pods));
    const unready = chosen.filter(() => rng.chance(0.5));
    const deleted = chosen.filter((p) => !unready.includes(p));
    begin(`${unready.map(name).join(', ') || 'no pod'} made unready, ${deleted.map(name).join(', ') || 'no pod'} deleted`);
    const annotate = (pod: KubeObject, value: string | null): Promise<unknown> =>
      client.patch(podPath(pod), { metadata: { annotations: { [NOT_READY_ANNOTATION]: value } } }, 'merge').catch(() => undefined);
    await Promise.all([...unready.map((p) => annotate(p, 'true')), ...deleted.map((p) => client.delete(podPath(p)).catch(() => undefined))]);
    await sleep(rng.between(5000, 15_000));
    await Promise.all(unready.map((p) => annotate(p, null)));
  }

  async drift(rng: Random, _record: FaultRecord, begin: (detail: string) => void): Promise<void> {
    const { client } = this.#o.stack.installation;
    const children: KubeObject[] = [];
    for (const owned of Object.values(KIND_TABLE.owned)) {
      if (owned.requires !== undefined) continue;
      children.push(...(await this.#list(owned.type, OWNED_SELECTOR)).map((o) => ({ ...o, kind: owned.type.kind })));
    }
    const chosen = rng.some(children, 8);
    if (chosen.length === 0 && children.length > 0) chosen.push(rng.pick(children));
    const writes = chosen.map((child) => driftWrite(child, rng));
    begin(writes.length === 0 ? 'no child to drift' : `${writes.length} writes by ${DRIFT_MANAGER}: ${writes.map((w) => w.what).join('; ')}`);
    await Promise.all(writes.map(async (w) => {
      const path = resourcePath(typeOf(w.child), { namespace: w.child.metadata?.namespace ?? '', name: w.child.metadata?.name ?? '' });
      await (w.apply === undefined
        ? client.patch(path, w.patch, 'merge', { fieldManager: DRIFT_MANAGER })
        : client.apply(path, w.apply, { fieldManager: DRIFT_MANAGER, force: true })).catch(() => undefined);
    }));
  }

  /** Every object of `type` in the soak's namespaces; tried again for up to 20 s while the API server is away (another fault). */
  async #list(type: ResourceType, labelSelector?: string): Promise<KubeObject[]> {
    const deadline = this.#o.clock() + 20_000;
    for (;;) {
      try {
        const out: KubeObject[] = [];
        for (const namespace of this.#o.namespaces) {
          const list = await this.#o.stack.installation.client.list<KubeObject>(resourcePath(type, { namespace }), labelSelector === undefined ? {} : { labelSelector });
          out.push(...list.items);
        }
        return out;
      } catch (err) {
        if (this.#o.clock() > deadline) throw err;
        await sleep(500);
      }
    }
  }
}

type FaultFn = (this: FaultInjector, rng: Random, record: FaultRecord, begin: (detail: string) => void) => Promise<void>;

const FAULTS: Readonly<Record<FaultKind, FaultFn>> = {
  'kill-leader': FaultInjector.prototype.killLeader,
  'freeze-replica': FaultInjector.prototype.freezeReplica,
  'restart-apiserver': FaultInjector.prototype.restartApiServer,
  'cut-watches': FaultInjector.prototype.cutWatches,
  pods: FaultInjector.prototype.pods,
  drift: FaultInjector.prototype.drift,
};

interface DriftWrite {
  readonly child: KubeObject;
  readonly what: string;
  /** A server-side apply (with force) by the drift manager, or else a merge patch. */
  readonly apply?: KubeObject;
  readonly patch?: unknown;
}

/** Pure: one write to a field the operator owns on `child`, chosen by `rng`. */
export function driftWrite(child: KubeObject, rng: Random): DriftWrite {
  const kind = child.kind ?? '';
  const meta = { name: child.metadata?.name ?? '', namespace: child.metadata?.namespace ?? '' };
  const id = `${kind} ${meta.namespace}/${meta.name}`;
  const label: DriftWrite = { child, what: `${id} ${MANAGED_BY_LABEL} changed`, patch: { metadata: { labels: { [MANAGED_BY_LABEL]: DRIFT_MANAGER } } } };
  const spec = isRecord(child.spec) ? child.spec : {};
  if (kind === 'Deployment') {
    const containers = (spec.template as { spec?: { containers?: { name: string; env?: { name: string }[] }[] } } | undefined)?.spec?.containers ?? [];
    const container = containers[0];
    if (container === undefined || rng.chance(0.25)) return label;
    const envName = container.env?.[0]?.name;
    const body = (c: Record<string, unknown>): KubeObject => ({ apiVersion: 'apps/v1', kind, metadata: meta, spec: { template: { spec: { containers: [{ name: container.name, ...c }] } } } });
    return envName !== undefined && rng.chance(0.5)
      ? { child, what: `${id} env ${envName} changed`, apply: body({ env: [{ name: envName, value: 'drifted' }] }) }
      : { child, what: `${id} image changed`, apply: body({ image: 'drift.local/image:1' }) };
  }
  if (kind === 'Service') {
    const port = (spec.ports as { port: number; protocol?: string }[] | undefined)?.[0];
    if (port === undefined || rng.chance(0.25)) return label;
    return rng.chance(0.5)
      ? { child, what: `${id} targetPort changed`, apply: { apiVersion: 'v1', kind, metadata: meta, spec: { ports: [{ port: port.port, protocol: port.protocol ?? 'TCP', targetPort: 9999 }] } } }
      : { child, what: `${id} selector changed`, patch: { spec: { selector: Object.fromEntries(Object.keys(isRecord(spec.selector) ? spec.selector : {}).map((k) => [k, 'drifted'])) } } };
  }
  if (kind === 'ConfigMap' && isRecord(child.data) && !rng.chance(0.25)) {
    return { child, what: `${id} data changed`, patch: { data: Object.fromEntries(Object.keys(child.data).map((k) => [k, 'drifted: true\n'])) } };
  }
  return label;
}

function typeOf(child: KubeObject): ResourceType {
  const owned = Object.values(KIND_TABLE.owned).find((o) => o.type.kind === child.kind);
  if (owned === undefined) throw new Error(`not an owned type: ${child.kind ?? '?'}`);
  return owned.type;
}

function podPath(pod: KubeObject): string {
  return resourcePath(POD, { namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '' });
}

function name(o: KubeObject): string {
  return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
}
