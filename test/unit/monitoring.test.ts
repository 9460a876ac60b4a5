// The monitoring files are generated from their one source (monitoring/generate.ts), and the
// chart's values can set every threshold the alerts have and nothing else. (promtool's check and
// unit tests of the rules: test/unit/prometheus-rules.test.ts; helm template of both: test/e2e/chart.test.ts.)
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { DEFAULT_THRESHOLDS, alerts } from '../../monitoring/alerts.ts';
import { staleMonitoringFiles } from '../../monitoring/generate.ts';
import { ROWS, dashboardQueries } from '../../monitoring/dashboard.ts';
import { METRIC, PROCESS_METRIC } from '../../src/leaves/metric-names.ts';

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
  const known = new Set<string>([...Object.values(METRIC), ...Object.values(PROCESS_METRIC), 'up']);
  const names = (expr: string): string[] => [...expr.matchAll(/\b([a-z_][a-z0-9_]*)(?=\{)/g)].map((m) => (m[1] as string).replace(/_(bucket|sum|count)$/, ''));
  for (const a of alerts()) t.same(names(`${a.query} ${a.condition}`).filter((n) => !known.has(n)), [], a.alert);
  for (const q of dashboardQueries('j', '1m')) t.same(names(q.expr).filter((n) => !known.has(n)), [], q.panel);
  t.ok(ROWS.length >= 4 && dashboardQueries('j', '1m').length >= 20, 'the dashboard\'s rows and queries');
});
