import t from 'tap';
import { ConfigError, loadConfig } from '../../src/config.ts';

t.test('defaults: api.md §6 images and model, webhook and metrics ports', async (t) => {
  const c = loadConfig({});
  t.same(c.images, {
    agent: 'axsauze/kaos-agent:latest',
    mcpServer: 'axsauze/kaos-agent:latest',
    mcpPython: 'python:3.12-slim',
    mcpNode: 'node:22-slim',
    litellm: 'ghcr.io/berriai/litellm:main-latest',
    ollama: 'alpine/ollama:latest',
  });
  t.equal(c.defaultModelName, 'smollm2:135m');
  t.same(c.gateway, { enabled: false, name: '', namespace: '', defaultTimeouts: { agent: '120s', modelAPI: '120s', mcpServer: '30s' } });
  t.equal(c.referencePolicy, 'Enforce');
  t.same(c.webhook, { host: '0.0.0.0', port: 9443, certDir: '/tmp/k8s-webhook-server/serving-certs', certCheckIntervalSeconds: 10, maxConnections: 1000, bodyTimeoutSeconds: 10 });
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
    REFERENCE_POLICY: 'Warn',
    WEBHOOK_PORT: '10443',
    LOG_LEVEL: 'debug',
  });
  t.equal(c.images.agent, 'r/agent:1');
  t.equal(c.defaultModelName, 'smollm2:135m');
  t.same([c.gateway.enabled, c.gateway.name, c.gateway.namespace, c.gateway.defaultTimeouts.mcpServer], [true, 'gw', 'gw-system', '1m30s']);
  t.equal(c.referencePolicy, 'Warn');
  t.equal(c.webhook.port, 10443);
  t.equal(c.logLevel, 'debug');
  t.equal(loadConfig({ GATEWAY_API_ENABLED: 'yes' }).gateway.enabled, false, 'only "true" enables');
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
