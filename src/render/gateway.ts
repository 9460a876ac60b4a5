// HTTPRoute per docs/api.md, "Gateway API routes": only when the gateway is enabled; one rule that strips the
// `/<namespace>/<segment>/<name>` prefix and forwards to the child Service.
import type { WorkloadKind } from '../api/kinds.ts';
import type { AgentDeps, GatewayRouteInput, RenderConfig } from './inputs.ts';
import type { HTTPRoute, HTTPRouteRule } from './k8s.ts';
import { childMeta, type ParentIdentity } from './labels.ts';
import { ROUTE_SEGMENT, routeName } from './names.ts';

/**
 * `0s` means "no timeout block": the gateway's own default applies. Any other spelling of zero
 * (`0ms`, `0m0s`) means the same to a reader, so it is treated alike.
 */
const ZERO_DURATION = /^(0+(h|m|s|ms))+$/;

export function isZeroDuration(duration: string): boolean {
  return ZERO_DURATION.test(duration);
}

/** spec.gatewayRoute.timeout when set (non-empty), else the per-kind default from config. */
export function routeTimeout(parent: ParentIdentity, route: GatewayRouteInput | undefined, config: RenderConfig): string {
  const timeout = route?.timeout;
  if (timeout !== undefined && timeout !== '') return timeout;
  const defaults = config.gateway.defaultTimeouts;
  switch (parent.kind) {
    case 'Agent':
      return defaults.agent;
    case 'ModelAPI':
      return defaults.modelAPI;
    case 'MCPServer':
      return defaults.mcpServer;
    case 'MemoryStore':
      return defaults.memoryStore;
  }
}

export function routePath(parent: Pick<ParentIdentity, 'kind' | 'namespace' | 'name'>): string {
  return `/${parent.namespace}/${ROUTE_SEGMENT[parent.kind]}/${parent.name}`;
}

/** `http://<host>/<namespace>/<segment>/<name>`: an object's address through the gateway. */
export function gatewayURL(host: string, kind: WorkloadKind, namespace: string, name: string): string {
  return `http://${host}${routePath({ kind, namespace, name })}`;
}

/**
 * Gateway routing (docs/api.md, "Gateway routing"): an Agent's dependency URLs — its ModelAPI,
 * MCPServers, peers and MemoryStore — through the gateway at `host`, so that every call passes the
 * routes' SecurityPolicies.
 */
export function routeDepsThroughGateway(deps: AgentDeps, names: { namespace: string; modelAPI: string; memoryStore?: string }, host: string): AgentDeps {
  const { namespace } = names;
  return {
    ...deps,
    modelAPI: { ...deps.modelAPI, endpoint: gatewayURL(host, 'ModelAPI', namespace, names.modelAPI) },
    mcpServers: deps.mcpServers.map((m) => ({ ...m, endpoint: gatewayURL(host, 'MCPServer', namespace, m.name) })),
    peers: deps.peers.map((p) => ({ ...p, endpoint: gatewayURL(host, 'Agent', namespace, p.name) })),
    ...(deps.memoryStore === undefined || names.memoryStore === undefined
      ? {}
      : { memoryStore: { ...deps.memoryStore, endpoint: gatewayURL(host, 'MemoryStore', namespace, names.memoryStore) } }),
  };
}

/** The HTTPRoute for a parent's Service, or undefined when the gateway is disabled. */
export function renderHTTPRoute(
  parent: ParentIdentity,
  service: { readonly name: string; readonly port: number },
  route: GatewayRouteInput | undefined,
  config: RenderConfig,
): HTTPRoute | undefined {
  if (!config.gateway.enabled) return undefined;
  const rule: HTTPRouteRule = {
    matches: [{ path: { type: 'PathPrefix', value: routePath(parent) } }],
    filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } } }],
    backendRefs: [{ name: service.name, port: service.port }],
  };
  const timeout = routeTimeout(parent, route, config);
  if (!isZeroDuration(timeout)) rule.timeouts = { request: timeout };
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: childMeta(parent, routeName(parent.kind, parent.name)),
    spec: {
      parentRefs: [{ name: config.gateway.name, namespace: config.gateway.namespace }],
      rules: [rule],
    },
  };
}
