// HTTPRoute per docs/api.md, "Gateway API routes": only when the gateway is enabled; one rule that strips the
// `/<namespace>/<segment>/<name>` prefix and forwards to the child Service.
import type { GatewayRouteInput, RenderConfig } from './inputs.ts';
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

export function routePath(parent: ParentIdentity): string {
  return `/${parent.namespace}/${ROUTE_SEGMENT[parent.kind]}/${parent.name}`;
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
