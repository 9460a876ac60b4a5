// The alerts proven by a real Prometheus engine: `promtool check rules` over the generated rules
// file, and `promtool test rules` over test/prometheus/rules.test.yaml, whose cases make every
// alert fire on the series that should page and stay silent on those that should not. promtool
// is built from the Prometheus Go module (test/prometheus/build.sh); npm test runs this file once
// that build is there (scripts/test.ts).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { alerts } from '../../monitoring/alerts.ts';
import { promtool } from '../prometheus/promtool.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RULES = join(ROOT, 'monitoring', 'prometheus-rules.yaml');
const TESTS = join(ROOT, 'test', 'prometheus', 'rules.test.yaml');

t.test('promtool check rules: the rules file is valid, every expression parses', async (t) => {
  const r = await promtool(['check', 'rules', RULES]);
  t.equal(r.code, 0, 'promtool check rules', { stdout: r.stdout, stderr: r.stderr });
  t.match(r.stdout, `SUCCESS: ${alerts().length} rules found`);
});

t.test('promtool test rules: every alert fires on what should page, and only on it', async (t) => {
  type Case = { input_series: unknown[]; alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] };
  const cases = (parse(await readFile(TESTS, 'utf8')) as { tests: Case[] }).tests;
  for (const { alert } of alerts()) {
    const checks = cases.flatMap((c) => (c.alert_rule_test ?? []).filter((a) => a.alertname === alert).map((a) => ({ ...a, series: c.input_series.length })));
    t.ok(checks.some((c) => c.exp_alerts.length > 0), `${alert}: a case where it fires`);
    // Silent: an evaluation that expects no alert, or series beside those expected to fire.
    t.ok(checks.some((c) => c.exp_alerts.length === 0 || c.series > c.exp_alerts.length), `${alert}: a case where it must stay silent`);
  }
  const r = await promtool(['test', 'rules', TESTS]);
  t.equal(r.code, 0, 'promtool test rules', { stdout: r.stdout, stderr: r.stderr });
  t.match(r.stdout, 'SUCCESS');
});
