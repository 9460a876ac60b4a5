// The security plane's settings (docs/api.md, "Security settings"): KAOS's names and
// defaults, the facts derived from them as KAOS derives them, the refusals that stop the operator
// at start, and the settings it ignores with a warning.
import t from 'tap';
import { ConfigError, loadConfig } from '../../../src/config/config.ts';
import {
  accessGrantProjectionActive,
  extAuthzAddress,
  gatewayRoutingEnabled,
  goParseBool,
  networkPoliciesEnabled,
  networkPolicyEgressEnabled,
  securityEnabled,
  securityWarnings,
  serviceAccountIdentity,
  tokenDirectory,
  tokenFileName,
  userPlaneEnabled,
} from '../../../src/config/security.ts';

const security = (env: Record<string, string>) => loadConfig(env).security;
const problems = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
};

t.test('defaults: KAOS\'s, and nothing of the security plane on', async (t) => {
  const s = security({});
  t.same(s.serviceAccount, { audience: 'kaos-gateway', expirationSeconds: 3600, tokenPath: '/var/run/secrets/kaos-agent/token', issuer: '' });
  t.equal(s.identityProvider, undefined, 'unset: no identity provider');
  t.equal(s.operatorNamespace, 'kaos-system');
  t.equal(s.gatewayNamespace, 'envoy-gateway-system');
  t.equal(s.authorization.policyDataSource, 'automated');
  t.equal(s.jwksRefreshIntervalSeconds, 600, '10m');
  t.same(s.projection, { policyConfigMap: { name: '', namespace: '' }, namespaces: [] });
  t.notOk(securityEnabled(s), 'security off');
  t.notOk(userPlaneEnabled(s), 'user plane off');
  t.notOk(serviceAccountIdentity(s), 'no ServiceAccount identity');
  t.notOk(accessGrantProjectionActive(s), 'projection inactive');
  t.equal(extAuthzAddress(s), '');
  t.notOk(networkPoliciesEnabled(s));
  t.notOk(gatewayRoutingEnabled(s));
});

t.test('ServiceAccount identity: the provider alone decides, security enabled or not, in any case', async (t) => {
  t.ok(serviceAccountIdentity(security({ SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount' })));
  t.ok(serviceAccountIdentity(security({ SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: ' ServiceAccount ' })), 'trimmed, any case, as KAOS reads it');
  t.notOk(securityEnabled(security({ SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount' })), 'identity does not enable security');
  t.notOk(serviceAccountIdentity(security({ SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: '' })), 'empty: none');
});

t.test('security enabled: the PDP, or an ext_authz backend', async (t) => {
  const pdp = security({ SECURITY_PDP_ENABLED: 'true', POD_NAMESPACE: 'ops' });
  t.ok(securityEnabled(pdp));
  t.equal(extAuthzAddress(pdp), 'kaos-pdp.ops.svc:9191', 'the PDP in the operator namespace (POD_NAMESPACE)');
  t.equal(extAuthzAddress(security({ SECURITY_PDP_ENABLED: '1', SECURITY_OPERATOR_NAMESPACE: 'sec', POD_NAMESPACE: 'ops' })), 'kaos-pdp.sec.svc:9191', 'SECURITY_OPERATOR_NAMESPACE first');
  const url = security({ SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: ' authz.team:9000 ', SECURITY_PDP_ENABLED: 'true' });
  t.ok(securityEnabled(url));
  t.equal(extAuthzAddress(url), 'authz.team:9000', 'a named backend wins over the PDP');
  t.ok(securityEnabled(security({ SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: 'authz:9000' })), 'a bare Service name');
  t.notOk(securityEnabled(security({ SECURITY_PDP_ENABLED: 'yes' })), '"yes" is no Go boolean: false');
});

t.test('booleans read as Go\'s strconv.ParseBool, else false', async (t) => {
  for (const v of ['1', 't', 'T', 'TRUE', 'true', 'True', ' true ']) t.ok(goParseBool(v), JSON.stringify(v));
  for (const v of ['0', 'f', 'false', 'yes', 'on', 'tRuE', '', undefined]) t.notOk(goParseBool(v), JSON.stringify(v));
  const s = security({ SECURITY_NETWORK_POLICY_DISABLED: 'T', SECURITY_NETWORK_POLICY_EGRESS_ENABLED: '1', SECURITY_GATEWAY_ROUTING_ENABLED: 'True', SECURITY_STRICT_GATEWAY_API_ENABLED: 'TRUE', SECURITY_AUTHORIZATION_POLICY_REGO_OVERRIDE: 't' });
  t.same([s.networkPolicy.disabled, s.networkPolicy.egress, s.gatewayRouting, s.strictGatewayApi, s.authorization.policyRegoOverride], [true, true, true, true, true]);
});

t.test('user plane: a user issuer; no JWKS URI unless given (discovery names it: controller/user-issuer.ts), never Keycloak\'s path', async (t) => {
  const s = security({ SECURITY_USER_AUTH_ISSUER: 'https://keycloak.example/realms/kaos/', SECURITY_USER_AUTH_AUDIENCE: 'kaos' });
  t.ok(userPlaneEnabled(s));
  t.same(s.userAuth, { issuer: 'https://keycloak.example/realms/kaos/', audience: 'kaos', jwksUri: '' });
  t.equal(security({ SECURITY_USER_AUTH_ISSUER: 'https://idp', SECURITY_USER_AUTH_JWKS_URI: 'https://idp/keys' }).userAuth.jwksUri, 'https://idp/keys');
  t.equal(security({ SECURITY_USER_AUTH_JWKS_URI: 'https://idp/keys' }).userAuth.jwksUri, 'https://idp/keys', 'given without an issuer: kept, the user plane stays off');
});

t.test('AccessGrant projection: both ConfigMap names, automated data, no rego override', async (t) => {
  const named = { AUTHZ_POLICY_CONFIGMAP_NAME: 'kaos-authz-policy', AUTHZ_POLICY_CONFIGMAP_NAMESPACE: 'kaos-system' };
  t.ok(accessGrantProjectionActive(security(named)));
  t.ok(accessGrantProjectionActive(security({ ...named, SECURITY_AUTHORIZATION_POLICY_DATA_SOURCE: 'Automated' })), 'any case');
  t.notOk(accessGrantProjectionActive(security({ AUTHZ_POLICY_CONFIGMAP_NAME: 'kaos-authz-policy' })), 'no namespace');
  t.notOk(accessGrantProjectionActive(security({ AUTHZ_POLICY_CONFIGMAP_NAMESPACE: 'kaos-system' })), 'no name');
  t.notOk(accessGrantProjectionActive(security({ ...named, SECURITY_AUTHORIZATION_POLICY_DATA_SOURCE: 'manual' })), 'manual data');
  t.notOk(accessGrantProjectionActive(security({ ...named, SECURITY_AUTHORIZATION_POLICY_REGO_OVERRIDE: 'true' })), 'rego override');
  t.same(security({ AUTHZ_PROJECTION_NAMESPACES: 'team-a, team-b,,team-a' }).projection.namespaces, ['team-a', 'team-b']);
  t.same(security({ AUTHZ_POLICY_REGO_FROM: 'my-policy/policy.rego' }).authorization.policyRegoFrom, { name: 'my-policy', key: 'policy.rego' });
});

t.test('network policies and routing as KAOS derives them', async (t) => {
  t.ok(networkPoliciesEnabled(security({ SECURITY_PDP_ENABLED: 'true' })), 'security enabled');
  t.notOk(networkPoliciesEnabled(security({ SECURITY_PDP_ENABLED: 'true', SECURITY_NETWORK_POLICY_DISABLED: 'true' })), 'switched off');
  t.ok(networkPoliciesEnabled(security({ SECURITY_STRICT_GATEWAY_API_ENABLED: 'true', SECURITY_NETWORK_POLICY_DISABLED: 'true' })), 'strict, whatever else');
  t.notOk(networkPolicyEgressEnabled(security({ SECURITY_NETWORK_POLICY_EGRESS_ENABLED: 'true' })), 'egress only with policies');
  t.ok(networkPolicyEgressEnabled(security({ SECURITY_PDP_ENABLED: 'true', SECURITY_NETWORK_POLICY_EGRESS_ENABLED: 'true' })));
  t.ok(gatewayRoutingEnabled(security({ SECURITY_STRICT_GATEWAY_API_ENABLED: 'true' })), 'strict routes through the gateway');
  t.ok(gatewayRoutingEnabled(security({ SECURITY_GATEWAY_ROUTING_ENABLED: 'true' })));
});

t.test('the token: its directory is mounted, its file name projected', async (t) => {
  const s = security({ SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_TOKEN_PATH: '/var/run/agent/identity/jwt', SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_EXPIRATION_SECONDS: '600', SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_AUDIENCE: 'gw' });
  t.same([tokenDirectory(s.serviceAccount.tokenPath), tokenFileName(s.serviceAccount.tokenPath)], ['/var/run/agent/identity', 'jwt']);
  t.equal(s.serviceAccount.expirationSeconds, 600, '600 is the shortest Kubernetes accepts');
  t.equal(s.serviceAccount.audience, 'gw');
  const jwks = { keys: [{ kty: 'RSA', kid: 'k1', n: 'x', e: 'AQAB' }] };
  const overridden = security({ SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_ISSUER: 'https://kubernetes.default.svc', SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_JWKS: JSON.stringify(jwks), AUTHZ_JWKS_REFRESH_INTERVAL: '1h30m' });
  t.same([overridden.serviceAccount.issuer, overridden.serviceAccount.jwks, overridden.jwksRefreshIntervalSeconds], ['https://kubernetes.default.svc', jwks, 5400]);
});

t.test('refused at start, each naming its setting, all at once', async (t) => {
  t.same(problems({ SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'oidc' }), [
    'SECURITY_AGENT_AUTH_IDENTITY_PROVIDER "oidc" is not supported by kaos-operator: only "serviceaccount" is implemented (oidc and aib need an external identity service)',
  ]);
  t.same(problems({ SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'aib' }), [
    'SECURITY_AGENT_AUTH_IDENTITY_PROVIDER "aib" is not supported by kaos-operator: only "serviceaccount" is implemented (oidc and aib need an external identity service)',
  ]);
  t.match(problems({ SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'spiffe' }), [/^SECURITY_AGENT_AUTH_IDENTITY_PROVIDER "spiffe" is not supported by kaos-operator/], 'an unknown provider too');
  t.same(problems({ TOKEN_EXCHANGE_ENABLED: 'True' }), ['TOKEN_EXCHANGE_ENABLED=true is not supported by kaos-operator: delegated token exchange needs the Agentic Identity Broker']);
  t.same(problems({ TOKEN_EXCHANGE_ENABLED: 'false' }), [], 'off is fine');
  const all = problems({
    SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_EXPIRATION_SECONDS: '599',
    SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_TOKEN_PATH: 'secrets/token',
    SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: 'http://kaos-pdp.kaos-system.svc:9191',
    SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_JWKS: '{"issuer":"x"}',
    SECURITY_USER_AUTH_ISSUER: 'keycloak',
    SECURITY_AUTHORIZATION_POLICY_DATA_SOURCE: 'opa',
    AUTHZ_POLICY_REGO_FROM: 'just-a-name',
    AUTHZ_JWKS_REFRESH_INTERVAL: 'hourly',
    AUTHZ_POLICY_CONFIGMAP_NAMESPACE: 'Kaos_System',
    AUTHZ_PROJECTION_NAMESPACES: 'team-a,Team_B',
  });
  t.equal(all.length, 10, all.join('\n'));
  for (const name of [
    'SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_EXPIRATION_SECONDS',
    'SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_TOKEN_PATH',
    'SECURITY_AGENT_AUTH_EXT_AUTHZ_URL',
    'SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_JWKS',
    'SECURITY_USER_AUTH_ISSUER',
    'SECURITY_AUTHORIZATION_POLICY_DATA_SOURCE',
    'AUTHZ_POLICY_REGO_FROM',
    'AUTHZ_JWKS_REFRESH_INTERVAL',
    'AUTHZ_POLICY_CONFIGMAP_NAMESPACE',
    'AUTHZ_PROJECTION_NAMESPACES',
  ]) {
    t.ok(all.some((p) => p.startsWith(`${name}:`)), `${name} is named`);
  }
  t.match(all.find((p) => p.startsWith('SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_EXPIRATION_SECONDS')), /from 600 to 4294967296 .*got "599"/);
  for (const bad of ['kaos-pdp', 'kaos-pdp:', ':9191', 'kaos-pdp:http', 'kaos-pdp:70000', 'kaos pdp:9191', 'kaos-pdp.kaos-system.svc:9191/path']) {
    t.match(problems({ SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: bad }), [/^SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: must be a Service address/], `ext_authz ${bad}`);
  }
  // A Service name is a DNS-1035 label: an IP address is refused by name, not rendered as a
  // backendRef named "10" in namespace "0".
  for (const bad of ['10.0.0.5:9191', '9pdp:9191', '9pdp.kaos-system.svc:9191']) {
    t.same(problems({ SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: bad }), [
      'SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: must be a Service address name[.namespace]:port whose name is a Service name (a DNS-1035 label: a lowercase letter first; not an IP address), such as kaos-pdp.kaos-system.svc:9191, got "' + bad + '"',
    ], `ext_authz ${bad}`);
  }
  for (const ok of ['kaos-pdp.0-team.svc:9191', 'authz:1', 'a.b.svc.cluster.local:65535']) t.same(problems({ SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: ok }), [], `ext_authz ${ok}`);
  for (const bad of ['/token', '/var/run//token', '/var/run/../token', '/var/run/secrets/', 'token']) {
    t.match(problems({ SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_TOKEN_PATH: bad }), [/^SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_TOKEN_PATH: must/], `token path ${bad}`);
  }
  for (const bad of ['3600s', '1e4', '-3600', '4294967297']) {
    t.match(problems({ SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_EXPIRATION_SECONDS: bad }), [/^SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_EXPIRATION_SECONDS: /], `expiration ${bad}`);
  }
});

t.test('KAOS\'s AIB settings are ignored, with a warning naming each one set', async (t) => {
  const env = {
    SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount',
    SECURITY_AGENT_AUTH_ISSUER: 'https://aib.example',
    SECURITY_AGENT_AUTH_CREDENTIAL_SECRET_PREFIX: ' ',
    AIB_SYNC_URL: 'http://aib-sync:8080',
    AIB_ADMIN_TOKEN: 'x',
  };
  const warnings = securityWarnings(env, loadConfig(env).security);
  t.same(warnings, [
    'SECURITY_AGENT_AUTH_ISSUER is ignored under SECURITY_AGENT_AUTH_IDENTITY_PROVIDER=serviceaccount: it configures the Agentic Identity Broker, which kaos-operator does not run',
    'AIB_ADMIN_TOKEN is ignored under SECURITY_AGENT_AUTH_IDENTITY_PROVIDER=serviceaccount: it configures the Agentic Identity Broker, which kaos-operator does not run',
    'AIB_SYNC_URL is ignored under SECURITY_AGENT_AUTH_IDENTITY_PROVIDER=serviceaccount: it configures the Agentic Identity Broker, which kaos-operator does not run',
  ], 'a blank value is not set; AIB_* sorted');
  t.match(securityWarnings({ AIB_X: '1' }, security({})), [/^AIB_X is ignored under no identity provider/]);
  t.same(securityWarnings({}, security({})), [], 'nothing set, nothing said');
});
