import t from 'tap';
import { parse } from 'yaml';
import type { ModelAPIInput } from '../../../src/render/inputs.ts';
import { PULL_MODEL_SCRIPT, renderModelAPI } from '../../../src/render/modelapi.ts';
import { childrenOf } from '../../../src/render/rendered.ts';
import { configHash, podSpecHash } from '../../../src/render/hash.ts';
import { config, envNames, envValue, gatewayConfig, mainContainer, sampleModelAPI } from './helpers.ts';

const meta = { name: 'llm', namespace: 'ns', uid: 'uid-llm' };
const labels = { app: 'modelapi', modelapi: 'llm' };
const metaLabels = { ...labels, 'app.kubernetes.io/managed-by': 'kaos-operator' };
const owner = { apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', name: 'llm', uid: 'uid-llm', controller: true, blockOwnerDeletion: true };

function proxy(proxyConfig: NonNullable<ModelAPIInput['spec']['proxyConfig']>, extra: Partial<ModelAPIInput['spec']> = {}): ModelAPIInput {
  return { metadata: meta, spec: { mode: 'Proxy', proxyConfig, ...extra } };
}

const annotations = (m: ModelAPIInput, deps = {}) => renderModelAPI(m, deps, config).deployment.spec.template.metadata.annotations;

t.test('Proxy, rule (a): configYaml.fromString verbatim', async (t) => {
  const text = 'model_list:\n  - model_name: gpt\n    litellm_params: {model: openai/gpt-4o}\n# a comment stays\n';
  const r = renderModelAPI(proxy({ configYaml: { fromString: text }, apiBase: 'http://ignored', model: 'ignored' }), {}, config);
  t.strictSame(r.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'litellm-config-llm', namespace: 'ns', labels: metaLabels, ownerReferences: [owner] },
    data: { 'config.yaml': text },
  });
});

t.test('Proxy, rule (b): apiBase → wildcard (sample 4)', async (t) => {
  const m = sampleModelAPI('4-dev-ollama-proxy-agent.yaml', 'dev-ollama-proxy');
  const r = renderModelAPI(m, {}, config);
  const content = r.configMap?.data['config.yaml'] ?? '';
  t.equal(
    content,
    [
      'model_list:',
      '  - model_name: "*"',
      '    litellm_params:',
      '      model: "*"',
      '      api_base: "http://host.docker.internal:11434"',
      'litellm_settings:',
      '  drop_params: true',
      '',
    ].join('\n'),
  );
  t.strictSame(parse(content), {
    model_list: [{ model_name: '*', litellm_params: { model: '*', api_base: 'http://host.docker.internal:11434' } }],
    litellm_settings: { drop_params: true },
  });
  t.equal(r.configMap?.metadata.name, 'litellm-config-dev-ollama-proxy');
  // Sample 4 sets LITELLM_LOG itself: not generated again.
  const c = mainContainer(r.deployment);
  t.strictSame(c.env, [
    { name: 'OPENAI_API_KEY', value: 'sk-test' },
    { name: 'LITELLM_LOG', value: 'INFO' },
  ]);
  t.equal(r.endpoint, 'http://modelapi-dev-ollama-proxy.kaos-dev.svc.cluster.local:8000');
});

t.test('Proxy: apiBase beats model', async (t) => {
  const r = renderModelAPI(proxy({ apiBase: 'https://api.example.com/v1', model: 'gpt-4o' }), {}, config);
  t.match(r.configMap?.data['config.yaml'], /model_name: "\*"/);
});

t.test('Proxy, rule (c): model → single entry', async (t) => {
  const r = renderModelAPI(proxy({ model: 'ollama/smollm2:135m' }), {}, config);
  t.strictSame(parse(r.configMap?.data['config.yaml'] ?? ''), {
    model_list: [{ model_name: 'ollama/smollm2:135m', litellm_params: { model: 'ollama/smollm2:135m' } }],
    litellm_settings: { drop_params: true },
  });
  // YAML 1.1 readers (PyYAML) would turn a plain `yes` into a boolean: strings are quoted.
  t.match(renderModelAPI(proxy({ model: 'yes' }), {}, config).configMap?.data['config.yaml'], /model_name: "yes"/);
});

t.test('Proxy Deployment: container, args, env, mount, probes, Service', async (t) => {
  const r = renderModelAPI(proxy({ model: 'gpt-4o', env: [{ name: 'OPENAI_API_KEY', valueFrom: { secretKeyRef: { name: 'k', key: 'v' } } }] }), {}, config);
  const d = r.deployment;
  t.strictSame(d.metadata, { name: 'modelapi-llm', namespace: 'ns', labels: metaLabels, ownerReferences: [owner] });
  t.strictSame(d.spec.selector.matchLabels, labels);
  t.equal(d.spec.replicas, 1);
  const c = mainContainer(d);
  t.equal(c.name, 'model-api');
  t.equal(c.image, 'ghcr.io/berriai/litellm:main-v1.74.3-stable');
  t.equal(c.imagePullPolicy, 'IfNotPresent');
  t.strictSame(c.args, ['--config', '/etc/litellm/config.yaml', '--port', '8000']);
  t.notOk('command' in c);
  t.strictSame(c.env, [
    { name: 'OPENAI_API_KEY', valueFrom: { secretKeyRef: { name: 'k', key: 'v' } } },
    { name: 'LITELLM_LOG', value: 'INFO' },
  ]);
  t.strictSame(c.ports, [{ name: 'http', containerPort: 8000, protocol: 'TCP' }]);
  t.strictSame(c.volumeMounts, [{ name: 'litellm-config', mountPath: '/etc/litellm' }]);
  t.strictSame(c.livenessProbe, {
    httpGet: { path: '/health/liveliness', port: 8000, scheme: 'HTTP' },
    initialDelaySeconds: 30,
    periodSeconds: 10,
    timeoutSeconds: 5,
    failureThreshold: 3,
  });
  t.strictSame(c.readinessProbe, {
    httpGet: { path: '/health/liveliness', port: 8000, scheme: 'HTTP' },
    initialDelaySeconds: 15,
    periodSeconds: 5,
    timeoutSeconds: 5,
    failureThreshold: 3,
  });
  t.strictSame(d.spec.template.spec.volumes, [{ name: 'litellm-config', configMap: { name: 'litellm-config-llm' } }]);
  t.notOk('initContainers' in d.spec.template.spec);
  t.strictSame(r.service?.spec, {
    type: 'ClusterIP',
    selector: labels,
    ports: [{ name: 'http', port: 8000, targetPort: 8000, protocol: 'TCP' }],
  });
  t.equal(r.service?.metadata.name, 'modelapi-llm');
  t.same(childrenOf(r).map((x) => x.kind), ['ConfigMap', 'Deployment', 'Service']);
});

t.test('Proxy: LITELLM_LOG set by the user in container.env wins', async (t) => {
  const r = renderModelAPI(proxy({ model: 'm' }, { container: { env: [{ name: 'LITELLM_LOG', value: 'DEBUG' }] } }), {}, config);
  t.strictSame(mainContainer(r.deployment).env, [{ name: 'LITELLM_LOG', value: 'DEBUG' }]);
});

t.test('Proxy config-hash: the ConfigMap content; changes when it changes', async (t) => {
  const a = annotations(proxy({ model: 'a' }));
  const b = annotations(proxy({ model: 'b' }));
  const content = renderModelAPI(proxy({ model: 'a' }), {}, config).configMap?.data['config.yaml'] ?? '';
  t.equal(a['kaos.tools/config-hash'], configHash(content));
  t.not(a['kaos.tools/config-hash'], b['kaos.tools/config-hash']);
  t.equal(a['kaos.tools/config-hash'], annotations(proxy({ model: 'a' }))['kaos.tools/config-hash']);
});

t.test('Proxy fromSecretKeyRef: Secret key mounted as config.yaml, no ConfigMap', async (t) => {
  const m = proxy({ configYaml: { fromSecretKeyRef: { name: 'litellm-secret', key: 'litellm.yaml' } }, apiBase: 'http://ignored' });
  const r = renderModelAPI(m, {}, config);
  t.notOk('configMap' in r);
  t.strictSame(r.deployment.spec.template.spec.volumes, [
    { name: 'litellm-config', secret: { secretName: 'litellm-secret', items: [{ key: 'litellm.yaml', path: 'config.yaml' }] } },
  ]);
  t.strictSame(mainContainer(r.deployment).volumeMounts, [{ name: 'litellm-config', mountPath: '/etc/litellm' }]);
  t.strictSame(mainContainer(r.deployment).args, ['--config', '/etc/litellm/config.yaml', '--port', '8000']);
  t.notOk('kaos.tools/config-hash' in r.deployment.spec.template.metadata.annotations, 'Secret version unknown → no config hash');
  const known = annotations(m, { secretResourceVersion: '7' });
  t.equal(known['kaos.tools/config-hash'], configHash('secret/litellm-secret@7/litellm.yaml'), 'identity and version, never content');
  t.not(known['kaos.tools/config-hash'], annotations(m, { secretResourceVersion: '8' })['kaos.tools/config-hash']);
  t.equal(known['kaos.tools/pod-spec-hash'], annotations(m, { secretResourceVersion: '8' })['kaos.tools/pod-spec-hash'], 'the pod spec itself does not change');
  const optional = renderModelAPI(proxy({ configYaml: { fromSecretKeyRef: { name: 's', key: 'k', optional: true } } }), {}, config);
  t.strictSame(optional.deployment.spec.template.spec.volumes?.[0]?.secret, {
    secretName: 's',
    items: [{ key: 'k', path: 'config.yaml' }],
    optional: true,
  });
});

t.test('Hosted (sample 1): ollama, init container pulls through an env var, port 11434', async (t) => {
  const m = sampleModelAPI('1-simple-echo-agent.yaml', 'simple-modelapi');
  const r = renderModelAPI(m, {}, config);
  t.notOk('configMap' in r);
  const spec = r.deployment.spec.template.spec;
  t.strictSame(spec.volumes, [{ name: 'ollama-data', emptyDir: {} }]);
  t.strictSame(spec.initContainers, [
    {
      name: 'pull-model',
      image: 'ollama/ollama:0.11.4',
      imagePullPolicy: 'IfNotPresent',
      command: ['/bin/sh', '-c'],
      args: ['ollama serve & OLLAMA_PID=$! && sleep 5 && ollama pull "$OLLAMA_MODEL" && kill $OLLAMA_PID'],
      env: [
        { name: 'OLLAMA_DEBUG', value: 'false' },
        { name: 'OLLAMA_MODEL', value: 'smollm2:135m' },
      ],
      volumeMounts: [{ name: 'ollama-data', mountPath: '/root/.ollama' }],
      // The default (hardened) security context reaches the init container too.
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
    },
  ]);
  const c = mainContainer(r.deployment);
  t.equal(c.name, 'model-api');
  t.equal(c.image, 'ollama/ollama:0.11.4');
  t.notOk('args' in c);
  t.notOk('command' in c);
  t.strictSame(c.env, [{ name: 'OLLAMA_DEBUG', value: 'false' }]);
  t.strictSame(c.ports, [{ name: 'http', containerPort: 11434, protocol: 'TCP' }]);
  t.strictSame(c.volumeMounts, [{ name: 'ollama-data', mountPath: '/root/.ollama' }]);
  t.strictSame(c.livenessProbe, { httpGet: { path: '/', port: 11434, scheme: 'HTTP' }, initialDelaySeconds: 30, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3 });
  t.strictSame(c.readinessProbe, { httpGet: { path: '/', port: 11434, scheme: 'HTTP' }, initialDelaySeconds: 15, periodSeconds: 5, timeoutSeconds: 5, failureThreshold: 3 });
  t.strictSame(r.service?.spec.ports, [{ name: 'http', port: 11434, targetPort: 11434, protocol: 'TCP' }]);
  t.equal(r.endpoint, 'http://modelapi-simple-modelapi.kaos-simple.svc.cluster.local:11434');
  t.strictSame(r.deployment.spec.template.metadata.annotations, {
    'kubectl.kubernetes.io/default-container': 'model-api',
    'kaos.tools/pod-spec-hash': podSpecHash(spec),
  });
});

t.test('Hosted: a model with shell characters never reaches the script', async (t) => {
  const evil = 'x"; rm -rf / #$(id)`id`';
  const r = renderModelAPI({ metadata: meta, spec: { mode: 'Hosted', hostedConfig: { model: evil, env: [{ name: 'OLLAMA_MODEL', value: 'user' }] } } }, {}, config);
  const init = r.deployment.spec.template.spec.initContainers?.[0];
  t.equal(init?.args?.[0], PULL_MODEL_SCRIPT);
  t.notOk(JSON.stringify([init?.command, init?.args]).includes('rm -rf'));
  t.strictSame(init?.env, [{ name: 'OLLAMA_MODEL', value: evil }], 'the generated model wins over a user entry of the same name');
});

t.test('Hosted: spec.container.image is used by both containers; container.env only by the main one', async (t) => {
  const r = renderModelAPI(
    { metadata: meta, spec: { mode: 'Hosted', hostedConfig: { model: 'm' }, container: { image: 'ollama/ollama:0.5', env: [{ name: 'X', value: '1' }] } } },
    {},
    config,
  );
  t.equal(mainContainer(r.deployment).image, 'ollama/ollama:0.5');
  t.equal(r.deployment.spec.template.spec.initContainers?.[0]?.image, 'ollama/ollama:0.5');
  t.strictSame(envNames(r.deployment.spec.template.spec.initContainers?.[0]?.env), ['OLLAMA_MODEL']);
  t.equal(envValue(mainContainer(r.deployment).env, 'X'), '1');
});

t.test('mode switch re-renders ports, volumes and the ConfigMap', async (t) => {
  const p = renderModelAPI(proxy({ model: 'm' }), {}, config);
  const h = renderModelAPI({ metadata: meta, spec: { mode: 'Hosted', hostedConfig: { model: 'm' } } }, {}, config);
  t.ok(p.configMap);
  t.notOk(h.configMap);
  t.not(p.endpoint, h.endpoint);
  t.not(p.deployment.spec.template.metadata.annotations['kaos.tools/pod-spec-hash'], h.deployment.spec.template.metadata.annotations['kaos.tools/pod-spec-hash']);
});

t.test('gateway enabled: HTTPRoute modelapi-<name> with the mode port', async (t) => {
  const r = renderModelAPI(sampleModelAPI('1-simple-echo-agent.yaml', 'simple-modelapi'), {}, gatewayConfig);
  t.strictSame(r.httpRoute?.spec.rules[0]?.backendRefs, [{ name: 'modelapi-simple-modelapi', port: 11434 }]);
  t.equal(r.httpRoute?.spec.rules[0]?.matches[0]?.path.value, '/kaos-simple/modelapi/simple-modelapi');
  t.strictSame(r.httpRoute?.spec.rules[0]?.timeouts, { request: '120s' });
});

t.test('podSpec override on the model-api container (KAOS docs example)', async (t) => {
  const r = renderModelAPI(
    proxy({ model: 'm' }, { podSpec: { containers: [{ name: 'model-api', resources: { limits: { memory: '2Gi' } } }] } }),
    {},
    config,
  );
  t.strictSame(mainContainer(r.deployment).resources, { limits: { memory: '2Gi' } });
  t.strictSame(mainContainer(r.deployment).args, ['--config', '/etc/litellm/config.yaml', '--port', '8000']);
});
