// A LiteLLM config given inline (spec.proxyConfig.configYaml.fromString) must be usable as is:
// valid YAML, a mapping with a `model_list` list whose entries each have a `model_name`.
import { isMap, isScalar, isSeq, parseDocument } from 'yaml';

/** What is wrong with the config, in order; empty when it is acceptable. */
export function liteLLMConfigProblems(source: string): string[] {
  const doc = parseDocument(source, { prettyErrors: true, uniqueKeys: true });
  const parseError = doc.errors[0];
  if (parseError !== undefined) {
    if (parseError.code === 'MULTIPLE_DOCS') {
      return [`must be a single YAML document (another one starts at line ${parseError.linePos?.[0].line ?? '?'})`];
    }
    // The first line of the parser's message names the problem and its line and column.
    const firstLine = parseError.message.split('\n')[0]?.replace(/:$/, '') ?? parseError.message;
    return [`must be valid YAML: ${firstLine}`];
  }
  const root = doc.contents;
  if (!isMap(root)) return ['must be a YAML mapping with a model_list list'];
  const list = root.get('model_list', true);
  if (!isSeq(list)) return ['must contain a model_list list'];
  const problems: string[] = [];
  list.items.forEach((entry, i) => {
    const name = isMap(entry) ? entry.get('model_name', true) : undefined;
    const ok = isScalar(name) && (typeof name.value === 'string' || typeof name.value === 'number') && name.value !== '';
    if (!ok) problems.push(`model_list[${i}] must have a model_name`);
  });
  return problems;
}
