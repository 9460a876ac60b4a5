// Every relative link of the repository's Markdown pages (README.md, the top-level pages, docs/ and
// the folders' README.md files) points at a file that exists, and every #anchor at a heading of
// the page it names, so moving or renaming a page or a section cannot leave a dead link behind.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { markdownFiles } from './markdown-files.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The text outside fenced code blocks and inline code, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = slug(m[1] ?? '');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Targets of inline links and images, `[text](target)`, without a title. */
function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? '');
}

t.test('the helpers read Markdown as GitHub does', async (t) => {
  t.equal(slug('The webhook server: `npm run bench:webhook`'), 'the-webhook-server-npm-run-benchwebhook');
  t.equal(slug('Agent spec'), 'agent-spec');
  t.same(links('see [a](docs/a.md#x) and ![i](img.png "t")\n```\n[no](nope.md)\n```\n`[no](x)`'), ['docs/a.md#x', 'img.png']);
});

const files = markdownFiles(ROOT);

t.test('every relative link resolves to a file, and every anchor to a heading', async (t) => {
  t.ok(files.some((f) => relative(ROOT, f) === 'README.md') && files.some((f) => relative(ROOT, f) === join('docs', 'api.md')), 'pages found');
  let checked = 0;
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const target of links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path = '', anchor] = target.split('#');
      const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path));
      const where = `${relative(ROOT, file)} → ${target}`;
      checked++;
      if (!existsSync(resolved)) {
        t.fail(`${where}: no such file`);
        continue;
      }
      if (anchor !== undefined && anchor !== '' && resolved.endsWith('.md')) {
        t.ok(anchors(readFileSync(resolved, 'utf8')).has(anchor), `${where}: a heading with that anchor`);
      }
    }
  }
  t.ok(checked >= 40, `links checked: ${checked}`);
});
