import t from 'tap';
import { loadConfig } from '../../../src/config/config.ts';
import {
  renderAgent,
  renderMCPServer,
  renderModelAPI,
  type AgentDeps,
  type AgentInput,
  type Deployment,
  type MCPServerInput,
  type ModelAPIInput,
} from '../../../src/render/index.ts';
import { config, mainContainer } from './helpers.ts';

const withDefaults = loadConfig({
  IMAGE_PULL_SECRETS: 'regcred, mirror',
  DEFAULT_AGENT_RESOURCES: '{"requests":{"cpu":"100m","memory":"256Mi"},"limits":{"memory":"1Gi"}}',
  DEFAULT_MODELAPI_RESOURCES: '{"requests":{"memory":"4Gi"}}',
  DEFAULT_MCP_RESOURCES: '{"limits":{"cpu":"500m"}}',
  DEFAULT_NODE_SELECTOR: '{"pool":"kaos","zone":"a"}',
  DEFAULT_TOLERATIONS: '[{"key":"dedicated","operator":"Equal","value":"kaos","effect":"NoSchedule"}]',
  DEFAULT_AFFINITY: '{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[]}}',
});
const noSecurityContext = loadConfig({ POD_SECURITY_CONTEXT: 'none' });

const meta = { name: 'x', namespace: 'ns', uid: 'uid-x' };
const deps: AgentDeps = { modelAPI: { endpoint: 'http://m' }, mcpServers: [], peers: [] };
const agent = (spec: Partial<AgentInput['spec']> = {}): AgentInput => ({ metadata: meta, spec: { modelAPI: 'm', ...spec } });
const hosted: ModelAPIInput = { metadata: meta, spec: { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } } };
const mcp: MCPServerInput = { metadata: meta, spec: { type: 'python-runtime', config: { tools: { fromPackage: 'mcp-server-fetch' } } } };

const HARDENED = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
const SECCOMP = { seccompProfile: { type: 'RuntimeDefault' } };

const podOf = (d: Deployment) => d.spec.template.spec;

t.test('every generated pod gets the pod-level defaults and each generated container the security context', async (t) => {
  const pods = [
    podOf(renderAgent(agent(), deps, withDefaults).deployment),
    podOf(renderModelAPI(hosted, {}, withDefaults).deployment),
    podOf(renderMCPServer(mcp, withDefaults).deployment),
  ];
  for (const pod of pods) {
    t.strictSame(pod['imagePullSecrets'], [{ name: 'regcred' }, { name: 'mirror' }]);
    t.strictSame(pod['nodeSelector'], { pool: 'kaos', zone: 'a' });
    t.strictSame(pod['tolerations'], [{ key: 'dedicated', operator: 'Equal', value: 'kaos', effect: 'NoSchedule' }]);
    t.strictSame(pod['affinity'], { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } });
    t.strictSame(pod['securityContext'], SECCOMP, 'seccomp at pod level');
    for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) t.strictSame(c['securityContext'], HARDENED, c.name);
    t.notOk(JSON.stringify(pod).includes('runAsNonRoot'), 'never runAsNonRoot: Ollama and pip run as root');
    t.notOk(JSON.stringify(pod).includes('readOnlyRootFilesystem'), 'never a read-only root: pip and npx write to it');
  }
  t.equal(pods[1]?.initContainers?.length, 1, 'the Hosted pull-model init container is covered');
});

t.test('default resources per kind, on the main container only', async (t) => {
  const a = mainContainer(renderAgent(agent(), deps, withDefaults).deployment);
  t.strictSame(a.resources, { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } });
  const m = renderModelAPI(hosted, {}, withDefaults).deployment;
  t.strictSame(mainContainer(m).resources, { requests: { memory: '4Gi' } });
  t.notOk('resources' in (podOf(m).initContainers?.[0] ?? {}), 'the init container gets none');
  t.strictSame(mainContainer(renderMCPServer(mcp, withDefaults).deployment).resources, { limits: { cpu: '500m' } });
  t.notOk('resources' in mainContainer(renderAgent(agent(), deps, config).deployment), 'no default configured: no resources');
});

t.test('spec.container and spec.podSpec win over every default', async (t) => {
  const overridden = agent({
    container: { resources: { limits: { cpu: '50m' } } },
    podSpec: {
      nodeSelector: { zone: 'b', pool: null },
      tolerations: [{ operator: 'Exists' }],
      imagePullSecrets: [{ name: 'own' }],
      securityContext: { seccompProfile: { type: 'Unconfined' } },
      containers: [{ name: 'agent', securityContext: { capabilities: { add: ['NET_ADMIN'] } } }, { name: 'sidecar', image: 'envoy' }],
    },
  });
  const pod = podOf(renderAgent(overridden, deps, withDefaults).deployment);
  const [main, sidecar] = pod.containers;
  t.strictSame(main?.resources, { limits: { cpu: '50m' } }, 'spec.container.resources replaces the default whole (no request above the new limit)');
  t.strictSame(pod['nodeSelector'], { zone: 'b' }, 'podSpec keys override, null removes a default key');
  t.strictSame(pod['tolerations'], [{ operator: 'Exists' }], 'a list without merge key replaces the default');
  t.strictSame(pod['imagePullSecrets'], [{ name: 'regcred' }, { name: 'mirror' }, { name: 'own' }], 'merged by name');
  t.strictSame(pod['securityContext'], { seccompProfile: { type: 'Unconfined' } });
  t.strictSame(main?.['securityContext'], { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], add: ['NET_ADMIN'] } }, 'merged into the generated one');
  t.strictSame(sidecar, { name: 'sidecar', image: 'envoy' }, 'a podSpec sidecar is the user\'s own (the pod-level seccomp covers it)');
});

t.test('POD_SECURITY_CONTEXT=none renders no securityContext at all', async (t) => {
  for (const d of [renderAgent(agent(), deps, noSecurityContext).deployment, renderModelAPI(hosted, {}, noSecurityContext).deployment]) {
    t.notOk(JSON.stringify(d).includes('securityContext'));
  }
});

t.test('a changed default changes the pod-spec hash (operator config changes roll the pods)', async (t) => {
  const hash = (c: typeof config) => renderAgent(agent(), deps, c).deployment.spec.template.metadata.annotations['kaos.tools/pod-spec-hash'];
  t.not(hash(config), hash(noSecurityContext));
  t.not(hash(config), hash(withDefaults));
});

t.test('kubectl.kubernetes.io/default-container names the main container, also next to podSpec sidecars', async (t) => {
  const annotation = (d: Deployment) => d.spec.template.metadata.annotations['kubectl.kubernetes.io/default-container'];
  const sidecarFirst = { podSpec: { containers: [{ name: 'sidecar', image: 'envoy' }] } };
  t.equal(annotation(renderAgent(agent(sidecarFirst), deps, config).deployment), 'agent');
  t.equal(annotation(renderModelAPI({ ...hosted, spec: { ...hosted.spec, ...sidecarFirst } }, {}, config).deployment), 'model-api');
  t.equal(annotation(renderMCPServer({ ...mcp, spec: { ...mcp.spec, ...sidecarFirst } }, config).deployment), 'mcp-server');
});

t.test('an unchanged input yields byte-identical output, and no render shares state with another', async (t) => {
  const input = agent({ podSpec: { nodeSelector: { extra: 'y' } } });
  const first = JSON.stringify(renderAgent(input, deps, withDefaults));
  const mutated = renderAgent(input, deps, withDefaults);
  const pod = podOf(mutated.deployment);
  (pod['nodeSelector'] as Record<string, string>)['pool'] = 'changed';
  (pod['tolerations'] as object[]).push({ operator: 'Exists' });
  (pod.containers[0]?.['securityContext'] as { capabilities: { drop: string[] } }).capabilities.drop.push('X');
  (mainContainer(mutated.deployment).resources as { requests: Record<string, string> }).requests['cpu'] = '9';
  t.equal(JSON.stringify(renderAgent(input, deps, withDefaults)), first, 'editing one result changes neither the config nor the next result');
  const m: ModelAPIInput = { metadata: meta, spec: { mode: 'Proxy', proxyConfig: { configYaml: { fromSecretKeyRef: { name: 's', key: 'k' } } } } };
  t.equal(JSON.stringify(renderModelAPI(m, { secretResourceVersion: '5' }, withDefaults)), JSON.stringify(renderModelAPI(m, { secretResourceVersion: '5' }, withDefaults)));
});
