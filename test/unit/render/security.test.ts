// The per-route policies (docs/api.md, "Per-route SecurityPolicy and NetworkPolicy"), written out
// field by field from the contract: named as the route, the workload's labels, a controller owner.
import t from 'tap';
import { parentIdentity } from '../../../src/render/labels.ts';
import { renderNetworkPolicy, renderSecurityChildren, renderSecurityPolicy, type SecurityInputs } from '../../../src/render/security.ts';
import { extAuthzService, securityInputs } from '../../../src/controller/security-inputs.ts';
import { loadConfig } from '../../../src/config/config.ts';

const INPUTS: SecurityInputs = {
  enabled: true,
  extAuthz: { name: 'kaos-pdp', namespace: 'kaos-system', port: 9191 },
  agentIssuer: { issuer: 'https://kubernetes.default.svc', jwks: { keys: [{ kid: 'k', kty: 'RSA', e: 'AQAB', n: 'x<y' }] } },
  agentAudience: 'kaos-gateway',
  user: { issuer: 'https://idp.example/realms/kaos', jwksUri: 'https://idp.example/realms/kaos/protocol/openid-connect/certs', audience: 'kaos-web' },
  networkPolicies: true,
  egress: false,
  gatewayNamespace: 'envoy-gateway-system',
  operatorNamespace: 'kaos-system',
};
const agent = parentIdentity('Agent', { name: 'helper', namespace: 'team-a', uid: 'u-1' });
const mcp = parentIdentity('MCPServer', { name: 'tools', namespace: 'team-a', uid: 'u-2' });
const modelAPI = parentIdentity('ModelAPI', { name: 'llm', namespace: 'team-a', uid: 'u-3' });
const owner = (kind: string, name: string, uid: string) => [{ apiVersion: 'kaos.tools/v1alpha1', kind, name, uid, controller: true, blockOwnerDeletion: true }];

t.test('SecurityPolicy: targets the HTTPRoute, ext_authz fail closed, the agent and user JWT providers', async (t) => {
  t.same(renderSecurityPolicy(agent, INPUTS), {
    apiVersion: 'gateway.envoyproxy.io/v1alpha1',
    kind: 'SecurityPolicy',
    metadata: { name: 'agent-helper', namespace: 'team-a', labels: { app: 'agent', agent: 'helper', 'app.kubernetes.io/managed-by': 'kaos-operator' }, ownerReferences: owner('Agent', 'helper', 'u-1') },
    spec: {
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'agent-helper' }],
      extAuth: {
        failOpen: false,
        headersToExtAuth: ['authorization', 'x-agent-authorization'],
        grpc: { backendRef: { group: '', kind: 'Service', name: 'kaos-pdp', port: 9191, namespace: 'kaos-system' } },
      },
      jwt: {
        providers: [
          {
            name: 'agent',
            issuer: 'https://kubernetes.default.svc',
            audiences: ['kaos-gateway'],
            extractFrom: { headers: [{ name: 'x-agent-authorization', valuePrefix: 'Bearer ' }] },
            claimToHeaders: [{ claim: 'sub', header: 'x-agent-claim-sub' }],
            localJWKS: { type: 'Inline', inline: '{"keys":[{"e":"AQAB","kid":"k","kty":"RSA","n":"x\\u003cy"}]}' },
          },
          {
            name: 'user',
            issuer: 'https://idp.example/realms/kaos',
            audiences: ['kaos-web'],
            remoteJWKS: { uri: 'https://idp.example/realms/kaos/protocol/openid-connect/certs' },
            claimToHeaders: [
              { claim: 'sub', header: 'x-user-claim-sub' },
              { claim: 'preferred_username', header: 'x-user-claim-username' },
            ],
          },
        ],
      },
    },
  });
  t.equal(renderSecurityPolicy(mcp, INPUTS)?.metadata.name, 'mcp-tools', 'named as the route: mcp-<name>');
  t.same(renderSecurityPolicy(agent, { ...INPUTS, user: undefined, agentIssuer: undefined })?.spec.jwt, undefined, 'no issuer known: no jwt block');
  t.same(renderSecurityPolicy(agent, { ...INPUTS, user: { ...INPUTS.user!, audience: '' } })?.spec.jwt?.providers[1]?.audiences, undefined, 'audiences only when set');
  t.same(renderSecurityPolicy(agent, { ...INPUTS, extAuthz: { name: 'authz', port: 9000 } })?.spec.extAuth?.grpc.backendRef, { group: '', kind: 'Service', name: 'authz', port: 9000 }, 'no namespace: none');
  t.equal(renderSecurityPolicy(agent, { ...INPUTS, enabled: false }), undefined, 'security off: none');
});

t.test('NetworkPolicy: the workload\'s pods, ingress from the gateway\'s and the operator\'s namespaces', async (t) => {
  t.same(renderNetworkPolicy(mcp, INPUTS), {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'mcp-tools', namespace: 'team-a', labels: { app: 'mcpserver', mcpserver: 'tools', 'app.kubernetes.io/managed-by': 'kaos-operator' }, ownerReferences: owner('MCPServer', 'tools', 'u-2') },
    spec: {
      podSelector: { matchLabels: { app: 'mcpserver', mcpserver: 'tools' } },
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'envoy-gateway-system' } } }, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kaos-system' } } }] }],
    },
  });
  t.same(renderNetworkPolicy(mcp, { ...INPUTS, operatorNamespace: 'envoy-gateway-system' })?.spec.ingress, [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'envoy-gateway-system' } } }] }], 'one namespace, once');
  t.equal(renderNetworkPolicy(mcp, { ...INPUTS, networkPolicies: false }), undefined);
});

t.test('NetworkPolicy with egress: DNS in kube-system, the gateway, operator and ext_authz namespaces, and any address for a ModelAPI', async (t) => {
  const ns = (n: string) => ({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': n } } });
  const egress = { ...INPUTS, egress: true, extAuthz: { name: 'authz', namespace: 'authz-ns', port: 9000 } };
  t.same(renderNetworkPolicy(mcp, egress)?.spec.policyTypes, ['Ingress', 'Egress']);
  t.same(renderNetworkPolicy(mcp, egress)?.spec.egress, [
    { to: [ns('kube-system')], ports: [{ protocol: 'UDP', port: 53 }, { protocol: 'TCP', port: 53 }] },
    { to: [ns('envoy-gateway-system')] },
    { to: [ns('kaos-system')] },
    { to: [ns('authz-ns')] },
  ]);
  t.same(renderNetworkPolicy(modelAPI, egress)?.spec.egress?.at(-1), { to: [{ ipBlock: { cidr: '0.0.0.0/0' } }] }, 'a ModelAPI reaches its providers');
});

t.test('an Agent without a Service has no route, so no policy', async (t) => {
  t.same(renderSecurityChildren(agent, false, INPUTS), {});
  t.same(Object.keys(renderSecurityChildren(agent, true, INPUTS)).sort(), ['networkPolicy', 'securityPolicy']);
});

t.test('the inputs from the settings', async (t) => {
  t.same(extAuthzService('kaos-pdp.kaos-system.svc:9191'), { name: 'kaos-pdp', namespace: 'kaos-system', port: 9191 });
  t.same(extAuthzService('authz:9000'), { name: 'authz', port: 9000 });
  t.equal(extAuthzService(''), undefined);
  const pdp = securityInputs(loadConfig({ SECURITY_PDP_ENABLED: 'true', POD_NAMESPACE: 'kaos', SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount' }).security, { issuer: 'i', jwks: { keys: [] } });
  t.same([pdp.enabled, pdp.extAuthz, pdp.agentIssuer?.issuer, pdp.networkPolicies, pdp.user], [true, { name: 'kaos-pdp', namespace: 'kaos', port: 9191 }, 'i', true, undefined], 'the PDP: its Service in the operator namespace');
  const off = securityInputs(loadConfig({}).security, { issuer: 'i', jwks: { keys: [] } });
  t.same([off.enabled, off.networkPolicies, off.agentIssuer], [false, false, undefined], 'security off; no ServiceAccount identity: no agent provider');
  const disabled = securityInputs(loadConfig({ SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: 'authz.sec:9000', SECURITY_NETWORK_POLICY_DISABLED: 'true' }).security, undefined);
  t.same([disabled.enabled, disabled.networkPolicies], [true, false]);
});
