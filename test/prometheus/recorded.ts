import { readFileSync } from 'node:fs';
import { request } from 'node:https';

// Scrapes of a live operator's /metrics (and the API server's), recorded at a fixed interval, and turned into what
// Prometheus would have stored from them: each series labelled with the target's labels (job,
// pod, instance), `up` 1 or 0 per scrape, and a stale marker where a series stops (a scrape
// without it, or a failed scrape), as Prometheus writes one. promtool's unit-test format
// (`input_series`) takes that as it is, so promtool's engine evaluates the dashboard's queries
// and the alerts over the live operator's own series (test/e2e/controller-idle-restart.test.ts).

/** One scrape: its slot (the nth interval since the recording began) and the text, if it answered. */
export interface Scrape {
  slot: number;
  text: string | undefined;
}

export interface Recording {
  intervalMs: number;
  scrapes: Scrape[];
}

/**
 * Scrapes with `scrape` every `intervalMs` until stop(). A scrape that fails (nothing listens, an
 * error, SCRAPE_TIMEOUT_MS, Prometheus' default) is recorded as failed; the slots a slow one
 * overran have no scrape at all, so that a loaded machine delays samples instead of marking the
 * target down. `scrapes` is the recording so far, for a test to wait on.
 */
const SCRAPE_TIMEOUT_MS = 10_000;

export function record(scrape: () => Promise<string | undefined>, intervalMs: number): { readonly scrapes: readonly Scrape[]; stop(): Promise<Recording> } {
  const scrapes: Scrape[] = [];
  const start = performance.now();
  let stopped = false;
  const loop = (async () => {
    let last = -1;
    while (!stopped) {
      const slot = Math.floor((performance.now() - start) / intervalMs);
      if (slot > last) {
        last = slot;
        const text = await scrape().catch(() => undefined);
        scrapes.push({ slot, text });
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, start + (last + 1) * intervalMs - performance.now())));
    }
  })();
  return {
    scrapes,
    async stop() {
      stopped = true;
      await loop;
      return { intervalMs, scrapes };
    },
  };
}

/** A plain-HTTP /metrics at `url()` (read each time: a restarted operator listens elsewhere). */
export function httpScrape(url: () => string): () => Promise<string | undefined> {
  return async () => {
    const r = await fetch(url(), { signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS) });
    return r.ok ? r.text() : undefined;
  };
}

/**
 * The API server's /metrics (its CA, a bearer token), keeping only the families named in `keep`:
 * what a metric_relabel_configs `keep` would store, instead of its thousands of series.
 */
export function apiServerScrape(server: string, caFile: string, token: string, keep: readonly string[]): () => Promise<string | undefined> {
  const ca = readFileSync(caFile);
  return () => new Promise((resolve, reject) => {
    const req = request(new URL('/metrics', server), { ca, headers: { Authorization: `Bearer ${token}` }, timeout: SCRAPE_TIMEOUT_MS, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; });
      res.on('end', () => resolve(res.statusCode === 200 ? body.split('\n').filter((line) => keep.some((name) => line.startsWith(name) || line.startsWith(`# HELP ${name} `) || line.startsWith(`# TYPE ${name} `))).join('\n') : undefined));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** One sample line of the exposition: the series (name and labels, as written) and its value. */
export function parseSample(line: string): { name: string; labels: string; value: string } | undefined {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[^"}]|"(?:[^"\\]|\\.)*")*\})?\s+(\S+)(?:\s+\d+)?$/.exec(line);
  if (m === null) return undefined;
  return { name: m[1] as string, labels: (m[2] ?? '{}').slice(1, -1), value: m[3] as string };
}

/** Families (`# TYPE` lines) and each family's label names, over every scrape. */
export function families(scrapes: readonly Scrape[]): Map<string, { type: string; labels: Set<string> }> {
  const found = new Map<string, { type: string; labels: Set<string> }>();
  for (const { text } of scrapes) {
    for (const line of (text ?? '').split('\n')) {
      const type = /^# TYPE (\S+) (\S+)/.exec(line);
      if (type !== null) {
        if (!found.has(type[1] as string)) found.set(type[1] as string, { type: type[2] as string, labels: new Set() });
        continue;
      }
      const sample = parseSample(line);
      if (sample === undefined) continue;
      const family = found.get(sample.name) ?? found.get(sample.name.replace(/_(bucket|sum|count)$/, ''));
      for (const m of sample.labels.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) if (m[1] !== 'le') family?.labels.add(m[1] as string);
    }
  }
  return found;
}

/** promtool's input_series: every series of the recording with `target`'s labels, one value per slot. */
export function inputSeries(recording: Recording, target: Readonly<Record<string, string>>): { series: string; values: string }[] {
  const slots = (recording.scrapes.at(-1)?.slot ?? -1) + 1;
  const targetLabels = Object.entries(target).map(([k, v]) => `${k}="${v}"`).join(',');
  const bySeries = new Map<string, (string | undefined)[]>();
  const scraped = new Set(recording.scrapes.map((s) => s.slot));
  const at = (series: string): (string | undefined)[] => {
    let values = bySeries.get(series);
    if (values === undefined) bySeries.set(series, (values = new Array<string | undefined>(slots).fill(undefined)));
    return values;
  };
  for (const { slot, text } of recording.scrapes) {
    at(`up{${targetLabels}}`)[slot] = text === undefined ? '0' : '1';
    for (const line of (text ?? '').split('\n')) {
      const sample = parseSample(line);
      if (sample === undefined) continue;
      at(`${sample.name}{${[sample.labels, targetLabels].filter((l) => l !== '').join(',')}}`)[slot] = promValue(sample.value);
    }
  }
  return [...bySeries].map(([series, values]) => ({
    series,
    // A scrape without a series that the previous scrape had writes a stale marker; a slot
    // without a scrape writes nothing.
    values: values.map((v, i) => v ?? (scraped.has(i) && lastScraped(values, scraped, i) !== undefined ? 'stale' : '_')).join(' '),
  }));
}

/** The value of the scrape before slot `i` (undefined: that scrape lacked the series, or none came before). */
function lastScraped(values: readonly (string | undefined)[], scraped: ReadonlySet<number>, i: number): string | undefined {
  for (let j = i - 1; j >= 0; j--) if (scraped.has(j)) return values[j];
  return undefined;
}

/** A value in promtool's series notation. */
function promValue(value: string): string {
  if (value === '+Inf') return 'Inf';
  return value;
}

/** An expression and the samples promtool must find at the end of the recording. */
export interface Expectation {
  expr: string;
  samples: { labels: string; value: number }[];
}

/** "The query returns at least one series", as an expectation: its series counted, compared to 0. */
export const returnsSeries = (expr: string): Expectation => ({ expr: `count(${expr}) > bool 0`, samples: [{ labels: '{}', value: 1 }] });

/**
 * A promtool unit-test file: the recording as input series, `ruleFiles` evaluated at the
 * recording's interval, each expectation checked at its last scrape.
 */
export function engineTest(sources: readonly { recording: Recording; target: Readonly<Record<string, string>> }[], ruleFiles: readonly string[], expectations: readonly Expectation[]): Record<string, unknown> {
  const intervalMs = sources[0]?.recording.intervalMs ?? 0;
  if (sources.some((s) => s.recording.intervalMs !== intervalMs)) throw new Error('engineTest: the recordings must share one interval');
  const interval = `${intervalMs}ms`;
  // The end of the shortest recording: every source has its samples there.
  const evalTime = `${Math.min(...sources.map((s) => s.recording.scrapes.at(-1)?.slot ?? 0)) * intervalMs}ms`;
  return {
    rule_files: ruleFiles,
    evaluation_interval: interval,
    tests: [{
      name: 'the live operator\'s recorded metrics',
      interval,
      input_series: sources.flatMap((s) => inputSeries(s.recording, s.target)),
      promql_expr_test: expectations.map((e) => ({ expr: e.expr, eval_time: evalTime, exp_samples: e.samples })),
    }],
  };
}
