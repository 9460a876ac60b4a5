// Facts the docs state about the repository's own files, checked against those files: what the
// image holds (the Dockerfile's copies), whether its default image can be pulled (the CHANGELOG
// says the version is not tagged), and a GitOps recipe that Argo CD can read.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { markdownFiles } from './markdown-files.ts';
import { ROOT } from '../../../scripts/image/build.ts';
import { KIND_NAMES, KINDS } from '../../../src/api/kinds.ts';

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

t.test('the pages that say what the image holds name every bundle the Dockerfile copies', async (t) => {
  const copied = [...read('Dockerfile').matchAll(/\/app\/dist\/([\w-]+\.js)(?=\s)/g)].map((m) => m[1] ?? '');
  t.same(copied.sort(), ['admission-worker.js', 'main.js'], 'the Dockerfile copies the two bundles (and their maps)');
  const development = read('docs/development.md');
  const holds = /\*\*What it holds\*\*:([\s\S]*?)\n- \*\*/.exec(development)?.[1] ?? '';
  for (const bundle of copied) {
    t.match(holds, `/app/dist/${bundle}`, `development.md, "What it holds": /app/dist/${bundle}`);
    t.match(read('docs/benchmarks.md'), bundle, `benchmarks.md, the image: ${bundle}`);
  }
});

t.test('while the version is not tagged, the README says the default image is not published, right after its first helm install', async (t) => {
  const untagged = /has not been tagged yet/.test(read('CHANGELOG.md'));
  const repository = (parse(read('chart/values.yaml')) as { image: { repository: string } }).image.repository;
  const readme = read('README.md');
  const install = readme.indexOf('helm install');
  t.ok(install > 0, 'the README has a helm install');
  const after = readme.slice(install, readme.indexOf('\n## ', install) === -1 ? undefined : readme.indexOf('\n## ', install));
  if (untagged) {
    t.match(after, repository, `it names the default image, ${repository}`);
    t.match(after, /not published/, 'and says it is not published');
  } else {
    t.pass('the version is tagged: nothing to warn about');
  }
});

t.test('an Argo CD ignoreDifferences recipe uses no JSON pointer with a wildcard (jqPathExpressions does that)', async (t) => {
  const offenders: string[] = [];
  for (const file of markdownFiles(ROOT)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(ignoreDifferences|jsonPointers)[\s\S]{0,200}/g)) {
      const pointer = /`?(\/[\w.~-]+(?:\/[\w.*~-]+)*\/\*(?:\/[\w.*~-]+)*)`?/.exec(m[0]);
      if (pointer !== null) offenders.push(`${relative(ROOT, file)}: ${pointer[1] ?? ''}`);
    }
  }
  t.same(offenders, []);
  t.match(read('docs/troubleshooting.md'), "jqPathExpressions: ['.webhooks[]?.clientConfig.caBundle']");
});

t.test('webhooks/README.md says which kinds have a DELETE entry, as the generated configurations do', async (t) => {
  const configs = read('webhooks/service/validating.yaml');
  const withDelete = [...configs.matchAll(/name: v([a-z]+)-delete\.kaos\.tools/g)].map((m) => KINDS.find((k) => KIND_NAMES[k].singular === m[1]));
  t.same(withDelete.filter((k) => k === undefined), [], 'every DELETE entry is of a kind');
  const sentence = /DELETE of ([^;]*);/.exec(read('webhooks/README.md').replace(/\s*\n\s*/g, ' '))?.[1] ?? '';
  if (withDelete.length === KINDS.length) {
    t.match(sentence, `each of the ${['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven'][KINDS.length] ?? KINDS.length} kinds`, 'all of them');
  } else {
    for (const kind of withDelete) t.match(sentence, `${kind ?? ''}s`, `${kind ?? ''}`);
  }
});

t.test('no page counts the operator as one bundled file: the build makes one per thread', async (t) => {
  const offenders: string[] = [];
  for (const file of markdownFiles(ROOT)) {
    if (/CHANGELOG|history/.test(file)) continue;
    for (const [i, line] of readFileSync(file, 'utf8').split('\n').entries()) {
      if (/\bone bundled file\b|\(the bundle\)/.test(line)) offenders.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
    }
  }
  t.same(offenders, []);
});
