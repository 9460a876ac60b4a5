// The MCP runtime registry (docs/api.md, "MCPServer runtimes"): ConfigMap `kaos-mcp-runtimes` in the operator's
// namespace, key `runtimes.yaml`, `runtimes: {<name>: {type, image, description?, command?, args?,
// paramsEnvVar?, transport?, requiredEnv?}}`. Pure: parsing, and what a runtime name resolves to.
// Admission, the controller and `lint`/`default` all read the registry through here; what it
// shares with the harness registry (reading the text, broken entries kept apart) is
// runtime-registry.ts.
import { asRecord } from './json.ts';
import type { KubeObject } from './meta.ts';
import {
  EntryFields,
  entryNames,
  lookupEntry,
  parseRegistry,
  RUNTIMES_KEY,
  type Registry,
  type RegistryStateOf,
} from './runtime-registry.ts';

export { MAX_REGISTRY_LENGTH, RUNTIMES_KEY, registryProblems } from './runtime-registry.ts';

export const RUNTIMES_CONFIG_MAP = 'kaos-mcp-runtimes';
/** Not a registry entry: the image, command and args come from spec.container. */
export const CUSTOM_RUNTIME = 'custom';

export interface RuntimeEntry {
  readonly type: string;
  readonly image: string;
  readonly description?: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  /** The env var that receives spec.params. */
  readonly paramsEnvVar?: string;
  readonly transport?: string;
  /** Env vars the server cannot start without: spec.container.env must name each. */
  readonly requiredEnv?: readonly string[];
}

export type RuntimeRegistry = Registry<RuntimeEntry>;

/** The registry as a reader knows it: parsed, or why it cannot be read (absent, not synced, invalid). */
export type RegistryState = RegistryStateOf<RuntimeEntry>;

export type RuntimeResolution =
  | { readonly kind: 'custom' }
  | { readonly kind: 'entry'; readonly entry: RuntimeEntry }
  | { readonly kind: 'unknown' }
  /** The registry (or this entry of it) cannot be read: neither known nor unknown. */
  | { readonly kind: 'unreadable'; readonly reason: string };

/** Env var names as Kubernetes accepts them (C identifiers plus `-` and `.`). */
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

const RESERVED = new Map([[CUSTOM_RUNTIME, `runtimes.${CUSTOM_RUNTIME}: the name "${CUSTOM_RUNTIME}" is reserved (spec.container gives its image)`]]);

/** Parses runtimes.yaml; a problem with the whole file (not YAML, no `runtimes` map) is the result's `problem`. */
export function parseRuntimes(text: string): RegistryState {
  const state = parseRegistry(text, parseEntry, RESERVED);
  return 'problem' in state ? { problem: `${RUNTIMES_KEY}: ${state.problem}` } : state;
}

function parseEntry(raw: unknown, at: string): RuntimeEntry | string {
  const fields = EntryFields.of(raw, at);
  if (typeof fields === 'string') return fields;
  const type = fields.text('type', true);
  const image = fields.text('image', true);
  const description = fields.text('description', false);
  const paramsEnvVar = fields.text('paramsEnvVar', false);
  if (paramsEnvVar !== undefined && !ENV_NAME.test(paramsEnvVar)) fields.problem('paramsEnvVar', 'must be an env var name');
  const transport = fields.text('transport', false);
  const command = fields.list('command');
  const args = fields.list('args');
  const requiredEnv = fields.list('requiredEnv', (item) => ENV_NAME.test(item), 'env var names');
  if (fields.problems.length > 0 || type === undefined || image === undefined) return fields.problems.join('; ');
  return {
    type,
    image,
    ...(description === undefined ? {} : { description }),
    ...(command === undefined ? {} : { command }),
    ...(args === undefined ? {} : { args }),
    ...(paramsEnvVar === undefined ? {} : { paramsEnvVar }),
    ...(transport === undefined ? {} : { transport }),
    ...(requiredEnv === undefined ? {} : { requiredEnv }),
  };
}

/**
 * The registry a ConfigMap holds. `where` names it in problems (`<namespace>/kaos-mcp-runtimes`);
 * an absent ConfigMap or key is a problem, not an empty registry: nothing is "unknown" until the
 * registry has been read.
 */
export function registryFromConfigMap(configMap: KubeObject | undefined, where: string): RegistryState {
  if (configMap === undefined) return { problem: `ConfigMap ${where} not found` };
  const text = asRecord(configMap.data)?.[RUNTIMES_KEY];
  if (typeof text !== 'string') return { problem: `ConfigMap ${where} has no key ${RUNTIMES_KEY}` };
  const state = parseRuntimes(text);
  return 'problem' in state ? { problem: `ConfigMap ${where}: ${state.problem}` } : state;
}

/** What `spec.runtime` names. */
export function resolveRuntime(state: RegistryState, name: string): RuntimeResolution {
  return name === CUSTOM_RUNTIME ? { kind: 'custom' } : lookupEntry(state, name);
}

/** The names `spec.runtime` accepts, sorted, `custom` last (for messages). */
export function runtimeNames(state: RegistryState): string[] {
  return [...entryNames(state), CUSTOM_RUNTIME];
}
