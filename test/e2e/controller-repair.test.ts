// End-to-end: the controller keeps children as desired when the world moves under it:
// deleted children come back, its own fields edited with kubectl are put back, fields it does not
// own (replicas after `kubectl scale`) are left alone, children no longer desired are pruned
// (`expose: false`, Proxy → Hosted), children an Agent deleted and created again left behind are
// deleted when the garbage collector missed them, and a Secret behind fromSecretKeyRef rolls the pods. Real
// kube-apiserver + garbage collector, the operator as dist/main.js under its ServiceAccount;
// every expectation written out from docs/api.md. Each subtest works in a namespace of its own.
//
// Run `npm run build` first: the operator process is dist/main.js.
import t from 'tap';
import { parse } from 'yaml';
import {
  HARDENED,
  applyObjects,
  at,
  childIdentity,
  configHash,
  createNamespace,
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
  uidOf,
  waitForGone,
  waitForObject,
  type Json,
  remainingAfterGC,
} from './support/children.ts';
import { IMAGES, useStack } from './support/stack.ts';
import { eventually } from '../support/poll.ts';

const HASH = /^[0-9a-f]{16}$/;

const s = useStack(t);

const mainContainer = (deployment: Json): Json => (podSpecOf(deployment).containers as Json[])[0] ?? {};
const patch = (resource: string, name: string, ns: string, body: Json, type = 'merge'): Promise<string> =>
  kubectlOk(s(), ['patch', resource, name, '-n', ns, `--type=${type}`, '-p', JSON.stringify(body)]);

t.test('a deleted Deployment, Service and ConfigMap each come back', async (t) => {
  const ns = 'repair-deleted';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [kaos('ModelAPI', 'llm', { mode: 'Proxy', proxyConfig: { model: 'gpt-4o-mini' } })]);
  const parent = await waitForObject(s(), 'modelapi', ns, 'llm');
  for (const [resource, name] of [['deployment', 'modelapi-llm'], ['service', 'modelapi-llm'], ['configmap', 'litellm-config-llm']] as const) {
    const before = await waitForObject(s(), resource, ns, name);
    await kubectlOk(s(), ['delete', resource, name, '-n', ns, '--wait=true']);
    const after = await waitForObject(s(), resource, ns, name, (o) => uidOf(o) !== uidOf(before), `${resource} ${name} re-created`);
    t.strictSame(childIdentity(after), expectedIdentity('ModelAPI', parent, name), `${resource} ${name} is back, owned by its ModelAPI`);
    if (resource === 'deployment') t.equal(podSpecHash(after), podSpecHash(before), 'the same pod spec');
    if (resource === 'service') t.strictSame(serviceShape(after), serviceShape(before), 'the same Service spec');
    if (resource === 'configmap') t.strictSame(at(after, 'data'), at(before, 'data'), 'the same config.yaml');
  }
});

t.test('owned fields edited with kubectl are put back; replicas after kubectl scale are left alone', async (t) => {
  const ns = 'repair-edited';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [
    kaos('ModelAPI', 'llm', { mode: 'Proxy', proxyConfig: { model: 'gpt-4o-mini' } }),
    kaos('Agent', 'edited', { modelAPI: 'llm', waitForDependencies: false, config: { instructions: 'One.' } }),
  ]);
  const original = await waitForObject(s(), 'deployment', ns, 'agent-edited');

  // The image of the generated container: the operator's field.
  await kubectlOk(s(), ['set', 'image', 'deployment/agent-edited', '-n', ns, 'agent=e2e.local/someone-else:1']);
  const restored = await waitForObject(s(), 'deployment', ns, 'agent-edited', (d) =>
    Number(at(d, 'metadata', 'generation')) > Number(at(original, 'metadata', 'generation')) && mainContainer(d).image === IMAGES.agent,
  'the image put back');
  t.equal(mainContainer(restored).image, IMAGES.agent, 'image put back');
  t.equal(podSpecHash(restored), podSpecHash(original), 'the pod spec is the generated one again');

  // The Service's targetPort: the operator's field.
  await waitForObject(s(), 'service', ns, 'agent-edited');
  await patch('service', 'agent-edited', ns, [{ op: 'replace', path: '/spec/ports/0/targetPort', value: 9999 }] as unknown as Json, 'json');
  const service = await waitForObject(s(), 'service', ns, 'agent-edited', (o) => at(o, 'spec', 'ports', 0, 'targetPort') === 8000, 'targetPort put back');
  t.strictSame(serviceShape(service), { type: 'ClusterIP', selector: { app: 'agent', agent: 'edited' }, ports: servicePorts(8000) });

  // The ConfigMap's content: the operator's field.
  await patch('configmap', 'litellm-config-llm', ns, { data: { 'config.yaml': 'model_list: []\n' } });
  const configMap = await waitForObject(s(), 'configmap', ns, 'litellm-config-llm', (o) => at(o, 'data', 'config.yaml') !== 'model_list: []\n', 'config.yaml put back');
  t.strictSame(parse(String(at(configMap, 'data', 'config.yaml'))), {
    model_list: [{ model_name: 'gpt-4o-mini', litellm_params: { model: 'gpt-4o-mini' } }],
    litellm_settings: { drop_params: true },
  });

  // replicas: set at creation only. Scale, then make the operator apply the Deployment again
  // (a config change): the new pod spec lands and the replicas stay as scaled.
  await kubectlOk(s(), ['scale', 'deployment/agent-edited', '-n', ns, '--replicas=3']);
  await patch('agent', 'edited', ns, { spec: { config: { instructions: 'Two.' } } });
  const reapplied = await waitForObject(s(), 'deployment', ns, 'agent-edited', (d) => podSpecHash(d) !== podSpecHash(original), 'the Deployment re-applied');
  t.strictSame((mainContainer(reapplied).env as Json[]).find((e) => e.name === 'AGENT_INSTRUCTIONS'), { name: 'AGENT_INSTRUCTIONS', value: 'Two.' }, 'the operator applied');
  t.equal(at(reapplied, 'spec', 'replicas'), 3, 'replicas left as kubectl scale set them');
});

t.test('expose: false removes the Service and clears status.endpoint', async (t) => {
  const ns = 'repair-expose';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [
    kaos('ModelAPI', 'llm', { mode: 'Proxy', proxyConfig: { model: 'gpt-4o-mini' } }),
    kaos('Agent', 'hidden', { modelAPI: 'llm', waitForDependencies: false }),
  ]);
  await waitForObject(s(), 'service', ns, 'agent-hidden');
  const exposed = await waitForObject(s(), 'agent', ns, 'hidden', (o) => at(o, 'status', 'endpoint') !== undefined);
  t.equal(at(exposed, 'status', 'endpoint'), `http://agent-hidden.${ns}.svc.cluster.local:8000`);

  await patch('agent', 'hidden', ns, { spec: { agentNetwork: { expose: false } } });
  await waitForGone(s(), 'service', ns, 'agent-hidden');
  const unexposed = await waitForObject(s(), 'agent', ns, 'hidden', (o) => at(o, 'status', 'endpoint') === undefined, 'status.endpoint cleared');
  t.equal(at(unexposed, 'status', 'endpoint'), undefined, 'no endpoint');
  t.ok(await getObject(s(), 'deployment', ns, 'agent-hidden'), 'the Deployment stays');
});

t.test('Proxy → Hosted removes the ConfigMap and changes ports', async (t) => {
  const ns = 'repair-mode';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [kaos('ModelAPI', 'switch', { mode: 'Proxy', proxyConfig: { model: 'gpt-4o-mini' } })]);
  await waitForObject(s(), 'configmap', ns, 'litellm-config-switch');
  const proxy = await waitForObject(s(), 'deployment', ns, 'modelapi-switch');
  t.strictSame(mainContainer(proxy).ports, httpPort(8000));

  await patch('modelapi', 'switch', ns, { spec: { mode: 'Hosted', proxyConfig: null, hostedConfig: { model: 'smollm2:135m' } } });
  await waitForGone(s(), 'configmap', ns, 'litellm-config-switch');
  const hosted = await waitForObject(s(), 'deployment', ns, 'modelapi-switch', (d) => podSpecHash(d) !== podSpecHash(proxy), 'Hosted pod spec');
  const spec = podSpecOf(hosted);
  t.strictSame(mainContainer(hosted), {
    name: 'model-api',
    image: IMAGES.ollama,
    imagePullPolicy: 'IfNotPresent',
    ports: httpPort(11434),
    resources: {},
    volumeMounts: [{ name: 'ollama-data', mountPath: '/root/.ollama' }],
    livenessProbe: probe(httpGet('/', 11434), 30, 10, 5, 3),
    readinessProbe: probe(httpGet('/', 11434), 15, 5, 5, 3),
    securityContext: HARDENED,
  }, 'Ollama container: image, port 11434, no args, no LiteLLM env');
  t.strictSame((spec.initContainers as Json[]).map((c) => c.name), ['pull-model']);
  t.strictSame(spec.volumes, [{ name: 'ollama-data', emptyDir: {} }], 'the LiteLLM config volume is gone');
  t.equal(configHash(hosted), undefined, 'no config-hash without a config file');
  const service = await waitForObject(s(), 'service', ns, 'modelapi-switch', (o) => at(o, 'spec', 'ports', 0, 'port') === 11434, 'Service on 11434');
  t.strictSame(at(service, 'spec', 'ports'), servicePorts(11434));
  const status = await waitForObject(s(), 'modelapi', ns, 'switch', (o) => String(at(o, 'status', 'endpoint')).endsWith(':11434'), 'endpoint on 11434');
  t.equal(at(status, 'status', 'endpoint'), `http://modelapi-switch.${ns}.svc.cluster.local:11434`);
});

t.test('a port or env var another manager also holds goes when the operator drops it: no fragment, no wedged apply', async (t) => {
  // Another field manager's server-side apply of the operator's own port and env var (the
  // operator takes the values back, but the other manager keeps a share of the key fields). Then
  // Proxy → Hosted drops both: server-side apply alone would leave each as a fragment that the
  // other manager still holds — a port without its name (beside the new one, an invalid Service:
  // every apply refused), an env var without its value.
  const ns = 'repair-shared';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [kaos('ModelAPI', 'shared', { mode: 'Proxy', proxyConfig: { model: 'gpt-4o-mini' } })]);
  const proxy = await waitForObject(s(), 'deployment', ns, 'modelapi-shared');
  const dropped = (mainContainer(proxy).env as Json[] | undefined)?.[0]?.name;
  t.ok(dropped, 'the Proxy container has an env var to drop');
  await waitForObject(s(), 'service', ns, 'modelapi-shared');
  const other = ['apply', '--server-side', '--force-conflicts', '--field-manager=someone-else', '-n', ns, '-f', '-'];
  await kubectlOk(s(), other, JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'modelapi-shared' }, spec: { ports: [{ port: 8000, protocol: 'TCP', targetPort: 9999 }] } }));
  await kubectlOk(s(), other, JSON.stringify({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'modelapi-shared' },
    spec: { template: { spec: { containers: [{ name: 'model-api', env: [{ name: dropped, value: 'drifted' }] }] } } },
  }));
  await waitForObject(s(), 'service', ns, 'modelapi-shared', (o) => at(o, 'spec', 'ports', 0, 'targetPort') === 8000, 'targetPort put back');
  const repaired = await waitForObject(s(), 'deployment', ns, 'modelapi-shared', (d) =>
    (mainContainer(d).env as Json[]).some((e) => e.name === dropped && e.value !== 'drifted'), 'the env value put back');

  await patch('modelapi', 'shared', ns, { spec: { mode: 'Hosted', proxyConfig: null, hostedConfig: { model: 'smollm2:135m' } } });
  const service = await waitForObject(s(), 'service', ns, 'modelapi-shared', (o) => (at(o, 'spec', 'ports') as Json[]).some((p) => p.port === 11434), 'Service on 11434');
  t.strictSame(at(service, 'spec', 'ports'), servicePorts(11434), 'the new port only: 8000 is gone whole');
  const hosted = await waitForObject(s(), 'deployment', ns, 'modelapi-shared', (d) => podSpecHash(d) !== podSpecHash(proxy), 'Hosted pod spec');
  t.equal(mainContainer(hosted).env, undefined, `no env left, ${String(dropped)} included`);
  t.equal(at(hosted, 'metadata', 'generation'), Number(at(repaired, 'metadata', 'generation')) + 1, 'one change of the Deployment: the release wrote no spec');
  const status = await waitForObject(s(), 'modelapi', ns, 'shared', (o) => String(at(o, 'status', 'endpoint')).endsWith(':11434'), 'endpoint on 11434');
  t.equal(at(status, 'status', 'observedGeneration'), at(status, 'metadata', 'generation'), 'the new generation reconciled');
});

t.test('deleting a parent removes every child (garbage collector)', async (t) => {
  const ns = 'repair-gc';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [
    kaos('ModelAPI', 'llm', { mode: 'Proxy', proxyConfig: { model: 'gpt-4o-mini' } }),
    kaos('MCPServer', 'tools', { type: 'python-runtime', config: { tools: { fromString: 'def f():\n    return 1\n' } } }),
    kaos('Agent', 'gone', { modelAPI: 'llm', mcpServers: ['tools'], waitForDependencies: false }),
  ]);
  const children: Array<[string, string]> = [
    ['deployment', 'agent-gone'], ['service', 'agent-gone'],
    ['deployment', 'modelapi-llm'], ['service', 'modelapi-llm'], ['configmap', 'litellm-config-llm'],
    ['deployment', 'mcpserver-tools'], ['service', 'mcpserver-tools'],
  ];
  for (const [resource, name] of children) await waitForObject(s(), resource, ns, name);
  await kubectlOk(s(), ['delete', 'agent', 'gone', '-n', ns, '--wait=true']);
  t.same(await remainingAfterGC(s(), ns, [['deployment', 'agent-gone'], ['service', 'agent-gone']]), [], 'the Agent\'s children garbage-collected');
  t.ok(await getObject(s(), 'deployment', ns, 'modelapi-llm'), 'the ModelAPI\'s children are not the Agent\'s');
  // --wait=false: the delete webhook may warn; deletion itself never waits on the operator.
  await kubectlOk(s(), ['delete', 'modelapi', 'llm', '-n', ns]);
  await kubectlOk(s(), ['delete', 'mcpserver', 'tools', '-n', ns]);
  t.same(await remainingAfterGC(s(), ns, children), [], 'every child garbage-collected');
});

t.test('an Agent deleted and created again while the garbage collector is not looking: the old children go, the new Agent gets its own', async (t) => {
  const ns = 'repair-orphans';
  await createNamespace(s(), ns);
  const spec = { modelAPI: 'llm', waitForDependencies: false };
  await applyObjects(s(), ns, [kaos('ModelAPI', 'llm', { mode: 'Proxy', proxyConfig: { model: 'gpt-4o-mini' } }), kaos('Agent', 'again', spec)]);
  const first = await waitForObject(s(), 'agent', ns, 'again');
  const old = [await waitForObject(s(), 'deployment', ns, 'agent-again'), await waitForObject(s(), 'service', ns, 'agent-again')];
  // With kube-controller-manager stopped, its garbage collector misses the deletion, as its relist
  // does after a kube-apiserver restart: only the operator can tell the children are orphans now.
  await s().plane.pauseControllerManager(async () => {
    await kubectlOk(s(), ['delete', 'agent', 'again', '-n', ns, '--wait=true']);
    await applyObjects(s(), ns, [kaos('Agent', 'again', spec)]);
    const second = await waitForObject(s(), 'agent', ns, 'again');
    t.not(uidOf(second), uidOf(first), 'a new Agent of the same name');
    for (const [resource, before] of [['deployment', old[0]], ['service', old[1]]] as const) {
      const after = await waitForObject(s(), resource, ns, 'agent-again', (o) => uidOf(o) !== uidOf(before ?? {}), `${resource} agent-again replaced`);
      t.strictSame(childIdentity(after), expectedIdentity('Agent', second, 'agent-again'), `a new ${resource}, controlled by the new Agent`);
    }
    const events = await eventually('the Deleted Event on the new Agent', async () => {
      const list = JSON.parse(await kubectlOk(s(), ['get', 'events', '-n', ns, '--field-selector', `involvedObject.uid=${uidOf(second)}`, '-o', 'json'])) as { items: Json[] };
      const deleted = list.items.filter((e) => e.reason === 'Deleted');
      return deleted.length > 0 ? deleted : undefined;
    }, { timeoutMs: 30_000, intervalMs: 500 });
    t.equal(at(events[0], 'message'), `Deleted Deployment agent-again, Service agent-again: left by an earlier Agent again (uid ${uidOf(first)}) that no longer exists`);
  });
});

t.test('a Secret change behind fromSecretKeyRef rolls the pods (new config-hash)', async (t) => {
  const ns = 'repair-secret';
  await createNamespace(s(), ns);
  const liteLLMConfig = (model: string): string => `model_list:\n  - model_name: ${model}\n    litellm_params:\n      model: ${model}\n`;
  await kubectlOk(s(), ['create', 'secret', 'generic', 'litellm', '-n', ns, `--from-literal=config.yaml=${liteLLMConfig('gpt-4o-mini')}`]);
  await kubectlOk(s(), ['create', 'secret', 'generic', 'tools', '-n', ns, '--from-literal=tools.py=def one():\n    return 1\n']);
  await applyObjects(s(), ns, [
    kaos('ModelAPI', 'secret-llm', { mode: 'Proxy', proxyConfig: { configYaml: { fromSecretKeyRef: { name: 'litellm', key: 'config.yaml' } } } }),
    kaos('MCPServer', 'secret-tools', { type: 'python-runtime', config: { tools: { fromSecretKeyRef: { name: 'tools', key: 'tools.py' } } } }),
  ]);

  const modelAPI = await waitForObject(s(), 'deployment', ns, 'modelapi-secret-llm', (d) => configHash(d) !== undefined, 'ModelAPI Deployment with a config-hash');
  t.match(configHash(modelAPI), HASH);
  t.strictSame(podSpecOf(modelAPI).volumes, [
    { name: 'litellm-config', secret: { secretName: 'litellm', items: [{ key: 'config.yaml', path: 'config.yaml' }], defaultMode: 420 } },
  ], 'the Secret key mounted as config.yaml');
  t.strictSame(mainContainer(modelAPI).volumeMounts, [{ name: 'litellm-config', mountPath: '/etc/litellm' }]);
  t.equal(await getObject(s(), 'configmap', ns, 'litellm-config-secret-llm'), undefined, 'no ConfigMap when the config comes from a Secret');

  const mcp = await waitForObject(s(), 'deployment', ns, 'mcpserver-secret-tools', (d) => configHash(d) !== undefined, 'MCPServer Deployment with a config-hash');
  t.match(configHash(mcp), HASH);
  t.strictSame(mainContainer(mcp).env, [{ name: 'MCP_TOOLS_STRING', valueFrom: { secretKeyRef: { name: 'tools', key: 'tools.py' } } }]);
  t.strictSame(mainContainer(mcp).command, ['python', '-m', 'mcptools.server']);

  await patch('secret', 'litellm', ns, { stringData: { 'config.yaml': liteLLMConfig('gpt-4o') } });
  const rolledModelAPI = await waitForObject(s(), 'deployment', ns, 'modelapi-secret-llm', (d) => configHash(d) !== configHash(modelAPI), 'a new config-hash on the ModelAPI');
  t.match(configHash(rolledModelAPI), HASH);
  t.equal(podSpecHash(rolledModelAPI), podSpecHash(modelAPI), 'same pod spec: the config hash alone rolls the pods');

  await patch('secret', 'tools', ns, { stringData: { 'tools.py': 'def two():\n    return 2\n' } });
  const rolledMCP = await waitForObject(s(), 'deployment', ns, 'mcpserver-secret-tools', (d) => configHash(d) !== configHash(mcp), 'a new config-hash on the MCPServer');
  t.match(configHash(rolledMCP), HASH);
  t.equal(configHash(await waitForObject(s(), 'deployment', ns, 'modelapi-secret-llm')), configHash(rolledModelAPI), 'the other Secret\'s change leaves the ModelAPI alone');
});
