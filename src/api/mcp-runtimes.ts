// The MCP runtime registry (docs/api.md, "MCPServer runtimes"): ConfigMap `kaos-mcp-runtimes` in the operator's
// namespace, key `runtimes.yaml`, `runtimes: {<name>: {type, image, description?, command?, args?,
// paramsEnvVar?, transport?, requiredEnv?}}`. Pure: parsing, and what a runtime name resolves to.
// Admission, the controller and `lint`/`default` all read the registry through here.
//
// One broken entry does not take the others down: it is kept as "broken" with the reason, so an
// MCPServer naming it is judged like one whose registry cannot be read (a warning at admission, a
// retry in the controller) while every other runtime keeps working.
import { asRecord, isRecord } from './json.ts';
import type { KubeObject } from './meta.ts';
import { readUntrustedYaml } from './untrusted-yaml.ts';

export const RUNTIMES_CONFIG_MAP = 'kaos-mcp-runtimes';
export const RUNTIMES_KEY = 'runtimes.yaml';
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

export interface RuntimeRegistry {
  /** Entries that parsed, by name. */
  readonly entries: ReadonlyMap<string, RuntimeEntry>;
  /** Entries that did not, by name, with what is wrong. */
  readonly broken: ReadonlyMap<string, string>;
}

/** The registry as a reader knows it: parsed, or why it cannot be read (absent, not synced, invalid). */
export type RegistryState = { readonly registry: RuntimeRegistry } | { readonly problem: string };

export type RuntimeResolution =
  | { readonly kind: 'custom' }
  | { readonly kind: 'entry'; readonly entry: RuntimeEntry }
  | { readonly kind: 'unknown' }
  /** The registry (or this entry of it) cannot be read: neither known nor unknown. */
  | { readonly kind: 'unreadable'; readonly reason: string };

/** Env var names as Kubernetes accepts them (C identifiers plus `-` and `.`). */
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
/**
 * Longest runtimes.yaml read: about 800 entries (the chart's three take 1 KiB). The registry is
 * parsed once per resourceVersion, by the controller and by each `lint`, at a cost linear in
 * its length (untrusted-yaml.ts), so its length bounds what one edit of it may cost.
 */
export const MAX_REGISTRY_LENGTH = 256 * 1024;

/** Parses runtimes.yaml; a problem with the whole file (not YAML, no `runtimes` map) is the result's `problem`. */
export function parseRuntimes(text: string): RegistryState {
  const read = readUntrustedYaml(text, MAX_REGISTRY_LENGTH);
  if (!read.ok) {
    const why =
      read.problem === 'too-long'
        ? `longer than ${MAX_REGISTRY_LENGTH} characters`
        : read.problem === 'syntax'
          ? `not valid YAML: ${read.error}`
          : `${read.count} YAML documents, not one`;
    return { problem: `${RUNTIMES_KEY}: ${why}` };
  }
  const root = read.value;
  const runtimes = asRecord(asRecord(root)?.runtimes);
  if (runtimes === undefined) return { problem: `${RUNTIMES_KEY}: must be a mapping with a "runtimes" mapping of name to entry` };
  const entries = new Map<string, RuntimeEntry>();
  const broken = new Map<string, string>();
  for (const [name, raw] of Object.entries(runtimes)) {
    if (name === CUSTOM_RUNTIME) {
      broken.set(name, `runtimes.${name}: the name "${CUSTOM_RUNTIME}" is reserved (spec.container gives its image)`);
      continue;
    }
    const parsed = parseEntry(name, raw);
    if (typeof parsed === 'string') broken.set(name, parsed);
    else entries.set(name, parsed);
  }
  return { registry: { entries, broken } };
}

function parseEntry(name: string, raw: unknown): RuntimeEntry | string {
  const at = `runtimes.${name}`;
  if (!isRecord(raw)) return `${at}: must be a mapping`;
  const problems: string[] = [];
  const text = (key: string, required: boolean): string | undefined => {
    const v = raw[key];
    if (v === undefined || v === null) {
      if (required) problems.push(`${at}.${key}: required`);
      return undefined;
    }
    if (typeof v !== 'string' || (required && v === '')) {
      problems.push(`${at}.${key}: must be ${required ? 'a non-empty string' : 'a string'}`);
      return undefined;
    }
    return v;
  };
  const list = (key: string, check?: (item: string) => boolean, what = 'strings'): string[] | undefined => {
    const v = raw[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || !v.every((item) => typeof item === 'string' && (check === undefined || check(item)))) {
      problems.push(`${at}.${key}: must be a list of ${what}`);
      return undefined;
    }
    return v as string[];
  };
  const type = text('type', true);
  const image = text('image', true);
  const description = text('description', false);
  const paramsEnvVar = text('paramsEnvVar', false);
  if (paramsEnvVar !== undefined && !ENV_NAME.test(paramsEnvVar)) problems.push(`${at}.paramsEnvVar: must be an env var name`);
  const transport = text('transport', false);
  const command = list('command');
  const args = list('args');
  const requiredEnv = list('requiredEnv', (item) => ENV_NAME.test(item), 'env var names');
  if (problems.length > 0 || type === undefined || image === undefined) return problems.join('; ');
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
  if (name === CUSTOM_RUNTIME) return { kind: 'custom' };
  if ('problem' in state) return { kind: 'unreadable', reason: state.problem };
  const entry = state.registry.entries.get(name);
  if (entry !== undefined) return { kind: 'entry', entry };
  const broken = state.registry.broken.get(name);
  return broken === undefined ? { kind: 'unknown' } : { kind: 'unreadable', reason: broken };
}

/** The names `spec.runtime` accepts, sorted, `custom` last (for messages). */
export function runtimeNames(state: RegistryState): string[] {
  const names = 'problem' in state ? [] : [...state.registry.entries.keys()].sort();
  return [...names, CUSTOM_RUNTIME];
}

/** Every problem of the registry, for a log line or an Event: the whole file's, or each broken entry's. */
export function registryProblems(state: RegistryState): string[] {
  return 'problem' in state ? [state.problem] : [...state.registry.broken.values()];
}
