// Which models a ModelAPI serves, and whether an Agent's `spec.model` is one of them (docs/api.md,
// "Newer KAOS shapes"), and so whether a MemoryStore's models are. Shared by the validating webhook (a
// reference error at apply time), the stranding warning on a ModelAPI update, and the controller
// (KAOS's message in the Agent's or the store's status). Pure.
import { goQuote } from './go-format.ts';
import { asArray, asRecord, asString, getIn } from './json.ts';
import { liteLLMModelNames } from './validation/litellm-config.ts';

/**
 * The model patterns a ModelAPI serves, in the order docs/api.md, "Newer KAOS shapes" gives: Proxy `proxyConfig.models`;
 * Hosted `[hostedConfig.model]`; an original-shape Proxy's `proxyConfig.model`, else its inline
 * configYaml's `model_name`s, else `["*"]` when it only names an `apiBase`. Undefined when the spec
 * does not say (a config in a Secret, an unknown mode, a malformed spec): nothing is judged then.
 */
export function servedPatterns(modelAPISpec: unknown): readonly string[] | undefined {
  const spec = asRecord(modelAPISpec);
  if (spec === undefined) return undefined;
  if (spec.mode === 'Hosted') {
    const model = asString(getIn(spec, 'hostedConfig', 'model'));
    return model === undefined || model === '' ? undefined : [model];
  }
  if (spec.mode !== 'Proxy') return undefined;
  const proxy = asRecord(spec.proxyConfig) ?? {};
  const models = asArray(proxy.models);
  if (models !== undefined) return models.filter((m): m is string => typeof m === 'string');
  const model = asString(proxy.model);
  if (model !== undefined && model !== '') return [model];
  const inline = asString(getIn(proxy, 'configYaml', 'fromString'));
  if (inline !== undefined) return liteLLMModelNames(inline);
  if (getIn(proxy, 'configYaml', 'fromSecretKeyRef') !== undefined) return undefined;
  const apiBase = asString(proxy.apiBase);
  return apiBase !== undefined && apiBase !== '' ? ['*'] : undefined;
}

/** `*` matches anything; `<prefix>/*` every model that starts with `<prefix>/`; else equality. */
export function patternMatches(pattern: string, model: string): boolean {
  if (pattern === '*' || pattern === model) return true;
  return pattern.endsWith('/*') && model.startsWith(pattern.slice(0, -1));
}

export function isModelServed(patterns: readonly string[], model: string): boolean {
  return patterns.some((p) => patternMatches(p, model));
}

/** Go's `%v` of a []string, as KAOS prints the supported list: `[a b c]`. */
export function goStringList(values: readonly string[]): string {
  return `[${values.join(' ')}]`;
}

/** The detail of the webhook's error on `spec.model`, after `Not found: "<model>": `. */
export function notServedDetail(modelAPI: string, patterns: readonly string[]): string {
  return `not supported by ModelAPI ${goQuote(modelAPI)} (supported: ${goStringList(patterns)})`;
}

/** KAOS's status message for an Agent whose model the ModelAPI does not serve. */
export function notServedMessage(model: string, modelAPI: string, patterns: readonly string[]): string {
  return `model ${goQuote(model)} ${notServedDetail(modelAPI, patterns)}`;
}

/**
 * The bindings a change of a ModelAPI's patterns strands: the model each asks for (an Agent's
 * `spec.model`, a MemoryStore's `models.<role>.model`) served before (or before unknown), not
 * served now. In their order. Nothing when the patterns did not change or the new ones are unknown.
 */
export function strandedBindings<B extends { readonly model: string }>(
  before: readonly string[] | undefined,
  after: readonly string[] | undefined,
  bindings: readonly B[],
): B[] {
  if (after === undefined) return [];
  if (before !== undefined && before.length === after.length && before.every((p, i) => p === after[i])) return [];
  return bindings.filter((b) => (before === undefined || isModelServed(before, b.model)) && !isModelServed(after, b.model));
}
