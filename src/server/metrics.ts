// The Prometheus registry of the process and the webhook metrics, under controller-runtime's
// names and labels so that its dashboards and alerts work unchanged. Other parts of the
// operator (controller, queue, leader election) register their metrics in the same registry:
// main creates one with createRegistry() and hands it to each of them.
import { Registry, collectDefaultMetrics } from 'prom-client';

export { Registry };

export interface RegistryOptions {
  /** process_* and nodejs_* metrics (CPU, memory, event-loop lag). Default true. */
  defaultMetrics?: boolean;
}

export function createRegistry(options: RegistryOptions = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  return registry;
}

/** Metrics of one webhook path, bound once so that a request pays no label lookup for them. */
export interface WebhookPathMetrics {
  /** A request arrived: counts it in flight and returns its start time. */
  begin(): number;
  /** The request was answered with HTTP `code`; `start` is what begin() returned. */
  end(start: number, code: number): void;
}

export interface WebhookMetrics {
  forPath(path: string): WebhookPathMetrics;
}

/**
 * controller-runtime's buckets are Prometheus' defaults (5 ms and up); ours add sub-millisecond
 * ones because a cache-backed webhook answers in well under 5 ms and the p99 target is 2 ms.
 */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One webhook path's figures: plain numbers, so that a request costs a few additions. */
interface PathStats {
  readonly path: string;
  inFlight: number;
  /** Requests answered, by HTTP status code. */
  readonly codes: Map<number, number>;
  /** Non-cumulative: buckets[i] counts latencies in (LATENCY_BUCKETS[i-1], LATENCY_BUCKETS[i]]; the last is +Inf. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

/** The shape prom-client's Registry reads from a metric when it renders /metrics. */
interface MetricValue {
  value: number;
  labels: Record<string, string>;
  metricName?: string;
}
interface CollectedMetric {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  values: MetricValue[];
  aggregator: 'sum';
}

/**
 * The webhook metrics, read by prom-client only when /metrics is scraped. prom-client's own
 * labelled Counter/Histogram/Gauge re-hash their labels on every call — about 15 µs a request,
 * more than validating an Agent — so the hot path keeps counts in plain numbers instead.
 */
export function createWebhookMetrics(registry: Registry): WebhookMetrics {
  const stats: PathStats[] = [];
  const metric = (name: string, help: string, type: CollectedMetric['type'], values: () => MetricValue[]) => ({
    name,
    help,
    type,
    aggregator: 'sum' as const,
    get: (): CollectedMetric => ({ name, help, type, values: values(), aggregator: 'sum' }),
    reset: (): void => {
      for (const s of stats) {
        s.codes.clear();
        s.buckets.fill(0);
        s.sum = 0;
        s.count = 0;
      }
    },
  });
  const requests = 'controller_runtime_webhook_requests_total';
  const latency = 'controller_runtime_webhook_latency_seconds';
  const inFlight = 'controller_runtime_webhook_requests_in_flight';
  // Registered as prom-client metrics; the casts are to its Metric class, whose private fields a
  // plain object cannot have, though the Registry only ever calls name, get and reset.
  const register = (m: ReturnType<typeof metric>): void => registry.registerMetric(m as unknown as Parameters<Registry['registerMetric']>[0]);
  register(
    metric(requests, 'Total number of admission requests by HTTP status code.', 'counter', () =>
      stats.flatMap((s) => [...s.codes].map(([code, n]) => ({ value: n, labels: { webhook: s.path, code: String(code) } }))),
    ),
  );
  register(
    metric(latency, 'Histogram of the latency of processing admission requests', 'histogram', () =>
      stats.flatMap((s) => {
        const values: MetricValue[] = [];
        let cumulative = 0;
        for (let i = 0; i <= LATENCY_BUCKETS.length; i++) {
          cumulative += s.buckets[i] ?? 0;
          const le = i < LATENCY_BUCKETS.length ? String(LATENCY_BUCKETS[i]) : '+Inf';
          values.push({ metricName: `${latency}_bucket`, value: cumulative, labels: { le, webhook: s.path } });
        }
        values.push({ metricName: `${latency}_sum`, value: s.sum, labels: { webhook: s.path } });
        values.push({ metricName: `${latency}_count`, value: s.count, labels: { webhook: s.path } });
        return values;
      }),
    ),
  );
  register(
    metric(inFlight, 'Current number of admission requests being served.', 'gauge', () =>
      stats.map((s) => ({ value: s.inFlight, labels: { webhook: s.path } })),
    ),
  );

  return {
    forPath(path) {
      const s: PathStats = { path, inFlight: 0, codes: new Map(), buckets: new Float64Array(LATENCY_BUCKETS.length + 1), sum: 0, count: 0 };
      stats.push(s);
      return {
        begin() {
          s.inFlight += 1;
          return performance.now();
        },
        end(start, code) {
          s.inFlight -= 1;
          const seconds = (performance.now() - start) / 1000;
          let i = 0;
          while (i < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[i] as number)) i += 1;
          s.buckets[i] = (s.buckets[i] ?? 0) + 1;
          s.sum += seconds;
          s.count += 1;
          s.codes.set(code, (s.codes.get(code) ?? 0) + 1);
        },
      };
    },
  };
}

/** For callers that do not export metrics (tests, the bare benchmark). */
export const noWebhookMetrics: WebhookMetrics = {
  forPath: () => ({ begin: () => 0, end: () => undefined }),
};

export const CERTIFICATE_EXPIRY_METRIC = 'kaos_operator_webhook_certificate_expiry_seconds';

/**
 * Seconds until the served certificate expires (negative once it has), read from the pair in
 * service each time /metrics is scraped: a reload is reflected at the next scrape, and the
 * figure counts down between scrapes. An alert on it catches a renewal that never reached the
 * pod (cert-manager renewed, but the mount or the reload failed). `certificate` returns the
 * served certificate's notAfter; undefined (no webhook server) reports no sample.
 */
export function registerCertificateExpiryMetric(registry: Registry, certificate: () => { validTo: string } | undefined, now: () => number = Date.now): void {
  const name = CERTIFICATE_EXPIRY_METRIC;
  const help = 'Seconds until the certificate the webhook server serves expires (negative once expired).';
  const metric = {
    name,
    help,
    type: 'gauge',
    aggregator: 'sum',
    get: (): CollectedMetric => {
      const validTo = certificate()?.validTo;
      const values = validTo === undefined ? [] : [{ value: Math.floor((Date.parse(validTo) - now()) / 1000), labels: {} }];
      return { name, help, type: 'gauge', values, aggregator: 'sum' };
    },
    reset: (): void => undefined,
  };
  registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
}
