// The reconciler of each kind (issue 7: being written on the `reconcile` branch; until it lands
// each one refuses, so a key is retried with backoff rather than silently dropped).
import type { KaosKind } from '../../api/kinds.ts';
import type { KindReconciler } from './context.ts';

const pending: KindReconciler = async (_ctx, key) => {
  throw new Error(`no reconciler for ${key.kind} yet`);
};

export const RECONCILERS: Readonly<Record<KaosKind, KindReconciler>> = {
  Agent: pending,
  ModelAPI: pending,
  MCPServer: pending,
};
