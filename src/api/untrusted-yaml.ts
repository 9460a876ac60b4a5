// YAML that users write and the operator reads while it admits or reconciles (an inline LiteLLM
// config, the MCP runtime registry): read at a cost linear in its length, whatever it holds
// (docs/limits.md, "What one request may cost").
//
// js-yaml, not the `yaml` package the rest of the project writes with: `yaml` collects every
// error of a document and pretty-prints each one against its whole line, which is quadratic
// (256 Ki of `"` are 131,071 errors on one line: half a minute of the event loop), and its
// parse of deep flow nesting, long runs of keys (uniqueKeys compares each with all before it)
// and blank lines costs up to 10 µs a byte. js-yaml stops at the first error, caps nesting,
// keeps aliases as references to one value (never expanded: no "billion laughs") and caps the
// keys merge keys (`<<`) may copy. Its problems name a line and column, never the text, which
// may hold API keys.
import { channel } from 'node:diagnostics_channel';
import { CORE_SCHEMA, loadAll, mergeTag, YAMLException } from 'js-yaml';
import { longerThan } from './bounded-text.ts';
import { errorMessage } from '../leaves/error-message.ts';

/** Levels of nesting, the document counting as one; a LiteLLM config or a registry entry needs fewer than ten. */
export const MAX_YAML_DEPTH = 64;
/** Keys merge keys (`<<: *defaults`) may copy in one document, all merges together. */
export const MAX_YAML_MERGE_KEYS = 10_000;

// YAML 1.2's core schema, as the `yaml` package read it, plus YAML 1.1's merge keys, which
// LiteLLM's loader (PyYAML) resolves; unknown tags (`!!python/object`) are errors.
const SCHEMA = CORE_SCHEMA.withTags(mergeTag);

/**
 * Told of every parse (the text's length): how a test or a profiler counts what the memo of
 * recent configs saves. Publishing costs nothing while no one subscribes.
 */
export const YAML_PARSE_CHANNEL = 'kaos-operator:untrusted-yaml:parse';
const parses = channel(YAML_PARSE_CHANNEL);

/** One document's value, or why it cannot be read: too long (not parsed), not YAML, or several documents. */
export type YamlRead =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly problem: 'too-long' }
  | { readonly ok: false; readonly problem: 'syntax'; readonly error: string }
  | { readonly ok: false; readonly problem: 'documents'; readonly count: number };

/**
 * Reads one YAML document of at most `maxLength` code points; a longer text is refused before a
 * byte of it is parsed. An empty document (or only comments) reads as null.
 */
export function readUntrustedYaml(text: string, maxLength: number): YamlRead {
  if (longerThan(text, maxLength)) return { ok: false, problem: 'too-long' };
  let documents: unknown[];
  if (parses.hasSubscribers) parses.publish({ length: text.length });
  try {
    documents = loadAll(text, { schema: SCHEMA, maxDepth: MAX_YAML_DEPTH, maxTotalMergeKeys: MAX_YAML_MERGE_KEYS });
  } catch (err) {
    return { ok: false, problem: 'syntax', error: err instanceof YAMLException ? where(err) : errorMessage(err) };
  }
  if (documents.length > 1) return { ok: false, problem: 'documents', count: documents.length };
  return { ok: true, value: documents[0] ?? null };
}

/** The parser's reason and where it stopped, without its snippet of the text. */
function where(err: YAMLException): string {
  const mark = err.mark;
  return mark === undefined ? err.reason : `${err.reason} at line ${mark.line + 1}, column ${mark.column + 1}`;
}
