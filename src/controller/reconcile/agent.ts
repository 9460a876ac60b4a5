// Agent (docs/api.md, "Agent reconcile"): resolve the ModelAPI, then each MCPServer in spec order, then
// the peers; render; apply; prune; status. A dependency problem is a status, not an error:
// - missing ModelAPI / MCPServer → Failed (`Failed to resolve …`), retried with backoff, and
//   woken at once when it appears (triggers.ts);
// - not Ready while spec.waitForDependencies (default true) → Waiting (`… is not ready`);
//   woken when its status changes.
// In both cases nothing is applied or pruned: children from an earlier reconcile stay as they
// are, and the status reports them truthfully (their Deployment, the endpoint of their Service);
// one Event says why it waits, when the reason changes (not per retry).
//
// Without waitForDependencies (our choice; docs/api.md, "Agent reconcile"): a missing ModelAPI or MCPServer
// still fails (there is no name to render), while one that exists but is not Ready is used
// right away.
//
// Every endpoint comes from the dependency's own (defaulted) spec, never from its status: the
// name of its Service is fixed (names.ts) and its port follows its spec (a ModelAPI's mode), so
// it is known as soon as the object is in the cache, equal to what its status will say, and
// never stale while a changed dependency has not been reconciled yet. So the arrival of a
// status changes no pod spec, and an Agent of a bulk apply reaches its final pod template with
// one Deployment write (one rollout), not one without its peers and another once they report.
//
// Peers (agentNetwork.access) never block: a missing peer, or one that is not exposed
// (`agentNetwork.expose: false`: it has no Service), is left out and wired in when it appears or
// is exposed (its creation and its spec changes wake this Agent: triggers.ts).
import { asArray, asRecord, asString } from '../../api/json.ts';
import { isModelServed, servedPatterns } from '../../api/model-patterns.ts';
import type { KubeObject } from '../../api/meta.ts';
import { agentExposed, endpointFor, renderAgent, workloadName, type AgentDeps } from '../../render/index.ts';
import {
  mcpServerNotReady,
  mcpServerUnresolved,
  mirrorDeployment,
  modelAPINotReady,
  modelAPIUnresolved,
  modelNotSupported,
  notFoundReason,
  type Outcome,
  type Verdict,
} from '../status.ts';
import { converge, ownedChild } from './children.ts';
import type { KindReconciler, ReconcileReads } from './context.ts';
import { reconciler, regarding, settleStatus, type Run } from './frame.ts';

/** Either everything an Agent's render needs, or why it cannot be rendered yet. */
export type AgentResolution = { deps: AgentDeps } | { verdict: Verdict };

/** Pure over the cache: docs/api.md's resolution ("Agent reconcile") of an Agent's ModelAPI, MCPServers and peers. */
export function resolveAgentDeps(reads: ReconcileReads, namespace: string, spec: unknown): AgentResolution {
  const s = asRecord(spec) ?? {};
  const wait = s.waitForDependencies !== false;

  const modelAPIName = asString(s.modelAPI) ?? '';
  const modelAPI = reads.kaos('ModelAPI', namespace, modelAPIName);
  if (modelAPI === undefined) return { verdict: modelAPIUnresolved(notFoundReason('ModelAPI', modelAPIName)) };
  // docs/api.md, "Newer KAOS shapes": the model the Agent asks for must be served (KAOS's message); the webhook
  // refuses this under Enforce, so only Warn, or a ModelAPI changed since, gets here.
  const model = asString(s.model);
  const patterns = model === undefined || model === '' ? undefined : servedPatterns(modelAPI.spec);
  if (model !== undefined && patterns !== undefined && !isModelServed(patterns, model)) {
    return { verdict: modelNotSupported(model, modelAPIName, patterns) };
  }
  if (wait && !isReady(modelAPI)) return { verdict: modelAPINotReady() };

  const mcpServers: { name: string; endpoint: string }[] = [];
  for (const name of strings(s.mcpServers)) {
    const mcp = reads.kaos('MCPServer', namespace, name);
    if (mcp === undefined) return { verdict: mcpServerUnresolved(name, notFoundReason('MCPServer', name)) };
    if (wait && !isReady(mcp)) return { verdict: mcpServerNotReady(name) };
    mcpServers.push({ name, endpoint: endpointFor('MCPServer', name, namespace) });
  }

  const peers: { name: string; endpoint: string }[] = [];
  for (const name of strings(asRecord(s.agentNetwork)?.access)) {
    const peer = reads.kaos('Agent', namespace, name);
    if (peer !== undefined && agentExposed({ spec: { agentNetwork: asRecord(asRecord(peer.spec)?.agentNetwork) } })) {
      peers.push({ name, endpoint: endpointFor('Agent', name, namespace) });
    }
  }

  const modelSpec = asRecord(modelAPI.spec) ?? {};
  const mode = asString(modelSpec.mode) ?? 'Proxy';
  const ownModel = asString(asRecord(mode === 'Hosted' ? modelSpec.hostedConfig : modelSpec.proxyConfig)?.model);
  return {
    deps: {
      modelAPI: {
        endpoint: endpointFor('ModelAPI', modelAPIName, namespace, mode),
        ...(ownModel === undefined || ownModel === '' ? {} : { model: ownModel }),
      },
      mcpServers,
      peers,
    },
  };
}

export const reconcileAgent: KindReconciler = reconciler('Agent', async (run) => {
  const { ctx, key } = run;
  const linkedResources = { modelapi: asString(asRecord(run.parent.spec)?.modelAPI) ?? '' };
  const resolution = resolveAgentDeps(ctx.reads, key.namespace, run.parent.spec);
  if ('verdict' in resolution) {
    recordDependencyEvent(run, resolution.verdict);
    await settleStatus(run, { ...resolution.verdict, ...existingChildren(run), linkedResources });
    // Failed (missing dependency): back off and look again; its creation also wakes us at once.
    // Waiting: the dependency's status change wakes us, nothing to poll.
    // A model not served (terminal) waits for a change of the Agent or its ModelAPI instead.
    return resolution.verdict.phase === 'Failed' && resolution.verdict.terminal !== true ? { requeue: true } : undefined;
  }
  const rendered = renderAgent(run.parent, resolution.deps, ctx.config);
  // Pending needs no requeue: the Deployment's status change wakes the Agent (child trigger).
  await converge(run, rendered, { linkedResources });
  return undefined;
});

/**
 * One Event when the Agent starts waiting on a dependency, or on another one (so `kubectl describe
 * agent` says why it waits): only when the status' message changes, never for a retry of the
 * same wait. Missing is a Warning (the user may have to act); not ready is Normal (it will pass).
 */
function recordDependencyEvent(run: Run, verdict: Verdict): void {
  if (asString(asRecord(run.parent.status)?.message) === verdict.message) return;
  run.ctx.events.record({
    regarding: regarding(run),
    type: verdict.phase === 'Failed' ? 'Warning' : 'Normal',
    reason: verdict.reason,
    action: 'ResolveDependencies',
    note: verdict.message,
  });
}

/** What the status says of children an earlier reconcile made, while dependencies hold it back. */
function existingChildren(run: Run): Pick<Outcome, 'deployment' | 'endpoint'> {
  const name = workloadName('Agent', run.key.name);
  const deployment = ownedChild(run, 'Deployment', name);
  const service = ownedChild(run, 'Service', name);
  return {
    ...(deployment === undefined ? {} : { deployment: mirrorDeployment(deployment) }),
    ...(service === undefined ? {} : { endpoint: endpointFor('Agent', run.key.name, run.key.namespace) }),
  };
}

function isReady(object: KubeObject): boolean {
  return asRecord(object.status)?.ready === true;
}

function strings(value: unknown): string[] {
  return (asArray(value) ?? []).filter((v): v is string => typeof v === 'string' && v !== '');
}
