// The LiteLLM config file of a Proxy ModelAPI (docs/api.md, "ModelAPI", rules a–c).
import { stringify } from 'yaml';
import type { ModelAPISpecInput } from './inputs.ts';
import { liteLLMConfigSource } from './sources.ts';

interface LiteLLMConfig {
  model_list: { model_name: string; litellm_params: { model: string; api_base?: string } }[];
  litellm_settings: { drop_params: boolean };
}

/**
 * Serialised with fixed key order and no line folding, so the same spec always yields the same
 * bytes (the ConfigMap content, and with it the config hash, never changes by accident).
 * Every string is double-quoted: LiteLLM reads the file with PyYAML (YAML 1.1), where a plain
 * `yes`, `on` or `1:20` would not be a string.
 */
function toYAML(config: LiteLLMConfig): string {
  return stringify(config, { lineWidth: 0, defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN' });
}

/** (b) apiBase: forward any model name to the backend. */
export function wildcardConfig(apiBase: string): string {
  return toYAML({
    model_list: [{ model_name: '*', litellm_params: { model: '*', api_base: apiBase } }],
    litellm_settings: { drop_params: true },
  });
}

/** (c) model: one entry whose public name is the model itself. */
export function singleModelConfig(model: string): string {
  return toYAML({
    model_list: [{ model_name: model, litellm_params: { model } }],
    litellm_settings: { drop_params: true },
  });
}

/**
 * The content of the `litellm-config-<name>` ConfigMap's config.yaml, or undefined when the
 * config comes from a Secret (fromSecretKeyRef) and no ConfigMap is wanted. A Proxy with none
 * of the sources (the webhook refuses it) gets an empty model list, so LiteLLM still starts.
 */
export function liteLLMConfigMapContent(spec: ModelAPISpecInput): string | undefined {
  const proxy = spec.proxyConfig;
  switch (liteLLMConfigSource(spec)) {
    case 'fromString':
      return proxy?.configYaml?.fromString ?? '';
    case 'fromSecretKeyRef':
      return undefined;
    case 'apiBase':
      return wildcardConfig(proxy?.apiBase ?? '');
    case 'model':
      return singleModelConfig(proxy?.model ?? '');
    case 'none':
      return toYAML({ model_list: [], litellm_settings: { drop_params: true } });
  }
}
