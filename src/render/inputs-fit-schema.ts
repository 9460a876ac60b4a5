// Compile-time proof that the API's schema types (TypeBox Static, src/api/schema) are render
// inputs: `npm run typecheck` fails here the day a schema change makes them drift apart, so
// admission and the controller hand validated objects to render without casts. Types only: no code.
import type { Agent, MCPServer, ModelAPI } from '../api/schema/index.ts';
import type { AgentInput, MCPServerInput, ModelAPIInput } from './inputs.ts';

type Assignable<From extends To, To> = [From, To];

export type SchemaTypesAreRenderInputs = [
  Assignable<Agent, AgentInput>,
  Assignable<ModelAPI, ModelAPIInput>,
  Assignable<MCPServer, MCPServerInput>,
  Assignable<Agent['spec'], AgentInput['spec']>,
  Assignable<ModelAPI['spec'], ModelAPIInput['spec']>,
  Assignable<MCPServer['spec'], MCPServerInput['spec']>,
];
