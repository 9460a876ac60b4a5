// The soak's ledger of writes: the last write a client saw succeed (by resourceVersion, whichever
// client made it) is what the cluster must hold; a delete must leave nothing; a write with no
// complete answer leaves its object unjudged until a later write settles it.
import t from 'tap';
import { WriteLedger, contentOf, type Json } from '../../soak/ledger.ts';

const object = (rv: number, spec: Json, labels: Json = {}): Json => ({ metadata: { name: 'a', resourceVersion: String(rv), labels }, spec });

t.test('the highest revision wins, whatever order the answers came in', async (t) => {
  const ledger = new WriteLedger();
  ledger.written('Agent/ns/a', object(12, { v: 2 }), 100);
  ledger.written('Agent/ns/a', object(10, { v: 1 }), 50);
  t.same(ledger.check(() => object(12, { v: 2 })), { violations: [], judged: 1, inDoubt: 0 });
  t.same(ledger.check(() => object(13, { v: 1 })).violations, ['Agent/ns/a: holds revision 13, not what revision 12 wrote']);
  t.same(ledger.check(() => undefined).violations, ['Agent/ns/a: written (revision 12) but gone']);
});

t.test('a labels-only change is a write too; status and metadata the user does not write are not compared', async (t) => {
  const ledger = new WriteLedger();
  ledger.written('Agent/ns/a', object(5, { v: 1 }, { x: '1' }), 0);
  const live = { ...object(9, { v: 1 }, { x: '1' }), status: { phase: 'Ready' } };
  t.same(ledger.check(() => live).violations, [], 'a status write since is not a lost write');
  t.same(ledger.check(() => object(9, { v: 1 }, { x: '2' })).violations.length, 1);
  t.same(contentOf({ metadata: { labels: { a: 'b' } }, data: { k: 'v' } }), { labels: { a: 'b' }, data: { k: 'v' } });
});

t.test('a delete: nothing may be left, not even an object marked for deletion', async (t) => {
  const ledger = new WriteLedger();
  ledger.written('Agent/ns/a', object(5, { v: 1 }), 0);
  ledger.deleted('Agent/ns/a', object(5, { v: 1 }), 10);
  t.same(ledger.check(() => undefined).violations, []);
  t.same(ledger.check(() => ({ ...object(6, { v: 1 }), metadata: { resourceVersion: '6', deletionTimestamp: '2026-01-01T00:00:00Z' } })).violations,
    ['Agent/ns/a: deleted (revision 5) but still there, marked for deletion']);
  ledger.written('Agent/ns/a', object(8, { v: 3 }), 20);
  t.same(ledger.check(() => object(8, { v: 3 })).violations, [], 'created again afterwards');
});

t.test('a write in doubt leaves the object unjudged until a later write settles it', async (t) => {
  const ledger = new WriteLedger();
  ledger.written('Agent/ns/a', object(5, { v: 1 }), 0);
  ledger.inDoubt('Agent/ns/a', 30);
  ledger.inDoubt('Agent/ns/b', 30);
  t.same(ledger.check(() => object(7, { v: 'who knows' })), { violations: [], judged: 0, inDoubt: 2 });
  ledger.written('Agent/ns/a', object(9, { v: 2 }), 40);
  t.same(ledger.check((key) => (key === 'Agent/ns/a' ? object(9, { v: 2 }) : undefined)), { violations: [], judged: 1, inDoubt: 1 });
});
