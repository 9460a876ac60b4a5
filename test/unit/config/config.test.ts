import t from 'tap';
import { ConfigError, loadConfig } from '../../../src/config/config.ts';

t.test('defaults: docs/configuration.md images and model, webhook and metrics ports', async (t) => {
  const c = loadConfig({});
  t.same(c.images, {
    agent: 'axsauze/kaos-agent:0.1.3',
    mcpServer: 'axsauze/kaos-agent:0.1.3',
    mcpPython: 'python:3.12-slim',
    mcpNode: 'node:22-slim',
    litellm: 'ghcr.io/berriai/litellm:main-v1.74.3-stable',
    ollama: 'ollama/ollama:0.11.4',
    memoryService: 'axsauze/kaos-memory-service:0.4.8-dev',
  });
  t.equal(c.defaultModelName, 'smollm2:135m');
  t.same(c.gateway, { enabled: false, name: '', namespace: '', defaultTimeouts: { agent: '120s', modelAPI: '120s', mcpServer: '30s', memoryStore: '60s' } });
  t.equal(c.referencePolicy, 'Enforce');
  t.same(c.webhook, { enabled: true, thread: true, threadFromObjects: 500, host: '0.0.0.0', port: 9443, certDir: '/tmp/k8s-webhook-server/serving-certs', certCheckIntervalSeconds: 10, maxConnections: 1000, bodyTimeoutSeconds: 10 });
  t.equal(c.metricsPort, 8080);
  t.equal(c.logLevel, 'info');
  t.equal(c.kubeconfig, '', 'in-cluster');
  t.equal(c.shutdownDelaySeconds, 5);
  t.equal(loadConfig({ SHUTDOWN_DELAY_SECONDS: '0' }).shutdownDelaySeconds, 0, '0 turns the delay off');
  t.throws(() => loadConfig({ SHUTDOWN_DELAY_SECONDS: '-1' }), /SHUTDOWN_DELAY_SECONDS: must be a number of seconds from 0 to 300, got "-1"/);
});

t.test('values from the environment; an empty value means the default', async (t) => {
  const c = loadConfig({
    DEFAULT_AGENT_IMAGE: 'r/agent:1',
    DEFAULT_MODEL_NAME: '',
    GATEWAY_API_ENABLED: 'true',
    GATEWAY_NAME: 'gw',
    GATEWAY_NAMESPACE: 'gw-system',
    GATEWAY_DEFAULT_MCP_TIMEOUT: '1m30s',
    GATEWAY_DEFAULT_MEMORYSTORE_TIMEOUT: '2m',
    DEFAULT_MEMORY_SERVICE_IMAGE: 'r/memory:1',
    REFERENCE_POLICY: 'Warn',
    WEBHOOK_PORT: '10443',
    LOG_LEVEL: 'debug',
  });
  t.equal(c.images.agent, 'r/agent:1');
  t.equal(c.images.memoryService, 'r/memory:1');
  t.equal(c.gateway.defaultTimeouts.memoryStore, '2m');
  t.equal(c.defaultModelName, 'smollm2:135m');
  t.same([c.gateway.enabled, c.gateway.name, c.gateway.namespace, c.gateway.defaultTimeouts.mcpServer], [true, 'gw', 'gw-system', '1m30s']);
  t.equal(c.referencePolicy, 'Warn');
  t.equal(c.webhook.port, 10443);
  t.equal(c.logLevel, 'debug');
  t.equal(loadConfig({ GATEWAY_API_ENABLED: 'yes' }).gateway.enabled, false, 'only "true" enables');
});

t.test('WEBHOOKS_ENABLED: false runs the controller only; anything but true/false is refused', async (t) => {
  t.equal(loadConfig({ WEBHOOKS_ENABLED: 'false' }).webhook.enabled, false);
  t.equal(loadConfig({ WEBHOOKS_ENABLED: 'true' }).webhook.enabled, true);
  t.throws(() => loadConfig({ WEBHOOKS_ENABLED: 'no' }), /WEBHOOKS_ENABLED/);
  t.throws(() => loadConfig({ WEBHOOKS_ENABLED: 'false', CONTROLLER_ENABLED: 'false' }), /both "false" leaves the operator nothing to do/, 'not both off');
});

t.test('WEBHOOK_THREAD: the webhooks on a thread of their own unless "false", from WEBHOOK_THREAD_OBJECTS objects', async (t) => {
  t.equal(loadConfig({}).webhook.thread, true);
  t.equal(loadConfig({ WEBHOOK_THREAD: 'false' }).webhook.thread, false);
  t.throws(() => loadConfig({ WEBHOOK_THREAD: 'off' }), /WEBHOOK_THREAD/);
  t.equal(loadConfig({ WEBHOOK_THREAD_OBJECTS: '0' }).webhook.threadFromObjects, 0, 'from the start');
  t.equal(loadConfig({ WEBHOOK_THREAD_OBJECTS: '20000' }).webhook.threadFromObjects, 20_000);
  for (const bad of ['-1', '1.5', 'many', '10000001']) t.throws(() => loadConfig({ WEBHOOK_THREAD_OBJECTS: bad }), /WEBHOOK_THREAD_OBJECTS: must be an integer from 0 to 10000000/, bad);
});

t.test('every problem at once', async (t) => {
  const err = t.throws(() =>
    loadConfig({
      WEBHOOK_PORT: '70000',
      METRICS_PORT: 'http',
      REFERENCE_POLICY: 'Strict',
      LOG_LEVEL: 'loud',
      GATEWAY_DEFAULT_AGENT_TIMEOUT: '2 minutes',
      GATEWAY_API_ENABLED: 'true',
      WEBHOOK_CERT_CHECK_INTERVAL_SECONDS: '9999999999',
      WEBHOOK_MAX_CONNECTIONS: '0',
      WEBHOOK_BODY_TIMEOUT_SECONDS: '61',
    }),
  ) as ConfigError;
  t.ok(err instanceof ConfigError);
  t.same(err.problems, [
    'GATEWAY_DEFAULT_AGENT_TIMEOUT: must be a duration such as 30s or 2m, got "2 minutes"',
    'REFERENCE_POLICY: must be one of Enforce, Warn, got "Strict"',
    'WEBHOOK_PORT: must be a port number 0-65535, got "70000"',
    'WEBHOOK_CERT_CHECK_INTERVAL_SECONDS: must be a number of seconds above 0 and at most 86400, got "9999999999"',
    'WEBHOOK_MAX_CONNECTIONS: must be a whole number from 1 to 100000, got "0"',
    'WEBHOOK_BODY_TIMEOUT_SECONDS: must be a number of seconds above 0 and at most 60, got "61"',
    'METRICS_PORT: must be a port number 0-65535, got "http"',
    'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, got "loud"',
    'GATEWAY_NAME and GATEWAY_NAMESPACE: required when GATEWAY_API_ENABLED is "true"',
  ]);
});

t.test('workload defaults: none but the hardened security context unless configured', async (t) => {
  const c = loadConfig({});
  t.strictSame(c.workload.imagePullSecrets, []);
  t.equal(c.workload.securityContext, 'hardened');
  t.equal(c.workload.nodeSelector, undefined);
  t.equal(c.workload.tolerations, undefined);
  t.equal(c.workload.affinity, undefined);
  t.same(c.workload.resources, {});
  t.equal(loadConfig({ POD_SECURITY_CONTEXT: 'none' }).workload.securityContext, 'none');
});

t.test('workload defaults from the environment', async (t) => {
  const c = loadConfig({
    IMAGE_PULL_SECRETS: ' regcred,,mirror.io ,regcred',
    DEFAULT_AGENT_RESOURCES: '{"requests":{"cpu":"100m","memory":"256Mi"},"limits":{"cpu":"1","memory":"1Gi","nvidia.com/gpu":"1"}}',
    DEFAULT_MODELAPI_RESOURCES: '{"requests":{"memory":"1e9"}}',
    DEFAULT_MCP_RESOURCES: '{"requests":{}}',
    DEFAULT_NODE_SELECTOR: '{"kubernetes.io/os":"linux","pool":""}',
    DEFAULT_TOLERATIONS: '[{"key":"gpu","operator":"Exists","effect":"NoSchedule"},{"operator":"Exists"}]',
    DEFAULT_AFFINITY: '{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[]}}}',
  });
  t.strictSame(c.workload.imagePullSecrets, ['regcred', 'mirror.io'], 'trimmed, empty items and duplicates dropped');
  t.strictSame(c.workload.resources.agent, { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi', 'nvidia.com/gpu': '1' } });
  t.strictSame(c.workload.resources.modelAPI, { requests: { memory: '1e9' } });
  t.equal(c.workload.resources.mcpServer, undefined, 'empty maps are unset (the API server would drop them)');
  t.strictSame(c.workload.nodeSelector, { 'kubernetes.io/os': 'linux', pool: '' });
  t.strictSame(c.workload.tolerations, [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }, { operator: 'Exists' }]);
  t.strictSame(c.workload.affinity, { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } });
  t.equal(loadConfig({ DEFAULT_NODE_SELECTOR: '{}', DEFAULT_TOLERATIONS: '[]' }).workload.nodeSelector, undefined);
});

t.test('bad workload defaults: every problem at once', async (t) => {
  const err = t.throws(() =>
    loadConfig({
      IMAGE_PULL_SECRETS: 'ok,Bad_Name',
      DEFAULT_AGENT_RESOURCES: '{"requests":{"cpu":"2"},"limits":{"cpu":"500m"}}',
      DEFAULT_MODELAPI_RESOURCES: '{"requests":{"memory":"lots"},"claims":[]}',
      DEFAULT_MCP_RESOURCES: '{cpu: 1}',
      DEFAULT_NODE_SELECTOR: '{"pool":1,"-bad":"x","zone":"not valid"}',
      DEFAULT_TOLERATIONS: '[{"key":"a","operator":"Maybe","effect":"Never"},{"value":"v"},{"key":"b","operator":"Exists","value":"v","seconds":1}]',
      DEFAULT_AFFINITY: '{"nodeAffinity":[],"zoneAffinity":{}}',
      POD_SECURITY_CONTEXT: 'restricted',
    }),
  ) as ConfigError;
  t.strictSame(err.problems, [
    'IMAGE_PULL_SECRETS: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
    'DEFAULT_AGENT_RESOURCES: requests.cpu "2" is above limits.cpu "500m"',
    'DEFAULT_MODELAPI_RESOURCES.requests.memory: must be a quantity such as "500m", "1" or "256Mi", got "lots"',
    'DEFAULT_MODELAPI_RESOURCES: unknown field "claims" (known: requests, limits)',
    `DEFAULT_MCP_RESOURCES: must be JSON: ${jsonError('{cpu: 1}')}`,
    'DEFAULT_NODE_SELECTOR: "pool": the value must be a string',
    'DEFAULT_NODE_SELECTOR: key "-bad": must be at most 63 characters of alphanumerics, \'-\', \'_\' or \'.\', starting and ending with an alphanumeric',
    'DEFAULT_NODE_SELECTOR: "zone": "not valid" is not a valid label value',
    'DEFAULT_TOLERATIONS[0].operator: must be one of Exists, Equal',
    'DEFAULT_TOLERATIONS[0].effect: must be one of NoSchedule, PreferNoSchedule, NoExecute',
    'DEFAULT_TOLERATIONS[1].operator: must be Exists when key is empty',
    'DEFAULT_TOLERATIONS[2]: unknown field "seconds" (known: key, operator, value, effect, tolerationSeconds)',
    'DEFAULT_TOLERATIONS[2].value: must be empty when operator is Exists',
    'DEFAULT_AFFINITY.nodeAffinity: must be an object',
    'DEFAULT_AFFINITY: unknown field "zoneAffinity" (known: nodeAffinity, podAffinity, podAntiAffinity)',
    'POD_SECURITY_CONTEXT: must be one of hardened, none, got "restricted"',
  ]);
});

function jsonError(text: string): string {
  try {
    JSON.parse(text);
  } catch (err) {
    return (err as Error).message;
  }
  return '';
}

t.test('controller settings: defaults', async (t) => {
  t.strictSame(loadConfig({}).controller, {
    enabled: true,
    maxConcurrentReconciles: 4,
    resyncPeriodSeconds: 36_000,
    watchNamespaces: [],
    leaderElect: true,
    podName: '',
    leaderElectionNamespace: 'kaos-system',
  });
});

t.test('controller settings from the environment', async (t) => {
  const c = loadConfig({
    CONTROLLER_ENABLED: 'false',
    MAX_CONCURRENT_RECONCILES: '64',
    RESYNC_PERIOD_SECONDS: '0',
    WATCH_NAMESPACES: 'team-a, team-b,,team-a',
    LEADER_ELECT: 'false',
    POD_NAME: 'kaos-operator-7d9f-abcde',
    POD_NAMESPACE: 'kaos',
  }).controller;
  t.strictSame(c, {
    enabled: false,
    maxConcurrentReconciles: 64,
    resyncPeriodSeconds: 0,
    watchNamespaces: ['team-a', 'team-b'],
    leaderElect: false,
    podName: 'kaos-operator-7d9f-abcde',
    leaderElectionNamespace: 'kaos',
  });
  t.equal(loadConfig({ POD_NAMESPACE: 'kaos', LEADER_ELECTION_NAMESPACE: 'leases' }).controller.leaderElectionNamespace, 'leases', 'the explicit variable wins');
});

t.test('SYSTEM_NAMESPACE: KAOS\'s system namespace, default kaos; a bad one stops the operator naming it', async (t) => {
  t.equal(loadConfig({}).systemNamespace, 'kaos', 'KAOS\'s default');
  t.equal(loadConfig({ SYSTEM_NAMESPACE: 'kaos-system' }).systemNamespace, 'kaos-system');
  t.equal(loadConfig({ POD_NAMESPACE: 'ops' }).systemNamespace, 'kaos', 'not the operator\'s namespace: the chart sets both');
  const err = t.throws(() => loadConfig({ SYSTEM_NAMESPACE: 'Kaos_System' })) as ConfigError;
  t.strictSame(err.problems, ['SYSTEM_NAMESPACE: must be a namespace name (a DNS-1123 label), got "Kaos_System"']);
});

t.test('bad controller settings: every problem at once', async (t) => {
  const err = t.throws(() =>
    loadConfig({ MAX_CONCURRENT_RECONCILES: '0', WATCH_NAMESPACES: 'ok,Team.A', LEADER_ELECT: 'yes', POD_NAMESPACE: 'Kaos', CONTROLLER_ENABLED: 'no' }),
  ) as ConfigError;
  t.strictSame(err.problems, [
    'CONTROLLER_ENABLED: must be one of true, false, got "no"',
    'MAX_CONCURRENT_RECONCILES: must be an integer from 1 to 64, got "0"',
    'WATCH_NAMESPACES: "Team.A": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character',
    'LEADER_ELECT: must be one of true, false, got "yes"',
    'POD_NAMESPACE: must be a namespace name (a DNS-1123 label), got "Kaos"',
  ]);
  t.throws(() => loadConfig({ MAX_CONCURRENT_RECONCILES: '65' }), /MAX_CONCURRENT_RECONCILES: must be an integer from 1 to 64, got "65"/);
  t.throws(() => loadConfig({ MAX_CONCURRENT_RECONCILES: '2.5' }), /MAX_CONCURRENT_RECONCILES/);
});
