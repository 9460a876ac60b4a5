// An ObjectLookup for the benchmark that answers the way the operator's cache does when it is
// synced: straight from a Map, without a trip to the event loop. test/support/memory-lookup.ts
// is a test double (it yields once per call and records every call), which would measure itself
// rather than the webhook; BENCH_LOOKUP=memory selects it anyway, for comparison.
import { isKaosKind, type KaosKind } from '../../src/api/kinds.ts';
import type { KubeObject, ObjectLookup, Referrer } from '../../src/api/lookup.ts';
import { DependencyIndex } from '../../src/cluster/dependency-index.ts';

export class CacheLikeLookup implements ObjectLookup {
  readonly #objects = new Map<string, KubeObject>();
  readonly #namespaces = new Map<string, Record<string, string>>();
  readonly #dependencies = new DependencyIndex();

  add(...objects: KubeObject[]): this {
    for (const o of objects) {
      if (o.kind === 'Namespace') this.#namespaces.set(o.metadata?.name ?? '', o.metadata?.labels ?? {});
      else {
        this.#objects.set(`${o.kind}/${o.metadata?.namespace}/${o.metadata?.name}`, o);
        if (isKaosKind(o.kind)) this.#dependencies.upsert(o.kind, o);
      }
    }
    return this;
  }

  async get(kind: KaosKind, namespace: string, name: string): Promise<KubeObject | undefined> {
    return this.#objects.get(`${kind}/${namespace}/${name}`);
  }

  async exists(kind: KaosKind, namespace: string, name: string): Promise<boolean> {
    return this.#objects.has(`${kind}/${namespace}/${name}`);
  }

  referencedBy(kind: KaosKind, namespace: string, name: string): Referrer[] {
    return this.#dependencies.referencedBy(kind, namespace, name);
  }

  async namespaceLabels(namespace: string): Promise<Record<string, string> | undefined> {
    return this.#namespaces.get(namespace);
  }
}
