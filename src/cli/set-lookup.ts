// The ObjectLookup the webhooks' handlers read when they judge a set of manifests offline: the
// KAOS objects and Namespaces of the set, over a snapshot of the cluster's (with --cluster). An
// object of the set hides the cluster's copy, since applying the set replaces it. Nothing here
// reads live, so no lookup ever claims from a request's budget.
import { isKaosKind, type KaosKind } from '../api/kinds.ts';
import type { KubeObject, ObjectLookup, Referrer } from '../api/lookup.ts';
import { DependencyIndex } from '../cluster/dependency-index.ts';
import { refKey } from '../cluster/object-ref.ts';
import type { HarnessRegistryState } from '../api/harness-runtimes.ts';
import type { RegistryState } from '../api/mcp-runtimes.ts';

export class SetLookup implements ObjectLookup {
  readonly #objects = new Map<string, KubeObject>();
  /** Who names what among the objects: the kind table's relation, as the operator's cache keeps it. */
  readonly #dependencies = new DependencyIndex();
  readonly #namespaces = new Map<string, Record<string, string>>();
  /** The MCP runtime registry, when one is known (cli/runtimes.ts); absent: runtimes are not judged. */
  mcpRuntimes?: () => RegistryState;

  /** The harness runtime registry, when one is known; absent: harness runtimes are not judged. */
  harnessRuntimes?: () => HarnessRegistryState;

  setRuntimes(state: RegistryState): this {
    this.mcpRuntimes = () => state;
    return this;
  }

  setHarnessRuntimes(state: HarnessRegistryState): this {
    this.harnessRuntimes = () => state;
    return this;
  }

  /** Adds KAOS objects (each with its namespace filled in); a later one replaces an earlier one. */
  addObjects(objects: Iterable<KubeObject>): this {
    // Only KAOS kinds can be looked up (ObjectLookup.get takes a KaosKind): anything else is not kept.
    for (const o of objects) {
      if (!isKaosKind(o.kind)) continue;
      this.#objects.set(refKey(o.kind, o.metadata?.namespace ?? '', o.metadata?.name ?? ''), o);
      this.#dependencies.upsert(o.kind, o);
    }
    return this;
  }

  /** Adds namespaces and their labels; a later one replaces an earlier one. */
  addNamespaces(namespaces: Iterable<[string, Record<string, string>]>): this {
    for (const [name, labels] of namespaces) this.#namespaces.set(name, labels);
    return this;
  }

  async get(kind: KaosKind, namespace: string, name: string): Promise<KubeObject | undefined> {
    return this.#objects.get(refKey(kind, namespace, name));
  }

  async exists(kind: KaosKind, namespace: string, name: string): Promise<boolean> {
    return this.#objects.has(refKey(kind, namespace, name));
  }

  referencedBy(kind: KaosKind, namespace: string, name: string): Referrer[] {
    return this.#dependencies.referencedBy(kind, namespace, name);
  }

  async namespaceLabels(namespace: string): Promise<Record<string, string> | undefined> {
    return this.#namespaces.get(namespace);
  }
}
