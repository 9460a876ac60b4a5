// The soak's users: several clients at once, each with a connection of its own and its own
// stream of the seed, creating, editing (changing children, changing nothing, switching shapes),
// deleting and re-creating objects of every KAOS kind and the Secrets and ConfigMaps they read,
// in a few namespaces, by names from small pools (so references dangle and dependencies vanish
// under their dependents). Every answer is counted by kind, operation and outcome; every write
// seen to succeed goes into the ledger; an answer that is no documented outcome is a violation.
import { setTimeout as sleep } from 'node:timers/promises';
import { API_VERSION, WORKLOAD_KINDS, REFERENCE_POLICY_KEY, isWorkloadKind, type WorkloadKind } from '../../src/api/kinds.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import { kaosPath } from '../../src/cluster/kaos-resources.ts';
import { KIND_TABLE, type DependencyTypeKind } from '../../src/cluster/kind-table.ts';
import { LEGACY_FINALIZERS } from '../../src/controller/reconcile/context.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { apiVersionOf, resourcePath, type PathParts } from '../../src/kube/paths.ts';
import { seconds } from './clock.ts';
import type { WriteLedger } from './ledger.ts';
import { classify, type Outcome } from './outcomes.ts';
import type { Random } from './random.ts';
import { DEPENDENCY_GENERATORS, SPEC_GENERATORS, editSpec, poolSize, type EditKind, type Json, type PoolKind, type SpecContext } from './specs.ts';

export type Operation = 'create' | 'update' | 'delete';

/** Labels every object the soak writes (and its namespaces). */
export const SOAK_LABEL = 'soak.kaos.tools/run';

export class TrafficStats {
  /** `kind` → `operation` → `outcome` → count. */
  readonly operations = new Map<string, Map<Operation, Map<Outcome, number>>>();
  readonly edits: Record<EditKind, number> = { children: 0, 'no-op': 0, shape: 0 };
  warnings = 0;
  /** Answers that are no documented outcome. */
  readonly violations: { subject: string; detail: string }[] = [];

  add(kind: string, operation: Operation, outcome: Outcome): void {
    const byOp = this.operations.get(kind) ?? new Map<Operation, Map<Outcome, number>>();
    this.operations.set(kind, byOp);
    const byOutcome = byOp.get(operation) ?? new Map<Outcome, number>();
    byOp.set(operation, byOutcome);
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
  }

  total(): number {
    let n = 0;
    for (const byOp of this.operations.values()) for (const byOutcome of byOp.values()) for (const c of byOutcome.values()) n += c;
    return n;
  }
}

export interface TrafficOptions {
  /** The admin kubeconfig: each client connects on its own with it. */
  readonly kubeconfig: string;
  readonly namespaces: readonly string[];
  readonly clients: number;
  /** Pause between two requests of one client, ms: [min, max). */
  readonly pauseMs: readonly [number, number];
  /** ms since the soak's start. */
  readonly clock: () => number;
  readonly ledger: WriteLedger;
  readonly stats: TrafficStats;
  readonly population: Population;
  /** Whether [fromMs, toMs] overlapped an API server outage (a fault). */
  readonly apiServerDown: (fromMs: number, toMs: number) => boolean;
}

/** The name of the `i`th object of `kind` in a pool. */
export function poolName(kind: PoolKind, i: number): string {
  return `${kind.toLowerCase()}-${i}`;
}

const DEPENDENCY_KINDS = Object.keys(KIND_TABLE.dependencyTypes) as DependencyTypeKind[];

/** Runs the clients until `untilMs` (of the clock); resolves when the last request is answered. */
export async function runTraffic(options: TrafficOptions, rng: Random, untilMs: number): Promise<void> {
  const clients = await Promise.all(Array.from({ length: options.clients }, () =>
    KubeClient.fromKubeConfig(options.kubeconfig, { userAgent: 'kaos-soak', onWarning: () => void options.stats.warnings++ })));
  try {
    await Promise.all(clients.map(async (client, i) => {
      const stream = rng.fork(`client-${i}`);
      while (options.clock() < untilMs) {
        await step(client, stream, options);
        await sleep(stream.between(options.pauseMs[0], options.pauseMs[1]));
      }
    }));
  } finally {
    for (const client of clients) client.close();
  }
}

/**
 * The names the clients believe exist, by `Kind/namespace`: most updates and deletes go to one of
 * them and most creates to one that is not, so that few requests miss (some still do, and race).
 */
export class Population {
  readonly #present = new Set<string>();

  /** A name of `kind` in `namespace` for `operation`. */
  pick(rng: Random, kind: PoolKind, namespace: string, operation: Operation): string {
    const all = Array.from({ length: poolSize(kind) }, (_, i) => poolName(kind, i));
    const present = all.filter((n) => this.#present.has(`${kind}/${namespace}/${n}`));
    const wanted = operation === 'create' ? all.filter((n) => !present.includes(n)) : present;
    return wanted.length > 0 && rng.chance(0.85) ? rng.pick(wanted) : rng.pick(all);
  }

  /** What an answer says of the key: there (true), gone (false), or nothing (undefined). */
  saw(key: string, exists: boolean | undefined): void {
    if (exists === true) this.#present.add(key);
    else if (exists === false) this.#present.delete(key);
  }
}

async function step(client: KubeClient, rng: Random, o: TrafficOptions): Promise<void> {
  const namespace = rng.pick(o.namespaces);
  const kind: PoolKind = rng.chance(0.8) ? rng.pick(WORKLOAD_KINDS) : rng.pick(DEPENDENCY_KINDS);
  const operation = rng.weighted<Operation>({ create: 3, update: 4, delete: 1.5 });
  const name = o.population.pick(rng, kind, namespace, operation);
  const ctx: SpecContext = { rng, self: name, name: (k) => poolName(k, rng.int(poolSize(k))) };
  const key = `${kind}/${namespace}/${name}`;
  const path = pathOf(kind, { namespace, name });
  const started = o.clock();
  try {
    if (operation === 'delete') {
      const deleted = await client.delete<Json>(path);
      // The object as deleted; a bare Status would say nothing of when.
      if (isRecord(deleted.metadata) && deleted.metadata.resourceVersion !== undefined) o.ledger.answered(key, 'delete', deleted, started);
      else o.ledger.inDoubt(key, 'delete', o.clock());
    } else if (operation === 'create') {
      const body = isWorkloadKind(kind) ? newObject(kind, namespace, name, ctx) : dependencyObject(kind, namespace, name, rng);
      o.ledger.answered(key, 'create', await client.create<Json>(pathOf(kind, { namespace }), body), started);
    } else {
      const stored = await client.get<Json>(path);
      const { managedFields: _m, ...metadata } = (stored.metadata ?? {}) as Json;
      let body: Json;
      if (isWorkloadKind(kind)) {
        const { spec, edit } = editSpec(kind, ctx, (stored.spec ?? {}) as Json);
        o.stats.edits[edit]++;
        // An edit that changes nothing sometimes touches a label instead: metadata only, no generation.
        const labels = edit === 'no-op' && rng.chance(0.5) ? { ...(metadata.labels as Json | undefined), 'soak.kaos.tools/touched': String(rng.int(100)) } : metadata.labels;
        body = { ...stored, metadata: { ...metadata, labels }, spec };
      } else {
        // Every key gets a new value (a Secret's through stringData, which the API server encodes).
        body = { ...stored, metadata, ...DEPENDENCY_GENERATORS[kind].body(rng) };
      }
      o.ledger.answered(key, 'update', await client.replace<Json>(path, body), started);
    }
    o.stats.add(kind, operation, 'ok');
    o.population.saw(key, operation !== 'delete');
  } catch (err) {
    const result = classify(err, o.apiServerDown(started, o.clock()));
    o.stats.add(kind, operation, result.outcome);
    o.population.saw(key, result.outcome === 'exists' ? true : result.outcome === 'not-found' ? false : undefined);
    if (result.violation !== undefined) o.stats.violations.push({ subject: `${operation} ${key} at ${seconds(started)}`, detail: result.violation });
    if (result.inDoubt === true) o.ledger.inDoubt(key, operation, o.clock());
  }
}

function pathOf(kind: PoolKind, parts: PathParts): string {
  return isWorkloadKind(kind) ? kaosPath(kind, parts) : resourcePath(KIND_TABLE.dependencyTypes[kind].type, parts);
}

/**
 * A new KAOS object: now and then under the reference policy Warn (so it is admitted with a
 * dangling reference), now and then with the legacy finalizer of the Go operator (which the
 * controller must release when it is deleted).
 */
function newObject(kind: WorkloadKind, namespace: string, name: string, ctx: SpecContext): KubeObject {
  const annotations = ctx.rng.chance(0.3) ? { [REFERENCE_POLICY_KEY]: 'Warn' } : undefined;
  const finalizers = ctx.rng.chance(0.1) ? [...LEGACY_FINALIZERS[kind]] : undefined;
  return {
    apiVersion: API_VERSION,
    kind,
    metadata: { name, namespace, labels: { [SOAK_LABEL]: 'true' }, ...(annotations === undefined ? {} : { annotations }), ...(finalizers === undefined ? {} : { finalizers }) },
    spec: SPEC_GENERATORS[kind].create(ctx),
  };
}

function dependencyObject(kind: DependencyTypeKind, namespace: string, name: string, rng: Random): KubeObject {
  const type = KIND_TABLE.dependencyTypes[kind].type;
  return { apiVersion: apiVersionOf(type), kind: type.kind, metadata: { name, namespace, labels: { [SOAK_LABEL]: 'true' } }, ...DEPENDENCY_GENERATORS[kind].body(rng) };
}

function isRecord(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
