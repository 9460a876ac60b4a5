// The LiteLLM config file of a Proxy ModelAPI (docs/api.md, "ModelAPI", rules a–c; the new shape's
// `models`, docs/api.md, "Newer KAOS shapes").
import { stringify } from 'yaml';
import type { ModelAPISpecInput } from './inputs.ts';
import { liteLLMConfigSource } from './sources.ts';

interface LiteLLMConfig {
  model_list: { model_name: string; litellm_params: { model: string; api_base?: string; api_key?: string } }[];
  litellm_settings: { drop_params: boolean; success_callback?: string[]; failure_callback?: string[] };
}

/** Env vars the generated config of the new shape reads its backend from (LiteLLM's `os.environ/`). */
export const PROXY_API_BASE_ENV = 'PROXY_API_BASE';
export const PROXY_API_KEY_ENV = 'PROXY_API_KEY';

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
 * The new shape (docs/api.md, "Newer KAOS shapes"): one entry per model, `litellm_params.model` prefixed with the
 * provider when there is one; the backend's URL and key by reference to the container's env, so
 * the key never lands in the ConfigMap; OpenTelemetry callbacks when telemetry is enabled.
 */
export function modelsConfig(
  models: readonly string[],
  options: { provider?: string; apiBase: boolean; apiKey: boolean; telemetry: boolean },
): string {
  const provider = options.provider !== undefined && options.provider !== '' ? options.provider : undefined;
  return toYAML({
    model_list: models.map((m) => ({
      model_name: m,
      litellm_params: {
        model: provider === undefined ? m : `${provider}/${m}`,
        ...(options.apiBase ? { api_base: `os.environ/${PROXY_API_BASE_ENV}` } : {}),
        ...(options.apiKey ? { api_key: `os.environ/${PROXY_API_KEY_ENV}` } : {}),
      },
    })),
    litellm_settings: {
      drop_params: true,
      ...(options.telemetry ? { success_callback: ['otel'], failure_callback: ['otel'] } : {}),
    },
  });
}

/**
 * The content of the `litellm-config-<name>` ConfigMap's config.yaml, or undefined when the
 * config comes from a Secret (fromSecretKeyRef) and no ConfigMap is wanted. A Proxy with none
 * of the sources (the webhook refuses it) gets an empty model list, so LiteLLM still starts.
 */
export function liteLLMConfigMapContent(spec: ModelAPISpecInput, telemetry = false): string | undefined {
  const proxy = spec.proxyConfig;
  switch (liteLLMConfigSource(spec)) {
    case 'models':
      return modelsConfig(proxy?.models ?? [], {
        ...(proxy?.provider !== undefined ? { provider: proxy.provider } : {}),
        apiBase: proxy?.apiBase !== undefined && proxy.apiBase !== '',
        apiKey: proxy?.apiKey !== undefined,
        telemetry,
      });
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
