// The docs give one CRD upgrade command, the one test/e2e/upgrade-restore.test.ts runs over CRDs
// an earlier install created: every `kubectl apply` of the chart's CRDs in a page is that one.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ROOT } from '../../../scripts/local-stack.ts';
import { CRD_UPGRADE_COMMAND } from '../../e2e/support/upgrade.ts';

const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

t.test('every kubectl apply of the CRDs in the docs is the one command', async (t) => {
  const found: string[] = [];
  for (const page of pages) {
    for (const m of readFileSync(join(ROOT, page), 'utf8').matchAll(/kubectl apply[^`\n]*crds[^`\n\s]*/g)) found.push(`${page}: ${m[0].trim()}`);
  }
  t.ok(found.length >= 2, `${found.length} of them`);
  t.same(found.filter((f) => !f.endsWith(`: ${CRD_UPGRADE_COMMAND}`)), [], CRD_UPGRADE_COMMAND);
});

t.test('the upgrade pages give it', async (t) => {
  for (const page of ['docs/upgrade.md', 'docs/helm.md']) t.match(readFileSync(join(ROOT, page), 'utf8'), CRD_UPGRADE_COMMAND, page);
});
