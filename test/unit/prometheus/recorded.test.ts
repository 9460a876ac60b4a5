// Recorded scrapes become what Prometheus would have stored (test/prometheus/recorded.ts): the
// target's labels on every series, `up` per scrape, stale markers where a series stops.
import t from 'tap';
import { engineTest, families, inputSeries, parseSample, returnsSeries } from '../../prometheus/recorded.ts';

const A = [
  '# HELP x_total X.',
  '# TYPE x_total counter',
  'x_total{controller="agent",reason="a b \\"c\\""} 3',
  '# TYPE h_seconds histogram',
  'h_seconds_bucket{le="+Inf",webhook="/v"} 2',
  'h_seconds_sum{webhook="/v"} 0.5',
  'h_seconds_count{webhook="/v"} 2',
  '# TYPE g gauge',
  'g 1',
].join('\n');
const B = ['# TYPE x_total counter', 'x_total{controller="agent",reason="a b \\"c\\""} 5', '# TYPE g gauge', 'g +Inf'].join('\n');

t.test('a sample line: its name, labels as written (quoted braces and spaces included) and value', async (t) => {
  t.same(parseSample('x_total{controller="agent",reason="a} b"} 3'), { name: 'x_total', labels: 'controller="agent",reason="a} b"', value: '3' });
  t.same(parseSample('g 1.5e-3'), { name: 'g', labels: '', value: '1.5e-3' });
  t.equal(parseSample('# TYPE g gauge'), undefined);
});

t.test('families: each TYPE with the label names of its series, le left out', async (t) => {
  const found = families([{ slot: 0, text: A }, { slot: 1, text: undefined }]);
  t.same([...found.keys()], ['x_total', 'h_seconds', 'g']);
  t.same([...(found.get('h_seconds')?.labels ?? [])], ['webhook']);
  t.same([...(found.get('x_total')?.labels ?? [])], ['controller', 'reason']);
  t.equal(found.get('h_seconds')?.type, 'histogram');
});

t.test('input series: target labels, up 1/0, a stale marker after a scrape without the series, nothing for a slot never scraped', async (t) => {
  // Slot 0: A; slot 1: the target down; slot 2: B; slot 3: not scraped (a slow scrape overran it); slot 4: B.
  const series = inputSeries({ intervalMs: 2000, scrapes: [{ slot: 0, text: A }, { slot: 1, text: undefined }, { slot: 2, text: B }, { slot: 4, text: B }] }, { job: 'j', pod: 'p' });
  const values = Object.fromEntries(series.map((s) => [s.series, s.values]));
  t.equal(values['up{job="j",pod="p"}'], '1 0 1 _ 1');
  t.equal(values['x_total{controller="agent",reason="a b \\"c\\"",job="j",pod="p"}'], '3 stale 5 _ 5');
  t.equal(values['h_seconds_bucket{le="+Inf",webhook="/v",job="j",pod="p"}'], '2 stale _ _ _', 'a series gone stays gone after its stale marker');
  t.equal(values['g{job="j",pod="p"}'], '1 stale Inf _ Inf');
});

t.test('a promtool test: every recording\'s series, every expectation checked at the end, rules evaluated at the interval', async (t) => {
  const test = engineTest([
    { recording: { intervalMs: 2000, scrapes: [{ slot: 0, text: A }, { slot: 5, text: A }] }, target: { job: 'j' } },
    { recording: { intervalMs: 2000, scrapes: [{ slot: 0, text: B }, { slot: 6, text: B }] }, target: { job: 'k' } },
  ], ['r.yaml'], [returnsSeries('g{job="j"}')]);
  t.same(test['evaluation_interval'], '2000ms');
  const [only] = test['tests'] as { interval: string; input_series: { series: string }[]; promql_expr_test: unknown[] }[];
  t.same(only?.promql_expr_test, [{ expr: 'count(g{job="j"}) > bool 0', eval_time: '10000ms', exp_samples: [{ labels: '{}', value: 1 }] }], 'at the end of the shorter recording');
  t.ok(only?.input_series.some((s) => s.series === 'g{job="k"}'), 'both recordings\' series');
  t.throws(() => engineTest([{ recording: { intervalMs: 1000, scrapes: [] }, target: {} }, { recording: { intervalMs: 2000, scrapes: [] }, target: {} }], [], []), /one interval/);
});
