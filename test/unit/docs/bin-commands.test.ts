// Every command in the repository's Markdown that runs the `kaos-operator` command runs this
// repository's own bin (`node [<checkout>/]bin/kaos-operator.js lint|default …`, after `npm run
// build`), never `npx kaos-operator` or `npm exec`: the package is not published, so those would
// run whatever the public registry holds under the name. Each such command's subcommand and
// options are run through the CLI's own parser (src/cli/run.ts), its files replaced by a sample
// on stdin where they are the reader's own, so a renamed option or a typo fails here.
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { markdownFiles } from './markdown-files.ts';
import { ROOT } from '../../../scripts/image/build.ts';
import { run } from '../../../src/cli/run.ts';

const SAMPLE = readFileSync(join(ROOT, 'test/fixtures/samples/1-simple-echo-agent.yaml'), 'utf8');

/** The lines of fenced code blocks and the inline code spans of a page: where commands are written. */
export function codeOf(markdown: string): string[] {
  const out: string[] = [];
  for (const m of markdown.matchAll(/^(```|~~~)[^\n]*\n([\s\S]*?)^\1/gm)) out.push(...(m[2] ?? '').split('\n'));
  const prose = markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, '');
  for (const m of prose.matchAll(/`([^`\n]+)`/g)) out.push(m[1] ?? '');
  return out;
}

/** The parts of a command line that run the bin: a name followed by its subcommand and an argument. */
export function binInvocations(line: string): string[] {
  return line
    .split(/\|(?!\|)|&&|;/)
    .map((part) => part.trim().replace(/^(\$|-)\s+/, '').replace(/^run:\s*/, ''))
    .filter((part) => /kaos-operator(\.js)?\s+(lint|default)\s+\S/.test(part) || /bin\/kaos-operator\.js\s+\S/.test(part));
}

const OWN_BIN = /^node\s+(\S*?)bin\/kaos-operator\.js\s+(.*)$/;

t.test('the helpers find commands in code, not prose, and split pipelines', async (t) => {
  t.same(codeOf('run `node bin/kaos-operator.js lint -` now\n```sh\nhelm template x | node bin/kaos-operator.js lint -\n```\n'), ['helm template x | node bin/kaos-operator.js lint -', '', 'node bin/kaos-operator.js lint -']);
  t.same(binInvocations('helm template a ./deploy | npx --yes kaos-operator lint -'), ['npx --yes kaos-operator lint -']);
  t.same(binInvocations('- run: cd kaos-operator && npm ci && npm run build'), [], 'a directory named kaos-operator is no command');
  t.same(binInvocations('`kaos-operator lint` and `default`'), [], 'the command\'s name alone is no command');
  t.same(binInvocations('bin/kaos-operator.js'), [], 'nor is the path alone');
});

const files = markdownFiles(ROOT);

t.test('no page runs the command through npx or npm exec', async (t) => {
  const offenders: string[] = [];
  for (const file of files) {
    for (const [i, line] of readFileSync(file, 'utf8').split('\n').entries()) {
      if (/\b(npx|npm exec|npm x)\b[^|\n]*\bkaos-operator\b/.test(line)) offenders.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
    }
  }
  t.same(offenders, []);
  t.ok(files.length > 20, `pages read: ${files.length}`);
});

t.test('every command that runs the bin runs this repository\'s, with a subcommand and options the CLI accepts', async (t) => {
  let checked = 0;
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const where = relative(ROOT, file);
    for (const invocation of codeOf(text).flatMap(binInvocations)) {
      const own = OWN_BIN.exec(invocation);
      if (own === null) {
        t.fail(`${where}: "${invocation}" does not run node …bin/kaos-operator.js`);
        continue;
      }
      checked++;
      const [, checkout = '', rest = ''] = own;
      if (checkout === '' || checkout === './') t.ok(existsSync(join(ROOT, 'bin/kaos-operator.js')), `${where}: bin/kaos-operator.js exists`);
      t.match(text, 'npm run build', `${where}: says the bin needs npm run build`);
      // The reader's files become the sample on stdin; files of this repository are read as they are.
      const words = rest.split(/\s+/).filter((w) => w !== '' && w !== '--cluster');
      const args: string[] = [];
      let stdin = false;
      for (const [i, word] of words.entries()) {
        const isValue = i > 0 && /^(-n|--namespace|--reference-policy|-o|--output|--runtimes)$/.test(words[i - 1] ?? '');
        if (i === 0 || word.startsWith('-') && word !== '-' || isValue || existsSync(join(ROOT, word))) {
          args.push(word);
        } else if (!stdin) {
          args.push('-');
          stdin = true;
        }
      }
      let stderr = '';
      const code = await run(args, { stdout: () => {}, stderr: (s) => { stderr += s; }, readStdin: async () => SAMPLE, env: {} });
      t.ok(code === 0 || code === 1, `${where}: kaos-operator ${args.join(' ')} runs (exit ${code}${stderr === '' ? '' : `: ${stderr.split('\n')[0] ?? ''}`})`);
    }
  }
  t.ok(checked >= 5, `commands checked: ${checked}`);
});
