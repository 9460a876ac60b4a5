// The controller's and work queue's metrics under controller-runtime's names and labels
// (pkg/internal/controller/metrics and pkg/metrics/workqueue.go), so that its dashboards and
// alerts work unchanged. As with the webhook metrics, counts are plain numbers that prom-client
// reads only when /metrics is scraped (src/leaves/prometheus.ts).
import { METRIC } from '../leaves/metric-names.ts';
import { Histogram, registerCollected, type MetricType, type MetricValue, type Registry } from '../leaves/prometheus.ts';

/** controller-runtime's `result` label values. */
export const RECONCILE_RESULTS = ['success', 'error', 'requeue', 'requeue_after'] as const;
export type ReconcileResultLabel = (typeof RECONCILE_RESULTS)[number];

/** What one controller's queue reports. One handle per controller name. */
export interface ControllerMetrics {
  /** A key entered the queue (not a merged duplicate). */
  added(): void;
  /** Keys waiting to run, after every change. */
  depth(n: number): void;
  /** A key left the queue for a worker after waiting `seconds`. */
  started(seconds: number): void;
  /** A key was put back with backoff. */
  retried(): void;
  /** A reconcile ended with `result` after `seconds`. */
  reconciled(result: ReconcileResultLabel, seconds: number): void;
  /** A reconcile that ended with `error` failed for `reason` (kube/errors.ts's errorReason). */
  failed(reason: string): void;
  /** Keys whose last reconcile failed, after every change. */
  failing(n: number): void;
  /** Reconciles running now. */
  activeWorkers(n: number): void;
  maxConcurrentReconciles(n: number): void;
}

export interface ControllerMetricsFactory {
  /** The handle of the controller `name` (e.g. `agent`); its series exist from this call on. */
  forController(name: string): ControllerMetrics;
}

/** controller-runtime's reconcile_time_seconds buckets. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5,
  3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** client-go's queue_duration_seconds buckets: ExponentialBuckets(10e-9, 10, 12), 10 ns to 1000 s. */
const QUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

interface Stats {
  readonly name: string;
  depth: number;
  adds: number;
  retries: number;
  readonly queueDuration: Histogram;
  readonly results: Record<ReconcileResultLabel, number>;
  errors: number;
  /** Errors by reason, a label controller-runtime's counter lacks. */
  readonly errorReasons: Map<string, number>;
  failing: number;
  readonly reconcileTime: Histogram;
  activeWorkers: number;
  maxConcurrent: number;
}

export function createControllerMetrics(registry: Registry): ControllerMetricsFactory {
  const all: Stats[] = [];
  // workqueue_* carry both `name` and `controller`, equal, as controller-runtime's provider does.
  const queueLabels = (s: Stats) => ({ name: s.name, controller: s.name });
  const register = (name: string, help: string, type: MetricType, values: (s: Stats) => MetricValue[], reset: (s: Stats) => void): void => {
    registerCollected(registry, { name, help, type, values: () => all.flatMap(values), reset: () => all.forEach(reset) });
  };

  register(METRIC.queueDepth, 'Current depth of workqueue', 'gauge', (s) => [{ value: s.depth, labels: queueLabels(s) }], () => {});
  register(METRIC.queueAdds, 'Total number of adds handled by workqueue', 'counter', (s) => [{ value: s.adds, labels: queueLabels(s) }], (s) => {
    s.adds = 0;
  });
  register(METRIC.queueRetries, 'Total number of retries handled by workqueue', 'counter', (s) => [{ value: s.retries, labels: queueLabels(s) }], (s) => {
    s.retries = 0;
  });
  register(
    METRIC.queueDuration,
    'How long in seconds an item stays in workqueue before being requested',
    'histogram',
    (s) => s.queueDuration.values(METRIC.queueDuration, queueLabels(s)),
    (s) => s.queueDuration.reset(),
  );
  register(
    METRIC.reconciles,
    'Total number of reconciliations per controller',
    'counter',
    (s) => RECONCILE_RESULTS.map((result) => ({ value: s.results[result], labels: { controller: s.name, result } })),
    (s) => {
      for (const r of RECONCILE_RESULTS) s.results[r] = 0;
    },
  );
  register(METRIC.reconcileErrors, 'Total number of reconciliation errors per controller', 'counter', (s) => [{ value: s.errors, labels: { controller: s.name } }], (s) => {
    s.errors = 0;
  });
  register(
    METRIC.reconcileErrorsByReason,
    'Reconcile errors per controller, by reason (the API server\'s, or Timeout, Unreachable, Internal)',
    'counter',
    (s) => [...s.errorReasons].map(([reason, value]) => ({ value, labels: { controller: s.name, reason } })),
    (s) => s.errorReasons.clear(),
  );
  register(METRIC.reconcileFailing, 'Objects per controller whose last reconcile failed (retried with backoff until one succeeds)', 'gauge', (s) => [{ value: s.failing, labels: { controller: s.name } }], () => {});
  register(
    METRIC.reconcileTime,
    'Length of time per reconciliation per controller',
    'histogram',
    (s) => s.reconcileTime.values(METRIC.reconcileTime, { controller: s.name }),
    (s) => s.reconcileTime.reset(),
  );
  register(METRIC.activeWorkers, 'Number of currently used workers per controller', 'gauge', (s) => [{ value: s.activeWorkers, labels: { controller: s.name } }], () => {});
  register(METRIC.maxConcurrentReconciles, 'Maximum number of concurrent reconciles per controller', 'gauge', (s) => [{ value: s.maxConcurrent, labels: { controller: s.name } }], () => {});

  return {
    forController(name) {
      if (all.some((s) => s.name === name)) throw new Error(`controller metrics: "${name}" is registered twice`);
      const s: Stats = {
        name,
        depth: 0,
        adds: 0,
        retries: 0,
        queueDuration: new Histogram(QUEUE_BUCKETS),
        // controller-runtime initialises every result to 0, so rate() works from the first scrape.
        results: { success: 0, error: 0, requeue: 0, requeue_after: 0 },
        errors: 0,
        errorReasons: new Map(),
        failing: 0,
        reconcileTime: new Histogram(RECONCILE_BUCKETS),
        activeWorkers: 0,
        maxConcurrent: 0,
      };
      all.push(s);
      return {
        added: () => void (s.adds += 1),
        depth: (n) => void (s.depth = n),
        started: (seconds) => s.queueDuration.observe(seconds),
        retried: () => void (s.retries += 1),
        reconciled(result, seconds) {
          s.results[result] += 1;
          if (result === 'error') s.errors += 1;
          s.reconcileTime.observe(seconds);
        },
        failed: (reason) => void s.errorReasons.set(reason, (s.errorReasons.get(reason) ?? 0) + 1),
        failing: (n) => void (s.failing = n),
        activeWorkers: (n) => void (s.activeWorkers = n),
        maxConcurrentReconciles: (n) => void (s.maxConcurrent = n),
      };
    },
  };
}

const noop = (): void => {};
/** For callers that export no metrics (tests, benchmarks). */
export const noControllerMetrics: ControllerMetrics = {
  added: noop,
  depth: noop,
  started: noop,
  retried: noop,
  reconciled: noop,
  failed: noop,
  failing: noop,
  activeWorkers: noop,
  maxConcurrentReconciles: noop,
};
