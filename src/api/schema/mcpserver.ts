// MCPServer (docs/api.md, "MCPServer").
import { Type, type Static } from '@sinclair/typebox';
import { MCP_RUNTIMES, PHASES } from '../enums.ts';
import { MAX_INLINE_TEXT_LENGTH, MAX_NAME_LENGTH, MAX_PACKAGE_LENGTH } from './limits.ts';
import { ContainerOverride, EnvVarList, GatewayRoute, PodSpecFragment, SecretKeySelector, Telemetry } from './common.ts';
import { StringEnum } from './helpers.ts';
import { StatusSchema } from './status.ts';

export const MCPTools = Type.Object(
  {
    fromPackage: Type.Optional(
      Type.String({
        maxLength: MAX_PACKAGE_LENGTH,
        description: 'A PyPI (python-runtime) or npm (node-runtime) package, optionally with a version.',
      }),
    ),
    fromString: Type.Optional(
      Type.String({ maxLength: MAX_INLINE_TEXT_LENGTH, description: 'Python source defining the tools (python-runtime only).' }),
    ),
    fromSecretKeyRef: Type.Optional(SecretKeySelector),
  },
  { description: 'Where the tools come from: exactly one source.' },
);

export const MCPServerConfig = Type.Object({
  tools: Type.Optional(MCPTools),
  env: Type.Optional(EnvVarList('Environment of the MCP server container.')),
});

// Two shapes (docs/api.md, "MCPServer" and "Newer KAOS shapes"): the original `type` + `config`,
// or upstream KAOS's `runtime` + `params` + `serviceAccountName`. Neither is required here, since each shape's
// manifests lack the other's fields; admission enforces exactly one of `type`/`runtime`.
export const MCPServerSpec = Type.Object({
  type: Type.Optional(StringEnum(MCP_RUNTIMES, { description: 'Runtime of the server (original shape; exclusive with runtime).' })),
  config: Type.Optional(MCPServerConfig),
  telemetry: Type.Optional(Telemetry),
  runtime: Type.Optional(
    Type.String({
      maxLength: MAX_NAME_LENGTH,
      description: 'A runtime from the registry ConfigMap kaos-mcp-runtimes, or custom (exclusive with type).',
    }),
  ),
  params: Type.Optional(
    Type.String({ maxLength: MAX_INLINE_TEXT_LENGTH, description: "Runtime-specific parameters, passed in the runtime's paramsEnvVar." }),
  ),
  serviceAccountName: Type.Optional(Type.String({ maxLength: MAX_NAME_LENGTH, description: "The server pod's service account." })),
  gatewayRoute: Type.Optional(GatewayRoute),
  container: Type.Optional(ContainerOverride),
  podSpec: Type.Optional(PodSpecFragment),
});
export type MCPServerSpec = Static<typeof MCPServerSpec>;

export const MCPServerStatus = StatusSchema(PHASES, {});
export type MCPServerStatus = Static<typeof MCPServerStatus>;
