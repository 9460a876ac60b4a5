// The soak's ledger of writes: the last write a client saw succeed (by resourceVersion, whichever
// client made it) is what the cluster must hold; a delete, or a write to an object marked for
// deletion, must leave nothing; a write with no complete answer leaves its object unjudged until
// a later write settles it; a violation tells the object's last requests.
import t from 'tap';
import { WriteLedger, contentOf, type Json } from '../../soak/ledger.ts';

const object = (rv: number, spec: Json, labels: Json = {}): Json => ({ metadata: { name: 'a', resourceVersion: String(rv), labels }, spec });
const details = (r: ReturnType<WriteLedger['check']>): string[] => r.violations.map((v) => `${v.key}: ${v.detail}`);

t.test('the highest revision wins, whatever order the answers came in', async (t) => {
  const ledger = new WriteLedger();
  ledger.answered('Agent/ns/a', 'update', object(12, { v: 2 }), 100);
  ledger.answered('Agent/ns/a', 'create', object(10, { v: 1 }), 50);
  t.same(ledger.check(() => object(12, { v: 2 })), { violations: [], judged: 1, inDoubt: 0 });
  t.same(details(ledger.check(() => object(13, { v: 1 }))), ['Agent/ns/a: holds revision 13, not what revision 12 wrote (its last requests: update at +0.1 s: revision 12; create at +0.1 s: revision 10)']);
  t.match(details(ledger.check(() => undefined)), [/^Agent\/ns\/a: written \(revision 12\) but gone/]);
});

t.test('a labels-only change is a write too; status and metadata the user does not write are not compared', async (t) => {
  const ledger = new WriteLedger();
  ledger.answered('Agent/ns/a', 'create', object(5, { v: 1 }, { x: '1' }), 0);
  const live = { ...object(9, { v: 1 }, { x: '1' }), status: { phase: 'Ready' } };
  t.same(details(ledger.check(() => live)), [], 'a status write since is not a lost write');
  t.equal(ledger.check(() => object(9, { v: 1 }, { x: '2' })).violations.length, 1);
  t.same(contentOf({ metadata: { labels: { a: 'b' } }, data: { k: 'v' } }), { labels: { a: 'b' }, data: { k: 'v' } });
});

t.test('a delete: nothing may be left, not even an object marked for deletion', async (t) => {
  const ledger = new WriteLedger();
  ledger.answered('Agent/ns/a', 'create', object(5, { v: 1 }), 0);
  ledger.answered('Agent/ns/a', 'delete', object(5, { v: 1 }), 10);
  t.same(details(ledger.check(() => undefined)), []);
  t.match(details(ledger.check(() => ({ ...object(6, { v: 1 }), metadata: { resourceVersion: '6', deletionTimestamp: '2026-01-01T00:00:00Z' } }))),
    [/^Agent\/ns\/a: deleted \(revision 5\) but still there, marked for deletion/]);
  ledger.answered('Agent/ns/a', 'create', object(8, { v: 3 }), 20);
  t.same(details(ledger.check(() => object(8, { v: 3 }))), [], 'created again afterwards');
});

t.test('an update of an object marked for deletion (a finalizer holds it) does not bring it back', async (t) => {
  const ledger = new WriteLedger();
  ledger.answered('MCPServer/ns/s', 'create', object(5, { v: 1 }), 0);
  ledger.answered('MCPServer/ns/s', 'delete', { ...object(6, { v: 1 }), metadata: { resourceVersion: '6', deletionTimestamp: 'x' } }, 10);
  ledger.answered('MCPServer/ns/s', 'update', { ...object(7, { v: 2 }), metadata: { resourceVersion: '7', deletionTimestamp: 'x' } }, 20);
  t.same(details(ledger.check(() => undefined)), [], 'gone once the finalizer is released, as it must be');
  t.match(details(ledger.check(() => ({ ...object(8, { v: 2 }), metadata: { resourceVersion: '8', deletionTimestamp: 'x' } }))), [/still there, marked for deletion/]);
});

t.test('a write in doubt leaves the object unjudged until a later write settles it', async (t) => {
  const ledger = new WriteLedger();
  ledger.answered('Agent/ns/a', 'create', object(5, { v: 1 }), 0);
  ledger.inDoubt('Agent/ns/a', 'update', 30);
  ledger.inDoubt('Agent/ns/b', 'create', 30);
  t.same(ledger.check(() => object(7, { v: 'who knows' })), { violations: [], judged: 0, inDoubt: 2 });
  ledger.answered('Agent/ns/a', 'update', object(9, { v: 2 }), 40);
  t.same(ledger.check((key) => (key === 'Agent/ns/a' ? object(9, { v: 2 }) : undefined)), { violations: [], judged: 1, inDoubt: 1 });
});
