import t from 'tap';
import { isZeroDuration, renderHTTPRoute, routePath, routeTimeout } from '../../../src/render/gateway.ts';
import { parentIdentity } from '../../../src/render/labels.ts';
import { config, gatewayConfig } from './helpers.ts';

const agent = parentIdentity('Agent', { name: 'a1', namespace: 'team', uid: 'u1' });

t.test('disabled gateway: no route', async (t) => {
  t.equal(renderHTTPRoute(agent, { name: 'agent-a1', port: 8000 }, undefined, config), undefined);
});

t.test('full HTTPRoute per docs/api.md, "Gateway API routes"', async (t) => {
  t.strictSame(renderHTTPRoute(agent, { name: 'agent-a1', port: 8000 }, undefined, gatewayConfig), {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: {
      name: 'agent-a1',
      namespace: 'team',
      labels: { app: 'agent', agent: 'a1', 'app.kubernetes.io/managed-by': 'kaos-operator' },
      ownerReferences: [
        { apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', name: 'a1', uid: 'u1', controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: {
      parentRefs: [{ name: 'kaos-gateway', namespace: 'gateway-system' }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/team/agent/a1' } }],
          filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } } }],
          backendRefs: [{ name: 'agent-a1', port: 8000 }],
          timeouts: { request: '120s' },
        },
      ],
    },
  });
});

t.test('paths and default timeouts per kind', async (t) => {
  const m = parentIdentity('ModelAPI', { name: 'm', namespace: 'n' });
  const x = parentIdentity('MCPServer', { name: 'x', namespace: 'n' });
  t.equal(routePath(m), '/n/modelapi/m');
  t.equal(routePath(x), '/n/mcp/x');
  t.equal(routeTimeout(agent, undefined, gatewayConfig), '120s');
  t.equal(routeTimeout(m, {}, gatewayConfig), '120s');
  t.equal(routeTimeout(x, { timeout: '' }, gatewayConfig), '30s');
  const tuned = {
    ...gatewayConfig,
    gateway: { ...gatewayConfig.gateway, defaultTimeouts: { agent: '10m', modelAPI: '5m', mcpServer: '1m', memoryStore: '90s' } },
  };
  t.equal(routeTimeout(agent, undefined, tuned), '10m');
  t.equal(routeTimeout(m, undefined, tuned), '5m');
  t.equal(routeTimeout(x, undefined, tuned), '1m');
  t.equal(routeTimeout(x, { timeout: '45s' }, tuned), '45s', 'spec wins');
  const store = parentIdentity('MemoryStore', { name: 's', namespace: 'n' });
  t.equal(routePath(store), '/n/memorystore/s');
  t.equal(routeTimeout(store, undefined, gatewayConfig), '60s', 'GATEWAY_DEFAULT_MEMORYSTORE_TIMEOUT');
  t.equal(routeTimeout(store, undefined, tuned), '90s');
});

t.test('0s (and any zero spelling) means no timeouts block', async (t) => {
  for (const timeout of ['0s', '0ms', '0m0s', '00s']) {
    const r = renderHTTPRoute(agent, { name: 'agent-a1', port: 8000 }, { timeout }, gatewayConfig);
    t.notOk('timeouts' in (r?.spec.rules[0] ?? {}), timeout);
  }
  t.notOk(isZeroDuration('10s'));
  t.notOk(isZeroDuration('1m0s'));
  const zeroDefault = { ...gatewayConfig, gateway: { ...gatewayConfig.gateway, defaultTimeouts: { agent: '0s', modelAPI: '0s', mcpServer: '0s', memoryStore: '0s' } } };
  t.notOk('timeouts' in (renderHTTPRoute(agent, { name: 'agent-a1', port: 8000 }, undefined, zeroDefault)?.spec.rules[0] ?? {}));
  t.strictSame(renderHTTPRoute(agent, { name: 'agent-a1', port: 8000 }, { timeout: '1h30m' }, gatewayConfig)?.spec.rules[0]?.timeouts, {
    request: '1h30m',
  });
});
