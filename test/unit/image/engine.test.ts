// The engine's limits (ulimitArgs) and the Dockerfile's default base (defaultBase), as pure functions.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ulimitArgs } from '../../../scripts/image/engine.ts';
import { defaultBase, ROOT } from '../../../scripts/image/build.ts';

const limits = (nofile: string, nproc: string): string => [
  'Limit                     Soft Limit           Hard Limit           Units     ',
  'Max cpu time              unlimited            unlimited            seconds   ',
  `Max processes             ${nproc} processes `,
  `Max open files            ${nofile} files     `,
].join('\n');

t.test('a container gets this process\'s open-file limit and its process limit, capped at podman\'s own', async (t) => {
  t.same(ulimitArgs(limits('20000                20000', '96365                96365')), ['--ulimit', 'nofile=20000:20000', '--ulimit', 'nproc=32768:32768']);
  t.same(ulimitArgs(limits('1024                 4096', '4000                 8000')), ['--ulimit', 'nofile=1024:4096', '--ulimit', 'nproc=4000:8000']);
});

t.test('an unlimited limit leaves the engine\'s default', async (t) => {
  t.same(ulimitArgs(limits('unlimited            unlimited', 'unlimited            unlimited')), []);
});

t.test('the default base is the Dockerfile\'s ARG NODE_IMAGE', async (t) => {
  t.equal(defaultBase(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')), 'node:24-bookworm-slim');
  t.throws(() => defaultBase('FROM node:24\n'), /no ARG NODE_IMAGE/);
});
