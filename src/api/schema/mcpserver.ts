// MCPServer (docs/api.md, "MCPServer").
import { Type, type Static } from '@sinclair/typebox';
import { MCP_RUNTIMES, PHASES } from '../enums.ts';
import { MAX_INLINE_TEXT_LENGTH, MAX_PACKAGE_LENGTH } from './limits.ts';
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

export const MCPServerSpec = Type.Object({
  type: StringEnum(MCP_RUNTIMES, { description: 'Runtime of the server.' }),
  config: Type.Optional(MCPServerConfig),
  telemetry: Type.Optional(Telemetry),
  gatewayRoute: Type.Optional(GatewayRoute),
  container: Type.Optional(ContainerOverride),
  podSpec: Type.Optional(PodSpecFragment),
});
export type MCPServerSpec = Static<typeof MCPServerSpec>;

export const MCPServerStatus = StatusSchema(PHASES, {});
export type MCPServerStatus = Static<typeof MCPServerStatus>;
