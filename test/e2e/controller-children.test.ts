// End-to-end: the children the controller builds for each kind (the scenarios of the
// original KAOS operator's integration suite), against a real kube-apiserver with the operator
// started through dist/main.js under its own ServiceAccount (scripts/local-stack.ts). Objects
// are driven with kubectl; every expectation is written out from docs/api.md, never computed
// with the renderer. Each subtest works in a namespace of its own.
//
// Run `npm run build` first: the operator process is dist/main.js.
import t from 'tap';
import { parse } from 'yaml';
import {
  HARDENED,
  POD_SECURITY,
  applyObjects,
  at,
  childIdentity,
  configHash,
  createNamespace,
  deploymentShape,
  expectedIdentity,
  getObject,
  httpGet,
  httpPort,
  kaos,
  kubectlOk,
  podSpecHash,
  podSpecOf,
  probe,
  serviceShape,
  servicePorts,
  tcpSocket,
  waitForObject,
  waitForPhase,
  type Json,
  remainingAfterGC,
} from './support/children.ts';
import { IMAGES, useStack } from './support/stack.ts';

const HASH = /^[0-9a-f]{16}$/;

const s = useStack(t);

/** The main (or named) container of a Deployment's pod spec. */
const container = (deployment: Json, name: string, list = 'containers'): Json | undefined =>
  (podSpecOf(deployment)[list] as Json[] | undefined)?.find((c) => c.name === name);
const envOf = (deployment: Json, name: string, list = 'containers'): unknown => container(deployment, name, list)?.env;

const agentProbes = {
  livenessProbe: probe(httpGet('/health', 8000), 30, 10),
  readinessProbe: probe(httpGet('/ready', 8000), 10, 5),
};

// ---- Agent ------------------------------------------------------------------------------------

t.test('Agent: env vars in docs/api.md order, and exact Deployment and Service', async (t) => {
  const ns = 'agent-env';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [
    kaos('ModelAPI', 'llm', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }),
    kaos('MCPServer', 'echo-tools', { type: 'python-runtime', config: { tools: { fromString: 'def echo(x):\n    return x\n' } } }),
    kaos('MCPServer', 'calc', { type: 'python-runtime', config: { tools: { fromString: 'def add(a, b):\n    return a + b\n' } } }),
  ]);
  // The dependencies become Ready through the real chain: scheduler, ReplicaSet, kwok's ready pods.
  await waitForPhase(s(), 'modelapi', ns, 'llm', 'Ready');
  await waitForPhase(s(), 'mcpserver', ns, 'echo-tools', 'Ready');
  await waitForPhase(s(), 'mcpserver', ns, 'calc', 'Ready');

  await applyObjects(s(), ns, [
    kaos('Agent', 'writer', {
      modelAPI: 'llm',
      mcpServers: ['echo-tools', 'calc'],
      config: {
        description: 'Writes things',
        instructions: 'Be brief.',
        memory: {},
        env: [
          { name: 'LOG_LEVEL', value: 'debug' },
          { name: 'API_TOKEN', valueFrom: { secretKeyRef: { name: 'tokens', key: 'api' } } },
        ],
      },
      container: { env: [{ name: 'EXTRA', value: '1' }] },
    }),
  ]);
  const agent = await waitForObject(s(), 'agent', ns, 'writer');
  const deployment = await waitForObject(s(), 'deployment', ns, 'agent-writer');
  const service = await waitForObject(s(), 'service', ns, 'agent-writer');

  t.strictSame(childIdentity(deployment), expectedIdentity('Agent', agent, 'agent-writer'), 'Deployment name, labels, controller ownerReference');
  t.strictSame(childIdentity(service), expectedIdentity('Agent', agent, 'agent-writer'), 'Service name, labels, controller ownerReference');
  t.strictSame(deploymentShape(deployment), {
    replicas: 1,
    selector: { matchLabels: { app: 'agent', agent: 'writer' } },
    podLabels: { app: 'agent', agent: 'writer' },
    podAnnotationKeys: ['kaos.tools/pod-spec-hash', 'kubectl.kubernetes.io/default-container'],
  });
  t.equal(at(deployment, 'spec', 'template', 'metadata', 'annotations', 'kubectl.kubernetes.io/default-container'), 'agent');
  t.match(podSpecHash(deployment), HASH, 'pod-spec-hash: 16 hex characters');
  t.strictSame(podSpecOf(deployment), {
    containers: [
      {
        name: 'agent',
        image: IMAGES.agent,
        imagePullPolicy: 'IfNotPresent',
        ports: httpPort(8000),
        env: [
          { name: 'AGENT_NAME', value: 'writer' },
          { name: 'AGENT_DESCRIPTION', value: 'Writes things' },
          { name: 'AGENT_INSTRUCTIONS', value: 'Be brief.' },
          { name: 'LOG_LEVEL', value: 'debug' },
          { name: 'API_TOKEN', valueFrom: { secretKeyRef: { name: 'tokens', key: 'api' } } },
          // config.env, where the mutating webhook put MODEL_NAME from the Hosted ModelAPI.
          { name: 'MODEL_NAME', value: 'smollm2:135m' },
          { name: 'MODEL_API_URL', value: `http://modelapi-llm.${ns}.svc.cluster.local:11434` },
          { name: 'AGENTIC_LOOP_MAX_STEPS', value: '5' },
          { name: 'MEMORY_ENABLED', value: 'true' },
          { name: 'MEMORY_TYPE', value: 'local' },
          { name: 'MEMORY_CONTEXT_LIMIT', value: '6' },
          { name: 'MEMORY_MAX_SESSIONS', value: '1000' },
          { name: 'MEMORY_MAX_SESSION_EVENTS', value: '500' },
          { name: 'MCP_SERVERS', value: 'calc,echo-tools' },
          { name: 'MCP_SERVER_calc_URL', value: `http://mcpserver-calc.${ns}.svc.cluster.local:8000` },
          { name: 'MCP_SERVER_echo-tools_URL', value: `http://mcpserver-echo-tools.${ns}.svc.cluster.local:8000` },
          { name: 'EXTRA', value: '1' },
        ],
        resources: {},
        ...agentProbes,
        securityContext: HARDENED,
      },
    ],
    securityContext: POD_SECURITY,
  }, 'the whole pod spec');
  t.strictSame(serviceShape(service), {
    type: 'ClusterIP',
    selector: { app: 'agent', agent: 'writer' },
    ports: servicePorts(8000),
  }, 'Service: ClusterIP, port 8000 → 8000');

  const status = await waitForObject(s(), 'agent', ns, 'writer', (o) => at(o, 'status', 'endpoint') !== undefined);
  t.equal(at(status, 'status', 'endpoint'), `http://agent-writer.${ns}.svc.cluster.local:8000`);
  t.strictSame(at(status, 'status', 'linkedResources'), { modelapi: 'llm' });
});

t.test('Agent: podSpec override merges onto the generated pod', async (t) => {
  const ns = 'agent-podspec';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [
    kaos('ModelAPI', 'llm', { mode: 'Proxy', proxyConfig: { model: 'gpt-4o-mini' } }),
    kaos('Agent', 'custom', {
      modelAPI: 'llm',
      // Use the ModelAPI at once, whether or not its pod is ready yet.
      waitForDependencies: false,
      podSpec: {
        nodeSelector: { pool: 'agents' },
        containers: [
          { name: 'agent', resources: { limits: { memory: '512Mi' } }, env: [{ name: 'AGENT_NAME', value: 'renamed' }, { name: 'DEBUG', value: 'true' }] },
          { name: 'sidecar', image: 'e2e.local/busybox:1.36', command: ['sleep', 'infinity'] },
        ],
      },
    }),
  ]);
  const deployment = await waitForObject(s(), 'deployment', ns, 'agent-custom');
  t.strictSame(podSpecOf(deployment), {
    containers: [
      {
        name: 'agent',
        image: IMAGES.agent,
        imagePullPolicy: 'IfNotPresent',
        ports: httpPort(8000),
        env: [
          // merged by name: the override's value in the generated entry's place
          { name: 'AGENT_NAME', value: 'renamed' },
          { name: 'MODEL_NAME', value: 'gpt-4o-mini' },
          // waitForDependencies false: the endpoint the ModelAPI's Service will have (Proxy: 8000)
          { name: 'MODEL_API_URL', value: `http://modelapi-llm.${ns}.svc.cluster.local:8000` },
          // the webhook made a config block for MODEL_NAME, so its defaults apply (docs/api.md, "Defaulting")
          { name: 'AGENTIC_LOOP_MAX_STEPS', value: '5' },
          { name: 'DEBUG', value: 'true' },
        ],
        resources: { limits: { memory: '512Mi' } },
        ...agentProbes,
        securityContext: HARDENED,
      },
      { name: 'sidecar', image: 'e2e.local/busybox:1.36', command: ['sleep', 'infinity'], imagePullPolicy: 'IfNotPresent', resources: {} },
    ],
    nodeSelector: { pool: 'agents' },
    securityContext: POD_SECURITY,
  }, 'strategic merge: containers and env by name, scalars override, new items appended');
  t.equal(at(deployment, 'spec', 'template', 'metadata', 'annotations', 'kubectl.kubernetes.io/default-container'), 'agent', 'kubectl logs still picks the agent container');
});

t.test('Agent: PEER_AGENTS lists the peers in access, sorted, with their card URLs', async (t) => {
  const ns = 'agent-peers';
  await createNamespace(s(), ns);
  const agent = (name: string, access?: string[]): Json =>
    kaos('Agent', name, { modelAPI: 'llm', waitForDependencies: false, ...(access === undefined ? {} : { agentNetwork: { access } }) });
  await applyObjects(s(), ns, [
    kaos('ModelAPI', 'llm', { mode: 'Proxy', proxyConfig: { model: 'gpt-4o-mini' } }),
    agent('worker-b'),
    agent('worker-a'),
    agent('coordinator', ['worker-b', 'worker-a']),
  ]);
  // A peer is wired in once it has a status.endpoint, so the coordinator may first get one worker.
  const deployment = await waitForObject(s(), 'deployment', ns, 'agent-coordinator', (d) =>
    ['PEER_AGENT_WORKER_A_CARD_URL', 'PEER_AGENT_WORKER_B_CARD_URL'].every((name) => JSON.stringify(envOf(d, 'agent')).includes(name)),
  'coordinator wired to both workers');
  t.strictSame(envOf(deployment, 'agent'), [
    { name: 'AGENT_NAME', value: 'coordinator' },
    { name: 'MODEL_NAME', value: 'gpt-4o-mini' },
    { name: 'MODEL_API_URL', value: `http://modelapi-llm.${ns}.svc.cluster.local:8000` },
    { name: 'AGENTIC_LOOP_MAX_STEPS', value: '5' },
    { name: 'PEER_AGENTS', value: 'worker-a,worker-b' },
    { name: 'PEER_AGENT_WORKER_A_CARD_URL', value: `http://agent-worker-a.${ns}.svc.cluster.local:8000` },
    { name: 'PEER_AGENT_WORKER_B_CARD_URL', value: `http://agent-worker-b.${ns}.svc.cluster.local:8000` },
  ]);
  const worker = await waitForObject(s(), 'deployment', ns, 'agent-worker-a');
  t.notOk(JSON.stringify(envOf(worker, 'agent')).includes('PEER_AGENTS'), 'an agent without access gets no PEER_AGENTS');
});

t.test('Agent: a config change rolls the pods (new pod-spec-hash); deletion removes the children', async (t) => {
  const ns = 'agent-roll';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [
    kaos('ModelAPI', 'llm', { mode: 'Proxy', proxyConfig: { model: 'gpt-4o-mini' } }),
    kaos('Agent', 'roller', { modelAPI: 'llm', waitForDependencies: false, config: { instructions: 'First.' } }),
  ]);
  const before = await waitForObject(s(), 'deployment', ns, 'agent-roller');
  await kubectlOk(s(), ['patch', 'agent', 'roller', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { config: { instructions: 'Second.' } } })]);
  const after = await waitForObject(s(), 'deployment', ns, 'agent-roller', (d) => podSpecHash(d) !== podSpecHash(before), 'a new pod-spec-hash');
  t.match(podSpecHash(after), HASH);
  t.strictSame((envOf(after, 'agent') as Json[]).find((e) => e.name === 'AGENT_INSTRUCTIONS'), { name: 'AGENT_INSTRUCTIONS', value: 'Second.' });
  t.equal(at(after, 'metadata', 'uid'), at(before, 'metadata', 'uid'), 'the same Deployment, updated in place (a rolling update)');
  t.ok(Number(at(after, 'metadata', 'generation')) > Number(at(before, 'metadata', 'generation')), 'the pod template changed');

  await kubectlOk(s(), ['delete', 'agent', 'roller', '-n', ns, '--wait=true']);
  t.same(await remainingAfterGC(s(), ns, [['deployment', 'agent-roller'], ['service', 'agent-roller']]), [], 'Deployment and Service garbage-collected with their Agent');
});

// ---- ModelAPI ---------------------------------------------------------------------------------

const liteLLMContainer = (env: Json[]): Json => ({
  name: 'model-api',
  image: IMAGES.litellm,
  imagePullPolicy: 'IfNotPresent',
  args: ['--config', '/etc/litellm/config.yaml', '--port', '8000'],
  ports: httpPort(8000),
  env,
  resources: {},
  volumeMounts: [{ name: 'litellm-config', mountPath: '/etc/litellm' }],
  livenessProbe: probe(httpGet('/health/liveliness', 8000), 30, 10, 5, 3),
  readinessProbe: probe(httpGet('/health/liveliness', 8000), 15, 5, 5, 3),
  securityContext: HARDENED,
});

t.test('ModelAPI Proxy: Deployment, Service and ConfigMap; an apiBase change updates the ConfigMap and rolls the pods; deletion', async (t) => {
  const ns = 'modelapi-proxy';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [
    kaos('ModelAPI', 'proxy', {
      mode: 'Proxy',
      proxyConfig: { apiBase: 'http://ollama.example:11434', model: 'ollama/smollm2:135m', env: [{ name: 'OPENAI_API_KEY', value: 'sk-none' }] },
    }),
  ]);
  const parent = await waitForObject(s(), 'modelapi', ns, 'proxy');
  const configMap = await waitForObject(s(), 'configmap', ns, 'litellm-config-proxy');
  const deployment = await waitForObject(s(), 'deployment', ns, 'modelapi-proxy');
  const service = await waitForObject(s(), 'service', ns, 'modelapi-proxy');
  for (const [what, child, name] of [['ConfigMap', configMap, 'litellm-config-proxy'], ['Deployment', deployment, 'modelapi-proxy'], ['Service', service, 'modelapi-proxy']] as const) {
    t.strictSame(childIdentity(child), expectedIdentity('ModelAPI', parent, name), `${what} labels and controller ownerReference`);
  }
  t.strictSame(Object.keys(at(configMap, 'data') as Json), ['config.yaml'], 'one key, config.yaml');
  // (b) apiBase wins over model: the wildcard config.
  t.strictSame(parse(String(at(configMap, 'data', 'config.yaml'))), {
    model_list: [{ model_name: '*', litellm_params: { model: '*', api_base: 'http://ollama.example:11434' } }],
    litellm_settings: { drop_params: true },
  });
  t.strictSame(deploymentShape(deployment), {
    replicas: 1,
    selector: { matchLabels: { app: 'modelapi', modelapi: 'proxy' } },
    podLabels: { app: 'modelapi', modelapi: 'proxy' },
    podAnnotationKeys: ['kaos.tools/config-hash', 'kaos.tools/pod-spec-hash', 'kubectl.kubernetes.io/default-container'],
  });
  t.match(configHash(deployment), HASH, 'config-hash of the ConfigMap content');
  t.strictSame(podSpecOf(deployment), {
    containers: [liteLLMContainer([{ name: 'OPENAI_API_KEY', value: 'sk-none' }, { name: 'LITELLM_LOG', value: 'INFO' }])],
    volumes: [{ name: 'litellm-config', configMap: { name: 'litellm-config-proxy', defaultMode: 420 } }],
    securityContext: POD_SECURITY,
  });
  t.strictSame(serviceShape(service), { type: 'ClusterIP', selector: { app: 'modelapi', modelapi: 'proxy' }, ports: servicePorts(8000) });
  const ready = await waitForObject(s(), 'modelapi', ns, 'proxy', (o) => at(o, 'status', 'endpoint') !== undefined);
  t.equal(at(ready, 'status', 'endpoint'), `http://modelapi-proxy.${ns}.svc.cluster.local:8000`);

  await kubectlOk(s(), ['patch', 'modelapi', 'proxy', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { proxyConfig: { apiBase: 'https://llm.example/v1' } } })]);
  const updated = await waitForObject(s(), 'configmap', ns, 'litellm-config-proxy', (c) => String(at(c, 'data', 'config.yaml')).includes('llm.example'));
  t.strictSame(parse(String(at(updated, 'data', 'config.yaml'))), {
    model_list: [{ model_name: '*', litellm_params: { model: '*', api_base: 'https://llm.example/v1' } }],
    litellm_settings: { drop_params: true },
  });
  t.equal(at(updated, 'metadata', 'uid'), at(configMap, 'metadata', 'uid'), 'the same ConfigMap, updated');
  const rolled = await waitForObject(s(), 'deployment', ns, 'modelapi-proxy', (d) => configHash(d) !== configHash(deployment), 'a new config-hash');
  t.match(configHash(rolled), HASH);
  t.equal(podSpecHash(rolled), podSpecHash(deployment), 'the pod spec itself did not change: only the config hash rolls the pods');

  await kubectlOk(s(), ['delete', 'modelapi', 'proxy', '-n', ns, '--wait=true']);
  t.same(
    await remainingAfterGC(s(), ns, [['deployment', 'modelapi-proxy'], ['service', 'modelapi-proxy'], ['configmap', 'litellm-config-proxy']]),
    [],
    'Deployment, Service and ConfigMap garbage-collected with their ModelAPI',
  );
});

t.test('ModelAPI Proxy: podSpec override keeps replicas 1', async (t) => {
  const ns = 'modelapi-podspec';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [
    kaos('ModelAPI', 'tuned', {
      mode: 'Proxy',
      proxyConfig: { model: 'gpt-4o-mini' },
      podSpec: { enableServiceLinks: false, containers: [{ name: 'model-api', resources: { requests: { cpu: '250m', memory: '256Mi' } } }] },
    }),
  ]);
  const deployment = await waitForObject(s(), 'deployment', ns, 'modelapi-tuned');
  const configMap = await waitForObject(s(), 'configmap', ns, 'litellm-config-tuned');
  t.equal(at(deployment, 'spec', 'replicas'), 1, 'replicas 1');
  t.strictSame(parse(String(at(configMap, 'data', 'config.yaml'))), {
    model_list: [{ model_name: 'gpt-4o-mini', litellm_params: { model: 'gpt-4o-mini' } }],
    litellm_settings: { drop_params: true },
  }, '(c) model: one entry named after the model');
  t.strictSame(podSpecOf(deployment), {
    containers: [{ ...liteLLMContainer([{ name: 'LITELLM_LOG', value: 'INFO' }]), resources: { requests: { cpu: '250m', memory: '256Mi' } } }],
    volumes: [{ name: 'litellm-config', configMap: { name: 'litellm-config-tuned', defaultMode: 420 } }],
    enableServiceLinks: false,
    securityContext: POD_SECURITY,
  });
});

t.test('ModelAPI Hosted: the pull-model init container; a model change rolls the pods', async (t) => {
  const ns = 'modelapi-hosted';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [
    kaos('ModelAPI', 'ollama', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m', env: [{ name: 'OLLAMA_DEBUG', value: '1' }] } }),
  ]);
  const parent = await waitForObject(s(), 'modelapi', ns, 'ollama');
  const deployment = await waitForObject(s(), 'deployment', ns, 'modelapi-ollama');
  const service = await waitForObject(s(), 'service', ns, 'modelapi-ollama');
  t.strictSame(childIdentity(deployment), expectedIdentity('ModelAPI', parent, 'modelapi-ollama'));
  t.strictSame(deploymentShape(deployment), {
    replicas: 1,
    selector: { matchLabels: { app: 'modelapi', modelapi: 'ollama' } },
    podLabels: { app: 'modelapi', modelapi: 'ollama' },
    podAnnotationKeys: ['kaos.tools/pod-spec-hash', 'kubectl.kubernetes.io/default-container'],
  });
  const data = [{ name: 'ollama-data', mountPath: '/root/.ollama' }];
  const pullModel = (model: string): Json => ({
    name: 'pull-model',
    image: IMAGES.ollama,
    imagePullPolicy: 'IfNotPresent',
    command: ['/bin/sh', '-c'],
    // The model reaches the shell only through $OLLAMA_MODEL, double-quoted (docs/api.md, "ModelAPI").
    args: ['ollama serve & OLLAMA_PID=$! && sleep 5 && ollama pull "$OLLAMA_MODEL" && kill $OLLAMA_PID'],
    env: [{ name: 'OLLAMA_DEBUG', value: '1' }, { name: 'OLLAMA_MODEL', value: model }],
    resources: {},
    volumeMounts: data,
    securityContext: HARDENED,
  });
  t.strictSame(podSpecOf(deployment), {
    initContainers: [pullModel('smollm2:135m')],
    containers: [
      {
        name: 'model-api',
        image: IMAGES.ollama,
        imagePullPolicy: 'IfNotPresent',
        ports: httpPort(11434),
        env: [{ name: 'OLLAMA_DEBUG', value: '1' }],
        resources: {},
        volumeMounts: data,
        livenessProbe: probe(httpGet('/', 11434), 30, 10, 5, 3),
        readinessProbe: probe(httpGet('/', 11434), 15, 5, 5, 3),
        securityContext: HARDENED,
      },
    ],
    volumes: [{ name: 'ollama-data', emptyDir: {} }],
    securityContext: POD_SECURITY,
  });
  t.strictSame(serviceShape(service), { type: 'ClusterIP', selector: { app: 'modelapi', modelapi: 'ollama' }, ports: servicePorts(11434) });
  t.equal(await getObject(s(), 'configmap', ns, 'litellm-config-ollama'), undefined, 'no LiteLLM ConfigMap in Hosted mode');
  const withEndpoint = await waitForObject(s(), 'modelapi', ns, 'ollama', (o) => at(o, 'status', 'endpoint') !== undefined);
  t.equal(at(withEndpoint, 'status', 'endpoint'), `http://modelapi-ollama.${ns}.svc.cluster.local:11434`);

  await kubectlOk(s(), ['patch', 'modelapi', 'ollama', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { hostedConfig: { model: 'smollm2:360m' } } })]);
  const rolled = await waitForObject(s(), 'deployment', ns, 'modelapi-ollama', (d) => podSpecHash(d) !== podSpecHash(deployment), 'a new pod-spec-hash');
  t.strictSame(podSpecOf(rolled).initContainers, [pullModel('smollm2:360m')], 'the init container pulls the new model');
  t.equal(at(rolled, 'metadata', 'uid'), at(deployment, 'metadata', 'uid'), 'updated in place');

  await kubectlOk(s(), ['delete', 'modelapi', 'ollama', '-n', ns, '--wait=true']);
  t.same(await remainingAfterGC(s(), ns, [['deployment', 'modelapi-ollama'], ['service', 'modelapi-ollama']]), [], 'children garbage-collected');
});

// ---- MCPServer --------------------------------------------------------------------------------

const mcpProbes = {
  livenessProbe: probe(tcpSocket(8000), 20, 10, 3, 3),
  readinessProbe: probe(tcpSocket(8000), 15, 5, 3, 2),
};

t.test('MCPServer fromString: MCP_TOOLS_STRING; a fromString change rolls the pods; deletion', async (t) => {
  const ns = 'mcp-string';
  await createNamespace(s(), ns);
  const v1 = 'def echo(text: str) -> str:\n    return text\n';
  await applyObjects(s(), ns, [
    kaos('MCPServer', 'echo', { type: 'python-runtime', config: { tools: { fromString: v1 }, env: [{ name: 'LOG_LEVEL', value: 'debug' }] } }),
  ]);
  const parent = await waitForObject(s(), 'mcpserver', ns, 'echo');
  const deployment = await waitForObject(s(), 'deployment', ns, 'mcpserver-echo');
  const service = await waitForObject(s(), 'service', ns, 'mcpserver-echo');
  t.strictSame(childIdentity(deployment), expectedIdentity('MCPServer', parent, 'mcpserver-echo'));
  t.strictSame(childIdentity(service), expectedIdentity('MCPServer', parent, 'mcpserver-echo'));
  t.strictSame(deploymentShape(deployment), {
    replicas: 1,
    selector: { matchLabels: { app: 'mcpserver', mcpserver: 'echo' } },
    podLabels: { app: 'mcpserver', mcpserver: 'echo' },
    podAnnotationKeys: ['kaos.tools/pod-spec-hash', 'kubectl.kubernetes.io/default-container'],
  });
  const mcpContainer = (tools: string): Json => ({
    name: 'mcp-server',
    image: IMAGES.mcpServer,
    imagePullPolicy: 'IfNotPresent',
    command: ['python', '-m', 'mcptools.server'],
    ports: httpPort(8000),
    env: [{ name: 'LOG_LEVEL', value: 'debug' }, { name: 'MCP_TOOLS_STRING', value: tools }],
    resources: {},
    ...mcpProbes,
    securityContext: HARDENED,
  });
  t.strictSame(podSpecOf(deployment), { containers: [mcpContainer(v1)], securityContext: POD_SECURITY });
  t.strictSame(serviceShape(service), { type: 'ClusterIP', selector: { app: 'mcpserver', mcpserver: 'echo' }, ports: servicePorts(8000) });
  const withEndpoint = await waitForObject(s(), 'mcpserver', ns, 'echo', (o) => at(o, 'status', 'endpoint') !== undefined);
  t.equal(at(withEndpoint, 'status', 'endpoint'), `http://mcpserver-echo.${ns}.svc.cluster.local:8000`);

  const v2 = 'def shout(text: str) -> str:\n    return text.upper()\n';
  await kubectlOk(s(), ['patch', 'mcpserver', 'echo', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { config: { tools: { fromString: v2 } } } })]);
  const rolled = await waitForObject(s(), 'deployment', ns, 'mcpserver-echo', (d) => podSpecHash(d) !== podSpecHash(deployment), 'a new pod-spec-hash');
  t.strictSame(podSpecOf(rolled), { containers: [mcpContainer(v2)], securityContext: POD_SECURITY });

  await kubectlOk(s(), ['delete', 'mcpserver', 'echo', '-n', ns, '--wait=true']);
  t.same(await remainingAfterGC(s(), ns, [['deployment', 'mcpserver-echo'], ['service', 'mcpserver-echo']]), [], 'children garbage-collected');
});

t.test('MCPServer fromPackage: pip install of the package, named only through env', async (t) => {
  const ns = 'mcp-package';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [
    kaos('MCPServer', 'calc', { type: 'python-runtime', config: { tools: { fromPackage: 'mcp-server-calculator==0.2.0' } } }),
    kaos('MCPServer', 'fs', { type: 'node-runtime', config: { tools: { fromPackage: '@modelcontextprotocol/server-filesystem' } } }),
  ]);
  const python = await waitForObject(s(), 'deployment', ns, 'mcpserver-calc');
  t.strictSame(container(python, 'mcp-server'), {
    name: 'mcp-server',
    image: IMAGES.mcpPython,
    imagePullPolicy: 'IfNotPresent',
    command: [
      '/bin/sh',
      '-c',
      'pip install --no-cache-dir "$MCP_PACKAGE" && if command -v "$MCP_ENTRYPOINT" >/dev/null 2>&1; then exec "$MCP_ENTRYPOINT" "$@"; else exec python -m "$MCP_MODULE" "$@"; fi',
      'mcp-server',
    ],
    ports: httpPort(8000),
    env: [
      { name: 'MCP_PACKAGE', value: 'mcp-server-calculator==0.2.0' },
      { name: 'MCP_ENTRYPOINT', value: 'mcp-server-calculator' },
      { name: 'MCP_MODULE', value: 'mcp_server_calculator' },
    ],
    resources: {},
    ...mcpProbes,
    securityContext: HARDENED,
  });
  t.notOk(JSON.stringify(at(python, 'spec', 'template', 'spec', 'containers', 0, 'command')).includes('calculator'), 'the package name is never spliced into the command');

  const node = await waitForObject(s(), 'deployment', ns, 'mcpserver-fs');
  t.strictSame(container(node, 'mcp-server'), {
    name: 'mcp-server',
    image: IMAGES.mcpNode,
    imagePullPolicy: 'IfNotPresent',
    command: ['/bin/sh', '-c', 'exec npx -y "$MCP_PACKAGE" "$@"', 'mcp-server'],
    ports: httpPort(8000),
    env: [{ name: 'MCP_PACKAGE', value: '@modelcontextprotocol/server-filesystem' }],
    resources: {},
    ...mcpProbes,
    securityContext: HARDENED,
  });
});
