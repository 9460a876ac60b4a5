// The process's Prometheus registry and the two pieces every metric of ours is built from: a
// histogram kept as plain numbers, and a metric whose values are read only when /metrics is
// scraped. prom-client's own labelled Counter/Histogram/Gauge re-hash their labels on every call
// (about 15 µs, more than validating an Agent), so the hot paths (webhook requests, the work
// queue) add to plain numbers instead. A shared leaf: the server and the controller both use it.
import { Registry, collectDefaultMetrics } from 'prom-client';

export { Registry };

export interface RegistryOptions {
  /** process_* and nodejs_* metrics (CPU, memory, event-loop lag). Default true. */
  defaultMetrics?: boolean;
}

/** The one registry of the process: main creates it and hands it to everything that has metrics. */
export function createRegistry(options: RegistryOptions = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  return registry;
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
