// "Who depends on X": which KAOS objects name a given object — the ModelAPI, MCPServers and peer
// Agents of an Agent, the config Secret of a ModelAPI or MCPServer — as the kind table states it
// (kind-table.ts). Maintained incrementally from cache events (upsert/remove per object), so a
// query never scans. Answers the controller's triggers (a dependency's change wakes its
// dependents) and admission's "which objects name this one, and what do they ask of it"
// (referencedBy: the deletion and stranding warnings).
//
// What a dependent asks of each target (its roles there and the model or scope it asks for:
// bindingsTo) is worked out when the object is indexed, from the same object, and kept: a query
// reads no object. On the admission thread an object is a JSON text parsed on read, so reading
// every dependent of a ModelAPI 10,000 Agents use cost a parse each (docs/benchmarks.md, "Many
// dependents"). The bindings are shared: the Agents asking `chat` for the same model hold one
// array between them.
import { isKaosKind, type KaosKind } from '../api/kinds.ts';
import type { Referrer } from '../api/lookup.ts';
import type { KubeObject } from '../kube/meta.ts';
import { KIND_TABLE, bindingsTo, dependenciesOf, type Binding, type KindTable } from './kind-table.ts';
import { parseRefKey, refOf, refKey } from './object-ref.ts';

/** What a dependent asks of a target: the roles in which it names it, in table order (none for a Secret or ConfigMap: never asked for). */
type Bindings = readonly Binding[];

const NONE: Bindings = Object.freeze([]);

/** Bindings as the index keeps them: one per distinct value, with how many dependents use it. */
interface Shared {
  readonly key: string;
  readonly bindings: Bindings;
  users: number;
}

/** What a Secret's or ConfigMap's dependents ask of it: nothing, shared by all and never counted. */
const UNASKED: Shared = { key: '', bindings: NONE, users: 0 };

/**
 * Equal bindings, one frozen array, counted by their users: the many dependents that name a target
 * in the same role and ask the same of it share it, and it goes when the last one does.
 */
class BindingPool {
  readonly #entries = new Map<string, Shared>();

  acquire(bindings: Bindings): Shared {
    if (bindings.length === 0) return UNASKED;
    // bindingsTo builds each binding with its keys in one order, so equal bindings have one text.
    const key = JSON.stringify(bindings);
    let shared = this.#entries.get(key);
    if (shared === undefined) {
      shared = { key, bindings: Object.freeze(bindings.map((b) => Object.freeze({ ...b }))), users: 0 };
      this.#entries.set(key, shared);
    }
    shared.users++;
    return shared;
  }

  release(shared: Shared): void {
    if (shared !== UNASKED && --shared.users === 0) this.#entries.delete(shared.key);
  }

  /** Distinct bindings held (for tests). */
  get size(): number {
    return this.#entries.size;
  }

  clear(): void {
    this.#entries.clear();
  }
}

/** What one object asks of each object it names: each target's refKey with the bindings, in table order, each target once. */
export type DependencyRecords = readonly (readonly [target: string, bindings: Bindings])[];

/** Pure: the records an index keeps of `object` (of `kind`), worked out whole from the object alone. */
export function dependencyRecords(kind: KaosKind, object: KubeObject, table: KindTable = KIND_TABLE): DependencyRecords {
  const namespace = object.metadata?.namespace ?? '';
  const asked = new Map<string, Bindings>();
  for (const d of dependenciesOf(kind, object, table)) {
    const targetNamespace = d.namespace ?? namespace;
    const target = refKey(d.kind, targetNamespace, d.name);
    if (!asked.has(target)) asked.set(target, isKaosKind(d.kind) ? bindingsTo(kind, object, { kind: d.kind, namespace: targetNamespace, name: d.name }, table) : NONE);
  }
  return [...asked];
}

export class DependencyIndex {
  readonly #table: KindTable;
  /**
   * target (its refKey: a KAOS object, or a Secret as `Secret/namespace/name`) → the refKeys of the
   * objects that depend on it, each with what it asks of it.
   */
  readonly #byTarget = new Map<string, Map<string, Shared>>();
  /** refKey of a dependent → the targets it currently contributes, to undo them on change. */
  readonly #byDependent = new Map<string, string[]>();
  readonly #pool = new BindingPool();

  constructor(table: KindTable = KIND_TABLE) {
    this.#table = table;
  }

  /** Records (or re-records, after a change) what an object of `kind` depends on, and what it asks of each. */
  upsert(kind: KaosKind, object: KubeObject): void {
    const ref = refOf(kind, object);
    if (ref !== undefined) this.upsertRecords(kind, ref.namespace, ref.name, dependencyRecords(kind, object, this.#table));
  }

  /**
   * upsert() with the records already worked out (dependencyRecords, by this index's table): the
   * admission thread's view is sent them with each object's change, and parses no object for them.
   */
  upsertRecords(kind: KaosKind, namespace: string, name: string, records: DependencyRecords): void {
    const key = refKey(kind, namespace, name);
    // What is asked again is acquired before the old is released, so a relist keeps the shared records.
    const targets = new Map<string, Shared>();
    for (const [target, bindings] of records) targets.set(target, this.#pool.acquire(bindings));
    this.#forget(key, targets);
    if (targets.size === 0) return;
    this.#byDependent.set(key, [...targets.keys()]);
    for (const [target, shared] of targets) {
      let dependents = this.#byTarget.get(target);
      if (dependents === undefined) {
        dependents = new Map();
        this.#byTarget.set(target, dependents);
      }
      dependents.set(key, shared);
    }
  }

  remove(kind: KaosKind, object: KubeObject): void {
    const ref = refOf(kind, object);
    if (ref !== undefined) this.#forget(refKey(kind, ref.namespace, ref.name));
  }

  /** Sorted refKeys of the objects that depend on the named object of `kind`. */
  dependents(kind: string, namespace: string, name: string): string[] {
    const dependents = this.#byTarget.get(refKey(kind, namespace, name));
    return dependents === undefined ? [] : [...dependents.keys()].sort();
  }

  /**
   * The objects that name the KAOS object `kind`/`namespace`/`name`, one entry per role with what
   * it asks of it there (kind-table.ts, bindingsTo), sorted by kind, then name: as each was when it
   * was last indexed, without reading it.
   */
  referencedBy(kind: KaosKind, namespace: string, name: string): Referrer[] {
    const dependents = this.#byTarget.get(refKey(kind, namespace, name));
    if (dependents === undefined) return [];
    const out: Referrer[] = [];
    for (const key of [...dependents.keys()].sort()) {
      const ref = parseRefKey(key);
      for (const binding of dependents.get(key)?.bindings ?? NONE) out.push({ kind: ref.kind, name: ref.name, ...binding });
    }
    return out;
  }

  /** Number of distinct objects depended on (for tests and metrics). */
  get size(): number {
    return this.#byTarget.size;
  }

  /** Number of distinct bindings kept, shared by the dependents that ask the same (for tests). */
  get distinctBindings(): number {
    return this.#pool.size;
  }

  clear(): void {
    this.#byTarget.clear();
    this.#byDependent.clear();
    this.#pool.clear();
  }

  /** Undoes what the dependent `key` contributes, but for its place under the targets in `keep` (about to be replaced). */
  #forget(key: string, keep?: ReadonlyMap<string, unknown>): void {
    const previous = this.#byDependent.get(key);
    if (previous === undefined) return;
    this.#byDependent.delete(key);
    for (const target of previous) {
      const dependents = this.#byTarget.get(target);
      if (dependents === undefined) continue;
      const shared = dependents.get(key);
      if (shared !== undefined) this.#pool.release(shared);
      if (keep?.has(target) === true) continue;
      dependents.delete(key);
      if (dependents.size === 0) this.#byTarget.delete(target);
    }
  }
}
