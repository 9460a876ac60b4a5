import t from 'tap';
import { request } from 'node:http';
import { allReady, startHealthServer, type Readiness } from '../../../src/server/health-server.ts';
import { createRegistry } from '../../../src/leaves/prometheus.ts';
import { createWebhookMetrics } from '../../../src/server/webhook-metrics.ts';
import { Counter } from 'prom-client';
import { captureLogger } from './helpers.ts';

function get(port: number, path: string, method = 'GET'): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('healthz, readyz and metrics on plain HTTP', async (t) => {
  const registry = createRegistry();
  const metrics = createWebhookMetrics(registry);
  const path = metrics.forPath('/validate-kaos-tools-v1alpha1-agent');
  path.end(path.begin(), 200);
  // Others add their metrics to the same registry.
  new Counter({ name: 'controller_runtime_reconcile_total', help: 'x', labelNames: ['controller', 'result'], registers: [registry] })
    .labels('agent', 'success')
    .inc();

  let readiness: Readiness = { ready: false, reason: 'caches not synced' };
  const log = captureLogger('info');
  const server = await startHealthServer({ host: '127.0.0.1', port: 0, registry, readiness: () => readiness, logger: log.logger });
  t.teardown(() => server.close());

  t.same(await get(server.port, '/healthz'), { status: 200, type: 'text/plain; charset=utf-8', body: 'ok\n' });
  const notReady = await get(server.port, '/readyz');
  t.equal(notReady.status, 503);
  t.equal(notReady.body, 'not ready: caches not synced\n');
  t.equal((await get(server.port, '/healthz')).status, 200, 'liveness does not depend on readiness');
  readiness = { ready: true };
  t.equal((await get(server.port, '/readyz')).status, 200);
  t.equal((await get(server.port, '/readyz?verbose')).status, 200, 'query strings are ignored');

  const scraped = await get(server.port, '/metrics');
  t.equal(scraped.status, 200);
  t.match(scraped.type, /^text\/plain; version=0.0.4/);
  t.match(scraped.body, /controller_runtime_webhook_requests_total\{webhook="\/validate-kaos-tools-v1alpha1-agent",code="200"\} 1/);
  t.match(scraped.body, /controller_runtime_webhook_latency_seconds_count\{webhook="\/validate-kaos-tools-v1alpha1-agent"\} 1/);
  t.match(scraped.body, /controller_runtime_webhook_requests_in_flight\{webhook="\/validate-kaos-tools-v1alpha1-agent"\} 0/);
  t.match(scraped.body, /controller_runtime_reconcile_total\{controller="agent",result="success"\} 1/);
  t.match(scraped.body, /process_cpu_seconds_total/, 'process metrics');

  t.equal((await get(server.port, '/nope')).status, 404);
  t.equal((await get(server.port, '/healthz', 'POST')).status, 405);
  t.equal((await get(server.port, '/healthz', 'HEAD')).status, 200);
});

t.test('a readiness check that throws means not ready, not a crash', async (t) => {
  const log = captureLogger('info');
  const server = await startHealthServer({
    host: '127.0.0.1',
    port: 0,
    registry: createRegistry({ defaultMetrics: false }),
    readiness: () => {
      throw new Error('cache exploded');
    },
    logger: log.logger,
  });
  t.teardown(() => server.close());
  const reply = await get(server.port, '/readyz');
  t.equal(reply.status, 503);
  t.equal(reply.body, 'not ready: readiness check failed: cache exploded\n');
  t.equal((await get(server.port, '/healthz')).status, 200);
});

t.test('allReady combines named checks and lists every reason', async (t) => {
  const check = allReady({
    cache: () => ({ ready: false, reason: 'Agents not synced' }),
    leader: async () => ({ ready: true }),
    webhook: () => ({ ready: false, reason: 'not listening' }),
  });
  t.same(await check(), { ready: false, reason: 'cache: Agents not synced; webhook: not listening' });
  t.same(await allReady({ a: () => ({ ready: true }) })(), { ready: true });
});
