// An ObjectLookup for the benchmark that answers the way the operator's cache does when it is
// synced: straight from a Map, without a trip to the event loop. test/support/memory-lookup.ts
// is a test double (it yields once per call and records every call), which would measure itself
// rather than the webhook; BENCH_LOOKUP=memory selects it anyway, for comparison.
import { getIn } from '../../src/api/json.ts';
import type { KaosKind } from '../../src/api/kinds.ts';
import type { KubeObject, ObjectLookup } from '../../src/api/lookup.ts';

export class CacheLikeLookup implements ObjectLookup {
  readonly #objects = new Map<string, KubeObject>();
  readonly #namespaces = new Map<string, Record<string, string>>();

  add(...objects: KubeObject[]): this {
    for (const o of objects) {
      if (o.kind === 'Namespace') this.#namespaces.set(o.metadata?.name ?? '', o.metadata?.labels ?? {});
      else this.#objects.set(`${o.kind}/${o.metadata?.namespace}/${o.metadata?.name}`, o);
    }
    return this;
  }

  async get(kind: KaosKind, namespace: string, name: string): Promise<KubeObject | undefined> {
    return this.#objects.get(`${kind}/${namespace}/${name}`);
  }

  async exists(kind: KaosKind, namespace: string, name: string): Promise<boolean> {
    return this.#objects.has(`${kind}/${namespace}/${name}`);
  }

  referencedBy(kind: KaosKind, namespace: string, name: string): string[] {
    const field = kind === 'ModelAPI' ? ['modelAPI'] : kind === 'MCPServer' ? ['mcpServers'] : ['agentNetwork', 'access'];
    const users: string[] = [];
    for (const o of this.#objects.values()) {
      if (o.kind !== 'Agent' || o.metadata?.namespace !== namespace) continue;
      const value = getIn(o.spec, ...field);
      if (value === name || (Array.isArray(value) && value.includes(name))) users.push(o.metadata.name ?? '');
    }
    return users.sort();
  }

  async namespaceLabels(namespace: string): Promise<Record<string, string> | undefined> {
    return this.#namespaces.get(namespace);
  }
}
