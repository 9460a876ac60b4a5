// The single source of truth of kaos.tools/v1alpha1: the object schemas of the five kinds, from
// which the CRDs are generated, the webhooks default and validate, and the TypeScript types come.
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import type { KaosKind } from '../kinds.ts';
import type { KubeObject } from '../lookup.ts';
import { AccessGrantSpec, AccessGrantStatus } from './accessgrant.ts';
import { AgentSpec, AgentStatus } from './agent.ts';
import { MCPServerSpec, MCPServerStatus } from './mcpserver.ts';
import { MemoryStoreSpec, MemoryStoreStatus } from './memorystore.ts';
import { ModelAPISpec, ModelAPIStatus } from './modelapi.ts';

export type ObjectMeta = NonNullable<KubeObject['metadata']>;

/** The API server validates metadata itself; a CRD may only say it is an object. */
const ObjectMetaSchema = Type.Unsafe<ObjectMeta>({ type: 'object' });

function ResourceSchema<S extends TSchema, T extends TSchema>(spec: S, status: T) {
  return Type.Object({
    apiVersion: Type.Optional(
      Type.String({
        description:
          'APIVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
      }),
    ),
    kind: Type.Optional(
      Type.String({
        description:
          'Kind is a string value representing the REST resource this object represents. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
      }),
    ),
    metadata: Type.Optional(ObjectMetaSchema),
    spec,
    status: Type.Optional(status),
  });
}

export const AgentSchema = ResourceSchema(AgentSpec, AgentStatus);
export const ModelAPISchema = ResourceSchema(ModelAPISpec, ModelAPIStatus);
export const MCPServerSchema = ResourceSchema(MCPServerSpec, MCPServerStatus);
export const MemoryStoreSchema = ResourceSchema(MemoryStoreSpec, MemoryStoreStatus);
export const AccessGrantSchema = ResourceSchema(AccessGrantSpec, AccessGrantStatus);

export type Agent = Static<typeof AgentSchema>;
export type ModelAPI = Static<typeof ModelAPISchema>;
export type MCPServer = Static<typeof MCPServerSchema>;
export type MemoryStore = Static<typeof MemoryStoreSchema>;
export type AccessGrant = Static<typeof AccessGrantSchema>;
/** An object of one of the five kinds that conforms to its schema. */
export type KaosObject = WorkloadObject | AccessGrant;
/** An object of one of the four workload kinds (api/kinds.ts WORKLOAD_KINDS) that conforms to its schema. */
export type WorkloadObject = Agent | ModelAPI | MCPServer | MemoryStore;

export interface KaosObjects {
  Agent: Agent;
  ModelAPI: ModelAPI;
  MCPServer: MCPServer;
  MemoryStore: MemoryStore;
  AccessGrant: AccessGrant;
}

export const OBJECT_SCHEMAS: Readonly<Record<KaosKind, TObject>> = {
  Agent: AgentSchema,
  ModelAPI: ModelAPISchema,
  MCPServer: MCPServerSchema,
  MemoryStore: MemoryStoreSchema,
  AccessGrant: AccessGrantSchema,
};

export const SPEC_SCHEMAS: Readonly<Record<KaosKind, TObject>> = {
  Agent: AgentSpec,
  ModelAPI: ModelAPISpec,
  MCPServer: MCPServerSpec,
  MemoryStore: MemoryStoreSpec,
  AccessGrant: AccessGrantSpec,
};

export * from './accessgrant.ts';
export * from './agent.ts';
export * from './common.ts';
export * from './mcpserver.ts';
export * from './memorystore.ts';
export * from './modelapi.ts';
export * from './status.ts';
