// The harness runtime registry (docs/api.md, "Agent harness"): ConfigMap `kaos-harness-runtimes` in
// SYSTEM_NAMESPACE, key `runtimes.yaml`, `runtimes: {<name>: {image, driver, description?}}`; an
// empty image means the user brings their own (spec.container.image). Pure: parsing, and what an
// Agent's spec.harness resolves to, with KAOS's words for each way it cannot. Admission, the
// controller and `lint` read the registry through here.
import { asRecord } from './json.ts';
import type { KubeObject } from './meta.ts';
import { EntryFields, entryNames, lookupEntry, parseRegistry, RUNTIMES_KEY, type EntryLookup, type RegistryStateOf } from './runtime-registry.ts';

export const HARNESS_RUNTIMES_CONFIG_MAP = 'kaos-harness-runtimes';

export interface HarnessRuntimeEntry {
  /** '' (or absent, as KAOS reads it): bring your own image in spec.container.image. */
  readonly image: string;
  /** What the harness image runs (HARNESS_DRIVER). */
  readonly driver: string;
  readonly description?: string;
}

/** The registry as a reader knows it; a problem is in KAOS's words (see harnessFailure). */
export type HarnessRegistryState = RegistryStateOf<HarnessRuntimeEntry>;

/** What an Agent's harness resolves to. */
export type HarnessResolution =
  /** The image the agent runs (spec.container.image, else the entry's) and the entry's driver. */
  | { readonly kind: 'resolved'; readonly image: string; readonly driver: string }
  | { readonly kind: 'unknown' }
  /** The entry has no image and spec.container gives none. */
  | { readonly kind: 'no-image' }
  /** The registry (or this entry of it) cannot be read: neither known nor unknown. */
  | { readonly kind: 'unreadable'; readonly reason: string };

/** KAOS's prefixes of a registry that cannot be read. */
const GET_FAILED = 'failed to get harness runtime registry ConfigMap';
const PARSE_FAILED = 'failed to parse harness runtime registry';

/** The registry before its ConfigMap has been read (the cache not synced, or not watched at all). */
export const HARNESS_REGISTRY_NOT_READ: HarnessRegistryState = { problem: `${GET_FAILED}: the operator has not read it yet` };

/**
 * A problem without KAOS's prefix (`configmaps "kaos-harness-runtimes" not found`,
 * `runtimes.pi.driver: required`): what a warning, which the API server cuts at 120 characters,
 * has room for.
 */
export function briefProblem(problem: string): string {
  for (const prefix of [GET_FAILED, PARSE_FAILED]) {
    if (problem.startsWith(`${prefix}: `)) return problem.slice(prefix.length + 2);
  }
  return problem;
}

/** Parses runtimes.yaml; a problem with the whole file, or an entry's, is in KAOS's words. */
export function parseHarnessRuntimes(text: string): HarnessRegistryState {
  const state = parseRegistry(text, parseEntry);
  if ('problem' in state) return { problem: `${PARSE_FAILED}: ${state.problem}` };
  const broken = new Map([...state.registry.broken].map(([name, why]) => [name, `${PARSE_FAILED}: ${why}`]));
  return { registry: { entries: state.registry.entries, broken } };
}

function parseEntry(raw: unknown, at: string): HarnessRuntimeEntry | string {
  const fields = EntryFields.of(raw, at);
  if (typeof fields === 'string') return fields;
  const image = fields.text('image', false);
  const driver = fields.text('driver', true);
  const description = fields.text('description', false);
  if (fields.problems.length > 0 || driver === undefined) return fields.problems.join('; ');
  return { image: image ?? '', driver, ...(description === undefined ? {} : { description }) };
}

/**
 * The registry a ConfigMap holds (undefined: it does not exist). Its problems are KAOS's:
 * `failed to get harness runtime registry ConfigMap: configmaps "kaos-harness-runtimes" not found`
 * (the API server's words for the missing object), `runtimes.yaml key not found in ConfigMap`,
 * `failed to parse harness runtime registry: <why>`.
 */
export function harnessRegistryFromConfigMap(configMap: KubeObject | undefined): HarnessRegistryState {
  if (configMap === undefined) return { problem: `${GET_FAILED}: configmaps "${HARNESS_RUNTIMES_CONFIG_MAP}" not found` };
  const text = asRecord(configMap.data)?.[RUNTIMES_KEY];
  if (typeof text !== 'string') return { problem: `${RUNTIMES_KEY} key not found in ConfigMap` };
  return parseHarnessRuntimes(text);
}

/** The entry `runtime` names, or why there is none. */
export function lookupHarnessRuntime(state: HarnessRegistryState, runtime: string): EntryLookup<HarnessRuntimeEntry> {
  return lookupEntry(state, runtime);
}

/** spec.harness.runtime against the registry, with the image precedence: spec.container.image, else the entry's. */
export function resolveHarness(state: HarnessRegistryState, runtime: string, containerImage: string | undefined): HarnessResolution {
  const found = lookupHarnessRuntime(state, runtime);
  if (found.kind !== 'entry') return found;
  const image = containerImage !== undefined && containerImage !== '' ? containerImage : found.entry.image;
  return image === '' ? { kind: 'no-image' } : { kind: 'resolved', image, driver: found.entry.driver };
}

/** The names spec.harness.runtime accepts, sorted (for messages). */
export function harnessRuntimeNames(state: HarnessRegistryState): string[] {
  return entryNames(state);
}

/** The status message of an Agent whose harness does not resolve, as KAOS writes it. */
export function harnessFailure(runtime: string, resolution: Exclude<HarnessResolution, { kind: 'resolved' }>): string {
  const why =
    resolution.kind === 'unknown'
      ? `unknown harness runtime: ${runtime} (not found in registry)`
      : resolution.kind === 'no-image'
        ? `harness runtime ${runtime} requires a user-supplied spec.container.image`
        : resolution.reason;
  return `Failed to resolve harness runtime: ${why}`;
}
