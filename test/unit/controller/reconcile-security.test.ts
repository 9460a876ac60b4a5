// With security enabled (docs/api.md, "Per-route SecurityPolicy and NetworkPolicy"): each workload
// with a Service gets its NetworkPolicy and SecurityPolicy, the GatewayAuthorization condition
// says whether its route is guarded, and the HTTPRoute is withheld while it is not (fail closed).
import t from 'tap';
import { loadConfig } from '../../../src/config/config.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import { MemoryReconcileContext } from '../../support/memory-reconcile-context.ts';
import { deploymentStatus, reconcile, statusOf } from './reconcile-helpers.ts';

const NS = 'team-a';
const GATEWAY = { GATEWAY_API_ENABLED: 'true', GATEWAY_NAME: 'gw', GATEWAY_NAMESPACE: 'gw-system' };
const SECURE = loadConfig({ ...GATEWAY, SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: 'authz.authz-system:9000', SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount' });

function setup(config = SECURE) {
  const ctx = new MemoryReconcileContext({ config });
  ctx.serviceAccountIssuer = { issuer: 'https://kubernetes.default.svc', jwks: { keys: [] } };
  ctx.putKaos({ apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'llm', namespace: NS }, spec: { mode: 'Hosted', hostedConfig: { model: 'x' }, container: { image: 'ollama:1' } } });
  return ctx;
}

const gatewayCondition = (ctx: MemoryReconcileContext, kind: 'ModelAPI' | 'Agent' = 'ModelAPI', name = 'llm') =>
  (statusOf(ctx, kind, NS, name).conditions as Record<string, unknown>[] | undefined)?.find((c) => c.type === 'GatewayAuthorization');
const kinds = (ctx: MemoryReconcileContext) => ctx.requests.map((r) => `${r.verb} ${r.target.split('/')[0]}`);

t.test("without Envoy Gateway's CRD: the NetworkPolicy, no route, and CRDNotInstalled", async (t) => {
  const ctx = setup();
  await reconcile(ctx, 'ModelAPI', NS, 'llm');
  t.same(kinds(ctx), ['apply NetworkPolicy', 'apply Deployment', 'apply Service', 'status ModelAPI']);
  t.match(gatewayCondition(ctx), {
    status: 'False',
    reason: 'CRDNotInstalled',
    message: "SecurityPolicy (gateway.envoyproxy.io/v1alpha1) is not installed: install Envoy Gateway's CRDs to enforce gateway authorization",
  });
  t.match(statusOf(ctx, 'ModelAPI', NS, 'llm'), { phase: 'Pending' }, 'Ready is untouched by it');
});

t.test('once the CRD is served: the SecurityPolicy before the route, and Applied; idle afterwards', async (t) => {
  const ctx = setup();
  await reconcile(ctx, 'ModelAPI', NS, 'llm');
  ctx.clearRecords();
  ctx.securityPoliciesServed = true;
  await reconcile(ctx, 'ModelAPI', NS, 'llm');
  t.same(kinds(ctx), ['apply SecurityPolicy', 'apply HTTPRoute', 'status ModelAPI']);
  t.match(gatewayCondition(ctx), { status: 'True', reason: 'Applied' });
  t.match(ctx.child('SecurityPolicy', NS, 'modelapi-llm'), { spec: { targetRefs: [{ kind: 'HTTPRoute', name: 'modelapi-llm' }], extAuth: { grpc: { backendRef: { name: 'authz', namespace: 'authz-system', port: 9000 } } } } });
  ctx.clearRecords();
  await reconcile(ctx, 'ModelAPI', NS, 'llm');
  t.same(ctx.requests, [], 'a converged object writes nothing');
  ctx.setDeploymentStatus(NS, 'modelapi-llm', deploymentStatus(1));
  await reconcile(ctx, 'ModelAPI', NS, 'llm');
  t.match(statusOf(ctx, 'ModelAPI', NS, 'llm'), { phase: 'Ready' });
  t.match(gatewayCondition(ctx), { status: 'True', reason: 'Applied' });
});

t.test('a SecurityPolicy the API server refuses: ApplyFailed with its error, the route withheld (pruned), retried', async (t) => {
  const ctx = setup();
  ctx.securityPoliciesServed = true;
  await reconcile(ctx, 'ModelAPI', NS, 'llm');
  t.ok(ctx.child('HTTPRoute', NS, 'modelapi-llm'), 'routed while guarded');
  ctx.clearRecords();
  ctx.updateKaos('ModelAPI', NS, 'llm', (o) => {
    (o.spec as { gatewayRoute?: unknown }).gatewayRoute = { timeout: '10s' };
  });
  ctx.failWith = (r) => (r.verb === 'apply' && r.target.startsWith('SecurityPolicy/') ? new ApiError(422, 'Invalid', 'SecurityPolicy.gateway.envoyproxy.io "modelapi-llm" is invalid: spec: Invalid value') : undefined);
  // The SecurityPolicy changes too: it is applied again and refused.
  ctx.serviceAccountIssuer = { issuer: 'https://rotated', jwks: { keys: [] } };
  const result = await reconcile(ctx, 'ModelAPI', NS, 'llm');
  t.same(result, { requeue: true });
  t.match(gatewayCondition(ctx), { status: 'False', reason: 'ApplyFailed', message: 'Failed to apply SecurityPolicy modelapi-llm: SecurityPolicy.gateway.envoyproxy.io "modelapi-llm" is invalid: spec: Invalid value' });
  t.equal(ctx.child('HTTPRoute', NS, 'modelapi-llm'), undefined, 'the route is withheld');
  t.ok(ctx.child('SecurityPolicy', NS, 'modelapi-llm'), 'the policy it had stays');
  ctx.failWith = undefined;
  await reconcile(ctx, 'ModelAPI', NS, 'llm');
  t.match(gatewayCondition(ctx), { status: 'True', reason: 'Applied' });
  t.ok(ctx.child('HTTPRoute', NS, 'modelapi-llm'), 'routed again');
});

t.test('security switched off: the policies go and so does the condition', async (t) => {
  const ctx = setup();
  ctx.securityPoliciesServed = true;
  await reconcile(ctx, 'ModelAPI', NS, 'llm');
  ctx.config = loadConfig(GATEWAY);
  ctx.clearRecords();
  await reconcile(ctx, 'ModelAPI', NS, 'llm');
  t.same(kinds(ctx).sort(), ['delete NetworkPolicy', 'delete SecurityPolicy', 'status ModelAPI']);
  t.equal(gatewayCondition(ctx), undefined);
  t.ok(ctx.child('HTTPRoute', NS, 'modelapi-llm'));
});

t.test('an Agent: exposed, it is guarded; not exposed, it has nothing to guard; waiting, it keeps what it had', async (t) => {
  const ctx = setup();
  ctx.securityPoliciesServed = true;
  await reconcile(ctx, 'ModelAPI', NS, 'llm');
  ctx.setDeploymentStatus(NS, 'modelapi-llm', deploymentStatus(1));
  await reconcile(ctx, 'ModelAPI', NS, 'llm');
  ctx.putKaos({ apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name: 'a', namespace: NS }, spec: { modelAPI: 'llm', container: { image: 'agent:1' } } });
  await reconcile(ctx, 'Agent', NS, 'a');
  t.match(gatewayCondition(ctx, 'Agent', 'a'), { status: 'True', reason: 'Applied' });
  t.ok(ctx.child('SecurityPolicy', NS, 'agent-a'));
  t.ok(ctx.child('NetworkPolicy', NS, 'agent-a'));
  ctx.updateKaos('ModelAPI', NS, 'llm', (o) => {
    o.status = { ...(o.status as object), ready: false, phase: 'Pending' };
  });
  await reconcile(ctx, 'Agent', NS, 'a');
  t.match(statusOf(ctx, 'Agent', NS, 'a'), { phase: 'Waiting' });
  t.match(gatewayCondition(ctx, 'Agent', 'a'), { status: 'True', reason: 'Applied' }, 'kept while nothing is applied');
  ctx.updateKaos('ModelAPI', NS, 'llm', (o) => {
    o.status = { ...(o.status as object), ready: true, phase: 'Ready' };
  });
  ctx.updateKaos('Agent', NS, 'a', (o) => {
    (o.spec as { agentNetwork?: unknown }).agentNetwork = { expose: false };
  });
  await reconcile(ctx, 'Agent', NS, 'a');
  t.equal(ctx.child('SecurityPolicy', NS, 'agent-a'), undefined);
  t.equal(ctx.child('NetworkPolicy', NS, 'agent-a'), undefined);
  t.equal(gatewayCondition(ctx, 'Agent', 'a'), undefined, 'no route, no condition');
});

t.test('gateway routing: an Agent\'s dependency URLs through SECURITY_GATEWAY_HOST, else the Gateway\'s address, else direct', async (t) => {
  const env = (ctx: MemoryReconcileContext) => {
    const spec = ctx.child('Deployment', NS, 'agent-a')?.spec as { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } };
    return Object.fromEntries((spec.template.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
  };
  const agent = (ctx: MemoryReconcileContext) => {
    ctx.updateKaos('ModelAPI', NS, 'llm', (o) => {
      o.status = { ready: true, phase: 'Ready' };
    });
    ctx.putKaos({ apiVersion: 'kaos.tools/v1alpha1', kind: 'MCPServer', metadata: { name: 'tools', namespace: NS }, spec: { type: 'python-runtime', config: { tools: { fromPackage: 'x' } } }, status: { ready: true, phase: 'Ready' } });
    ctx.putKaos({ apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name: 'a', namespace: NS }, spec: { modelAPI: 'llm', mcpServers: ['tools'], container: { image: 'agent:1' } } });
  };
  const routed = setup(loadConfig({ ...GATEWAY, SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: 'authz:9000', SECURITY_GATEWAY_ROUTING_ENABLED: 'true', SECURITY_GATEWAY_HOST: '172.18.0.4:80' }));
  agent(routed);
  await reconcile(routed, 'Agent', NS, 'a');
  t.match(env(routed), { MODEL_API_URL: 'http://172.18.0.4:80/team-a/modelapi/llm', 'MCP_SERVER_tools_URL': 'http://172.18.0.4:80/team-a/mcp/tools' });
  const byStatus = setup(loadConfig({ ...GATEWAY, SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: 'authz:9000', SECURITY_STRICT_GATEWAY_API_ENABLED: 'true' }));
  byStatus.gatewayAddress = '10.0.0.7';
  agent(byStatus);
  await reconcile(byStatus, 'Agent', NS, 'a');
  t.equal(env(byStatus).MODEL_API_URL, 'http://10.0.0.7/team-a/modelapi/llm', 'strict routes too; the Gateway\'s status address');
  const direct = setup(loadConfig({ ...GATEWAY, SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: 'authz:9000', SECURITY_GATEWAY_ROUTING_ENABLED: 'true' }));
  agent(direct);
  await reconcile(direct, 'Agent', NS, 'a');
  t.equal(env(direct).MODEL_API_URL, 'http://modelapi-llm.team-a.svc.cluster.local:11434', 'no host known: unchanged');
  const off = setup(loadConfig({ ...GATEWAY, SECURITY_GATEWAY_ROUTING_ENABLED: 'true', SECURITY_GATEWAY_HOST: 'gw:80' }));
  agent(off);
  await reconcile(off, 'Agent', NS, 'a');
  t.equal(env(off).MODEL_API_URL, 'http://modelapi-llm.team-a.svc.cluster.local:11434', 'security disabled: unchanged');
});

t.test("the user plane: the policy's user provider names the discovered keys' URI; before discovery the policy is held and the route withheld", async (t) => {
  const issuer = 'https://idp.example/tenant-1/v2.0';
  const ctx = setup(loadConfig({ ...GATEWAY, SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: 'authz.authz-system:9000', SECURITY_USER_AUTH_ISSUER: issuer, SECURITY_USER_AUTH_AUDIENCE: 'web' }));
  ctx.securityPoliciesServed = true;
  await reconcile(ctx, 'ModelAPI', NS, 'llm');
  t.same(kinds(ctx), ['apply NetworkPolicy', 'apply Deployment', 'apply Service', 'status ModelAPI'], 'no policy, no route');
  t.match(gatewayCondition(ctx), {
    status: 'False',
    reason: 'UserIssuerNotDiscovered',
    message: "The user issuer's OIDC discovery (https://idp.example/tenant-1/v2.0/.well-known/openid-configuration) has not answered yet: the SecurityPolicy's user provider needs its jwks_uri",
  });
  ctx.clearRecords();
  ctx.userJwksUri = 'https://keys.idp.example/tenant-1/discovery/v2.0/keys';
  await reconcile(ctx, 'ModelAPI', NS, 'llm');
  t.same(kinds(ctx), ['apply SecurityPolicy', 'apply HTTPRoute', 'status ModelAPI']);
  t.match(gatewayCondition(ctx), { status: 'True', reason: 'Applied' });
  t.same((ctx.child('SecurityPolicy', NS, 'modelapi-llm') as { spec: { jwt: { providers: unknown[] } } }).spec.jwt.providers, [{
    name: 'user',
    issuer,
    audiences: ['web'],
    remoteJWKS: { uri: 'https://keys.idp.example/tenant-1/discovery/v2.0/keys' },
    claimToHeaders: [{ claim: 'sub', header: 'x-user-claim-sub' }, { claim: 'preferred_username', header: 'x-user-claim-username' }],
  }], 'the discovered URI, not <issuer>/protocol/openid-connect/certs');
});

t.test('SECURITY_USER_AUTH_JWKS_URI: the user provider names it, with no discovery needed', async (t) => {
  const ctx = setup(loadConfig({ ...GATEWAY, SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: 'authz.authz-system:9000', SECURITY_USER_AUTH_ISSUER: 'https://idp.example', SECURITY_USER_AUTH_JWKS_URI: 'https://mirror.example/keys' }));
  ctx.securityPoliciesServed = true;
  ctx.userJwksUri = 'https://discovered.example/keys';
  await reconcile(ctx, 'ModelAPI', NS, 'llm');
  t.match(gatewayCondition(ctx), { status: 'True', reason: 'Applied' });
  t.match(ctx.child('SecurityPolicy', NS, 'modelapi-llm'), { spec: { jwt: { providers: [{ name: 'user', remoteJWKS: { uri: 'https://mirror.example/keys' } }] } } });
});
