// `npm run test:kube` writes README's support table from a run (scripts/support-table.ts): the row
// of the minor it ran, in place of that minor's old row or newest first among the others; and it
// takes the release it ran from the build's stamp.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { stampVersion, supportRow, withSupportRow, type SuiteRun } from '../../scripts/support-table.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const TABLE = [
  '## Supported Kubernetes versions',
  '',
  '| Kubernetes | status | last full end-to-end run (`npm run test:kube -- <minor>`) |',
  '|---|---|---|',
  '| v1.36 | **tested**: by hand | every `npm test` (CI\'s default) |',
  '| v1.30 – v1.35 | allowed by the chart | — |',
  '| before v1.30 | not supported | — |',
  '',
  'The Kubernetes APIs the operator uses are stable.',
].join('\n');

const passed: SuiteRun = { minor: '1.37', kubernetes: 'v1.37.2', date: '2026-11-29', commit: '1a2b3c4', total: 412, pass: 412, fail: 0 };

t.test('a run where every test passed is a tested row stating its date, commit and counts', async (t) => {
  t.equal(
    supportRow(passed),
    '| v1.37 | **tested**: the whole end-to-end suite passed against kube-apiserver, kube-controller-manager, kube-scheduler and kubectl v1.37.2, built from source by the tests | 2026-11-29, 1a2b3c4: 412 passed, 0 failed |',
  );
});

t.test('a run with a failure is a failing row, counting the tests that did not pass', async (t) => {
  t.equal(
    supportRow({ ...passed, minor: '1.34', kubernetes: 'v1.34.4', commit: '1a2b3c4 + changes', pass: 409, fail: 3 }),
    '| v1.34 | **failing**: 3 of the 412 end-to-end tests did not pass against v1.34.4 | 2026-11-29, 1a2b3c4 + changes: 409 passed, 3 failed |',
  );
});

t.test('a newer minor goes above the rows of older ones', async (t) => {
  const lines = withSupportRow(TABLE, passed).split('\n');
  t.equal(lines[4], supportRow(passed));
  t.equal(lines[5], '| v1.36 | **tested**: by hand | every `npm test` (CI\'s default) |');
  t.equal(lines.length, TABLE.split('\n').length + 1, 'one row added, nothing else');
});

t.test('a minor inside the untested range goes above the range, newest first', async (t) => {
  const run = { ...passed, minor: '1.34', kubernetes: 'v1.34.4' };
  const lines = withSupportRow(withSupportRow(TABLE, passed), run).split('\n');
  t.same(lines.slice(4, 8).map((l) => l.split(' | ')[0]), ['| v1.37', '| v1.36', '| v1.34', '| v1.30 – v1.35']);
});

t.test("a minor's second run replaces its row", async (t) => {
  const once = withSupportRow(TABLE, { ...passed, fail: 1, pass: 411 });
  const twice = withSupportRow(once, { ...passed, date: '2026-12-01' });
  t.equal(twice, withSupportRow(TABLE, { ...passed, date: '2026-12-01' }));
  t.notOk(twice.includes('**failing**'));
});

t.test('a README without the table is refused, not appended to', async (t) => {
  t.throws(() => withSupportRow('# kaos-operator\n', passed), /no support table/);
});

t.test("README's own table is one the command can write to", async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  t.match(withSupportRow(readme, passed), supportRow(passed));
});

t.test("the release comes from the build's stamp", async (t) => {
  t.same(stampVersion('v1.37.2+7f5451fe4ce8\n'), { minor: '1.37', kubernetes: 'v1.37.2' });
  t.throws(() => stampVersion('garbage'), /not a control-plane build's stamp/);
});
