import t from 'tap';
import { recentMemo } from '../../../src/api/recent-memo.ts';

t.test('each distinct argument computed once while remembered; the least recently used forgotten first', async (t) => {
  const calls: string[] = [];
  const length = recentMemo((s: string) => (calls.push(s), { length: s.length }), 2);
  const a = length('a');
  t.equal(length('a'), a, 'the same answer, from memory');
  length('bb');
  length('a'); // a is now the most recently used
  length('ccc'); // forgets bb
  length('a');
  t.same(calls, ['a', 'bb', 'ccc'], 'a computed once');
  length('bb');
  t.same(calls, ['a', 'bb', 'ccc', 'bb'], 'bb was forgotten and computed again');
  t.equal(length('x'.repeat(100_000)), length(`${'x'.repeat(50_000)}${'x'.repeat(50_000)}`), 'strings are keys by content');
});
