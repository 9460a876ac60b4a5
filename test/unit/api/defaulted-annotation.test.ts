// The kaos.tools/defaulted annotation's reader (src/api/defaulting/defaulted-annotation.ts): a
// path is listed when an entry of the comma-separated list, trimmed, is exactly it — the
// definition written out below as a split — and a hostile annotation of a megabyte is read
// without splitting it.
import fc from 'fast-check';
import t from 'tap';
import { readDefaulted } from '../../../src/api/defaulting/defaulted-annotation.ts';
import { DEFAULTED_ANNOTATION } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';

const annotated = (value: string): KubeObject => ({ metadata: { annotations: { [DEFAULTED_ANNOTATION]: value } } });
/** The definition: split on commas, trim each entry, compare. */
const byDefinition = (value: string, path: string): boolean => value.split(',').some((e) => e.trim() === path && path !== '');

const PATHS = ['spec.container.image', 'spec.config.env[MODEL_NAME]', 'spec.replicas', 'a', 'a b'];

t.test('the entries a user or the webhook writes', async (t) => {
  const read = readDefaulted(annotated(' spec.container.image ,, spec.config.env[MODEL_NAME]\t,a b'));
  t.ok(read.has('spec.container.image'), 'spaces around an entry');
  t.ok(read.has('spec.config.env[MODEL_NAME]'), 'a tab before the comma');
  t.ok(read.has('a b'), 'an entry with a space inside, whole');
  t.notOk(read.has('a'), 'part of an entry is not an entry');
  t.notOk(read.has('spec.container'), 'a prefix of an entry is not an entry');
  t.notOk(read.has(''), 'empty entries list nothing');
  t.notOk(readDefaulted(undefined).has('spec.replicas'), 'no object: nothing listed');
  t.notOk(readDefaulted({ metadata: {} }).has('spec.replicas'), 'no annotation: nothing listed');
});

t.test('the same answers as the definition, for any text made of entries, separators and whitespace', async (t) => {
  const piece = fc.constantFrom(...PATHS, ',', ' ', '\t', '\n', '\u00a0', 'x', 'spec.', '.image', '');
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 24 }), fc.constantFrom(...PATHS), (pieces, path) => {
      const value = pieces.join('');
      return readDefaulted(annotated(value)).has(path) === byDefinition(value, path);
    }),
    { numRuns: 5_000, seed: 0x6b616f73 },
  );
  t.pass('5,000 texts agree');
});

t.test('a megabyte of hostile text is answered by scanning it, not splitting it', async (t) => {
  for (const value of ['1,'.repeat(520_000), `${'spec.container.image '.repeat(50_000)},x`, `${' '.repeat(1 << 20)}spec.replicas`]) {
    const read = readDefaulted(annotated(value));
    for (const path of PATHS) t.equal(read.has(path), byDefinition(value, path), `${path} in ${value.length.toLocaleString('en')} characters of ${JSON.stringify(value.slice(0, 12))}…`);
  }
});
