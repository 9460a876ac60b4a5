// The runtime registries in the cache (docs/api.md, "MCPServer runtimes" and "Agent harness"): one
// reflector on exactly one ConfigMap each — `kaos-mcp-runtimes` in the operator's namespace,
// `kaos-harness-runtimes` in SYSTEM_NAMESPACE — by a field selector on its name, so no other
// ConfigMap of the cluster is listed or held, parsed once per resourceVersion. Admission reads
// them through the cache (KaosCache.mcpRuntimes, harnessRuntimes), the reconcilers through their
// reads, and a change wakes exactly the objects whose runtime now resolves differently: never a
// read per reconcile.
//
// A registry that is absent or invalid is never fatal: a warning is logged once per distinct
// problem and admission only warns. An MCPServer that needs it fails with a Warning Event and is
// retried with backoff; an Agent's harness is Failed with KAOS's message; either is woken at once
// when the registry is fixed.
import {
  HARNESS_REGISTRY_NOT_READ,
  HARNESS_RUNTIMES_CONFIG_MAP,
  harnessRegistryFromConfigMap,
  lookupHarnessRuntime,
  type HarnessRuntimeEntry,
} from '../api/harness-runtimes.ts';
import { jsonEqual } from '../api/json.ts';
import type { KubeObject } from '../api/lookup.ts';
import { RUNTIMES_CONFIG_MAP, registryFromConfigMap, resolveRuntime, type RuntimeEntry, type RuntimeResolution } from '../api/mcp-runtimes.ts';
import { registryProblems, type RegistryStateOf } from '../api/runtime-registry.ts';
import type { KaosCache } from '../cluster/cache.ts';
import type { RegistryStates } from '../cluster/cache-lookup.ts';
import { refKey } from '../cluster/object-ref.ts';
import type { KaosKind } from '../api/kinds.ts';
import { CONFIG_MAP } from '../kube/paths.ts';
import type { Reflector } from '../kube/reflector.ts';
import type { Logger } from '../leaves/logger.ts';

/** The field selector of the reflector that watches ConfigMap `name` alone. */
const registryFieldSelector = (name: string): string => `metadata.name=${name}`;

/** A runtime name of an object, or undefined when the object names none. */
type RuntimeOf = (object: KubeObject) => string | undefined;

/**
 * Pure: the keys of the objects of `kind` whose runtime (`runtimeOf`) resolves differently in
 * `next` than in `previous` (`resolve`: what render and status read of it), sorted. Others — objects
 * without a runtime, runtimes whose entry did not change — are not woken, so a registry edit
 * rolls exactly the Deployments it changes.
 */
function keysForRegistryChange<S>(
  kind: KaosKind,
  objects: Iterable<KubeObject>,
  runtimeOf: RuntimeOf,
  resolve: (state: S, runtime: string) => unknown,
  previous: S,
  next: S,
): string[] {
  const keys: string[] = [];
  const changed = new Map<string, boolean>();
  for (const object of objects) {
    const runtime = runtimeOf(object);
    const { namespace, name } = object.metadata ?? {};
    if (runtime === undefined || namespace === undefined || name === undefined) continue;
    let differs = changed.get(runtime);
    if (differs === undefined) {
      differs = !jsonEqual(resolve(previous, runtime), resolve(next, runtime));
      changed.set(runtime, differs);
    }
    if (differs) keys.push(refKey(kind, namespace, name));
  }
  return keys.sort();
}

/** A string field of an object's spec, when set. */
function specString(object: KubeObject, ...path: string[]): string | undefined {
  let value: unknown = object.spec;
  for (const key of path) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** What spec.runtime resolves to for a runtime-shape MCPServer; undefined for an original-shape one. */
function mcpRuntimeOf(mcp: KubeObject): string | undefined {
  return specString(mcp, 'type') === undefined ? specString(mcp, 'runtime') : undefined;
}

/** Only what render and status read of a resolution: an unreadable registry's reason text aside (it is an Event's, not the status's). */
function comparable(resolution: RuntimeResolution): RuntimeResolution {
  return resolution.kind === 'unreadable' ? { kind: 'unreadable', reason: '' } : resolution;
}

/**
 * Pure: the queue keys of the MCPServers whose runtime resolves differently in `next` than in
 * `previous` (an entry edited, added or removed; the registry becoming readable or not). `custom`
 * resolves the same in every registry.
 */
export function mcpServerKeysForRegistryChange(previous: RegistryStates['mcp'], next: RegistryStates['mcp'], mcpServers: Iterable<KubeObject>): string[] {
  return keysForRegistryChange('MCPServer', mcpServers, mcpRuntimeOf, (state, runtime) => comparable(resolveRuntime(state, runtime)), previous, next);
}

/**
 * Pure: the queue keys of the Agents whose harness runtime resolves differently in `next` than in
 * `previous`: its entry edited, added or removed, or the registry's problem changed (the Agent's
 * status message is that problem).
 */
export function harnessAgentKeysForRegistryChange(previous: RegistryStates['harness'], next: RegistryStates['harness'], agents: Iterable<KubeObject>): string[] {
  return keysForRegistryChange('Agent', agents, (agent) => specString(agent, 'harness', 'runtime'), lookupHarnessRuntime, previous, next);
}

export type RegistryChangeListener<S> = (previous: S, next: S) => void;

interface RegistrySource<E> {
  readonly configMap: string;
  readonly namespace: string;
  /** The registry a ConfigMap holds (undefined: it does not exist). */
  readonly read: (configMap: KubeObject | undefined) => RegistryStateOf<E>;
  /** Before the first list. */
  readonly notRead: RegistryStateOf<E>;
  /** How the log names it. */
  readonly title: string;
}

/** A registry's reflector and its parsed state; registered on the cache before it starts. */
export class WatchedRegistry<E> {
  readonly #reflector: Reflector;
  readonly #source: RegistrySource<E>;
  readonly #where: string;
  readonly #log: Logger;
  readonly #listeners = new Set<RegistryChangeListener<RegistryStateOf<E>>>();
  /** The parse of the ConfigMap at #version ('' before the first list, '-' while absent). */
  #state: RegistryStateOf<E>;
  #version = '';
  /** An event has arrived: the store holds the first list's answer even before it counts as synced. */
  #heard = false;
  #warned = new Set<string>();

  constructor(cache: Pick<KaosCache, 'register'>, source: RegistrySource<E>, logger: Logger) {
    this.#source = source;
    this.#where = `${source.namespace}/${source.configMap}`;
    this.#log = logger;
    this.#state = source.notRead;
    this.#reflector = cache.register(CONFIG_MAP, { namespace: source.namespace, fieldSelector: registryFieldSelector(source.configMap) });
    this.#reflector.on(() => {
      this.#heard = true;
      const previous = this.#state;
      const next = this.state();
      if (previous === next) return;
      for (const listener of this.#listeners) listener(previous, next);
    });
  }

  /** The registry now: parsed once per resourceVersion of the ConfigMap. */
  state(): RegistryStateOf<E> {
    if (!this.#reflector.isSynced() && !this.#heard) return this.#state;
    const configMap = this.#reflector.getByName(this.#source.namespace, this.#source.configMap);
    const version = configMap === undefined ? '-' : (configMap.metadata?.resourceVersion ?? '?');
    if (version === this.#version) return this.#state;
    this.#version = version;
    this.#state = this.#source.read(configMap);
    this.#report(this.#state);
    return this.#state;
  }

  /** Called with the registry before and after each change of the ConfigMap. */
  onChange(listener: RegistryChangeListener<RegistryStateOf<E>>): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** One warning per distinct problem (a relist of the same ConfigMap says nothing new). */
  #report(state: RegistryStateOf<E>): void {
    const problems = registryProblems(state);
    const fresh = problems.filter((p) => !this.#warned.has(p));
    this.#warned = new Set(problems);
    if (fresh.length > 0) this.#log.warn({ configMap: this.#where, problems: fresh }, `${this.#source.title}: entries cannot be used`);
    else if (problems.length === 0 && 'registry' in state) {
      this.#log.info({ configMap: this.#where, runtimes: [...state.registry.entries.keys()] }, `${this.#source.title} read`);
    }
  }
}

export interface RegistryWatchOptions {
  /** The namespace of the registry's ConfigMap: POD_NAMESPACE (MCP), SYSTEM_NAMESPACE (harness). */
  namespace: string;
  logger: Logger;
}

export type RuntimeRegistry = WatchedRegistry<RuntimeEntry>;
export type HarnessRegistry = WatchedRegistry<HarnessRuntimeEntry>;

/** Watches the MCP runtime registry and makes it the cache's (admission reads it there). */
export function watchRuntimeRegistry(cache: KaosCache, options: RegistryWatchOptions): RuntimeRegistry {
  const where = `${options.namespace}/${RUNTIMES_CONFIG_MAP}`;
  const registry: RuntimeRegistry = new WatchedRegistry(cache, {
    configMap: RUNTIMES_CONFIG_MAP,
    namespace: options.namespace,
    read: (configMap) => registryFromConfigMap(configMap, where),
    notRead: { problem: `ConfigMap ${where} not read yet` },
    title: 'MCP runtime registry',
  }, options.logger);
  cache.attachRegistry('mcp', () => registry.state());
  return registry;
}

/** Watches the harness runtime registry and makes it the cache's (admission reads it there). */
export function watchHarnessRegistry(cache: KaosCache, options: RegistryWatchOptions): HarnessRegistry {
  const registry: HarnessRegistry = new WatchedRegistry(cache, {
    configMap: HARNESS_RUNTIMES_CONFIG_MAP,
    namespace: options.namespace,
    read: harnessRegistryFromConfigMap,
    notRead: HARNESS_REGISTRY_NOT_READ,
    title: 'harness runtime registry',
  }, options.logger);
  cache.attachRegistry('harness', () => registry.state());
  return registry;
}
