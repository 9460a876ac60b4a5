// The ModelAPI's rules beyond its schema (docs/api.md, "Validation"): what each mode needs and forbids, the
// configYaml source, an inline LiteLLM config, and the backend URL; for the newer shape
// (docs/api.md, "Newer KAOS shapes") the API key's one source and a configYaml covered by `models`.
import { forbidden, invalid, invalidOmitValue, required, type FieldError } from '../field-error.ts';
import { asRecord, isSet, type JsonRecord } from '../json.ts';
import { liteLLMConfigProblems } from './litellm-config.ts';
import { apiKeyErrors, configYamlCoverageErrors } from './new-shapes.ts';
import type { KubeObject } from '../lookup.ts';
import type { ValidationResult } from './validation-types.ts';

const PROXY_SOURCES = ['apiBase', 'model', 'models', 'configYaml'] as const;

export function validateModelAPI(object: KubeObject): ValidationResult {
  const spec: JsonRecord = asRecord(object.spec) ?? {};
  const errors: FieldError[] = [];
  const proxy = asRecord(spec.proxyConfig);
  const hosted = asRecord(spec.hostedConfig);

  if (spec.mode === 'Proxy') {
    if (proxy === undefined) errors.push(required('spec.proxyConfig', 'required when mode is Proxy'));
    else if (!PROXY_SOURCES.some((k) => isSet(proxy[k]))) {
      errors.push(required('spec.proxyConfig', 'must specify at least one of apiBase, model, models, configYaml'));
    }
    if (isSet(spec.hostedConfig)) errors.push(forbidden('spec.hostedConfig', 'may not be set when mode is Proxy'));
  } else if (spec.mode === 'Hosted') {
    // A hostedConfig without model is the schema's `Required value`; a missing block is ours.
    if (hosted === undefined) errors.push(required('spec.hostedConfig.model', 'required when mode is Hosted'));
    if (isSet(spec.proxyConfig)) errors.push(forbidden('spec.proxyConfig', 'may not be set when mode is Hosted'));
  }

  // A forbidden proxyConfig is reported once, not picked apart as well.
  if (proxy !== undefined && spec.mode !== 'Hosted') errors.push(...proxyConfigErrors(proxy));
  return { errors, warnings: [] };
}

function proxyConfigErrors(proxy: JsonRecord): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof proxy.apiBase === 'string' && proxy.apiBase !== '' && !isHttpURL(proxy.apiBase)) {
    errors.push(invalid('spec.proxyConfig.apiBase', proxy.apiBase, 'must be an http or https URL'));
  }
  const configYaml = asRecord(proxy.configYaml);
  if (configYaml !== undefined) {
    const path = 'spec.proxyConfig.configYaml';
    const hasString = isSet(configYaml.fromString);
    const hasSecret = isSet(configYaml.fromSecretKeyRef);
    if (!hasString && !hasSecret) errors.push(required(path, 'must specify exactly one of fromString, fromSecretKeyRef'));
    if (hasString && hasSecret) errors.push(forbidden(`${path}.fromSecretKeyRef`, 'may not be set when fromString is set'));
    if (typeof configYaml.fromString === 'string' && hasString) {
      // The config is neither echoed back (it may hold API keys) nor quoted in full (it is long).
      for (const problem of liteLLMConfigProblems(configYaml.fromString)) errors.push(invalidOmitValue(`${path}.fromString`, problem));
    }
  }
  errors.push(...configYamlCoverageErrors(proxy), ...apiKeyErrors(proxy));
  return errors;
}

function isHttpURL(value: string): boolean {
  if (/\s/.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}
