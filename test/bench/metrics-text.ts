// Reading Prometheus' text format, for the benches that scrape kube-apiserver's and the
// operator's /metrics: series by name and labels, histograms by one label, and what a window
// between two scrapes holds (counts, sums, buckets, quantiles as Prometheus' histogram_quantile
// interpolates them).
import http from 'node:http';
import https from 'node:https';

export function fetchText(url: string, options: https.RequestOptions = {}): Promise<string> {
  return new Promise((res, rej) => {
    const get = url.startsWith('https:') ? https.get : http.get;
    const req = get(url, options, (r) => {
      let body = '';
      r.setEncoding('utf8');
      r.on('data', (c: string) => { body += c; });
      r.on('end', () => (r.statusCode === 200 ? res(body) : rej(new Error(`${url}: HTTP ${r.statusCode}`))));
    });
    req.on('error', rej);
  });
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample of the text, in order. */
export function samples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] as string] = l[2] as string;
    out.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return out;
}

/** The one value of a gauge (the first series of that name), NaN when absent. */
export function gauge(text: string, name: string): number {
  return samples(text).find((s) => s.name === name)?.value ?? Number.NaN;
}

/** The sum of every series of a counter. */
export function counterTotal(text: string, name: string): number {
  return samples(text).filter((s) => s.name === name).reduce((n, s) => n + s.value, 0);
}

/** A histogram as its cumulative buckets (by upper bound), sum and count. */
export interface HistogramData {
  buckets: Map<number, number>;
  sum: number;
  count: number;
}

const emptyHistogram = (): HistogramData => ({ buckets: new Map(), sum: 0, count: 0 });

/**
 * A histogram's series grouped by the value of `label` (every other label summed), or all of
 * them under '' when `label` is undefined; `keep` filters the series first.
 */
export function histograms(text: string, name: string, label?: string, keep: (labels: Record<string, string>) => boolean = () => true): Map<string, HistogramData> {
  const out = new Map<string, HistogramData>();
  for (const s of samples(text)) {
    if (!s.name.startsWith(name) || !keep(s.labels)) continue;
    const part = s.name.slice(name.length);
    if (part !== '_bucket' && part !== '_sum' && part !== '_count') continue;
    const key = label === undefined ? '' : s.labels[label];
    if (key === undefined) continue;
    const h = out.get(key) ?? emptyHistogram();
    if (part === '_sum') h.sum += s.value;
    else if (part === '_count') h.count += s.value;
    else {
      const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
      h.buckets.set(le, (h.buckets.get(le) ?? 0) + s.value);
    }
    out.set(key, h);
  }
  return out;
}

/** What happened between two scrapes of one histogram. */
export function histogramDelta(after: HistogramData | undefined, before: HistogramData | undefined): HistogramData {
  const a = after ?? emptyHistogram();
  const b = before ?? emptyHistogram();
  const buckets = new Map<number, number>();
  for (const [le, n] of a.buckets) buckets.set(le, n - (b.buckets.get(le) ?? 0));
  return { buckets, sum: a.sum - b.sum, count: a.count - b.count };
}

/** Every histogram of `label`'s values summed into one. */
export function mergeHistograms(parts: Iterable<HistogramData>): HistogramData {
  const out = emptyHistogram();
  for (const h of parts) {
    out.sum += h.sum;
    out.count += h.count;
    for (const [le, n] of h.buckets) out.buckets.set(le, (out.buckets.get(le) ?? 0) + n);
  }
  return out;
}

/**
 * The q-quantile as Prometheus' histogram_quantile() estimates it: linear within the bucket it
 * falls in (so only as fine as the buckets); the highest finite bound when it falls in +Inf.
 */
export function histogramQuantile(h: HistogramData, q: number): number {
  if (h.count <= 0) return Number.NaN;
  const bounds = [...h.buckets.keys()].sort((x, y) => x - y);
  const rank = q * h.count;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const le of bounds) {
    const n = h.buckets.get(le) ?? 0;
    if (n >= rank) {
      if (le === Infinity) return lowerBound;
      return lowerBound + ((le - lowerBound) * (rank - lowerCount)) / Math.max(1e-12, n - lowerCount);
    }
    lowerBound = le;
    lowerCount = n;
  }
  return lowerBound;
}

/** The upper bound of the bucket that holds the largest observation (NaN when empty). */
export function histogramMaxBound(h: HistogramData): number {
  if (h.count <= 0) return Number.NaN;
  const bounds = [...h.buckets.keys()].sort((x, y) => x - y);
  for (const le of bounds) if ((h.buckets.get(le) ?? 0) >= h.count) return le;
  return Infinity;
}
