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
// MemoryStore (docs/api.md, "Agent remote memory"): awaited only at first creation; a running Agent
// is never blocked by it, and the MemoryDegraded condition says when it serves without it.
//
// Peers (agentNetwork.access) never block: a missing peer, or one that is not exposed
// (`agentNetwork.expose: false`: it has no Service), is left out and wired in when it appears or
// is exposed (its creation and its spec changes wake this Agent: triggers.ts).
//
// A harness (docs/api.md, "Agent harness"), once the dependencies resolve: its runtime from the
// registry the cache watches, never read here from the API server. A runtime that does not resolve
// is Failed with KAOS's message and terminal (the registry's change wakes the Agent), and the
// Deployment stays as an earlier reconcile left it. The Agent's ServiceAccount is applied either
// way: its identity depends on nothing it names (KAOS creates it before its harness step).
import { harnessFailure, resolveHarness } from '../../api/harness-runtimes.ts';
import { asArray, asRecord, asString, getIn } from '../../api/json.ts';
import { ceilingExceeded, storeCeiling, userScopeRefused, type ReadScopePosture } from '../../api/memory-rules.ts';
import { userIdentityEnforced } from '../../config/security.ts';
import { isModelServed, servedPatterns } from '../../api/model-patterns.ts';
import { memoryShapeOf } from '../../api/shapes.ts';
import type { KubeObject } from '../../api/meta.ts';
import { agentExposed, endpointFor, renderAgent, renderAgentBeforeDependencies, workloadName, type AgentDeps } from '../../render/index.ts';
import { routeDepsThroughGateway } from '../../render/gateway.ts';
import { gatewayRoutingEnabled, securityEnabled, type SecurityConfig } from '../../config/security.ts';
import {
  harnessRuntimeUnresolved,
  invalidMemoryReadScope,
  mcpServerNotReady,
  mcpServerUnresolved,
  memoryDegraded,
  memoryStoreNotFound,
  memoryStoreNotReady,
  modelAPINotReady,
  modelAPIUnresolved,
  modelNotSupported,
  notFoundReason,
  type ExtraCondition,
  type Verdict,
} from '../status.ts';
import { applyBeforeDependencies, converge, existingChildren, ownedChild } from './children.ts';
import type { KindReconciler, ReconcileReads } from './context.ts';
import { reconciler, recordDependencyEvent, regarding, settleStatus, type Run } from './frame.ts';

/** Either everything an Agent's render needs, or why it cannot be rendered yet. */
export type AgentResolution = { deps: AgentDeps } | { verdict: Verdict };

/**
 * Pure over the cache: docs/api.md's resolution ("Agent reconcile") of an Agent's ModelAPI,
 * MCPServers, MemoryStore, peers and harness runtime. `firstCreation`: the Agent has no Deployment yet, so with
 * waitForDependencies it waits for its MemoryStore too; a running Agent never does (docs/api.md,
 * "Agent remote memory": it serves with short-term memory only, and MemoryDegraded says so).
 */
export function resolveAgentDeps(
  reads: ReconcileReads,
  namespace: string,
  spec: unknown,
  firstCreation = true,
  posture: ReadScopePosture = { userIdentity: false },
): AgentResolution {
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

  // The Agent's own `user` read scope needs a user identity (KAOS's message); one it would inherit
  // from its store is not judged.
  const userScope = userScopeRefused(getIn(spec, 'config', 'memory', 'maxReadScope'), posture);
  if (userScope !== undefined) return { verdict: invalidMemoryReadScope(userScope) };

  // The MemoryStore: its endpoint follows from its name, so its readiness changes no pod spec.
  let memoryStore: AgentDeps['memoryStore'];
  const storeName = boundStore(spec);
  if (storeName !== undefined) {
    const store = reads.kaos('MemoryStore', namespace, storeName);
    if (store !== undefined) {
      const exceeded = ceilingExceeded(getIn(spec, 'config', 'memory', 'maxReadScope'), storeName, store.spec);
      if (exceeded !== undefined) return { verdict: invalidMemoryReadScope(exceeded) };
      memoryStore = { endpoint: endpointFor('MemoryStore', storeName, namespace), maxReadScope: storeCeiling(store.spec) };
    }
    if (wait && firstCreation && store === undefined) return { verdict: memoryStoreNotFound(storeName) };
    if (wait && firstCreation && store !== undefined && !isReady(store)) return { verdict: memoryStoreNotReady(storeName) };
  }

  const peers: { name: string; endpoint: string }[] = [];
  for (const name of strings(asRecord(s.agentNetwork)?.access)) {
    const peer = reads.kaos('Agent', namespace, name);
    if (peer !== undefined && agentExposed({ spec: { agentNetwork: asRecord(asRecord(peer.spec)?.agentNetwork) } })) {
      peers.push({ name, endpoint: endpointFor('Agent', name, namespace) });
    }
  }

  let harness: AgentDeps['harness'];
  const runtime = asString(getIn(spec, 'harness', 'runtime'));
  if (runtime !== undefined) {
    const resolved = resolveHarness(reads.harnessRuntimes(), runtime, asString(getIn(spec, 'container', 'image')));
    if (resolved.kind !== 'resolved') return { verdict: harnessRuntimeUnresolved(harnessFailure(runtime, resolved)) };
    harness = { image: resolved.image, driver: resolved.driver };
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
      ...(memoryStore === undefined ? {} : { memoryStore }),
      ...(harness === undefined ? {} : { harness }),
    },
  };
}

/**
 * The gateway's host when an Agent's dependency URLs go through it (docs/api.md, "Gateway
 * routing": security enabled and routing or strict on): SECURITY_GATEWAY_HOST, else the Gateway's
 * status address; undefined otherwise (the URLs stay direct).
 */
export function gatewayRoutingHost(security: SecurityConfig, reads: Pick<ReconcileReads, 'gatewayAddress'>): string | undefined {
  if (!securityEnabled(security) || !gatewayRoutingEnabled(security)) return undefined;
  return security.gatewayHost !== '' ? security.gatewayHost : reads.gatewayAddress();
}

/** The MemoryStore the Agent's memory binds to, if any. */
function boundStore(spec: unknown): string | undefined {
  const store = asString(getIn(spec, 'config', 'memory', 'memoryStore'));
  return store === undefined || store === '' ? undefined : store;
}

/**
 * The MemoryDegraded condition of an Agent whose memory block is in KAOS's newest form (docs/api.md,
 * "Agent remote memory"); none otherwise, so Agents without remote memory keep the status they had.
 */
export function memoryCondition(reads: ReconcileReads, namespace: string, spec: unknown): ExtraCondition[] {
  const memory = getIn(spec, 'config', 'memory');
  if (memory === undefined || memoryShapeOf(memory) !== 'new') return [];
  const store = boundStore(spec);
  if (store === undefined) return [memoryDegraded(undefined, undefined)];
  const object = reads.kaos('MemoryStore', namespace, store);
  return [memoryDegraded(store, object === undefined ? 'missing' : isReady(object) ? undefined : 'not-ready')];
}

export const reconcileAgent: KindReconciler = reconciler('Agent', async (run) => {
  const { ctx, key } = run;
  const store = boundStore(run.parent.spec);
  const linkedResources = { modelapi: asString(asRecord(run.parent.spec)?.modelAPI) ?? '', ...(store === undefined ? {} : { memorystore: store }) };
  const extraConditions = memoryCondition(ctx.reads, key.namespace, run.parent.spec);
  const firstCreation = ownedChild(run, 'Deployment', workloadName('Agent', key.name)) === undefined;
  if (!firstCreation) recordMemoryEvent(run, extraConditions);
  const resolution = resolveAgentDeps(ctx.reads, key.namespace, run.parent.spec, firstCreation, { userIdentity: userIdentityEnforced(ctx.config.security) });
  if ('verdict' in resolution) {
    // The Agent's identity waits on nothing it names (the kind table's beforeDependencies).
    await applyBeforeDependencies(run, renderAgentBeforeDependencies(run.parent, ctx.config));
    recordDependencyEvent(run, resolution.verdict);
    const endpoint = endpointFor('Agent', key.name, key.namespace);
    await settleStatus(run, { ...resolution.verdict, ...existingChildren(run, endpoint), linkedResources, extraConditions });
    // Failed (missing dependency): back off and look again; its creation also wakes us at once.
    // Waiting: the dependency's status change wakes us, nothing to poll.
    // A model not served, a scope above the ceiling or a harness runtime that does not resolve
    // (terminal) waits for a change of the Agent or of what it names (the registry) instead.
    return resolution.verdict.phase === 'Failed' && resolution.verdict.terminal !== true ? { requeue: true } : undefined;
  }
  const host = gatewayRoutingHost(ctx.config.security, ctx.reads);
  const deps = host === undefined
    ? resolution.deps
    : routeDepsThroughGateway(resolution.deps, { namespace: key.namespace, modelAPI: asString(asRecord(run.parent.spec)?.modelAPI) ?? '', ...(store === undefined ? {} : { memoryStore: store }) }, host);
  const rendered = renderAgent(run.parent, deps, ctx.config);
  // Pending needs no requeue: the Deployment's status change wakes the Agent (child trigger).
  return converge(run, rendered, { linkedResources, extraConditions });
});

/**
 * One Event when a running Agent's remote memory degrades (Warning: it serves with short-term
 * memory only) or recovers (Normal), on a change of MemoryDegraded's status, never for the same
 * state again. While the Agent is first created its wait is the dependency Event's to tell.
 */
function recordMemoryEvent(run: Run, conditions: readonly ExtraCondition[]): void {
  const now = conditions.find((c) => c.type === 'MemoryDegraded');
  if (now === undefined) return;
  const previous = (asArray(asRecord(run.parent.status)?.conditions) ?? []).map(asRecord).find((c) => c?.type === 'MemoryDegraded');
  if (previous === undefined || previous.status === now.status) return;
  run.ctx.events.record({
    regarding: regarding(run),
    type: now.status === 'True' ? 'Warning' : 'Normal',
    reason: now.status === 'True' ? 'MemoryDegraded' : 'MemoryRecovered',
    action: 'ResolveDependencies',
    note: now.status === 'True' ? `${now.message}: serving with short-term memory only` : now.message,
  });
}

function isReady(object: KubeObject): boolean {
  return asRecord(object.status)?.ready === true;
}

function strings(value: unknown): string[] {
  return (asArray(value) ?? []).filter((v): v is string => typeof v === 'string' && v !== '');
}
