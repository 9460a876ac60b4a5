// The reconciler of each kind: what the WorkQueue of that kind runs for a key.
import type { KaosKind } from '../../api/kinds.ts';
import { reconcileAccessGrant } from './accessgrant.ts';
import { reconcileAgent } from './agent.ts';
import type { KindReconciler } from './context.ts';
import { reconcileMCPServer } from './mcpserver.ts';
import { reconcileModelAPI } from './modelapi.ts';
import { reconcileMemoryStore } from './memorystore.ts';

export const RECONCILERS: Readonly<Record<KaosKind, KindReconciler>> = {
  Agent: reconcileAgent,
  ModelAPI: reconcileModelAPI,
  MCPServer: reconcileMCPServer,
  MemoryStore: reconcileMemoryStore,
  AccessGrant: reconcileAccessGrant,
};
