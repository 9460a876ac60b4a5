// The load generator, in a process of its own so that it does not share an event loop (or, on
// two cores, a core) with the server it measures. The parent sends jobs over IPC; each job is one
// autocannon run; the answer carries throughput and exact latency percentiles (autocannon's own
// histogram rounds to whole milliseconds, too coarse for a 2 ms target, so every response time
// is kept here).
import autocannon from 'autocannon';
import type { EventEmitter } from 'node:events';

export interface LoadJob {
  url: string;
  requests: { method: 'POST'; path: string; headers: Record<string, string>; body: string }[];
  connections: number;
  durationSeconds: number;
  /** Requests per second over all connections; unlimited (saturation) when absent. */
  overallRate?: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: number;
  non2xx: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

function run(job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    let times = new Float64Array(1 << 16);
    let count = 0;
    const instance = autocannon(
      {
        url: job.url,
        requests: job.requests,
        connections: job.connections,
        duration: job.durationSeconds,
        pipelining: 1,
        ...(job.overallRate === undefined ? {} : { overallRate: job.overallRate }),
        timeout: 10,
      },
      (err: unknown, result: autocannon.Result) => {
        if (err !== null && err !== undefined) {
          reject(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        const sorted = times.subarray(0, count).sort();
        resolve({
          requests: count,
          seconds: result.duration,
          rps: count / result.duration,
          p50: percentile(sorted, 50),
          p90: percentile(sorted, 90),
          p99: percentile(sorted, 99),
          max: count === 0 ? Number.NaN : (sorted[count - 1] ?? Number.NaN),
          errors: result.errors,
          non2xx: result.non2xx,
        });
      },
    );
    (instance as unknown as EventEmitter).on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status !== 200) return;
      if (count === times.length) {
        const grown = new Float64Array(times.length * 2);
        grown.set(times);
        times = grown;
      }
      times[count++] = ms;
    });
  });
}

process.on('message', (job: LoadJob) => {
  run(job).then(
    (result) => process.send?.({ ok: true, result }),
    (err: unknown) => process.send?.({ ok: false, error: String(err) }),
  );
});
