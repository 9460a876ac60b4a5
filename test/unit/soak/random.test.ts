// The soak's seeded randomness: a seed names a sequence; forks are streams of their own.
import t from 'tap';
import { Random } from '../../soak/random.ts';

t.test('the same seed, the same numbers; another seed, others', async (t) => {
  const a = new Random(42);
  const b = new Random('42');
  const seq = (r: Random) => Array.from({ length: 20 }, () => r.next());
  const first = seq(a);
  t.same(first, seq(b));
  t.not(JSON.stringify(seq(new Random(43))), JSON.stringify(first));
  t.ok(first.every((x) => x >= 0 && x < 1));
});

t.test('a fork is a stream of its own: what one draws does not shift another', async (t) => {
  const draws = (r: Random) => Array.from({ length: 5 }, () => r.next());
  const alone = draws(new Random('s').fork('client-0'));
  const parent = new Random('s');
  const other = parent.fork('client-1');
  other.next();
  other.next();
  parent.next();
  t.same(draws(parent.fork('client-0')), alone, 'the same whatever the parent and its other forks drew');
  t.not(JSON.stringify(draws(parent.fork('client-2'))), JSON.stringify(alone));
});

t.test('int, pick, some, shuffle, weighted stay within bounds', async (t) => {
  const r = new Random('bounds');
  const counts = { a: 0, b: 0 };
  for (let i = 0; i < 2000; i++) {
    const n = r.int(5);
    if (n < 0 || n >= 5 || !Number.isInteger(n)) t.fail(`int(5) gave ${n}`);
    counts[r.weighted({ a: 3, b: 1 })]++;
  }
  t.ok(counts.a > counts.b * 2 && counts.a < counts.b * 4, `weights 3:1 drawn ${counts.a}:${counts.b}`);
  const items = [1, 2, 3, 4, 5];
  t.same(r.shuffle(items).sort(), items, 'a shuffle is a permutation');
  const some = r.some(items, 3);
  t.ok(some.length <= 3 && new Set(some).size === some.length && some.every((x) => items.includes(x)));
  t.throws(() => r.pick([]), /empty/);
});
