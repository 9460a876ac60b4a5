// ModelAPI (docs/api.md, "ModelAPI").
import { Type, type Static } from '@sinclair/typebox';
import { MODEL_API_MODES, PHASES } from '../enums.ts';
import {
  MAX_API_KEY_LENGTH,
  MAX_LITELLM_CONFIG_LENGTH,
  MAX_MODEL_LENGTH,
  MAX_MODELS,
  MAX_PROVIDER_LENGTH,
  MAX_URL_LENGTH,
} from './limits.ts';
import {
  ConfigMapKeySelector,
  ContainerOverride,
  EnvVarList,
  GatewayRoute,
  PodSpecFragment,
  SecretKeySelector,
  Telemetry,
} from './common.ts';
import { StringEnum } from './helpers.ts';
import { StatusSchema } from './status.ts';

export const ConfigYaml = Type.Object(
  {
    fromString: Type.Optional(
      Type.String({ maxLength: MAX_LITELLM_CONFIG_LENGTH, description: 'A whole LiteLLM config file (larger ones: fromSecretKeyRef).' }),
    ),
    fromSecretKeyRef: Type.Optional(SecretKeySelector),
  },
  { description: 'The LiteLLM config: exactly one of fromString or fromSecretKeyRef.' },
);

export const ApiKey = Type.Object(
  {
    value: Type.Optional(Type.String({ maxLength: MAX_API_KEY_LENGTH, description: 'The key itself (better kept in a Secret).' })),
    valueFrom: Type.Optional(
      Type.Object(
        {
          secretKeyRef: Type.Optional(SecretKeySelector),
          configMapKeyRef: Type.Optional(ConfigMapKeySelector),
        },
        { description: 'The key from a Secret or ConfigMap: exactly one of secretKeyRef or configMapKeyRef.' },
      ),
    ),
  },
  { description: 'API key of the backend (PROXY_API_KEY): exactly one of value or valueFrom.' },
);

export const ProxyConfig = Type.Object(
  {
    apiBase: Type.Optional(Type.String({ maxLength: MAX_URL_LENGTH, description: 'http(s) URL of the backend.' })),
    model: Type.Optional(
      Type.String({ maxLength: MAX_MODEL_LENGTH, description: 'Model to serve, e.g. ollama/smollm2:135m (original shape; see models).' }),
    ),
    models: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: MAX_MODEL_LENGTH }), {
        minItems: 1,
        maxItems: MAX_MODELS,
        description: 'Models served: exact names, "*", or "<prefix>/*" (new shape; replaces model).',
      }),
    ),
    provider: Type.Optional(
      Type.String({ maxLength: MAX_PROVIDER_LENGTH, description: 'LiteLLM provider prefix of the served models, e.g. openai.' }),
    ),
    apiKey: Type.Optional(ApiKey),
    configYaml: Type.Optional(ConfigYaml),
    env: Type.Optional(EnvVarList('Environment of the LiteLLM container.')),
  },
  { description: 'LiteLLM proxy settings (mode Proxy): at least one of apiBase, model, models or configYaml.' },
);

export const HostedConfig = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: MAX_MODEL_LENGTH, description: 'Ollama model to pull and serve, e.g. smollm2:135m.' }),
    env: Type.Optional(EnvVarList('Environment of the Ollama container.')),
  },
  { description: 'In-cluster Ollama settings (mode Hosted).' },
);

export const ModelAPISpec = Type.Object({
  mode: StringEnum(MODEL_API_MODES, { description: 'Proxy (LiteLLM in front of a backend) or Hosted (Ollama in the cluster).' }),
  proxyConfig: Type.Optional(ProxyConfig),
  hostedConfig: Type.Optional(HostedConfig),
  telemetry: Type.Optional(Telemetry),
  gatewayRoute: Type.Optional(GatewayRoute),
  container: Type.Optional(ContainerOverride),
  podSpec: Type.Optional(PodSpecFragment),
});
export type ModelAPISpec = Static<typeof ModelAPISpec>;

export const ModelAPIStatus = StatusSchema(PHASES, {});
export type ModelAPIStatus = Static<typeof ModelAPIStatus>;
