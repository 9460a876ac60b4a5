// KAOS's security plane through kubectl and a real control plane (docs/api.md, "AccessGrant" and
// "Per-route SecurityPolicy and NetworkPolicy"): AccessGrants refused at apply time for what the
// contract refuses, each reason of their Enforced condition under the settings that give it (one
// control plane, the operator restarted with other settings), the policy ConfigMap's data.json
// field by field, security enabled without Envoy Gateway's CRDs (the routes withheld) and then with
// them installed (healed, no restart), and no write from the operator while all of it sits idle.
//
// The user plane needs an OIDC issuer: this file serves one over HTTP on loopback, not Keycloak:
// its discovery document names its keys at a path of its own (as Dex, Auth0 or Entra do), which
// the operator must read from the document, and it fails after start (the keys kept, and said so). The Gateway API's CRDs are installed from the start, Envoy Gateway's SecurityPolicy
// only later (scripts/local-stack.ts installGatewayCrds, from the copy test/cluster/build.sh makes
// of Envoy Gateway's Go module).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { KubeObject } from '../../src/api/lookup.ts';
import { OPERATOR_USER } from '../../src/cluster/rbac.ts';
import { API_SERVER_JWKS_PATH, JWKS_ACCEPT } from '../../src/kube/oidc-discovery.ts';
import { CONFIG_MAP, HTTP_ROUTE, NETWORK_POLICY, SECURITY_POLICY, resourcePath } from '../../src/kube/paths.ts';
import { installGatewayCrds, startLocalStack, tail, type OperatorProcess } from '../../scripts/local-stack.ts';
import {
  auditMark, auditSince, condition, describeRequest, getKaos, getOrUndefined, kubectl, kubectlApply, metricSum, operatorSettled,
  scrape, sleep, startAnotherOperator, waitForStatus, writesBy, type KaosView,
} from './support/lifecycle.ts';
import { OPERATOR_ENV } from './support/stack.ts';
import { eventually } from '../support/poll.ts';

type Json = Record<string, unknown>;

const IDLE_SECONDS = Number(process.env.KAOS_E2E_IDLE_SECONDS ?? '30');
const NS = 'e2e-sec';
const POLICY = { namespace: 'kaos-system', name: 'kaos-authz-policy' };
const SA_ISSUER = 'https://kubernetes.default.svc.cluster.local';

// ---- a tiny OIDC issuer ----------------------------------------------------------------------

const USER_JWKS = { keys: [{ kty: 'EC', crv: 'P-256', kid: 'user-key-1', use: 'sig', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' }] };
let issuerAnswers: 'ok' | 'down' = 'ok';
const issuerServer = http.createServer((req, res) => {
  const issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}/realms/kaos`;
  const send = (code: number, body: unknown): void => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (issuerAnswers === 'down') return send(503, { error: 'down for the test' });
  if (req.url === '/realms/kaos/.well-known/openid-configuration') return send(200, { issuer, jwks_uri: userJwksUri() });
  if (req.url === '/keys/tenant-1.json') return send(200, USER_JWKS);
  return send(404, { error: 'not found' });
});
await new Promise<void>((resolve) => issuerServer.listen(0, '127.0.0.1', resolve));
const USER_ISSUER = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}/realms/kaos`;
/** Where the discovery document says the keys are: not Keycloak's `<issuer>/protocol/openid-connect/certs`. */
function userJwksUri(): string {
  return `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}/keys/tenant-1.json`;
}

// ---- the stack -------------------------------------------------------------------------------

const BASE: Readonly<Record<string, string>> = {
  ...OPERATOR_ENV,
  // One identity across restarts: a restarted process takes its own Lease back at once.
  POD_NAME: 'kaos-operator-0',
  SHUTDOWN_DELAY_SECONDS: '0',
  GATEWAY_API_ENABLED: 'true',
  GATEWAY_NAME: 'gw',
  GATEWAY_NAMESPACE: 'gw-system',
  SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount',
  AUTHZ_POLICY_CONFIGMAP_NAME: POLICY.name,
  AUTHZ_POLICY_CONFIGMAP_NAMESPACE: POLICY.namespace,
};
const SECURITY = { SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: 'kaos-pdp.kaos-system.svc:9191' };
const USER_PLANE = { SECURITY_USER_AUTH_ISSUER: USER_ISSUER, SECURITY_USER_AUTH_AUDIENCE: 'kaos-web' };

const stack = await startLocalStack({ log: (line) => t.comment(line), audit: { users: [OPERATOR_USER] }, operatorEnv: BASE, gatewayCrds: ['gatewayApi'] });
const { plane, client } = stack;
const auditLog = plane.logs.audit;
if (auditLog === undefined) throw new Error('the control plane was started without its audit log');
let operator: OperatorProcess = stack.operator;
const webhookPort = stack.operator.webhookPort;
t.teardown(async () => {
  if (!t.passing()) t.comment(`operator log (tail):\n${tail(operator.log(), 60)}`);
  await operator.stop();
  await stack.stop();
  await new Promise((resolve) => issuerServer.close(resolve));
});

/** The operator again, with other settings, on the port the webhooks point at. */
async function restart(name: string, env: Readonly<Record<string, string>>): Promise<void> {
  await operator.stop();
  operator = await startAnotherOperator(stack, name, { ...BASE, ...env }, webhookPort);
  await eventually('the restarted operator to lead', async () => metricSum(await scrape(operator.metricsPort), 'leader_election_master_status') === 1, { timeoutMs: 30_000, intervalMs: 200, retryErrors: true });
}

const kaos = (kind: string, name: string, spec: Json, labels?: Record<string, string>): KubeObject =>
  ({ apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name, namespace: NS, ...(labels === undefined ? {} : { labels }) }, spec });

const GRANTS = [
  kaos('AccessGrant', 'alice', { subjects: [{ kind: 'User', name: 'alice@example.com' }], resources: [{ kind: 'Agent', name: 'worker' }, { selector: { matchLabels: { team: 'a' } } }] }),
  kaos('AccessGrant', 'ops', { subjects: [{ kind: 'Group', name: 'ops' }], resources: [{ kind: 'MCPServer', name: 'tools' }, { kind: 'ModelAPI', name: 'not-yet' }] }),
];

/** The Enforced condition of a grant as `kubectl get grants` shows it, plus observedGeneration. */
async function enforced(name: string): Promise<{ status?: string; reason?: string; message?: string; observedGeneration?: number } | undefined> {
  const grant = await getKaos(client, 'AccessGrant', NS, name);
  const c = condition(grant, 'Enforced');
  return c === undefined ? undefined : { status: c.status, reason: c.reason, message: c.message, ...(c.observedGeneration === undefined ? {} : { observedGeneration: c.observedGeneration }) };
}

async function waitForEnforced(name: string, reason: string): Promise<KaosView> {
  return waitForStatus(client, 'AccessGrant', NS, name, (o) => condition(o, 'Enforced')?.reason === reason, `Enforced reason ${reason}`, 60_000);
}

async function policyConfigMap(): Promise<(KubeObject & { data?: Record<string, string> }) | undefined> {
  return getOrUndefined(client, resourcePath(CONFIG_MAP, POLICY));
}

async function grantEvents(name: string): Promise<{ type: string; reason: string; note: string }[]> {
  const list = await client.list<{ type: string; reason: string; note: string; regarding: { kind: string; name: string } }>(`/apis/events.k8s.io/v1/namespaces/${NS}/events`);
  return list.items.filter((e) => e.regarding.kind === 'AccessGrant' && e.regarding.name === name).map(({ type, reason, note }) => ({ type, reason, note }));
}

/** The Events on the policy ConfigMap (the user issuer's keys' staleness and recovery). */
async function configMapEvents(): Promise<{ type: string; reason: string; note: string }[]> {
  const list = await client.list<{ type: string; reason: string; note: string; regarding: { kind: string; name: string } }>(`/apis/events.k8s.io/v1/namespaces/${POLICY.namespace}/events`);
  return list.items.filter((e) => e.regarding.kind === 'ConfigMap' && e.regarding.name === POLICY.name).map(({ type, reason, note }) => ({ type, reason, note }));
}

const GATEWAY_CONDITION_TYPE = 'GatewayAuthorization';

// ---- the tests -------------------------------------------------------------------------------

t.test('admission: each resource is kind and name or a selector, names and selectors are valid, every problem at once', async (t) => {
  await kubectl(plane, ['create', 'namespace', NS]);
  const bad = kaos('AccessGrant', 'bad', {
    subjects: [{ kind: 'User', name: 'alice@example.com' }],
    resources: [{ kind: 'Agent' }, { kind: 'MCPServer', name: 'Tools_1' }, { selector: { matchExpressions: [{ key: 'team', operator: 'Near', values: ['a'] }] } }],
  });
  const result = await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify(bad) });
  t.not(result.code, 0, 'refused');
  t.match(result.stderr, 'The AccessGrant "bad" is invalid:');
  t.match(result.stderr, '* spec.resources[0]: Invalid value: "object": exactly one of kind and name, or selector, must be set');
  t.match(result.stderr, '* spec.resources[1].name: Invalid value: "Tools_1": a lowercase RFC 1123 subdomain must consist of');
  t.match(result.stderr, '* spec.resources[2].selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator');
  t.equal(await getKaos(client, 'AccessGrant', NS, 'bad'), undefined, 'nothing stored');
});

t.test('security off: the projection writes the agents\' graph; every grant is AuthorizationDisabled; no policy children', async (t) => {
  // A policy.rego someone else wrote (Helm, the user) stays theirs.
  await kubectlApply(plane, [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: POLICY, data: { 'policy.rego': 'package kaos.authz\n' } } as KubeObject]);
  await kubectlApply(plane, [
    kaos('ModelAPI', 'llm', { mode: 'Proxy', proxyConfig: { apiBase: 'http://litellm.example:4000' } }),
    kaos('MCPServer', 'tools', { type: 'python-runtime', config: { tools: { fromPackage: 'test-mcp-echo-server' } } }, { team: 'a' }),
  ]);
  await kubectlApply(plane, [kaos('Agent', 'worker', { modelAPI: 'llm', mcpServers: ['tools'] }, { team: 'a' })]);
  const applied = await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: GRANTS }) });
  t.equal(applied.code, 0, applied.stderr);
  t.match(applied.stderr, 'this AccessGrant will not be enforced: Gateway authorization is not enabled; this AccessGrant is not enforced', 'the failing gate, warned at apply time');
  t.match(applied.stderr, 'spec.resources[1].name: ModelAPI "not-yet" does not exist yet; the grant covers it once it does');

  await waitForEnforced('alice', 'AuthorizationDisabled');
  t.same(await enforced('alice'), { status: 'False', reason: 'AuthorizationDisabled', message: 'Gateway authorization is not enabled; this AccessGrant is not enforced', observedGeneration: 1 });
  const table = await kubectl(plane, ['get', 'grants', '-n', NS]);
  t.match(table, /NAME\s+ENFORCED\s+REASON\s+AGE/, 'the printer columns');
  t.match(table, /alice\s+False\s+AuthorizationDisabled/);

  // A pass may have run before the Agent was created (the ModelAPI's create triggers one too): the
  // data to check is the pass's that read the Agent.
  const cm = await eventually('the policy data with the Agent', async () => {
    const o = await policyConfigMap();
    const text = o?.data?.['data.json'];
    return text !== undefined && (JSON.parse(text) as { kaos: { grants?: Json } }).kaos.grants?.[`kaos://agent/${NS}/worker`] !== undefined ? o : undefined;
  }, { timeoutMs: 30_000, intervalMs: 200, retryErrors: true });
  t.equal(cm.data?.['policy.rego'], 'package kaos.authz\n', "someone else's policy.rego is left alone");
  t.equal(cm.metadata?.labels?.['app.kubernetes.io/managed-by'], 'kaos-operator-authz');
  t.same(cm.metadata?.ownerReferences, undefined, 'no owner');
  const managers = (cm.metadata?.managedFields as { manager: string; operation: string }[] | undefined) ?? [];
  t.ok(managers.some((m) => m.manager === 'kaos-operator-authz' && m.operation === 'Apply'), 'server-side apply by kaos-operator-authz');
  const data = JSON.parse(cm.data?.['data.json'] ?? '{}') as { kaos: Json };
  t.same(data.kaos.grants, { [`kaos://agent/${NS}/worker`]: [`kaos://mcpserver/${NS}/tools`, `kaos://modelapi/${NS}/llm`] });
  t.same(data.kaos.agents, { [`kaos://agent/${NS}/worker`]: { autonomous: false, issuer_sub: `system:serviceaccount:${NS}:kaos-agent-worker` } });
  t.notOk('user' in data.kaos || 'user_grants' in data.kaos, 'no user plane');
  for (const kind of ['ModelAPI', 'MCPServer', 'Agent'] as const) {
    const o = await waitForStatus(client, kind, NS, kind === 'ModelAPI' ? 'llm' : kind === 'MCPServer' ? 'tools' : 'worker', (x) => x.status?.phase === 'Ready', 'Ready', 60_000);
    t.equal(condition(o, GATEWAY_CONDITION_TYPE), undefined, `${kind}: no GatewayAuthorization without security`);
  }
  t.equal((await client.list(resourcePath(NETWORK_POLICY, { namespace: NS }))).items.length, 0, 'no NetworkPolicy');
  t.ok(await getOrUndefined(client, resourcePath(HTTP_ROUTE, { namespace: NS, name: 'agent-worker' })), 'the Agent is routed (no security to withhold it)');
  t.same((await grantEvents('alice')).map((e) => [e.type, e.reason]), [['Warning', 'AuthorizationDisabled']]);
});

t.test('security on, no user issuer, no Envoy Gateway: NoUserIdentityProvider; every route withheld behind CRDNotInstalled; NetworkPolicies', async (t) => {
  const before = await policyConfigMap();
  await restart('security', SECURITY);
  await waitForEnforced('alice', 'NoUserIdentityProvider');
  t.same(await enforced('ops'), { status: 'False', reason: 'NoUserIdentityProvider', message: 'A user identity provider must be configured for this AccessGrant to be enforced', observedGeneration: 1 });
  for (const [kind, name, route] of [['ModelAPI', 'llm', 'modelapi-llm'], ['MCPServer', 'tools', 'mcp-tools'], ['Agent', 'worker', 'agent-worker']] as const) {
    const o = await waitForStatus(client, kind, NS, name, (x) => condition(x, GATEWAY_CONDITION_TYPE)?.reason === 'CRDNotInstalled', 'GatewayAuthorization CRDNotInstalled', 60_000);
    t.match(condition(o, GATEWAY_CONDITION_TYPE), {
      status: 'False',
      message: "SecurityPolicy (gateway.envoyproxy.io/v1alpha1) is not installed: install Envoy Gateway's CRDs to enforce gateway authorization",
    });
    t.equal(o.status?.phase, 'Ready', `${kind}: Ready untouched`);
    await eventually(`${route} withheld`, async () => (await getOrUndefined(client, resourcePath(HTTP_ROUTE, { namespace: NS, name: route }))) === undefined, { timeoutMs: 30_000, intervalMs: 200 });
    const np = await getOrUndefined<{ spec: Json; metadata: { ownerReferences?: Json[] } }>(client, resourcePath(NETWORK_POLICY, { namespace: NS, name: route }));
    t.match(np?.spec, {
      podSelector: { matchLabels: kind === 'Agent' ? { app: 'agent', agent: name } : kind === 'ModelAPI' ? { app: 'modelapi', modelapi: name } : { app: 'mcpserver', mcpserver: name } },
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'envoy-gateway-system' } } }, { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kaos-system' } } }] }],
    }, `${kind}: its NetworkPolicy, named as its route`);
    t.match(np?.metadata.ownerReferences, [{ kind, name, controller: true }]);
  }
  const after = await policyConfigMap();
  t.equal(after?.metadata?.resourceVersion, before?.metadata?.resourceVersion, 'the same data: the ConfigMap is not written again');
});

t.test('the projection switched to manual: PolicyProjectionInactive, and the ConfigMap is not touched', async (t) => {
  const before = await policyConfigMap();
  await restart('manual', { ...SECURITY, ...USER_PLANE, SECURITY_AUTHORIZATION_POLICY_DATA_SOURCE: 'manual' });
  await waitForEnforced('alice', 'PolicyProjectionInactive');
  t.same(await enforced('alice'), { status: 'False', reason: 'PolicyProjectionInactive', message: 'Automated policy projection must be active for this AccessGrant to be enforced', observedGeneration: 1 });
  await sleep(3000);
  t.equal((await policyConfigMap())?.metadata?.resourceVersion, before?.metadata?.resourceVersion, 'nothing written with source manual');
});

t.test('the user issuer down: ProjectionFailed; back up: retried, Enforced, and data.json field by field', async (t) => {
  issuerAnswers = 'down';
  // Keys read every second, stale after three (user-issuer.ts STALE_AFTER_REFRESHES): the test
  // below sees an outage told in seconds.
  await restart('projection', { ...SECURITY, ...USER_PLANE, AUTHZ_JWKS_REFRESH_INTERVAL: '1s' });
  await waitForEnforced('alice', 'ProjectionFailed');
  t.same(await enforced('alice'), { status: 'False', reason: 'ProjectionFailed', message: 'Policy projection failed; this AccessGrant is not currently enforced', observedGeneration: 1 });
  issuerAnswers = 'ok';
  await waitForEnforced('alice', 'Enforced');
  await waitForEnforced('ops', 'Enforced');
  t.same(await enforced('alice'), { status: 'True', reason: 'Enforced', message: 'AccessGrant is included in the successfully projected authorization policy', observedGeneration: 1 });
  t.match(await kubectl(plane, ['get', 'grants', '-n', NS]), /alice\s+True\s+Enforced/);

  const raw = (await policyConfigMap())?.data?.['data.json'] ?? '';
  const data = JSON.parse(raw) as { kaos: Json };
  t.equal(raw, JSON.stringify(sortKeys(data), null, 2), "Go's MarshalIndent shape: keys sorted, two spaces, no trailing newline");
  t.same(Object.keys(data.kaos).sort(), ['agents', 'grants', 'jwks', 'user', 'user_grants']);
  t.same(data.kaos.grants, { [`kaos://agent/${NS}/worker`]: [`kaos://mcpserver/${NS}/tools`, `kaos://modelapi/${NS}/llm`] });
  t.same(data.kaos.agents, { [`kaos://agent/${NS}/worker`]: { autonomous: false, issuer_sub: `system:serviceaccount:${NS}:kaos-agent-worker` } });
  t.same(data.kaos.user, { audience: 'kaos-web', issuer: USER_ISSUER });
  t.same(data.kaos.user_grants, {
    'group:ops': [`kaos://mcpserver/${NS}/tools`, `kaos://modelapi/${NS}/not-yet`],
    'user:alice@example.com': [`kaos://agent/${NS}/worker`, `kaos://mcpserver/${NS}/tools`],
  }, 'named resources (a missing one kept) and the selector team=a; Agent subjects not projected');
  const apiServerKeys = await client.get<Json>(API_SERVER_JWKS_PATH, { accept: JWKS_ACCEPT });
  t.same(data.kaos.jwks, { [SA_ISSUER]: apiServerKeys, [USER_ISSUER]: USER_JWKS }, "the ServiceAccount issuer's keys as the API server serves them, and the user issuer's, from the jwks_uri its discovery names");
  t.same((await grantEvents('alice')).map((e) => [e.type, e.reason]), [
    ['Warning', 'AuthorizationDisabled'],
    ['Warning', 'NoUserIdentityProvider'],
    ['Warning', 'PolicyProjectionInactive'],
    ['Warning', 'ProjectionFailed'],
    ['Normal', 'Enforced'],
  ], 'one Event per transition, none per pass');
});

t.test('a new generation is Enforced at that generation; a label a selector reads moves the data', async (t) => {
  await kubectlApply(plane, [kaos('AccessGrant', 'alice', { subjects: [{ kind: 'User', name: 'alice@example.com' }], resources: [{ selector: { matchLabels: { team: 'a' } } }] })]);
  const grant = await waitForStatus(client, 'AccessGrant', NS, 'alice', (o) => condition(o, 'Enforced')?.observedGeneration === 2, 'Enforced at generation 2', 60_000);
  t.match(condition(grant, 'Enforced'), { status: 'True', reason: 'Enforced' });
  t.equal((grant.status as { observedGeneration?: number } | undefined)?.observedGeneration, 2);
  await kubectl(plane, ['label', 'modelapi', 'llm', '-n', NS, 'team=a']);
  const users = await eventually('the ModelAPI in alice\'s grant', async () => {
    const d = JSON.parse((await policyConfigMap())?.data?.['data.json'] ?? '{}') as { kaos?: { user_grants?: Record<string, string[]> } };
    const alice = d.kaos?.user_grants?.['user:alice@example.com'];
    return alice?.includes(`kaos://modelapi/${NS}/llm`) === true ? alice : undefined;
  }, { timeoutMs: 30_000, intervalMs: 200, retryErrors: true });
  t.same(users, [`kaos://agent/${NS}/worker`, `kaos://mcpserver/${NS}/tools`, `kaos://modelapi/${NS}/llm`]);
});

t.test('the identity provider fails after start: grants stay Enforced on the keys held, a Warning Event on the policy ConfigMap past the bound, the metric stops; back: told', async (t) => {
  const metric = 'kaos_authz_user_issuer_keys_last_success_timestamp_seconds';
  const before = metricSum(await scrape(operator.metricsPort), metric) ?? 0;
  t.ok(before > 0, `${metric} is set once the keys were read`);
  const rv = (await policyConfigMap())?.metadata?.resourceVersion;
  issuerAnswers = 'down';
  const stale = await eventually('a UserIssuerKeysStale Event', async () => (await configMapEvents()).find((e) => e.reason === 'UserIssuerKeysStale'), { timeoutMs: 60_000, intervalMs: 500, retryErrors: true });
  t.equal(stale.type, 'Warning');
  t.match(stale.note, /^The user issuer's keys could not be refreshed for \d+s \(last success [0-9T:.-]+Z\): the policy keeps the keys it had; discovering issuer from http:\/\/127\.0\.0\.1:\d+\/realms\/kaos\/\.well-known\/openid-configuration: /);
  t.same(await enforced('alice'), { status: 'True', reason: 'Enforced', message: 'AccessGrant is included in the successfully projected authorization policy', observedGeneration: 2 }, 'the grants stay Enforced');
  t.equal((await policyConfigMap())?.metadata?.resourceVersion, rv, 'the policy data is kept as it was');
  t.equal(metricSum(await scrape(operator.metricsPort), metric), before, 'the last success stays where it was: time() minus it is the keys\' age');
  issuerAnswers = 'ok';
  const back = await eventually('a UserIssuerKeysRefreshed Event', async () => (await configMapEvents()).find((e) => e.reason === 'UserIssuerKeysRefreshed'), { timeoutMs: 60_000, intervalMs: 500, retryErrors: true });
  t.same(back, { type: 'Normal', reason: 'UserIssuerKeysRefreshed', note: `The user issuer's keys were refreshed from ${userJwksUri()}` });
  t.ok((metricSum(await scrape(operator.metricsPort), metric) ?? 0) > before, 'the metric moves again');
  t.same((await configMapEvents()).map((e) => e.reason), ['UserIssuerKeysStale', 'UserIssuerKeysRefreshed'], 'each told once');
});

t.test("Envoy Gateway's CRDs installed while the operator runs: every route gets its SecurityPolicy, turns Applied and is routed again", async (t) => {
  await installGatewayCrds(client, plane.binDir, ['envoyGateway']);
  for (const [kind, name, route] of [['ModelAPI', 'llm', 'modelapi-llm'], ['MCPServer', 'tools', 'mcp-tools'], ['Agent', 'worker', 'agent-worker']] as const) {
    const o = await waitForStatus(client, kind, NS, name, (x) => condition(x, GATEWAY_CONDITION_TYPE)?.reason === 'Applied', 'GatewayAuthorization Applied', 60_000);
    t.match(condition(o, GATEWAY_CONDITION_TYPE), { status: 'True' });
    const sp = await getOrUndefined<{ spec: Json; metadata: { ownerReferences?: Json[] } }>(client, resourcePath(SECURITY_POLICY, { namespace: NS, name: route }));
    t.match(sp?.spec, {
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: route }],
      extAuth: { failOpen: false, headersToExtAuth: ['authorization', 'x-agent-authorization'], grpc: { backendRef: { group: '', kind: 'Service', name: 'kaos-pdp', namespace: 'kaos-system', port: 9191 } } },
      jwt: {
        providers: [
          { name: 'agent', issuer: SA_ISSUER, audiences: ['kaos-gateway'], extractFrom: { headers: [{ name: 'x-agent-authorization', valuePrefix: 'Bearer ' }] }, claimToHeaders: [{ claim: 'sub', header: 'x-agent-claim-sub' }], localJWKS: { type: 'Inline' } },
          { name: 'user', issuer: USER_ISSUER, audiences: ['kaos-web'], remoteJWKS: { uri: userJwksUri() } },
        ],
      },
    }, `${kind}: its SecurityPolicy`);
    const inline = ((sp?.spec.jwt as { providers: { localJWKS?: { inline?: string } }[] }).providers[0]?.localJWKS?.inline) ?? '';
    t.same(JSON.parse(inline), await client.get(API_SERVER_JWKS_PATH, { accept: JWKS_ACCEPT }), "the agent provider's keys, inline");
    t.match(sp?.metadata.ownerReferences, [{ kind, name, controller: true }]);
    await eventually(`${route} routed again`, async () => getOrUndefined(client, resourcePath(HTTP_ROUTE, { namespace: NS, name: route })), { timeoutMs: 30_000, intervalMs: 200 });
  }
});

t.test('idle: with grants, policies, routes and the projection in place, the operator writes nothing', async (t) => {
  await eventually('the operator to settle', () => operatorSettled(operator.metricsPort, 6), { timeoutMs: 30_000, intervalMs: 200, retryErrors: true });
  await sleep(2000);
  const mark = auditMark(auditLog);
  t.comment(`idle window: ${IDLE_SECONDS} s`);
  await sleep(IDLE_SECONDS * 1000);
  const writes = writesBy(auditSince(auditLog, mark), OPERATOR_USER).filter((e) => e.objectRef?.resource !== 'leases');
  t.same(writes.map(describeRequest), [], 'no write besides the Lease: no status, no Event, no policy data');
});

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Json)[k])]));
}
