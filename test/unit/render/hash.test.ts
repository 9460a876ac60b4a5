import t from 'tap';
import { canonicalJSON, configHash, podSpecHash, shortHash } from '../../../src/render/hash.ts';

t.test('canonical JSON sorts keys at every level and keeps array order', async (t) => {
  t.equal(canonicalJSON({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } }), '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
  t.equal(canonicalJSON({ a: undefined, b: 1 }), canonicalJSON({ b: 1 }));
  t.not(canonicalJSON([1, 2]), canonicalJSON([2, 1]));
});

t.test('short hash: first 16 hex chars of SHA-256', async (t) => {
  // sha256("") = e3b0c44298fc1c149afbf4c8996fb924...
  t.equal(shortHash(''), 'e3b0c44298fc1c14');
  t.match(podSpecHash({ containers: [] }), /^[0-9a-f]{16}$/);
  t.equal(configHash('abc'), 'ba7816bf8f01cfea');
});

t.test('pod spec hash: stable, key order irrelevant, any change differs', async (t) => {
  const a = { containers: [{ name: 'x', image: 'i', env: [{ name: 'A', value: '1' }] }], volumes: [] };
  const reordered = { volumes: [], containers: [{ env: [{ value: '1', name: 'A' }], image: 'i', name: 'x' }] };
  t.equal(podSpecHash(a), podSpecHash(structuredClone(a)));
  t.equal(podSpecHash(a), podSpecHash(reordered));
  t.not(podSpecHash(a), podSpecHash({ ...a, containers: [{ name: 'x', image: 'i', env: [{ name: 'A', value: '2' }] }] }));
  t.not(podSpecHash(a), podSpecHash({ ...a, nodeSelector: {} }));
});
