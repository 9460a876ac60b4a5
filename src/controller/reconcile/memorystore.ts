// MemoryStore (docs/api.md, "MemoryStore"): resolve both model roles' ModelAPIs (and, in external
// mode, the DSN's Secret), render (Deployment + Service, in local mode the PersistentVolumeClaim,
// with two or more replicas the PodDisruptionBudget, HTTPRoute with the gateway), apply, prune what
// the other mode or fewer replicas left, and report the Deployment's progress.
//
// A ModelAPI that is missing or not Ready holds the store back (Pending, KAOS's message; nothing
// created meanwhile, children from before left as they are, one Event per new reason). KAOS polls
// every 5 s; here the kind table's dependencies wake the store on the ModelAPI's creation or status
// change, so nothing is polled and an idle store costs nothing.
import { MEMORY_MODEL_ROLES } from '../../api/enums.ts';
import { asRecord, getIn } from '../../api/json.ts';
import type { MemoryStore } from '../../api/schema/index.ts';
import { isModelServed, servedPatterns } from '../../api/model-patterns.ts';
import { dependencyNames } from '../../cluster/kind-table.ts';
import { endpointFor, renderMemoryStore, type MemoryStoreDeps } from '../../render/index.ts';
import { memoryModelAPINotReady, memoryModelAPIUnresolved, memoryModelNotSupported, secretUnresolved, type Verdict } from '../status.ts';
import { converge, existingChildren } from './children.ts';
import type { KindReconciler, ReconcileReads } from './context.ts';
import { reconciler, recordDependencyEvent, settleStatus } from './frame.ts';

/** Either everything the store's render needs, or why it cannot be rendered yet. */
export type MemoryStoreResolution = { deps: MemoryStoreDeps } | { verdict: Verdict };

/** Pure over the cache: the ModelAPI of each role in turn, then the DSN's Secret. */
export function resolveMemoryStoreDeps(reads: ReconcileReads, store: MemoryStore): MemoryStoreResolution {
  const namespace = store.metadata?.namespace ?? '';
  let summarizationEndpoint = '';
  for (const role of MEMORY_MODEL_ROLES) {
    const { modelAPI: name, model } = store.spec.models[role];
    const modelAPI = reads.kaos('ModelAPI', namespace, name);
    if (modelAPI === undefined) return { verdict: memoryModelAPIUnresolved(role, name) };
    // The webhook refuses this under Enforce: only Warn, or a ModelAPI changed since, gets here.
    const patterns = servedPatterns(modelAPI.spec);
    if (patterns !== undefined && !isModelServed(patterns, model)) return { verdict: memoryModelNotSupported(role, model, name, patterns) };
    if (asRecord(modelAPI.status)?.ready !== true) return { verdict: memoryModelAPINotReady(role, name) };
    if (role === 'summarization') summarizationEndpoint = endpointFor('ModelAPI', name, namespace, modelAPI.spec.mode);
  }
  const secret = dependencyNames('MemoryStore', 'connectionSecret', store)[0];
  if (secret === undefined) return { deps: { summarizationEndpoint } };
  const version = reads.secretResourceVersion(namespace, secret);
  if (version !== undefined) return { deps: { summarizationEndpoint, connectionSecretResourceVersion: version } };
  // A Secret marked optional may come later: the pod starts without it, as the kubelet allows.
  if (getIn(store.spec, 'storage', 'external', 'connectionSecretRef', 'optional') === true) return { deps: { summarizationEndpoint } };
  return { verdict: secretUnresolved(secret) };
}

export const reconcileMemoryStore: KindReconciler = reconciler('MemoryStore', async (run) => {
  const { ctx, key } = run;
  const resolution = resolveMemoryStoreDeps(ctx.reads, run.parent);
  if ('verdict' in resolution) {
    // The dependency's creation or status change wakes the store (the kind table's dependencies).
    recordDependencyEvent(run, resolution.verdict);
    await settleStatus(run, { ...resolution.verdict, ...existingChildren(run, endpointFor('MemoryStore', key.name, key.namespace)) });
    return;
  }
  return converge(run, renderMemoryStore(run.parent, resolution.deps, ctx.config));
});
