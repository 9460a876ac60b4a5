// Writes crds/*.yaml from the schemas: `npm run gen:crds`. With `--check` it writes nothing and
// exits 1 when a committed file differs (for CI; the unit tests check the same).
import { readFile, writeFile } from 'node:fs/promises';
import { crdFiles } from '../src/api/schema/crds.ts';

const dir = new URL('./', import.meta.url);
const check = process.argv.includes('--check');
let stale = 0;

for (const { file, content } of crdFiles()) {
  const target = new URL(file, dir);
  const current = await readFile(target, 'utf8').catch(() => undefined);
  if (current === content) continue;
  if (check) {
    console.error(`crds/${file} is out of date: run npm run gen:crds`);
    stale++;
  } else {
    await writeFile(target, content);
    console.log(`wrote crds/${file}`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
