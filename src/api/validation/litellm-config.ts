// A LiteLLM config given inline (spec.proxyConfig.configYaml.fromString) must be usable as is:
// valid YAML, a mapping with a `model_list` list whose entries each have a `model_name`.
import { parseDocument } from 'yaml';
import { isRecord } from '../json.ts';
import { errorMessage } from '../../error-message.ts';

/**
 * The `model_name`s of an acceptable config, in order (numbers as LiteLLM reads them, as text);
 * undefined when the config has problems (liteLLMConfigProblems says which).
 */
export function liteLLMModelNames(source: string): string[] | undefined {
  const parsed = parseConfig(source);
  if (typeof parsed === 'string' || parsed.problems.length > 0) return undefined;
  return parsed.names;
}

/** What is wrong with the config, in order; empty when it is acceptable. */
export function liteLLMConfigProblems(source: string): string[] {
  const parsed = parseConfig(source);
  return typeof parsed === 'string' ? [parsed] : parsed.problems;
}

/** The first problem that stops reading the config, or its model names and entry problems. */
function parseConfig(source: string): string | { names: string[]; problems: string[] } {
  // merge: true reads `<<` keys as YAML 1.1 (and PyYAML, which LiteLLM uses) do.
  const doc = parseDocument(source, { prettyErrors: true, uniqueKeys: true, merge: true });
  const parseError = doc.errors[0];
  if (parseError !== undefined) {
    if (parseError.code === 'MULTIPLE_DOCS') {
      return `must be a single YAML document (another one starts at line ${parseError.linePos?.[0].line ?? '?'})`;
    }
    // The first line of the parser's message names the problem and its line and column.
    const firstLine = parseError.message.split('\n')[0]?.replace(/:$/, '') ?? parseError.message;
    return `must be valid YAML: ${firstLine}`;
  }
  // The structure is checked on the plain value, so aliases (`model_list: *models`) and merge keys
  // (`<<: *defaults`) resolve as LiteLLM's YAML loader resolves them; maxAliasCount bounds
  // alias expansion ("billion laughs").
  let root: unknown;
  try {
    root = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return `must be valid YAML: ${errorMessage(err)}`;
  }
  if (!isRecord(root)) return 'must be a YAML mapping with a model_list list';
  const list = root.model_list;
  if (!Array.isArray(list)) return 'must contain a model_list list';
  const problems: string[] = [];
  const names: string[] = [];
  list.forEach((entry: unknown, i) => {
    const name = isRecord(entry) ? entry.model_name : undefined;
    const ok = (typeof name === 'string' || typeof name === 'number') && name !== '';
    if (ok) names.push(String(name));
    else problems.push(`model_list[${i}] must have a model_name`);
  });
  return { names, problems };
}
