// Field sets against objects (src/kube/fields-v1.ts): the elements of keyed lists an apply drops,
// and releasing the other managers' shares in exactly those, with the field sets as the API
// server writes them.
import t from 'tap';
import { droppedEntries, releaseShares, type ManagedEntry } from '../../../src/kube/fields-v1.ts';

const PORT_8000 = 'k:{"port":8000,"protocol":"TCP"}';
const PORT_11434 = 'k:{"port":11434,"protocol":"TCP"}';
const OURS = 'kaos-operator';

/** Our apply of a Service on 8000 and a Deployment container with env A and B. */
const owned = {
  'f:spec': {
    'f:ports': { [PORT_8000]: { '.': {}, 'f:name': {}, 'f:port': {}, 'f:protocol': {}, 'f:targetPort': {} } },
    'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"main"}': { '.': {}, 'f:name': {}, 'f:env': {
      'k:{"name":"A"}': { '.': {}, 'f:name': {}, 'f:value': {} },
      'k:{"name":"B"}': { '.': {}, 'f:name': {}, 'f:value': {} },
    } } } } },
  },
};
const desired = (ports: number[], env: string[]) => ({
  spec: {
    ports: ports.map((port) => ({ name: 'http', port, targetPort: port })),
    template: { spec: { containers: [{ name: 'main', ...(env.length === 0 ? {} : { env: env.map((name) => ({ name, value: 'v' })) }) }] } },
  },
});

t.test('droppedEntries: the elements we hold that the desired object no longer has, outermost only', async (t) => {
  t.same(droppedEntries(owned, desired([8000], ['A', 'B'])), [], 'nothing dropped');
  t.same(droppedEntries(owned, desired([11434], ['A', 'B'])), [['f:spec', 'f:ports', PORT_8000]], 'the port, matched by port and protocol (TCP by default)');
  t.same(droppedEntries(owned, desired([8000], ['A'])), [['f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"main"}', 'f:env', 'k:{"name":"B"}']], 'an env var within its container');
  t.same(droppedEntries(owned, desired([8000], [])), [
    ['f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"main"}', 'f:env', 'k:{"name":"A"}'],
    ['f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"main"}', 'f:env', 'k:{"name":"B"}'],
  ], 'no env at all: every element of it');
  const renamed = { spec: { ports: [{ name: 'http', port: 8000 }], template: { spec: { containers: [{ name: 'other' }] } } } };
  t.same(droppedEntries(owned, renamed), [['f:spec', 'f:template', 'f:spec', 'f:containers', 'k:{"name":"main"}']], 'a container dropped whole, not its env besides');
  t.same(droppedEntries(undefined, desired([], [])), [], 'no field set of ours: nothing known to drop');
});

const entry = (manager: string, fieldsV1: unknown, operation = 'Apply', subresource?: string): ManagedEntry => ({ manager, operation, fieldsV1, ...(subresource === undefined ? {} : { subresource }) });
const isOurs = (e: ManagedEntry): boolean => e.manager === OURS && e.operation === 'Apply' && (e.subresource ?? '') === '';

t.test('releaseShares: another manager\'s share in a dropped element goes, the rest of its set stays', async (t) => {
  const dropped = [['f:spec', 'f:ports', PORT_8000]];
  const ours = entry(OURS, owned);
  const drift = entry('someone-else', { 'f:spec': { 'f:ports': { [PORT_8000]: { '.': {}, 'f:port': {}, 'f:protocol': {} }, [PORT_11434]: { 'f:port': {} } } } });
  const edit = entry('kubectl-edit', { 'f:metadata': { 'f:labels': { 'f:team': {} } }, 'f:spec': { 'f:ports': { [PORT_8000]: { 'f:targetPort': {} } } } }, 'Update');
  const status = entry('kube-controller-manager', { 'f:status': { 'f:loadBalancer': {} } }, 'Update', 'status');
  const released = releaseShares([ours, drift, edit, status], dropped, isOurs);
  t.same(released, [
    ours,
    entry('someone-else', { 'f:spec': { 'f:ports': { [PORT_11434]: { 'f:port': {} } } } }),
    entry('kubectl-edit', { 'f:metadata': { 'f:labels': { 'f:team': {} } } }, 'Update'),
    status,
  ], 'ours untouched; the others lose the dropped port and nothing else');
});

t.test('releaseShares: an entry left owning nothing goes; nothing to release is undefined (no write)', async (t) => {
  const dropped = [['f:spec', 'f:ports', PORT_8000]];
  const only = entry('someone-else', JSON.stringify({ 'f:spec': { 'f:ports': { [PORT_8000]: { 'f:targetPort': {} } } } }));
  t.same(releaseShares([entry(OURS, owned), only], dropped, isOurs), [entry(OURS, owned)], 'a set given as JSON text (as the cache keeps it) is read too');
  t.equal(releaseShares([entry(OURS, owned), entry('other', { 'f:spec': { 'f:ports': { [PORT_11434]: {} } } })], dropped, isOurs), undefined);
  t.equal(releaseShares([entry(OURS, owned)], dropped, isOurs), undefined, 'only our own share: the apply removes it by itself');
});
