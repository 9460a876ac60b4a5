// The MCP runtime registry in the cache (docs/api.md, "MCPServer runtimes"): one reflector on exactly one
// ConfigMap, `kaos-mcp-runtimes` in the operator's namespace (a field selector on its name, so
// no other ConfigMap of the cluster is listed or held), parsed once per resourceVersion. Admission
// reads it through the cache (KaosCache.mcpRuntimes), the reconciler through its reads, and a
// change wakes exactly the MCPServers whose runtime now resolves differently.
//
// A registry that is absent or invalid is never fatal: a warning is logged once per distinct
// problem, admission only warns, and the reconciler of an MCPServer that needs it fails with a
// Warning Event and is retried with backoff (and woken at once when the registry is fixed).
import { jsonEqual } from '../api/json.ts';
import type { KubeObject } from '../api/lookup.ts';
import {
  RUNTIMES_CONFIG_MAP,
  registryFromConfigMap,
  registryProblems,
  resolveRuntime,
  type RegistryState,
  type RuntimeResolution,
} from '../api/mcp-runtimes.ts';
import type { KaosCache } from '../cluster/cache.ts';
import { CONFIG_MAP } from '../kube/paths.ts';
import type { Reflector } from '../kube/reflector.ts';
import type { Logger } from '../leaves/logger.ts';
import { refKey } from '../cluster/object-ref.ts';

export const RUNTIMES_FIELD_SELECTOR = `metadata.name=${RUNTIMES_CONFIG_MAP}`;

/** What spec.runtime resolves to for a runtime-shape MCPServer; undefined for an original-shape one. */
function runtimeOf(mcp: KubeObject): string | undefined {
  const spec = mcp.spec;
  if (spec === null || typeof spec !== 'object') return undefined;
  const { type, runtime } = spec as Record<string, unknown>;
  if (type !== undefined && type !== null && type !== '') return undefined;
  return typeof runtime === 'string' && runtime !== '' ? runtime : undefined;
}

/** Only what render and status read of a resolution: an unreadable registry's reason text aside. */
function comparable(resolution: RuntimeResolution): RuntimeResolution {
  return resolution.kind === 'unreadable' ? { kind: 'unreadable', reason: '' } : resolution;
}

/**
 * Pure: the queue keys of the MCPServers whose runtime resolves differently in `next` than in
 * `previous` (an entry edited, added or removed; the registry becoming readable or not). Others
 * — original-shape objects, `custom`, runtimes whose entry did not change — are not woken, so a
 * registry edit rolls exactly the Deployments it changes.
 */
export function mcpServerKeysForRegistryChange(previous: RegistryState, next: RegistryState, mcpServers: Iterable<KubeObject>): string[] {
  const keys: string[] = [];
  const changed = new Map<string, boolean>();
  for (const mcp of mcpServers) {
    const runtime = runtimeOf(mcp);
    const { namespace, name } = mcp.metadata ?? {};
    if (runtime === undefined || namespace === undefined || name === undefined) continue;
    let differs = changed.get(runtime);
    if (differs === undefined) {
      differs = !jsonEqual(comparable(resolveRuntime(previous, runtime)), comparable(resolveRuntime(next, runtime)));
      changed.set(runtime, differs);
    }
    if (differs) keys.push(refKey('MCPServer', namespace, name));
  }
  return keys.sort();
}

export type RegistryChangeListener = (previous: RegistryState, next: RegistryState) => void;

export interface RuntimeRegistryOptions {
  /** The operator's namespace (POD_NAMESPACE). */
  namespace: string;
  logger: Logger;
}

/** The registry's reflector and its parsed state; registered on the cache before it starts. */
export class RuntimeRegistry {
  readonly #reflector: Reflector;
  readonly #namespace: string;
  readonly #where: string;
  readonly #log: Logger;
  readonly #listeners = new Set<RegistryChangeListener>();
  /** The parse of the ConfigMap at #version ('' before the first list, '-' while absent). */
  #state: RegistryState;
  #version = '';
  /** An event has arrived: the store holds the first list's answer even before it counts as synced. */
  #heard = false;
  #warned = new Set<string>();

  constructor(cache: Pick<KaosCache, 'register'>, options: RuntimeRegistryOptions) {
    this.#namespace = options.namespace;
    this.#where = `${options.namespace}/${RUNTIMES_CONFIG_MAP}`;
    this.#log = options.logger;
    this.#state = { problem: `ConfigMap ${this.#where} not read yet` };
    this.#reflector = cache.register(CONFIG_MAP, { namespace: options.namespace, fieldSelector: RUNTIMES_FIELD_SELECTOR });
    this.#reflector.on(() => {
      this.#heard = true;
      const previous = this.#state;
      const next = this.state();
      if (previous === next) return;
      for (const listener of this.#listeners) listener(previous, next);
    });
  }

  /** The registry now: parsed once per resourceVersion of the ConfigMap. */
  state(): RegistryState {
    if (!this.#reflector.isSynced() && !this.#heard) return this.#state;
    const configMap = this.#reflector.getByName(this.#namespace, RUNTIMES_CONFIG_MAP);
    const version = configMap === undefined ? '-' : (configMap.metadata?.resourceVersion ?? '?');
    if (version === this.#version) return this.#state;
    this.#version = version;
    this.#state = registryFromConfigMap(configMap, this.#where);
    this.#report(this.#state);
    return this.#state;
  }

  /** Called with the registry before and after each change of the ConfigMap. */
  onChange(listener: RegistryChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** One warning per distinct problem (a relist of the same ConfigMap says nothing new). */
  #report(state: RegistryState): void {
    const problems = registryProblems(state);
    const fresh = problems.filter((p) => !this.#warned.has(p));
    this.#warned = new Set(problems);
    if (fresh.length > 0) this.#log.warn({ configMap: this.#where, problems: fresh }, 'MCP runtime registry: entries cannot be used');
    else if (problems.length === 0 && 'registry' in state) {
      this.#log.info({ configMap: this.#where, runtimes: [...state.registry.entries.keys()] }, 'MCP runtime registry read');
    }
  }
}

/** Registers the registry's reflector and makes it the cache's (admission reads it there). */
export function watchRuntimeRegistry(cache: KaosCache, options: RuntimeRegistryOptions): RuntimeRegistry {
  const registry = new RuntimeRegistry(cache, options);
  cache.attachMcpRuntimes(() => registry.state());
  return registry;
}
