// MemoryStore children (docs/api.md, "MemoryStore"), written out from the contract: the Deployment
// with its container, env in order and volume, the Service, the PersistentVolumeClaim in local
// mode, the PodDisruptionBudget with two or more replicas, the HTTPRoute with the gateway.
import t from 'tap';
import { loadConfig } from '../../../src/config/config.ts';
import { childrenOf } from '../../../src/render/rendered.ts';
import { renderMemoryStore, shortestDecimal } from '../../../src/render/memorystore.ts';
import type { MemoryStoreInput } from '../../../src/render/inputs.ts';
import { config, gatewayConfig } from './helpers.ts';

const DEPS = { summarizationEndpoint: 'http://modelapi-chat.team.svc.cluster.local:8000' } as const;
const LABELS = { app: 'memorystore', memorystore: 'shared' };
const OWNER = [{ apiVersion: 'kaos.tools/v1alpha1', kind: 'MemoryStore', name: 'shared', uid: 'uid-1', controller: true, blockOwnerDeletion: true }];
const META = (name: string) => ({ name, namespace: 'team', labels: { ...LABELS, 'app.kubernetes.io/managed-by': 'kaos-operator' }, ownerReferences: OWNER });

function store(spec: Partial<MemoryStoreInput['spec']> & Pick<MemoryStoreInput['spec'], 'storage'>): MemoryStoreInput {
  return {
    apiVersion: 'kaos.tools/v1alpha1',
    kind: 'MemoryStore',
    metadata: { name: 'shared', namespace: 'team', uid: 'uid-1' },
    spec: {
      engine: 'mem0',
      models: { summarization: { modelAPI: 'chat', model: 'gpt-4o-mini' }, embedding: { modelAPI: 'chat', model: 'text-embedding-3-small' } },
      defaultFailureMode: 'soft',
      ...spec,
    },
  };
}

t.test('local mode: Deployment (one replica, Recreate, the claim at /data/memory), Service, PersistentVolumeClaim', async (t) => {
  const rendered = renderMemoryStore(store({ storage: { type: 'local', local: { provider: 'chroma', persistentVolume: { size: '1Gi' } } }, replicas: 1 }), DEPS, config);
  t.same(childrenOf(rendered).map((c) => `${c.kind}/${c.metadata.name}`), [
    'PersistentVolumeClaim/memorystore-shared-data',
    'Deployment/memorystore-shared',
    'Service/memorystore-shared',
  ], 'the claim before the Deployment that mounts it; no PodDisruptionBudget, no HTTPRoute');
  t.same(rendered.persistentVolumeClaim, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: META('memorystore-shared-data'),
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  const { deployment } = rendered;
  t.same(deployment.metadata, META('memorystore-shared'));
  t.equal(deployment.spec.replicas, 1);
  t.same(deployment.spec.strategy, { type: 'Recreate' }, 'one pod owns the volume at a time');
  t.same(deployment.spec.selector, { matchLabels: LABELS });
  t.same(deployment.spec.template.metadata.labels, LABELS);
  const pod = deployment.spec.template.spec;
  t.same(pod.volumes, [{ name: 'data', persistentVolumeClaim: { claimName: 'memorystore-shared-data' } }]);
  t.same(pod.containers, [
    {
      name: 'memory',
      image: 'axsauze/kaos-memory-service:0.4.8-dev',
      imagePullPolicy: 'IfNotPresent',
      ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
      env: [
        { name: 'KAOS_MEMORY_STORAGE_TYPE', value: 'local' },
        { name: 'KAOS_MEMORY_LOCAL_PATH', value: '/data/memory' },
        { name: 'KAOS_MEMORY_MODEL_BASE_URL', value: 'http://modelapi-chat.team.svc.cluster.local:8000/v1' },
        { name: 'KAOS_MEMORY_SUMMARIZATION_MODEL', value: 'gpt-4o-mini' },
        { name: 'KAOS_MEMORY_EMBEDDING_MODEL', value: 'text-embedding-3-small' },
        { name: 'KAOS_MEMORY_DEFAULT_FAILURE_MODE', value: 'soft' },
      ],
      volumeMounts: [{ name: 'data', mountPath: '/data/memory' }],
      livenessProbe: { httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' }, initialDelaySeconds: 10, periodSeconds: 15, timeoutSeconds: 5, failureThreshold: 3 },
      readinessProbe: { httpGet: { path: '/readyz', port: 8080, scheme: 'HTTP' }, initialDelaySeconds: 5, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3 },
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
    },
  ]);
  t.same(rendered.service, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: META('memorystore-shared'),
    spec: { type: 'ClusterIP', selector: LABELS, ports: [{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }] },
  });
  t.equal(rendered.endpoint, 'http://memorystore-shared.team.svc.cluster.local:8080');
});

t.test('local mode without its block: the default 5Gi claim', async (t) => {
  const rendered = renderMemoryStore(store({ storage: { type: 'local' } }), DEPS, config);
  t.same(rendered.persistentVolumeClaim?.spec.resources.requests, { storage: '5Gi' });
  t.equal(rendered.deployment.spec.replicas, 1, 'unset replicas: the mode\'s');
});

t.test('external mode: the DSN only by reference, two replicas and their PodDisruptionBudget, no claim, no Recreate', async (t) => {
  const rendered = renderMemoryStore(
    store({ storage: { type: 'external', external: { provider: 'pgvector', connectionSecretRef: { name: 'pg', key: 'dsn' }, embeddingDims: 768, collection: 'team' } }, replicas: 2 }),
    { ...DEPS, connectionSecretResourceVersion: '42' },
    config,
  );
  t.same(childrenOf(rendered).map((c) => c.kind), ['Deployment', 'Service', 'PodDisruptionBudget']);
  t.equal(rendered.deployment.spec.replicas, 2);
  t.notOk('strategy' in rendered.deployment.spec);
  const [container] = rendered.deployment.spec.template.spec.containers;
  t.same(container?.env?.slice(0, 4), [
    { name: 'KAOS_MEMORY_STORAGE_TYPE', value: 'external' },
    { name: 'KAOS_MEMORY_EXTERNAL_DSN', valueFrom: { secretKeyRef: { name: 'pg', key: 'dsn' } } },
    { name: 'KAOS_MEMORY_EXTERNAL_DIMS', value: '768' },
    { name: 'KAOS_MEMORY_EXTERNAL_COLLECTION', value: 'team' },
  ]);
  t.notOk('volumeMounts' in (container ?? {}));
  t.notOk('volumes' in rendered.deployment.spec.template.spec);
  t.same(rendered.podDisruptionBudget, {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: META('memorystore-shared'),
    spec: { minAvailable: 1, selector: { matchLabels: LABELS } },
  });
  t.match(rendered.deployment.spec.template.metadata.annotations, { 'kaos.tools/config-hash': /^[0-9a-f]{16}$/ }, "the Secret's version rolls the pods");
  const other = renderMemoryStore(
    store({ storage: { type: 'external', external: { connectionSecretRef: { name: 'pg', key: 'dsn' } } }, replicas: 2 }),
    { ...DEPS, connectionSecretResourceVersion: '43' },
    config,
  );
  t.not(other.deployment.spec.template.metadata.annotations['kaos.tools/config-hash'], rendered.deployment.spec.template.metadata.annotations['kaos.tools/config-hash']);
  const one = renderMemoryStore(store({ storage: { type: 'external', external: { connectionSecretRef: { name: 'pg', key: 'dsn' } } }, replicas: 1 }), DEPS, config);
  t.equal(one.podDisruptionBudget, undefined, 'one replica: no budget');
  t.same(one.deployment.spec.template.spec.containers[0]?.env?.[2], { name: 'KAOS_MEMORY_EXTERNAL_DIMS', value: '1536' }, 'the default dimensions');
});

t.test('every tier setting, each only when set, in the order of the contract', async (t) => {
  const rendered = renderMemoryStore(
    store({
      storage: { type: 'local', local: { collection: 'notes' } },
      shortTerm: { tokenBudget: 64, hardEventCap: 500 },
      mediumTerm: { enabled: true, compactionTrigger: 60, compactionTarget: 20, digestRetention: 3, systemPrompt: 'Summarise.' },
      longTerm: { enabled: false, defaultTopK: 5, scoreThreshold: 0.35, rerank: true, extraction: { concurrency: 4, maxRetries: 0, systemPrompt: 'Extract facts.' } },
      requestConcurrency: 8,
      defaultFailureMode: 'strict',
    }),
    DEPS,
    config,
  );
  const env = rendered.deployment.spec.template.spec.containers[0]?.env?.map((e) => `${e.name}=${e.value ?? ''}`);
  t.same(env, [
    'KAOS_MEMORY_STORAGE_TYPE=local',
    'KAOS_MEMORY_LOCAL_PATH=/data/memory',
    'KAOS_MEMORY_LOCAL_COLLECTION=notes',
    'KAOS_MEMORY_MODEL_BASE_URL=http://modelapi-chat.team.svc.cluster.local:8000/v1',
    'KAOS_MEMORY_SUMMARIZATION_MODEL=gpt-4o-mini',
    'KAOS_MEMORY_EMBEDDING_MODEL=text-embedding-3-small',
    'KAOS_MEMORY_TOKEN_BUDGET=64',
    'KAOS_MEMORY_HARD_EVENT_CAP=500',
    'KAOS_MEMORY_ROLLING_SUMMARY=true',
    'KAOS_MEMORY_COMPACTION_TRIGGER=60',
    'KAOS_MEMORY_COMPACTION_TARGET=20',
    'KAOS_MEMORY_DIGEST_RETENTION=3',
    'KAOS_MEMORY_SUMMARIZATION_SYSTEM_PROMPT=Summarise.',
    'KAOS_MEMORY_LONG_TERM_ENABLED=false',
    'KAOS_MEMORY_DEFAULT_TOP_K=5',
    'KAOS_MEMORY_SCORE_THRESHOLD=0.35',
    'KAOS_MEMORY_RERANK=true',
    'KAOS_MEMORY_EXTRACTION_CONCURRENCY=4',
    'KAOS_MEMORY_EXTRACTION_MAX_RETRIES=0',
    'KAOS_MEMORY_EXTRACTION_SYSTEM_PROMPT=Extract facts.',
    'KAOS_MEMORY_REQUEST_CONCURRENCY=8',
    'KAOS_MEMORY_DEFAULT_FAILURE_MODE=strict',
  ]);
});

t.test('score threshold in its shortest decimal form, never an exponent', async (t) => {
  t.same([0.5, 1, 0, 0.123456789, 1e-7, 2.5e-10].map(shortestDecimal), ['0.5', '1', '0', '0.123456789', '0.0000001', '0.00000000025']);
});

t.test('OpenTelemetry as for an MCPServer with the service named memorystore-<name>; then spec.container', async (t) => {
  const telemetry = loadConfig({ DEFAULT_TELEMETRY_ENABLED: 'true', DEFAULT_TELEMETRY_ENDPOINT: 'http://otel:4317' });
  const rendered = renderMemoryStore(
    store({
      storage: { type: 'local' },
      container: { image: 'mine/memory:2', args: ['--verbose'], resources: { limits: { memory: '1Gi' } }, env: [{ name: 'KAOS_MEMORY_TOKEN_BUDGET', value: '99' }, { name: 'EXTRA', value: '1' }] },
    }),
    DEPS,
    telemetry,
  );
  const container = rendered.deployment.spec.template.spec.containers[0];
  t.same(container?.env?.map((e) => e.name).slice(-7), [
    'OTEL_SDK_DISABLED',
    'OTEL_SERVICE_NAME',
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'OTEL_RESOURCE_ATTRIBUTES',
    'OTEL_PYTHON_FASTAPI_EXCLUDED_URLS',
    'KAOS_MEMORY_TOKEN_BUDGET',
    'EXTRA',
  ], 'container.env last, and it wins a clash');
  t.same(container?.env?.find((e) => e.name === 'OTEL_SERVICE_NAME'), { name: 'OTEL_SERVICE_NAME', value: 'memorystore-shared' });
  t.same(container?.env?.find((e) => e.name === 'OTEL_RESOURCE_ATTRIBUTES'), { name: 'OTEL_RESOURCE_ATTRIBUTES', value: 'service.namespace=team,kaos.resource.name=shared' });
  t.equal(container?.image, 'mine/memory:2');
  t.same(container?.args, ['--verbose']);
  t.same(container?.resources, { limits: { memory: '1Gi' } });
  const off = renderMemoryStore(store({ storage: { type: 'local' }, telemetry: { enabled: false } }), DEPS, telemetry);
  t.notOk(off.deployment.spec.template.spec.containers[0]?.env?.some((e) => e.name.startsWith('OTEL_')), "the object's block decides");
});

t.test('with the gateway: HTTPRoute memorystore-<name> at /<ns>/memorystore/<name>, port 8080, 60s by default', async (t) => {
  const rendered = renderMemoryStore(store({ storage: { type: 'local' } }), DEPS, gatewayConfig);
  t.same(rendered.httpRoute, {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: META('memorystore-shared'),
    spec: {
      parentRefs: [{ name: 'kaos-gateway', namespace: 'gateway-system' }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/team/memorystore/shared' } }],
          filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } } }],
          backendRefs: [{ name: 'memorystore-shared', port: 8080 }],
          timeouts: { request: '60s' },
        },
      ],
    },
  });
  t.same(renderMemoryStore(store({ storage: { type: 'local' }, gatewayRoute: { timeout: '5m' } }), DEPS, gatewayConfig).httpRoute?.spec.rules[0]?.timeouts, { request: '5m' });
});

t.test('an unchanged input renders byte for byte the same', async (t) => {
  const input = store({ storage: { type: 'local' } });
  t.equal(JSON.stringify(renderMemoryStore(input, DEPS, config)), JSON.stringify(renderMemoryStore(input, DEPS, config)));
});
