// The process's Prometheus registry and the two pieces every metric of ours is built from: a
// histogram kept as plain numbers, and a metric whose values are read only when /metrics is
// scraped. prom-client's own labelled Counter/Histogram/Gauge re-hash their labels on every call
// (about 15 µs, more than validating an Agent), so the hot paths (webhook requests, the work
// queue) add to plain numbers instead. A shared leaf: the server and the controller both use it.
import { Registry, collectDefaultMetrics } from 'prom-client';

export { Registry };

export interface RegistryOptions {
  /** process_* and nodejs_* metrics (CPU, memory, event-loop lag, GC pauses). Default true. */
  defaultMetrics?: boolean;
}

/**
 * nodejs_gc_duration_seconds' buckets. prom-client's (1 ms, 10 ms, 100 ms, 1 s …) cannot tell a
 * 2 ms scavenge from a 9 ms one, and the pauses that delay admission are 1–100 ms.
 */
export const GC_DURATION_BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** The one registry of the process: main creates it and hands it to everything that has metrics. */
export function createRegistry(options: RegistryOptions = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, gcDurationBuckets: GC_DURATION_BUCKETS });
  return registry;
}

/**
 * Of prom-client's default metrics, those that belong to one thread (its event loop's delay, its
 * V8 isolate's garbage collections and heap), for a worker thread: the process-wide ones
 * (CPU, RSS, file descriptors) are the main thread's to report.
 */
const THREAD_FAMILIES = [
  'nodejs_eventloop_lag_seconds',
  'nodejs_eventloop_lag_min_seconds',
  'nodejs_eventloop_lag_max_seconds',
  'nodejs_eventloop_lag_mean_seconds',
  'nodejs_eventloop_lag_stddev_seconds',
  'nodejs_eventloop_lag_p50_seconds',
  'nodejs_eventloop_lag_p90_seconds',
  'nodejs_eventloop_lag_p99_seconds',
  'nodejs_gc_duration_seconds',
  'nodejs_heap_size_total_bytes',
  'nodejs_heap_size_used_bytes',
  'nodejs_heap_space_size_total_bytes',
  'nodejs_heap_space_size_used_bytes',
  'nodejs_heap_space_size_available_bytes',
];

/**
 * The calling thread's own default metrics, each series labelled `thread`, as Prometheus text:
 * the same names dashboards read for the main thread (whose series carry no such label).
 * Call once per thread; the event-loop figures cover the time since the previous call.
 */
export function threadMetrics(thread: string): () => Promise<string> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, labels: { thread }, gcDurationBuckets: GC_DURATION_BUCKETS });
  return async () => {
    const families = await Promise.all(THREAD_FAMILIES.map((name) => registry.getSingleMetricAsString(name)));
    return families.filter((f) => f !== '').map((f) => `${f}\n`).join('');
  };
}

/**
 * Prometheus text of several sources as one exposition: a family (a metric name with its HELP and
 * TYPE) that more than one source reports is written once, with every source's series under it,
 * as the format requires.
 */
export function mergeExpositions(texts: readonly string[]): string {
  const families = new Map<string, { head: string[]; series: string[] }>();
  for (const text of texts) {
    let current: { head: string[]; series: string[] } | undefined;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const meta = /^# (HELP|TYPE) (\S+)/.exec(line);
      if (meta !== null) {
        const name = meta[2] as string;
        const known = families.get(name);
        if (known === undefined) {
          current = { head: [line], series: [] };
          families.set(name, current);
        } else {
          current = known;
          if (!known.head.some((h) => h.startsWith(`# ${meta[1] as string} `))) known.head.push(line);
        }
        continue;
      }
      if (line.startsWith('#')) continue;
      if (current === undefined) {
        // A series before any HELP or TYPE line: a family of its own, by the series' name.
        const name = /^[^{ ]+/.exec(line)?.[0] ?? line;
        current = families.get(name) ?? { head: [], series: [] };
        families.set(name, current);
      }
      current.series.push(line);
    }
  }
  return [...families.values()].map((f) => [...f.head, ...f.series].join('\n')).join('\n') + '\n';
}

/** One sample as prom-client's Registry reads it when it renders /metrics. */
export interface MetricValue {
  value: number;
  labels: Record<string, string>;
  /** For a histogram's `_bucket`, `_sum` and `_count` series. */
  metricName?: string;
}

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface CollectedMetric {
  name: string;
  help: string;
  type: MetricType;
  /** Read at each scrape. */
  values: () => MetricValue[];
  /** registry.resetMetrics(); default: nothing to reset (a gauge read from elsewhere). */
  reset?: () => void;
}

/**
 * Registers a metric whose values are computed when scraped. A plain object in place of
 * prom-client's Metric class (whose private fields it cannot have): the Registry only ever calls
 * name, get and reset, hence the one cast.
 */
export function registerCollected(registry: Registry, metric: CollectedMetric): void {
  const { name, help, type } = metric;
  const plain = {
    name,
    help,
    type,
    aggregator: 'sum' as const,
    get: () => ({ name, help, type, aggregator: 'sum' as const, values: metric.values() }),
    reset: metric.reset ?? ((): void => undefined),
  };
  registry.registerMetric(plain as unknown as Parameters<Registry['registerMetric']>[0]);
}

/** A histogram as plain numbers: non-cumulative counts per bucket, the last one +Inf. */
export class Histogram {
  readonly bounds: readonly number[];
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > (this.bounds[i] as number)) i += 1;
    this.counts[i] = (this.counts[i] ?? 0) + 1;
    this.sum += value;
    this.count += 1;
  }
  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
  /** The series of this histogram under `name`: cumulative buckets (`le` first), sum, count. */
  values(name: string, labels: Record<string, string>): MetricValue[] {
    const values: MetricValue[] = [];
    let cumulative = 0;
    for (let i = 0; i <= this.bounds.length; i++) {
      cumulative += this.counts[i] ?? 0;
      const le = i < this.bounds.length ? String(this.bounds[i]) : '+Inf';
      values.push({ metricName: `${name}_bucket`, value: cumulative, labels: { le, ...labels } });
    }
    values.push({ metricName: `${name}_sum`, value: this.sum, labels });
    values.push({ metricName: `${name}_count`, value: this.count, labels });
    return values;
  }
}
