// One watched type across the namespaces the operator watches (WATCH_NAMESPACES): one Reflector
// per namespace, or a single one for all namespaces, read as if it were one store. Lookups by
// namespace go to that namespace's reflector, so a scoped cache answers "not here" for the
// namespaces it does not watch and the caller decides (admission reads live, as on any miss).
import type { KubeObject } from './meta.ts';
import type { ResourceType } from './paths.ts';
import type { Reflector, ReflectorListener, ReflectorStats } from './reflector.ts';

export class ReflectorGroup<T extends KubeObject = KubeObject> {
  readonly type: ResourceType;
  /** The watched namespaces; undefined when one reflector watches them all. */
  readonly namespaces: readonly string[] | undefined;
  readonly #all: Reflector<T> | undefined;
  readonly #byNamespace = new Map<string, Reflector<T>>();

  /**
   * `reflectors` is one reflector of every namespace (`namespaces` in the same order), or, when
   * `namespaces` is undefined, exactly one reflector of all namespaces.
   */
  constructor(type: ResourceType, reflectors: readonly Reflector<T>[], namespaces?: readonly string[]) {
    this.type = type;
    if (namespaces === undefined) {
      if (reflectors.length !== 1) throw new Error(`${type.kind}: an all-namespaces group has exactly one reflector (got ${reflectors.length})`);
      this.#all = reflectors[0];
      this.namespaces = undefined;
    } else {
      if (reflectors.length !== namespaces.length) throw new Error(`${type.kind}: one reflector per namespace expected`);
      namespaces.forEach((ns, i) => this.#byNamespace.set(ns, reflectors[i] as Reflector<T>));
      this.namespaces = [...namespaces];
    }
  }

  /** Every reflector of the group. */
  get reflectors(): Reflector<T>[] {
    return this.#all === undefined ? [...this.#byNamespace.values()] : [this.#all];
  }

  /** Whether `namespace` is watched at all. */
  covers(namespace: string): boolean {
    return this.#all !== undefined || this.#byNamespace.has(namespace);
  }

  getByName(namespace: string, name: string): T | undefined {
    return this.#reflectorOf(namespace)?.getByName(namespace, name);
  }

  /** Every stored object of every watched namespace. */
  list(): T[] {
    return this.reflectors.flatMap((r) => r.list());
  }

  get size(): number {
    return this.reflectors.reduce((n, r) => n + r.size, 0);
  }

  /** The reflectors' stats, summed. */
  get stats(): Readonly<ReflectorStats> {
    const sum: ReflectorStats = { lists: 0, relists: 0, watches: 0, errors: 0 };
    for (const r of this.reflectors) {
      const s = r.stats;
      sum.lists += s.lists;
      sum.relists += s.relists;
      sum.watches += s.watches;
      sum.errors += s.errors;
    }
    return sum;
  }

  /** True when every reflector of the group has completed its first list. */
  isSynced(): boolean {
    return this.reflectors.every((r) => r.isSynced());
  }

  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all(this.reflectors.map((r) => r.waitForSync(signal)));
  }

  /** Subscribes to the changes of every namespace; returns the unsubscribe function. */
  on(listener: ReflectorListener<T>): () => void {
    const offs = this.reflectors.map((r) => r.on(listener));
    return () => offs.forEach((off) => off());
  }

  #reflectorOf(namespace: string): Reflector<T> | undefined {
    return this.#all ?? this.#byNamespace.get(namespace);
  }
}
