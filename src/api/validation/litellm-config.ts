// A LiteLLM config given inline (spec.proxyConfig.configYaml.fromString) must be usable as is:
// valid YAML, a mapping with a `model_list` list whose entries each have a `model_name`.
import { parseDocument } from 'yaml';
import { isRecord } from '../json.ts';
import { errorMessage } from '../../error-message.ts';

/** What is wrong with the config, in order; empty when it is acceptable. */
export function liteLLMConfigProblems(source: string): string[] {
  // merge: true reads `<<` keys as YAML 1.1 (and PyYAML, which LiteLLM uses) do.
  const doc = parseDocument(source, { prettyErrors: true, uniqueKeys: true, merge: true });
  const parseError = doc.errors[0];
  if (parseError !== undefined) {
    if (parseError.code === 'MULTIPLE_DOCS') {
      return [`must be a single YAML document (another one starts at line ${parseError.linePos?.[0].line ?? '?'})`];
    }
    // The first line of the parser's message names the problem and its line and column.
    const firstLine = parseError.message.split('\n')[0]?.replace(/:$/, '') ?? parseError.message;
    return [`must be valid YAML: ${firstLine}`];
  }
  // The structure is checked on the plain value, so aliases (`model_list: *models`) and merge keys
  // (`<<: *defaults`) resolve as LiteLLM's YAML loader resolves them; maxAliasCount bounds
  // alias expansion ("billion laughs").
  let root: unknown;
  try {
    root = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return [`must be valid YAML: ${errorMessage(err)}`];
  }
  if (!isRecord(root)) return ['must be a YAML mapping with a model_list list'];
  const list = root.model_list;
  if (!Array.isArray(list)) return ['must contain a model_list list'];
  const problems: string[] = [];
  list.forEach((entry: unknown, i) => {
    const name = isRecord(entry) ? entry.model_name : undefined;
    const ok = (typeof name === 'string' || typeof name === 'number') && name !== '';
    if (!ok) problems.push(`model_list[${i}] must have a model_name`);
  });
  return problems;
}
