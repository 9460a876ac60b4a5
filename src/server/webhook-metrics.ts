// The webhook metrics, under controller-runtime's names and labels so that its dashboards and
// alerts work unchanged, and the certificate-expiry gauge. They live in the process's registry
// (src/leaves/prometheus.ts), which main hands to every part of the operator that has metrics.
import { METRIC } from '../leaves/metric-names.ts';
import { Histogram, registerCollected, type MetricValue, type Registry } from '../leaves/prometheus.ts';

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
  readonly latency: Histogram;
}

/** The webhook metrics, read by prom-client only when /metrics is scraped (src/leaves/prometheus.ts). */
export function createWebhookMetrics(registry: Registry): WebhookMetrics {
  const stats: PathStats[] = [];
  const latency = METRIC.webhookLatency;
  registerCollected(registry, {
    name: METRIC.webhookRequests,
    help: 'Total number of admission requests by HTTP status code.',
    type: 'counter',
    values: () => stats.flatMap((s) => [...s.codes].map(([code, n]) => ({ value: n, labels: { webhook: s.path, code: String(code) } }))),
    reset: () => stats.forEach((s) => s.codes.clear()),
  });
  registerCollected(registry, {
    name: latency,
    help: 'Histogram of the latency of processing admission requests',
    type: 'histogram',
    values: () => stats.flatMap((s): MetricValue[] => s.latency.values(latency, { webhook: s.path })),
    reset: () => stats.forEach((s) => s.latency.reset()),
  });
  registerCollected(registry, {
    name: METRIC.webhookInFlight,
    help: 'Current number of admission requests being served.',
    type: 'gauge',
    values: () => stats.map((s) => ({ value: s.inFlight, labels: { webhook: s.path } })),
  });

  return {
    forPath(path) {
      const s: PathStats = { path, inFlight: 0, codes: new Map(), latency: new Histogram(LATENCY_BUCKETS) };
      stats.push(s);
      return {
        begin() {
          s.inFlight += 1;
          return performance.now();
        },
        end(start, code) {
          s.inFlight -= 1;
          s.latency.observe((performance.now() - start) / 1000);
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

export const CERTIFICATE_EXPIRY_METRIC = METRIC.certificateExpiry;

/**
 * Seconds until the served certificate expires (negative once it has), read from the pair in
 * service each time /metrics is scraped: a reload is reflected at the next scrape, and the
 * figure counts down between scrapes. An alert on it catches a renewal that never reached the
 * pod (cert-manager renewed, but the mount or the reload failed). `certificate` returns the
 * served certificate's notAfter; undefined (no webhook server) reports no sample.
 */
export function registerCertificateExpiryMetric(registry: Registry, certificate: () => { validTo: string } | undefined, now: () => number = Date.now): void {
  registerCollected(registry, {
    name: CERTIFICATE_EXPIRY_METRIC,
    help: 'Seconds until the certificate the webhook server serves expires (negative once expired).',
    type: 'gauge',
    values: () => {
      const validTo = certificate()?.validTo;
      return validTo === undefined ? [] : [{ value: Math.floor((Date.parse(validTo) - now()) / 1000), labels: {} }];
    },
  });
}
