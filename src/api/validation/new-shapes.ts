// The validating webhook's rules for the newer KAOS shapes (docs/api.md, "Newer KAOS shapes"), each a pure
// function the per-kind validators call: the API key's one source, a configYaml covered by
// `models`, the model an Agent asks for served by its ModelAPI, the Agents and MemoryStores
// stranded by a change of a ModelAPI's models, and telemetry that has nowhere to send to.
import { forbidden, invalidOmitValue, notFound, required, type FieldError } from '../field-error.ts';
import { goQuote } from '../go-format.ts';
import { asArray, asRecord, asString, getIn, isSet, type JsonRecord } from '../json.ts';
import type { WorkloadKind } from '../kinds.ts';
import { goStringList, isModelServed, notServedDetail, servedPatterns } from '../model-patterns.ts';
import { clampWarning, namingWarnings, plural, type NamedObject } from '../warnings.ts';
import { liteLLMModelNames } from './litellm-config.ts';

const API_KEY = 'spec.proxyConfig.apiKey';

/** `apiKey`: exactly one of value/valueFrom; `valueFrom`: exactly one of secretKeyRef/configMapKeyRef. */
export function apiKeyErrors(proxy: JsonRecord): FieldError[] {
  const apiKey = asRecord(proxy.apiKey);
  if (apiKey === undefined) return [];
  const errors: FieldError[] = [];
  const hasValue = isSet(apiKey.value);
  const valueFrom = asRecord(apiKey.valueFrom);
  if (!hasValue && valueFrom === undefined) errors.push(required(API_KEY, 'must specify exactly one of value, valueFrom'));
  if (hasValue && valueFrom !== undefined) errors.push(forbidden(`${API_KEY}.valueFrom`, 'may not be set when value is set'));
  if (valueFrom !== undefined) {
    const path = `${API_KEY}.valueFrom`;
    const secret = isSet(valueFrom.secretKeyRef);
    const configMap = isSet(valueFrom.configMapKeyRef);
    if (!secret && !configMap) errors.push(required(path, 'must specify exactly one of secretKeyRef, configMapKeyRef'));
    if (secret && configMap) errors.push(forbidden(`${path}.configMapKeyRef`, 'may not be set when secretKeyRef is set'));
    for (const ref of ['secretKeyRef', 'configMapKeyRef'] as const) {
      const name = getIn(valueFrom, ref, 'name');
      if (isSet(valueFrom[ref]) && !isSet(name)) errors.push(required(`${path}.${ref}.name`));
    }
  }
  return errors;
}

/** With `models`, every `model_name` of an inline configYaml must match one of them (KAOS's words). */
export function configYamlCoverageErrors(proxy: JsonRecord): FieldError[] {
  const models = asArray(proxy.models)?.filter((m): m is string => typeof m === 'string');
  const inline = asString(getIn(proxy, 'configYaml', 'fromString'));
  if (models === undefined || models.length === 0 || inline === undefined) return [];
  // A config with problems is reported by liteLLMConfigProblems; its names are not judged.
  const names = liteLLMModelNames(inline) ?? [];
  return names
    .filter((n) => !isModelServed(models, n))
    .map((n) =>
      invalidOmitValue(
        'spec.proxyConfig.configYaml.fromString',
        `model_name ${goQuote(n)} in configYaml not found in models list ${goStringList(models)}`,
      ),
    );
}

/**
 * The Agent's `spec.model` against the patterns its ModelAPI serves: a NotFound on spec.model (a
 * reference error, judged under the reference policy like a missing ModelAPI), or undefined when
 * served, when the Agent names no model, or when the ModelAPI's patterns are unknown.
 */
export function modelServedError(agentSpec: unknown, modelAPI: { name: string; spec: unknown }): FieldError | undefined {
  const model = asString(getIn(agentSpec, 'model'));
  if (model === undefined || model === '') return undefined;
  const patterns = servedPatterns(modelAPI.spec);
  if (patterns === undefined || isModelServed(patterns, model)) return undefined;
  return notFound('spec.model', model, notServedDetail(modelAPI.name, patterns));
}

/**
 * `ModelAPI "m" no longer serves the model of Agents: a1, a2 and 3 more`, and `... a model of
 * MemoryStores: s1` for the stores (two models each) it strands: one warning per kind, names sorted.
 */
export function strandedWarnings(modelAPI: string, stranded: readonly NamedObject[]): string[] {
  return namingWarnings(stranded, (kind) => `ModelAPI ${goQuote(modelAPI)} no longer serves ${kind === 'Agent' ? 'the model' : 'a model'} of ${plural(kind)}: `);
}

/** Where each kind keeps its telemetry block. */
export const TELEMETRY_PATH: Readonly<Record<WorkloadKind, readonly string[]>> = {
  Agent: ['config', 'telemetry'],
  ModelAPI: ['telemetry'],
  MCPServer: ['telemetry'],
  MemoryStore: ['telemetry'],
};

/**
 * Telemetry the object enables but that cannot work: no endpoint of its own and no operator
 * default (DEFAULT_TELEMETRY_ENDPOINT), or a Hosted ModelAPI (Ollama has no OpenTelemetry).
 */
export function telemetryWarnings(kind: WorkloadKind, spec: unknown, defaultEndpoint: string): string[] {
  const keys = TELEMETRY_PATH[kind];
  const telemetry = asRecord(getIn(spec, ...keys));
  if (telemetry?.enabled !== true) return [];
  const path = `spec.${keys.join('.')}`;
  if (kind === 'ModelAPI' && getIn(spec, 'mode') === 'Hosted') {
    return [clampWarning(`${path}: Hosted mode (Ollama) has no OpenTelemetry; telemetry is ignored`)];
  }
  if (isSet(telemetry.endpoint) || defaultEndpoint !== '') return [];
  return [clampWarning(`${path}.endpoint: telemetry enabled, but no endpoint here nor in DEFAULT_TELEMETRY_ENDPOINT`)];
}

/**
 * With DEPRECATION_WARNINGS (off by default, docs/api.md, "Newer KAOS shapes"): one warning per original-shape
 * field the newer KAOS shapes replace, naming its successor, for teams that want to migrate.
 */
export function deprecationWarnings(kind: WorkloadKind, spec: unknown): string[] {
  const out: string[] = [];
  const has = (...keys: string[]): boolean => isSet(getIn(spec, ...keys)) && (asArray(getIn(spec, ...keys))?.length ?? 1) > 0;
  const warn = (field: string, successor: string): void => {
    out.push(clampWarning(`${field} is the original KAOS shape; newer KAOS releases use ${successor}`));
  };
  if (kind === 'Agent' && !has('model')) warn('spec.config.env[MODEL_NAME]', 'spec.model');
  if (kind === 'ModelAPI' && has('proxyConfig', 'model')) warn('spec.proxyConfig.model', 'spec.proxyConfig.models');
  const ownEnv = kind === 'ModelAPI' ? (getIn(spec, 'mode') === 'Hosted' ? ['hostedConfig', 'env'] : ['proxyConfig', 'env']) : ['config', 'env'];
  // An Agent's MODEL_NAME alone is the warning above, not a reason to move the list.
  const entries = asArray(getIn(spec, ...ownEnv)) ?? [];
  const userEntries = kind === 'Agent' ? entries.filter((e) => asRecord(e)?.name !== 'MODEL_NAME') : entries;
  if (userEntries.length > 0) warn(`spec.${ownEnv.join('.')}`, 'spec.container.env');
  return out;
}
