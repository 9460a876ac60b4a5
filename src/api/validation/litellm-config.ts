// A LiteLLM config given inline (spec.proxyConfig.configYaml.fromString) must be usable as is:
// valid YAML, a mapping with a `model_list` list whose entries each have a `model_name`.
//
// Read by the validating webhook (twice a ModelAPI review: its problems, and its names against
// `models`; the old object's too on UPDATE), by every Agent review and Agent reconcile that checks
// its model against the ModelAPI, and by the stranding warning: each distinct config is parsed
// once (recentMemo), at a cost bounded by its length (untrusted-yaml.ts), and one longer than
// the schema allows is refused before it is parsed.
import { longerThan } from '../bounded-text.ts';
import { isRecord } from '../json.ts';
import { recentMemo } from '../recent-memo.ts';
import { MAX_CAUSES } from './answer-limits.ts';
import { MAX_LITELLM_CONFIG_LENGTH } from '../schema/limits.ts';
import { readUntrustedYaml, type YamlRead } from '../untrusted-yaml.ts';

/** What an inline config says: its model names, or what is wrong with it (names are then partial). */
export interface LiteLLMConfig {
  /** The `model_name`s, in order (numbers as LiteLLM reads them, as text). */
  readonly names: readonly string[];
  /** What is wrong, in order; empty when the config is acceptable. */
  readonly problems: readonly string[];
}

/**
 * Configs read recently, by content: a cluster's ModelAPIs with inline configs, and the objects
 * of reviews in flight. At most this many configs of at most 64 KiB are held (often the very
 * strings the cache holds anyway).
 */
const REMEMBERED_CONFIGS = 64;
const parseRemembered = recentMemo(parseConfig, REMEMBERED_CONFIGS);

const TOO_LONG_PROBLEM = `may not be more than ${MAX_LITELLM_CONFIG_LENGTH} characters: put a larger config in a Secret and use fromSecretKeyRef`;
const TOO_LONG: LiteLLMConfig = { names: [], problems: [TOO_LONG_PROBLEM] };

export function readLiteLLMConfig(source: string): LiteLLMConfig {
  // A config longer than the schema allows (a stored one from before the limit, or a request's
  // oldObject) costs a length check, and is not remembered: megabytes of it would stay in memory.
  return longerThan(source, MAX_LITELLM_CONFIG_LENGTH) ? TOO_LONG : parseRemembered(source);
}

/** The `model_name`s of an acceptable config, in order; undefined when the config has problems. */
export function liteLLMModelNames(source: string): readonly string[] | undefined {
  const config = readLiteLLMConfig(source);
  return config.problems.length > 0 ? undefined : config.names;
}

/** What is wrong with the config, in order; empty when it is acceptable. */
export function liteLLMConfigProblems(source: string): readonly string[] {
  return readLiteLLMConfig(source).problems;
}

function parseConfig(source: string): LiteLLMConfig {
  const read = readUntrustedYaml(source, MAX_LITELLM_CONFIG_LENGTH);
  if (!read.ok) return { names: [], problems: [unreadable(read)] };
  // Aliases (`model_list: *models`) and merge keys (`<<: *defaults`) are resolved as LiteLLM's
  // YAML loader resolves them.
  const root = read.value;
  if (!isRecord(root)) return { names: [], problems: ['must be a YAML mapping with a model_list list'] };
  const list = root.model_list;
  if (!Array.isArray(list)) return { names: [], problems: ['must contain a model_list list'] };
  const problems: string[] = [];
  const names: string[] = [];
  let unnamed = 0;
  list.forEach((entry: unknown, i) => {
    const name = isRecord(entry) ? entry.model_name : undefined;
    const ok = (typeof name === 'string' || typeof name === 'number') && name !== '';
    if (ok) names.push(String(name));
    // One error each for as many as a denial shows (answer-limits.ts), then one counting the rest.
    else if (++unnamed <= MAX_CAUSES) problems.push(`model_list[${i}] must have a model_name`);
  });
  if (unnamed > MAX_CAUSES) problems.push(`model_list: ${unnamed - MAX_CAUSES} more entries have no model_name`);
  return { names, problems };
}

function unreadable(read: Exclude<YamlRead, { ok: true }>): string {
  switch (read.problem) {
    case 'too-long':
      return TOO_LONG_PROBLEM;
    case 'syntax':
      return `must be valid YAML: ${read.error}`;
    case 'documents':
      return `must be a single YAML document, not ${read.count}`;
  }
}
