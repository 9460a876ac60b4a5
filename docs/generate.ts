// Regenerates the field tables of docs/api.md from the schemas: `npm run gen:docs`. The prose
// around the `<!-- BEGIN GENERATED … -->` markers is kept as written (docs/api-reference.ts). With
// `--check` it writes nothing and exits 1 when the page is out of date (the unit tests check the same).
import { readFile, writeFile } from 'node:fs/promises';
import { fillGenerated } from './api-reference.ts';

const target = new URL('./api.md', import.meta.url);
const current = await readFile(target, 'utf8');
const next = fillGenerated(current);
if (current === next) {
  process.exitCode = 0;
} else if (process.argv.includes('--check')) {
  console.error('docs/api.md is out of date: run npm run gen:docs');
  process.exitCode = 1;
} else {
  await writeFile(target, next);
  console.log('wrote docs/api.md');
}
