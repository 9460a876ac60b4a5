// "Who depends on X": which KAOS objects name a given object — the ModelAPI, MCPServers and peer
// Agents of an Agent, the config Secret of a ModelAPI or MCPServer — as the kind table states it
// (kind-table.ts). Maintained incrementally from cache events (upsert/remove per object), so a
// query never scans. Answers the controller's triggers (a dependency's change wakes its
// dependents) and admission's "which objects name this one, and what do they ask of it"
// (referencedBy: the deletion and stranding warnings).
import type { KaosKind } from '../api/kinds.ts';
import type { Referrer } from '../api/lookup.ts';
import type { KubeObject } from '../kube/meta.ts';
import { KIND_TABLE, bindingsTo, dependenciesOf, type KindTable } from './kind-table.ts';
import { parseRefKey, refOf, refKey } from './object-ref.ts';

/** An object of the cache by its identity; undefined when the cache does not hold it. */
export type ReadObject = (kind: KaosKind, namespace: string, name: string) => KubeObject | undefined;

export class DependencyIndex {
  readonly #table: KindTable;
  /** target (its refKey: a KAOS object, or a Secret as `Secret/namespace/name`) → refKeys of the objects that depend on it. */
  readonly #byTarget = new Map<string, Set<string>>();
  /** refKey of a dependent → the targets it currently contributes, to undo them on change. */
  readonly #byDependent = new Map<string, string[]>();

  constructor(table: KindTable = KIND_TABLE) {
    this.#table = table;
  }

  /** Records (or re-records, after a change) what an object of `kind` depends on. */
  upsert(kind: KaosKind, object: KubeObject): void {
    const ref = refOf(kind, object);
    if (ref === undefined) return;
    const key = refKey(kind, ref.namespace, ref.name);
    const targets = [...new Set(dependenciesOf(kind, object, this.#table).map((d) => refKey(d.kind, d.namespace ?? ref.namespace, d.name)))];
    this.#forget(key);
    if (targets.length === 0) return;
    this.#byDependent.set(key, targets);
    for (const target of targets) {
      let dependents = this.#byTarget.get(target);
      if (dependents === undefined) {
        dependents = new Set();
        this.#byTarget.set(target, dependents);
      }
      dependents.add(key);
    }
  }

  remove(kind: KaosKind, object: KubeObject): void {
    const ref = refOf(kind, object);
    if (ref !== undefined) this.#forget(refKey(kind, ref.namespace, ref.name));
  }

  /** Sorted refKeys of the objects that depend on the named object of `kind`. */
  dependents(kind: string, namespace: string, name: string): string[] {
    const keys = this.#byTarget.get(refKey(kind, namespace, name));
    return keys === undefined ? [] : [...keys].sort();
  }

  /**
   * The objects that name the KAOS object `kind`/`namespace`/`name`, one entry per role with what
   * it asks of it there (kind-table.ts, bindingsTo), sorted by kind, then name. `read` gives a
   * dependent as the cache holds it now (what the index was built from); one it no longer holds
   * is left out.
   */
  referencedBy(kind: KaosKind, namespace: string, name: string, read: ReadObject): Referrer[] {
    const target = { kind, namespace, name };
    return this.dependents(kind, namespace, name).flatMap((key) => {
      const ref = parseRefKey(key);
      const object = read(ref.kind, ref.namespace, ref.name);
      if (object === undefined) return [];
      return bindingsTo(ref.kind, object, target, this.#table).map((binding) => ({ kind: ref.kind, name: ref.name, ...binding }));
    });
  }

  /** Number of distinct objects depended on (for tests and metrics). */
  get size(): number {
    return this.#byTarget.size;
  }

  clear(): void {
    this.#byTarget.clear();
    this.#byDependent.clear();
  }

  #forget(key: string): void {
    const previous = this.#byDependent.get(key);
    if (previous === undefined) return;
    this.#byDependent.delete(key);
    for (const target of previous) {
      const dependents = this.#byTarget.get(target);
      if (dependents === undefined) continue;
      dependents.delete(key);
      if (dependents.size === 0) this.#byTarget.delete(target);
    }
  }
}
