// An in-memory ObjectLookup for tests: objects and namespaces are added and removed by hand.
// Stored objects are frozen, so code that mutates what a lookup returns fails loudly, and every
// call yields to the event loop once and is counted, so tests can see lookups overlap.
import { isKaosKind, type KaosKind } from '../../src/api/kinds.ts';
import type { KubeObject, ObjectLookup, Referrer } from '../../src/api/lookup.ts';
import type { LookupBudget } from '../../src/api/lookup-budget.ts';
import { DependencyIndex } from '../../src/cluster/dependency-index.ts';

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const keyOf = (kind: KaosKind, namespace: string, name: string): string => `${kind}/${namespace}/${name}`;

export interface MemoryLookupOptions {
  /**
   * Behave like KaosCache on a miss: an absent object costs a live read, claimed from the
   * request's budget (so it may reject with LookupNotMade) and counted in `liveReads`.
   */
  liveOnMiss?: boolean;
}

export class MemoryLookup implements ObjectLookup {
  readonly #objects = new Map<string, KubeObject>();
  /** Who names what: the operator's own index of the kind table's relation, over these objects. */
  readonly #dependencies = new DependencyIndex();
  readonly #liveOnMiss: boolean;
  /** Live reads made on misses (with liveOnMiss). */
  liveReads = 0;
  readonly #namespaces = new Map<string, Record<string, string>>();
  #inFlight = 0;
  /** The most lookups that were pending at the same time. */
  maxInFlight = 0;
  /** Every async lookup, in call order, as `get Agent ns/name`, `exists ...`, `namespace ns`. */
  readonly calls: string[] = [];

  constructor(options: MemoryLookupOptions = {}) {
    this.#liveOnMiss = options.liveOnMiss ?? false;
  }

  /** Adds (or replaces) objects; each must carry kind, metadata.namespace and metadata.name. */
  add(...objects: KubeObject[]): this {
    for (const object of objects) {
      const { kind } = object;
      const namespace = object.metadata?.namespace;
      const name = object.metadata?.name;
      if (!isKaosKind(kind) || namespace === undefined || name === undefined) {
        throw new Error(`MemoryLookup.add: need a KAOS kind, namespace and name, got ${JSON.stringify(object)}`);
      }
      const stored = deepFreeze(structuredClone(object));
      this.#objects.set(keyOf(kind, namespace, name), stored);
      this.#dependencies.upsert(kind, stored);
    }
    return this;
  }

  remove(kind: KaosKind, namespace: string, name: string): this {
    const object = this.#objects.get(keyOf(kind, namespace, name));
    if (object !== undefined) this.#dependencies.remove(kind, object);
    this.#objects.delete(keyOf(kind, namespace, name));
    return this;
  }

  setNamespace(name: string, labels: Record<string, string> = {}): this {
    this.#namespaces.set(name, { ...labels });
    return this;
  }

  removeNamespace(name: string): this {
    this.#namespaces.delete(name);
    return this;
  }

  async get(kind: KaosKind, namespace: string, name: string, budget?: LookupBudget): Promise<KubeObject | undefined> {
    this.#missCosts(kind, namespace, name, budget);
    return this.#answer(`get ${kind} ${namespace}/${name}`, () => this.#objects.get(keyOf(kind, namespace, name)));
  }

  /** The stored object, as a live read would answer (KaosCache.current). */
  async current(kind: KaosKind, namespace: string, name: string): Promise<KubeObject | undefined> {
    return this.#answer(`current ${kind} ${namespace}/${name}`, () => this.#objects.get(keyOf(kind, namespace, name)));
  }

  async exists(kind: KaosKind, namespace: string, name: string, budget?: LookupBudget): Promise<boolean> {
    this.#missCosts(kind, namespace, name, budget);
    return this.#answer(`exists ${kind} ${namespace}/${name}`, () => this.#objects.has(keyOf(kind, namespace, name)));
  }

  /** As KaosCache.get: a miss claims a live read from the budget before it is made. */
  #missCosts(kind: KaosKind, namespace: string, name: string, budget: LookupBudget | undefined): void {
    if (!this.#liveOnMiss || this.#objects.has(keyOf(kind, namespace, name))) return;
    budget?.claim();
    this.liveReads++;
  }

  referencedBy(kind: KaosKind, namespace: string, name: string): Referrer[] {
    return this.#dependencies.referencedBy(kind, namespace, name);
  }

  async namespaceLabels(namespace: string, _budget?: LookupBudget): Promise<Record<string, string> | undefined> {
    return this.#answer(`namespace ${namespace}`, () => {
      const labels = this.#namespaces.get(namespace);
      return labels === undefined ? undefined : { ...labels };
    });
  }

  async #answer<T>(call: string, read: () => T): Promise<T> {
    this.calls.push(call);
    this.#inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.#inFlight);
    try {
      await new Promise((resolve) => setImmediate(resolve));
      return read();
    } finally {
      this.#inFlight--;
    }
  }
}
