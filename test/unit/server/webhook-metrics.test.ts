import t from 'tap';
import { createRegistry } from '../../../src/leaves/prometheus.ts';
import { CERTIFICATE_EXPIRY_METRIC, createWebhookMetrics, registerCertificateExpiryMetric } from '../../../src/server/webhook-metrics.ts';

t.test('webhook metrics render as Prometheus counter, cumulative histogram and gauge', async (t) => {
  const registry = createRegistry({ defaultMetrics: false });
  const metrics = createWebhookMetrics(registry);
  const validate = metrics.forPath('/validate-kaos-tools-v1alpha1-agent');
  metrics.forPath('/mutate-kaos-tools-v1alpha1-agent');
  const now = performance.now();
  validate.begin();
  validate.end(now, 200); // ~0 s: the first bucket
  validate.begin();
  validate.end(now - 3, 200); // ~3 ms: the 5 ms bucket
  validate.begin();
  validate.end(now - 20_000, 500); // 20 s: only +Inf
  validate.begin(); // still in flight

  let text = await registry.metrics();
  const line = (name: string, labels: string): number => {
    const m = new RegExp(`^${name}\\{${labels.replace(/[+.]/g, '\\$&')}\\} (\\S+)$`, 'm').exec(text);
    if (m === null) throw new Error(`no ${name}{${labels}} in\n${text}`);
    return Number(m[1]);
  };
  const w = 'webhook="/validate-kaos-tools-v1alpha1-agent"';
  t.equal(line('controller_runtime_webhook_requests_total', `${w},code="200"`), 2);
  t.equal(line('controller_runtime_webhook_requests_total', `${w},code="500"`), 1);
  t.equal(line('controller_runtime_webhook_latency_seconds_bucket', `le="0.0025",${w}`), 1);
  t.equal(line('controller_runtime_webhook_latency_seconds_bucket', `le="0.005",${w}`), 2);
  t.equal(line('controller_runtime_webhook_latency_seconds_bucket', `le="10",${w}`), 2);
  t.equal(line('controller_runtime_webhook_latency_seconds_bucket', `le="+Inf",${w}`), 3);
  t.equal(line('controller_runtime_webhook_latency_seconds_count', w), 3);
  t.ok(line('controller_runtime_webhook_latency_seconds_sum', w) >= 20.003);
  t.equal(line('controller_runtime_webhook_requests_in_flight', w), 1);
  t.equal(line('controller_runtime_webhook_requests_in_flight', 'webhook="/mutate-kaos-tools-v1alpha1-agent"'), 0, 'every path is present from the start');
  t.match(text, /# TYPE controller_runtime_webhook_latency_seconds histogram/);
  t.match(text, /# TYPE controller_runtime_webhook_requests_total counter/);

  registry.resetMetrics();
  text = await registry.metrics();
  t.equal(line('controller_runtime_webhook_latency_seconds_count', w), 0, 'reset clears the counts');
});

t.test('the certificate expiry gauge: seconds until the served certificate expires, following a reload', async (t) => {
  const registry = createRegistry({ defaultMetrics: false });
  let served: { validTo: string } | undefined = { validTo: 'Jan  1 00:10:00 2030 GMT' };
  const now = Date.parse('2030-01-01T00:00:00Z');
  registerCertificateExpiryMetric(registry, () => served, () => now);
  const value = async (): Promise<number | undefined> => {
    const m = new RegExp(`^${CERTIFICATE_EXPIRY_METRIC} (\\S+)$`, 'm').exec(await registry.metrics());
    return m === null ? undefined : Number(m[1]);
  };
  t.equal(await value(), 600, 'ten minutes left');
  t.match(await registry.metrics(), new RegExp(`# TYPE ${CERTIFICATE_EXPIRY_METRIC} gauge`));
  served = { validTo: 'Apr  1 00:00:00 2030 GMT' }; // a renewal put into service
  t.equal(await value(), 90 * 86_400, 'the reloaded certificate\'s figure at the next scrape');
  served = { validTo: 'Dec 31 23:59:00 2029 GMT' };
  t.equal(await value(), -60, 'negative once expired');
  served = undefined;
  t.equal(await value(), undefined, 'no sample without a served certificate');
});
