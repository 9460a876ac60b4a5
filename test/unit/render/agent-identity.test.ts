// Agent identity by ServiceAccount (docs/api.md, "Agent identity by ServiceAccount") and the
// probes of KAOS 2026 (docs/api.md, "Agent probes in 2026"): expectations from the contract —
// the ServiceAccount's name, labels and automount, the pod's serviceAccountName, the projected
// token volume and its mount, the env in KAOS's place — and nothing of it without the provider.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../../src/config/config.ts';
import { agentEnv, renderAgent } from '../../../src/render/agent.ts';
import type { AgentDeps, AgentInput } from '../../../src/render/inputs.ts';
import { childrenOf } from '../../../src/render/rendered.ts';
import { config, mainContainer, sampleAgent } from './helpers.ts';

const identity = loadConfig({ SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount' });
const deps: AgentDeps = { modelAPI: { endpoint: 'http://modelapi-llm.team.svc.cluster.local:8000' }, mcpServers: [], peers: [] };
const original: AgentInput = { metadata: { name: 'helper', namespace: 'team', uid: 'uid-h' }, spec: { modelAPI: 'llm', config: { env: [{ name: 'MODEL_NAME', value: 'm' }] } } };
const newer: AgentInput = { metadata: { name: 'helper', namespace: 'team', uid: 'uid-h' }, spec: { modelAPI: 'llm', model: 'm', container: { env: [{ name: 'MINE', value: '1' }] } } };
const podOf = (a: AgentInput, c = identity) => renderAgent(a, deps, c).deployment.spec.template.spec;

t.test('the ServiceAccount kaos-agent-<name>: §1 labels, kaos.tools/agent, no automount, owned by the Agent', async (t) => {
  const rendered = renderAgent(original, deps, identity);
  t.strictSame(rendered.serviceAccount, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: {
      name: 'kaos-agent-helper',
      namespace: 'team',
      labels: { app: 'agent', agent: 'helper', 'app.kubernetes.io/managed-by': 'kaos-operator', 'kaos.tools/agent': 'helper' },
      ownerReferences: [{ apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', name: 'helper', uid: 'uid-h', controller: true, blockOwnerDeletion: true }],
    },
    automountServiceAccountToken: false,
  });
  t.same(childrenOf(rendered).map((c) => c.kind), ['ServiceAccount', 'Deployment', 'Service'], 'applied before the Deployment whose pods name it');
  t.ok(renderAgent({ ...original, spec: { ...original.spec, agentNetwork: { expose: false } } }, deps, identity).serviceAccount, 'an unexposed Agent too');
});

t.test('the pod runs under it, with no API token and the projected token mounted read-only', async (t) => {
  const pod = podOf(original);
  t.equal(pod['serviceAccountName'], 'kaos-agent-helper');
  t.equal(pod['automountServiceAccountToken'], false);
  t.strictSame(pod.volumes, [
    { name: 'agent-auth-token', projected: { sources: [{ serviceAccountToken: { audience: 'kaos-gateway', expirationSeconds: 3600, path: 'token' } }] } },
  ]);
  t.strictSame(mainContainer(renderAgent(original, deps, identity).deployment).volumeMounts, [{ name: 'agent-auth-token', mountPath: '/var/run/secrets/kaos-agent', readOnly: true }]);
  const custom = loadConfig({
    SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount',
    SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_AUDIENCE: 'mesh',
    SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_EXPIRATION_SECONDS: '7200',
    SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_TOKEN_PATH: '/run/identity/jwt',
  });
  const c = renderAgent(original, deps, custom);
  t.strictSame(c.deployment.spec.template.spec.volumes?.[0]?.['projected'], { sources: [{ serviceAccountToken: { audience: 'mesh', expirationSeconds: 7200, path: 'jwt' } }] }, 'the settings: audience, lifetime, the path\'s file name');
  t.strictSame(mainContainer(c.deployment).volumeMounts, [{ name: 'agent-auth-token', mountPath: '/run/identity', readOnly: true }], 'mounted at the path\'s directory');
  t.same(mainContainer(c.deployment).env?.slice(-1), [{ name: 'AGENT_AUTH_TOKEN_FILE', value: '/run/identity/jwt' }]);
});

t.test('env: AGENT_AUTH_IDENTITY and AGENT_AUTH_TOKEN_FILE last generated, before spec.container.env', async (t) => {
  const originalEnv = mainContainer(renderAgent({ ...original, spec: { ...original.spec, container: { env: [{ name: 'LAST', value: 'x' }] } } }, deps, identity).deployment).env ?? [];
  t.same(originalEnv.map((e) => e.name), ['AGENT_NAME', 'MODEL_NAME', 'MODEL_API_URL', 'AGENT_AUTH_IDENTITY', 'AGENT_AUTH_TOKEN_FILE', 'LAST'], 'original shape: after the generated steps, spec.container.env last');
  t.same(originalEnv.slice(3, 5), [
    { name: 'AGENT_AUTH_IDENTITY', value: 'kaos://agent/team/helper' },
    { name: 'AGENT_AUTH_TOKEN_FILE', value: '/var/run/secrets/kaos-agent/token' },
  ]);
  const newerEnv = agentEnv(newer, deps, identity).map((e) => e.name);
  t.same(newerEnv, ['AGENT_NAME', 'MINE', 'MODEL_API_URL', 'MODEL_NAME', 'LOG_LEVEL', 'AGENT_AUTH_IDENTITY', 'AGENT_AUTH_TOKEN_FILE'], 'newer shape: container.env in its place, identity after LOG_LEVEL');
  const clash = agentEnv({ ...newer, spec: { ...newer.spec, container: { env: [{ name: 'AGENT_AUTH_TOKEN_FILE', value: '/mine' }] } } }, deps, identity);
  t.same(clash.filter((e) => e.name === 'AGENT_AUTH_TOKEN_FILE'), [{ name: 'AGENT_AUTH_TOKEN_FILE', value: '/mine' }], 'the user\'s own entry wins a clash');
});

t.test('spec.podSpec merges over it: the user\'s choice stands', async (t) => {
  const pod = podOf({ ...original, spec: { ...original.spec, podSpec: { serviceAccountName: 'mine', automountServiceAccountToken: true } } });
  t.equal(pod['serviceAccountName'], 'mine');
  t.equal(pod['automountServiceAccountToken'], true);
});

t.test('without the provider nothing of it renders, and original-shape Agents keep their pod spec hash', async (t) => {
  for (const a of [original, newer]) {
    const r = renderAgent(a, deps, config);
    t.equal(r.serviceAccount, undefined);
    const pod = r.deployment.spec.template.spec;
    t.notOk('serviceAccountName' in pod || 'serviceAccount' in pod || 'automountServiceAccountToken' in pod || 'volumes' in pod, 'no identity in the pod');
    t.notOk(mainContainer(r.deployment).env?.some((e) => e.name.startsWith('AGENT_AUTH_')), 'no AGENT_AUTH_* env');
    t.equal(mainContainer(r.deployment).volumeMounts, undefined);
  }
  // The hashes main rendered for the KAOS samples (original shape) before the security plane.
  const hashes: Record<string, [string, string]> = {
    'simple-agent': ['1-simple-echo-agent.yaml', '2be621b635d75017'],
    coordinator: ['2-multi-agent-mcp.yaml', '03216f0b6106bab0'],
    'worker-1': ['2-multi-agent-mcp.yaml', '633b5b91748dbab3'],
    'worker-2': ['2-multi-agent-mcp.yaml', '47076db8c13918a7'],
    'dev-agent': ['4-dev-ollama-proxy-agent.yaml', 'a9f14b7464377a80'],
  };
  const sampleDeps: AgentDeps = {
    modelAPI: { endpoint: 'http://m:8000', model: 'x' },
    mcpServers: [{ name: 'echo', endpoint: 'http://e:8000' }],
    peers: [{ name: 'p', endpoint: 'http://p:8000' }],
    memoryStore: { endpoint: 'http://s:8080', maxReadScope: 'agent' },
  };
  for (const [name, [file, hash]] of Object.entries(hashes)) {
    const agent = sampleAgent(file, name);
    const rendered = renderAgent({ ...agent, metadata: { ...agent.metadata, uid: 'u' } }, sampleDeps, config);
    t.equal(rendered.deployment.spec.template.metadata.annotations['kaos.tools/pod-spec-hash'], hash, `${file} ${name}: no rollout on upgrade`);
  }
});

t.test('probes: docs/api.md\'s for the original shape, KAOS 2026\'s once an Agent uses anything of 2026', async (t) => {
  const probes = (a: AgentInput) => {
    const c = mainContainer(renderAgent(a, deps, config).deployment);
    return { liveness: c.livenessProbe, readiness: c.readinessProbe };
  };
  t.strictSame(probes(original), {
    liveness: { httpGet: { path: '/health', port: 8000, scheme: 'HTTP' }, initialDelaySeconds: 30, periodSeconds: 10 },
    readiness: { httpGet: { path: '/ready', port: 8000, scheme: 'HTTP' }, initialDelaySeconds: 10, periodSeconds: 5 },
  }, 'original shape: unchanged');
  const kaos2026 = {
    liveness: { httpGet: { path: '/health', port: 8000, scheme: 'HTTP' }, initialDelaySeconds: 5, periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 },
    readiness: { httpGet: { path: '/ready', port: 8000, scheme: 'HTTP' }, initialDelaySeconds: 3, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 2 },
  };
  t.strictSame(probes(newer), kaos2026, 'the newer shape (spec.model)');
  t.strictSame(probes({ ...original, spec: { ...original.spec, config: { autonomous: { goal: 'watch' } } } }), kaos2026, 'a 2026 config field');
  t.strictSame(probes({ ...original, spec: { ...original.spec, config: { memory: { memoryStore: 'store' } } } }), kaos2026, 'the newest memory block');
  t.strictSame(probes({ ...original, spec: { ...original.spec, config: { memory: { enabled: true, contextLimit: 6 } } } }).liveness?.initialDelaySeconds, 30, 'the original memory block: original');
  t.strictSame(probes({ ...original, spec: { ...original.spec, harness: { runtime: 'pi' } } } as unknown as AgentInput), kaos2026, 'a harness');
  // ServiceAccount identity is not a field of the Agent: under it an original-shape Agent keeps the
  // original timings (an upgrade that turns it on rolls no probe), written out again here.
  const underIdentity = mainContainer(renderAgent(original, deps, identity).deployment);
  t.strictSame({ liveness: underIdentity.livenessProbe, readiness: underIdentity.readinessProbe }, {
    liveness: { httpGet: { path: '/health', port: 8000, scheme: 'HTTP' }, initialDelaySeconds: 30, periodSeconds: 10 },
    readiness: { httpGet: { path: '/ready', port: 8000, scheme: 'HTTP' }, initialDelaySeconds: 10, periodSeconds: 5 },
  }, 'ServiceAccount identity alone changes no probe');
  const newerUnderIdentity = mainContainer(renderAgent(newer, deps, identity).deployment);
  t.strictSame({ liveness: newerUnderIdentity.livenessProbe, readiness: newerUnderIdentity.readinessProbe }, kaos2026, 'nor a newer-shape Agent\'s');
});

t.test('a KAOS default install\'s Agent from the 2026 fixtures gets all of it', async (t) => {
  const text = readFileSync(new URL('../../fixtures/kaos-2026/memory-agents.yaml', import.meta.url), 'utf8');
  const agent = parseAllDocuments(text).map((d) => d.toJS() as AgentInput & { kind: string }).find((o) => o?.kind === 'Agent');
  if (agent === undefined) throw new Error('no Agent in the fixture');
  const r = renderAgent({ ...agent, metadata: { ...agent.metadata, namespace: 'kaos', uid: 'u' } }, { ...deps, memoryStore: { endpoint: 'http://s:8080', maxReadScope: 'agent' } }, identity);
  const env = mainContainer(r.deployment).env ?? [];
  t.equal(r.serviceAccount?.metadata.name, `kaos-agent-${agent.metadata?.name}`);
  t.same(env.slice(-2).map((e) => e.name), ['AGENT_AUTH_IDENTITY', 'AGENT_AUTH_TOKEN_FILE']);
  t.ok(env.some((e) => e.name === 'AGENT_IDENTITY' && e.value === `kaos://agent/kaos/${agent.metadata?.name}`), 'the memory block\'s AGENT_IDENTITY stays');
});
