// Pieces shared by the four kinds (docs/api.md, "Common behaviour" and "Shared types").
import { Type, type Static } from '@sinclair/typebox';
import {
  MAX_ARG_LENGTH,
  MAX_COMMAND_ITEMS,
  MAX_DURATION_LENGTH,
  MAX_ENV_NAME_LENGTH,
  MAX_ENV_VARS,
  MAX_IMAGE_LENGTH,
  MAX_INLINE_TEXT_LENGTH,
  MAX_NAME_LENGTH,
  MAX_URL_LENGTH,
} from './limits.ts';
import { MapList, OpaqueObject } from './helpers.ts';

/** core/v1 EnvVar; `valueFrom` is kept opaque and checked by the API server when the pod is built. */
export const EnvVar = Type.Object({
  name: Type.String({ maxLength: MAX_ENV_NAME_LENGTH, description: 'Name of the environment variable.' }),
  value: Type.Optional(Type.String({ maxLength: MAX_INLINE_TEXT_LENGTH })),
  valueFrom: Type.Optional(OpaqueObject({ description: 'core/v1 EnvVarSource.' })),
});
export type EnvVar = Static<typeof EnvVar>;

export const EnvVarList = (description: string) => MapList(EnvVar, ['name'], { maxItems: MAX_ENV_VARS, description });

/** core/v1's key selectors (SecretKeySelector, ConfigMapKeySelector) share one shape. */
const keySelector = (nameDescription: string, keyDescription: string) =>
  Type.Object(
    {
      name: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH, description: nameDescription })),
      key: Type.String({ maxLength: MAX_NAME_LENGTH, description: keyDescription }),
      optional: Type.Optional(Type.Boolean()),
    },
    { 'x-kubernetes-map-type': 'atomic' },
  );

/** core/v1 SecretKeySelector. */
export const SecretKeySelector = keySelector('Name of the Secret in the same namespace.', 'The key of the Secret to select.');
export type SecretKeySelector = Static<typeof SecretKeySelector>;

/** core/v1 ConfigMapKeySelector. */
export const ConfigMapKeySelector = keySelector('Name of the ConfigMap in the same namespace.', 'The key to select.');
export type ConfigMapKeySelector = Static<typeof ConfigMapKeySelector>;

/**
 * OpenTelemetry of the generated container (the newer KAOS shape, docs/api.md). The object's own
 * block decides `enabled`; `endpoint` falls back to the operator's DEFAULT_TELEMETRY_ENDPOINT.
 */
export const Telemetry = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ default: false, description: 'Export traces, metrics and logs over OTLP.' })),
    endpoint: Type.Optional(
      Type.String({ maxLength: MAX_URL_LENGTH, description: 'OTLP endpoint, e.g. http://otel-collector:4317; defaults to the operator\'s.' }),
    ),
  },
  { description: 'OpenTelemetry settings (new shape).' },
);
export type Telemetry = Static<typeof Telemetry>;

/** Go duration syntax as Gateway API accepts it; "0s" means "no timeout on the route". */
export const GATEWAY_TIMEOUT_PATTERN = '^([0-9]+(h|m|s|ms)){1,4}$';

export const GatewayRoute = Type.Object(
  {
    timeout: Type.Optional(
      Type.String({
        pattern: GATEWAY_TIMEOUT_PATTERN,
        maxLength: MAX_DURATION_LENGTH,
        description: 'Request timeout of the HTTPRoute, e.g. 30s or 2m; 0s for none. Defaults per kind.',
      }),
    ),
  },
  { description: 'Settings of the Gateway API HTTPRoute, when the operator has the gateway enabled.' },
);
export type GatewayRoute = Static<typeof GatewayRoute>;

export const ContainerOverride = Type.Object(
  {
    image: Type.Optional(Type.String({ maxLength: MAX_IMAGE_LENGTH, description: 'Container image; defaulted by the operator.' })),
    command: Type.Optional(Type.Array(Type.String({ maxLength: MAX_ARG_LENGTH }), { maxItems: MAX_COMMAND_ITEMS })),
    args: Type.Optional(Type.Array(Type.String({ maxLength: MAX_ARG_LENGTH }), { maxItems: MAX_COMMAND_ITEMS })),
    resources: Type.Optional(OpaqueObject({ description: 'core/v1 ResourceRequirements.' })),
    env: Type.Optional(EnvVarList('Appended after the generated variables; wins on name clashes.')),
  },
  { description: 'Overrides applied to the generated main container.' },
);
export type ContainerOverride = Static<typeof ContainerOverride>;

export const PodSpecFragment = OpaqueObject({
  description:
    'A core/v1 PodSpec fragment merged onto the generated pod with strategic-merge semantics; the webhook checks that the merged pod is valid.',
});
