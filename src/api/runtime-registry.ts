// What the two runtime registries share (docs/api.md, "MCPServer runtimes" and "Agent harness"):
// a ConfigMap whose key `runtimes.yaml` holds `runtimes: {<name>: {…}}`, written by the cluster
// administrator and read by admission, the controller and `lint`. Pure: reading the text at a
// cost linear in its bounded length (untrusted-yaml.ts), entries parsed one by one, and a name
// looked up. Each registry gives its own entry parser and the words of its problems.
//
// One broken entry does not take the others down: it is kept as "broken" with the reason, so an
// object naming it is judged like one whose registry cannot be read while every other runtime
// keeps working.
import { asRecord, isRecord } from './json.ts';
import { readUntrustedYaml } from './untrusted-yaml.ts';

/** The key of the registry's ConfigMap that holds it. */
export const RUNTIMES_KEY = 'runtimes.yaml';

/**
 * Longest runtimes.yaml read: about 800 entries (the chart's MCP registry takes 1 KiB). A registry
 * is parsed once per resourceVersion, by the controller and by each `lint`, at a cost linear in
 * its length (untrusted-yaml.ts), so its length bounds what one edit of it may cost.
 */
export const MAX_REGISTRY_LENGTH = 256 * 1024;

/** A registry that was read: the entries that parsed, and those that did not with what is wrong. */
export interface Registry<E> {
  readonly entries: ReadonlyMap<string, E>;
  readonly broken: ReadonlyMap<string, string>;
}

/** A registry as a reader knows it: parsed, or why it cannot be read (absent, not synced, invalid). */
export type RegistryStateOf<E> = { readonly registry: Registry<E> } | { readonly problem: string };

/** What a name is in a registry: an entry, not there, or not readable (the whole file, or that entry). */
export type EntryLookup<E> =
  | { readonly kind: 'entry'; readonly entry: E }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'unreadable'; readonly reason: string };

/** Parses one entry: the entry, or every problem of it in one text. */
export type EntryParser<E> = (raw: unknown, at: string) => E | string;

/**
 * Reads runtimes.yaml: its `runtimes` entries each through `parseEntry` (`reserved` names are
 * broken with their reason), or why the whole text cannot be read — too long, not YAML, several
 * documents, no `runtimes` mapping — in words the caller prefixes with its own.
 */
export function parseRegistry<E>(text: string, parseEntry: EntryParser<E>, reserved: ReadonlyMap<string, string> = new Map()): RegistryStateOf<E> {
  const read = readUntrustedYaml(text, MAX_REGISTRY_LENGTH);
  if (!read.ok) {
    const why =
      read.problem === 'too-long'
        ? `longer than ${MAX_REGISTRY_LENGTH} characters`
        : read.problem === 'syntax'
          ? `not valid YAML: ${read.error}`
          : `${read.count} YAML documents, not one`;
    return { problem: why };
  }
  const runtimes = asRecord(asRecord(read.value)?.runtimes);
  if (runtimes === undefined) return { problem: 'must be a mapping with a "runtimes" mapping of name to entry' };
  const entries = new Map<string, E>();
  const broken = new Map<string, string>();
  for (const [name, raw] of Object.entries(runtimes)) {
    const refused = reserved.get(name);
    const parsed = refused ?? parseEntry(raw, `runtimes.${name}`);
    if (typeof parsed === 'string') broken.set(name, parsed);
    else entries.set(name, parsed);
  }
  return { registry: { entries, broken } };
}

/** What `name` is in the registry; nothing is unknown until the registry has been read. */
export function lookupEntry<E>(state: RegistryStateOf<E>, name: string): EntryLookup<E> {
  if ('problem' in state) return { kind: 'unreadable', reason: state.problem };
  const entry = state.registry.entries.get(name);
  if (entry !== undefined) return { kind: 'entry', entry };
  const broken = state.registry.broken.get(name);
  return broken === undefined ? { kind: 'unknown' } : { kind: 'unreadable', reason: broken };
}

/** The names of the entries that parsed, sorted (for messages). */
export function entryNames<E>(state: RegistryStateOf<E>): string[] {
  return 'problem' in state ? [] : [...state.registry.entries.keys()].sort();
}

/** Every problem of the registry, for a log line or an Event: the whole file's, or each broken entry's. */
export function registryProblems<E>(state: RegistryStateOf<E>): string[] {
  return 'problem' in state ? [state.problem] : [...state.registry.broken.values()];
}

/**
 * Reads the fields of one entry, collecting a problem per field that has the wrong type, so an
 * entry's reason names everything wrong with it at once. Unknown keys are ignored: a newer KAOS
 * may add some.
 */
export class EntryFields {
  readonly problems: string[] = [];
  readonly #raw: Record<string, unknown>;
  readonly #at: string;

  private constructor(raw: Record<string, unknown>, at: string) {
    this.#raw = raw;
    this.#at = at;
  }

  /** The reader of `raw`, or the entry's problem when it is not a mapping. */
  static of(raw: unknown, at: string): EntryFields | string {
    return isRecord(raw) ? new EntryFields(raw, at) : `${at}: must be a mapping`;
  }

  /** A string field; `required`: present and not empty. */
  text(key: string, required: boolean): string | undefined {
    const v = this.#raw[key];
    if (v === undefined || v === null) {
      if (required) this.problems.push(`${this.#at}.${key}: required`);
      return undefined;
    }
    if (typeof v !== 'string' || (required && v === '')) {
      this.problems.push(`${this.#at}.${key}: must be ${required ? 'a non-empty string' : 'a string'}`);
      return undefined;
    }
    return v;
  }

  /** A list of strings, each passing `check` when given (`what` names them in the problem). */
  list(key: string, check?: (item: string) => boolean, what = 'strings'): string[] | undefined {
    const v = this.#raw[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || !v.every((item) => typeof item === 'string' && (check === undefined || check(item)))) {
      this.problems.push(`${this.#at}.${key}: must be a list of ${what}`);
      return undefined;
    }
    return v as string[];
  }

  /** A problem of the caller's own about `key`. */
  problem(key: string, text: string): void {
    this.problems.push(`${this.#at}.${key}: ${text}`);
  }
}
