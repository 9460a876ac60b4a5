// YAML users write, read at a cost linear in its length: the first error only, with its line and
// column and never the text; a length refused before parsing; nesting and merge keys capped;
// aliases kept as references, never expanded.
import t from 'tap';
import { MAX_YAML_DEPTH, MAX_YAML_MERGE_KEYS, readUntrustedYaml } from '../../../src/api/untrusted-yaml.ts';

const value = (text: string, maxLength = 1 << 20): unknown => {
  const read = readUntrustedYaml(text, maxLength);
  if (!read.ok) throw new Error(`not read: ${JSON.stringify(read)}`);
  return read.value;
};

t.test('one document, read as YAML 1.2 core with merge keys', async (t) => {
  t.same(value('model_list:\n  - model_name: a\n'), { model_list: [{ model_name: 'a' }] });
  t.same(value('a: yes\nb: 0x10\nc: 2001-12-14\nd: ~\n'), { a: 'yes', b: 16, c: '2001-12-14', d: null }, 'YAML 1.2 core: yes and dates stay strings');
  t.same(value('d: &d {x: 1}\ne:\n  <<: *d\n  y: 2\n'), { d: { x: 1 }, e: { x: 1, y: 2 } }, 'a merge key, as PyYAML reads it');
  t.equal(value(''), null, 'an empty document');
  t.equal(value('# only a comment\n'), null);
});

t.test('too long: refused before a byte is parsed', async (t) => {
  t.same(readUntrustedYaml('a: 1\n', 4), { ok: false, problem: 'too-long' });
  t.same(readUntrustedYaml(`"${'x'.repeat(10)}`, 8), { ok: false, problem: 'too-long' }, 'not YAML either: the length is what is said');
  t.same(readUntrustedYaml('a: 🙂🙂', 7), { ok: true, value: { a: '🙂🙂' } }, 'the length counts code points, as the schema does');
});

t.test('the first error, with its line and column, and nothing of the text', async (t) => {
  t.same(readUntrustedYaml('model_list:\n  - model_name: a\n   api_key: sk-secret\n', 1 << 20), {
    ok: false,
    problem: 'syntax',
    error: 'bad indentation of a sequence entry at line 3, column 4',
  });
  const quotes = readUntrustedYaml('"'.repeat(65_536), 1 << 20);
  t.same(quotes, { ok: false, problem: 'syntax', error: 'end of the stream or a document separator is expected at line 1, column 3' }, '32,767 errors in a row: the first one');
  t.same(readUntrustedYaml('a: 1\n---\nb: 2\n---\nc: 3\n', 1 << 20), { ok: false, problem: 'documents', count: 3 });
  t.match(readUntrustedYaml('a: !!python/object x\n', 1 << 20), { ok: false, problem: 'syntax', error: /unknown scalar tag.*at line 1, column 4/ }, 'unknown tags are errors');
});

t.test('nesting and merge keys are capped; aliases are references, never expanded', async (t) => {
  // The document is the first level.
  const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  t.ok(readUntrustedYaml(nested(MAX_YAML_DEPTH - 1), 1 << 20).ok, `${MAX_YAML_DEPTH - 1} levels of collections`);
  t.match(readUntrustedYaml(nested(MAX_YAML_DEPTH), 1 << 20), {
    ok: false,
    problem: 'syntax',
    error: new RegExp(`nesting exceeded maxDepth \\(${MAX_YAML_DEPTH}\\)`),
  });
  const keys = Array.from({ length: 100 }, (_, i) => `k${i}: 1`).join(', ');
  const merges = (n: number) => `d: &d {${keys}}\nl:\n${'  - <<: *d\n'.repeat(n)}`;
  // Each merge counts its alias and the keys it copies: 101 here.
  const most = Math.floor(MAX_YAML_MERGE_KEYS / 101);
  t.ok(readUntrustedYaml(merges(most), 1 << 20).ok, `${most} merges of 100 keys`);
  t.match(readUntrustedYaml(merges(most + 1), 1 << 20), { ok: false, problem: 'syntax', error: /maxTotalMergeKeys/ });
  const laughs = value('a: &a [1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n') as Record<string, unknown[]>;
  t.equal(laughs.b?.[0], laughs.a, 'an alias is the anchored value itself');
  t.equal(laughs.c?.[8], laughs.b);
});

t.test('"__proto__" is a plain key', async (t) => {
  const read = value('__proto__: {polluted: 1}\n') as Record<string, unknown>;
  t.ok(Object.hasOwn(read, '__proto__'), 'an own key');
  t.equal(Object.getPrototypeOf(read), Object.prototype, 'the prototype is untouched');
  t.equal(({} as Record<string, unknown>).polluted, undefined);
});
