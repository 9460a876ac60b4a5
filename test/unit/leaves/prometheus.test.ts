// src/leaves/prometheus.ts: the event-loop and GC metrics a thread reports of itself, and several
// expositions served as one (the admission thread's beside the main thread's).
import t from 'tap';
import { Gauge, Registry } from 'prom-client';
import { createRegistry, mergeExpositions, threadMetrics } from '../../../src/leaves/prometheus.ts';

t.test('a family two sources report is written once, with the series of both', async (t) => {
  const main = [
    '# HELP nodejs_eventloop_lag_p99_seconds The 99th percentile of the recorded event loop delays.',
    '# TYPE nodejs_eventloop_lag_p99_seconds gauge',
    'nodejs_eventloop_lag_p99_seconds 0.012',
    '',
    '# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.',
    '# TYPE process_cpu_seconds_total counter',
    'process_cpu_seconds_total 3.5',
    '',
  ].join('\n');
  const thread = [
    '# HELP controller_runtime_webhook_requests_total Total number of admission requests by HTTP status code.',
    '# TYPE controller_runtime_webhook_requests_total counter',
    'controller_runtime_webhook_requests_total{webhook="/mutate",code="200"} 7',
    '# HELP nodejs_eventloop_lag_p99_seconds The 99th percentile of the recorded event loop delays.',
    '# TYPE nodejs_eventloop_lag_p99_seconds gauge',
    'nodejs_eventloop_lag_p99_seconds{thread="admission"} 0.001',
  ].join('\n');
  t.equal(mergeExpositions([main, thread]), [
    '# HELP nodejs_eventloop_lag_p99_seconds The 99th percentile of the recorded event loop delays.',
    '# TYPE nodejs_eventloop_lag_p99_seconds gauge',
    'nodejs_eventloop_lag_p99_seconds 0.012',
    'nodejs_eventloop_lag_p99_seconds{thread="admission"} 0.001',
    '# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.',
    '# TYPE process_cpu_seconds_total counter',
    'process_cpu_seconds_total 3.5',
    '# HELP controller_runtime_webhook_requests_total Total number of admission requests by HTTP status code.',
    '# TYPE controller_runtime_webhook_requests_total counter',
    'controller_runtime_webhook_requests_total{webhook="/mutate",code="200"} 7',
    '',
  ].join('\n'));
  t.equal(mergeExpositions([main]).replace(/\n+/g, '\n'), main.replace(/\n+/g, '\n'), 'one source comes back as it was');
});

t.test('merged text is what Prometheus registries render, whichever came first', async (t) => {
  const a = new Registry();
  const b = new Registry();
  new Gauge({ name: 'shared_gauge', help: 'h', labelNames: ['thread'], registers: [a] }).set({ thread: 'main' }, 1);
  new Gauge({ name: 'shared_gauge', help: 'h', labelNames: ['thread'], registers: [b] }).set({ thread: 'admission' }, 2);
  const merged = mergeExpositions([await a.metrics(), await b.metrics()]);
  t.equal(merged.match(/^# TYPE shared_gauge/gm)?.length, 1, 'one TYPE line');
  t.match(merged, /shared_gauge\{thread="main"\} 1\nshared_gauge\{thread="admission"\} 2/);
});

t.test("a thread's own metrics: its event loop, GC and heap under the default names, labelled", async (t) => {
  const text = await threadMetrics('admission')();
  for (const name of ['nodejs_eventloop_lag_p50_seconds', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_eventloop_lag_max_seconds', 'nodejs_heap_size_used_bytes']) {
    t.match(text, new RegExp(`^${name}\\{thread="admission"\\} `, 'm'), name);
  }
  t.match(text, /^# TYPE nodejs_gc_duration_seconds histogram$/m, 'GC pauses, as a histogram');
  t.notMatch(text, /process_cpu|process_resident/, 'nothing process-wide: the main thread reports that');
});

t.test('GC pauses are counted in buckets fine enough for pauses of a few milliseconds', async (t) => {
  const registry = createRegistry();
  const text = await registry.metrics();
  for (const le of ['0.001', '0.002', '0.005', '0.01', '0.025', '0.05', '0.1']) t.match(text, new RegExp(`# TYPE nodejs_gc_duration_seconds histogram|le="${le}"`), le);
  t.match(text, /^# TYPE nodejs_eventloop_lag_p99_seconds gauge$/m, "the main thread's event-loop delay, prom-client's names");
});
