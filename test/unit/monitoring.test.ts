// The monitoring files are generated from their one source (monitoring/generate.ts), and the
// chart's values can set every threshold the alerts have and nothing else. (promtool's check and
// unit tests of the rules: test/unit/prometheus-rules.test.ts; helm template of both: test/e2e/chart.test.ts.)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { API_SERVER_WEBHOOK_REJECTIONS, DEFAULT_THRESHOLDS, alerts } from '../../monitoring/alerts.ts';
import { staleMonitoringFiles } from '../../monitoring/generate.ts';
import { ROWS, dashboardQueries } from '../../monitoring/dashboard.ts';
import { METRIC, PROCESS_METRIC } from '../../src/leaves/metric-names.ts';
import { documentedMetrics } from '../support/metrics-doc.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

t.test('the committed monitoring files match monitoring/generate.ts (npm run gen:monitoring)', async (t) => {
  t.same(await staleMonitoringFiles(), []);
});

t.test('the chart\'s values: both off by default, and every threshold settable by its name', async (t) => {
  const values = parse(await readFile(join(ROOT, 'chart', 'values.yaml'), 'utf8')) as { metrics: { prometheusRule: { enabled: boolean; thresholds: object }; grafanaDashboard: { enabled: boolean; label: string; labelValue: string } } };
  t.equal(values.metrics.prometheusRule.enabled, false);
  t.equal(values.metrics.grafanaDashboard.enabled, false);
  t.same(values.metrics.prometheusRule.thresholds, {}, 'no default repeated in values.yaml: they are monitoring/alerts.ts\'s');
  t.same([values.metrics.grafanaDashboard.label, values.metrics.grafanaDashboard.labelValue], ['grafana_dashboard', '1'], 'kube-prometheus-stack\'s sidecar label');
  const schema = JSON.parse(await readFile(join(ROOT, 'chart', 'values.schema.json'), 'utf8')) as { properties: { metrics: { properties: { prometheusRule: { properties: { thresholds: { properties: object } } } } } } };
  t.same(Object.keys(schema.properties.metrics.properties.prometheusRule.properties.thresholds.properties).sort(), Object.keys(DEFAULT_THRESHOLDS).sort());
});

t.test('every alert and every dashboard query reads only metrics the operator defines', async (t) => {
  // `up` is Prometheus' own; the API server's rejections, the API server's.
  const known = new Set<string>([...Object.values(METRIC), ...Object.values(PROCESS_METRIC), 'up', API_SERVER_WEBHOOK_REJECTIONS]);
  // A histogram's series by their family's name (a counter may end in _count itself).
  const names = (expr: string): string[] => [...expr.matchAll(/\b([a-z_][a-z0-9_]*)(?=\{)/g)].map((m) => m[1] as string).map((n) => (known.has(n) ? n : n.replace(/_(bucket|sum|count)$/, '')));
  for (const a of alerts()) t.same(names(`${a.query} ${a.condition}`).filter((n) => !known.has(n)), [], a.alert);
  for (const q of dashboardQueries('j', '1m')) t.same(names(q.expr).filter((n) => !known.has(n)), [], q.panel);
  t.ok(ROWS.length >= 4 && dashboardQueries('j', '1m').length >= 20, 'the dashboard\'s rows and queries');
});

t.test('docs/metrics.md documents every metric the code names, with a type and a meaning', async (t) => {
  const documented = documentedMetrics(await readFile(join(ROOT, 'docs', 'metrics.md'), 'utf8'));
  t.ok(documented.size >= 40, `found the reference table (${documented.size} rows)`);
  for (const name of [...Object.values(METRIC), ...Object.values(PROCESS_METRIC)]) t.ok(documented.has(name), name);
  for (const [name, doc] of documented) t.ok(['counter', 'gauge', 'histogram'].includes(doc.type), `${name}: ${doc.type}`);
  t.same(documented.get('nodejs_heap_space_size_used_bytes'), { type: 'gauge', labels: ['space'], optional: ['thread'] }, 'labels in parentheses are on some series only');
});

t.test('docs/runbooks.md has an entry per alert, at the anchor of its runbook_url, naming its thresholds', async (t) => {
  const runbooks = await readFile(join(ROOT, 'docs', 'runbooks.md'), 'utf8');
  const entries = [...runbooks.matchAll(/^## (\S+)$/gm)].map((m) => m[1] as string);
  t.same(entries, alerts().map((a) => a.alert), 'one entry per alert, in the rules\' order');
  for (const [i, name] of entries.entries()) {
    const entry = runbooks.slice(runbooks.indexOf(`## ${name}\n`), i + 1 < entries.length ? runbooks.indexOf(`## ${entries[i + 1] as string}\n`) : undefined);
    for (const part of ['**Means.**', '**Check.**', '**Fix.**', '**Threshold.**']) t.match(entry, part, `${name}: ${part}`);
    // The thresholds the alert's expression or duration uses are named in its entry.
    const a = alerts().find((x) => x.alert === name);
    const used = Object.keys(DEFAULT_THRESHOLDS).filter((k) => {
      const marked = alerts({ ...DEFAULT_THRESHOLDS, [k]: '@@' }).find((x) => x.alert === name);
      return marked !== undefined && a !== undefined && `${marked.query}${marked.condition}${marked.for ?? ''}` !== `${a.query}${a.condition}${a.for ?? ''}` && k !== 'rateWindow';
    });
    for (const k of used) t.match(entry, `\`${k}\``, `${name}: names its threshold ${k}`);
  }
  const rules = parse(await readFile(join(ROOT, 'monitoring', 'prometheus-rules.yaml'), 'utf8')) as { groups: { rules: { alert: string; annotations: { runbook_url: string } }[] }[] };
  for (const rule of rules.groups[0]?.rules ?? []) t.match(rule.annotations.runbook_url, new RegExp(`docs/runbooks\\.md#${rule.alert.toLowerCase()}$`), `${rule.alert}: runbook_url`);
});
