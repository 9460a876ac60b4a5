import t from 'tap';
import { createRegistry, createWebhookMetrics } from '../../../src/server/metrics.ts';

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
