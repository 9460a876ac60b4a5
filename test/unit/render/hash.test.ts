import fc from 'fast-check';
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

t.test('canonical JSON is what a sorted copy of every object serializes to, whatever the keys (the hash of every running pod depends on it)', async (t) => {
  // The plain definition: every object copied with its keys sorted (integer-like keys, which V8
  // enumerates first, and "__proto__", which an assignment drops, included).
  const sortedCopy = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sortedCopy);
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortedCopy((value as Record<string, unknown>)[key]);
    return out;
  };
  const key = fc.oneof(fc.constantFrom('__proto__', '0', '1', '10', '9', '01', '-1', '4294967294', '4294967295', 'a', 'b', 'A', 'é', '', 'name', 'value'), fc.string({ maxLength: 3 }));
  const value = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, fc.constant(undefined), fc.constant(null), fc.integer(), fc.string({ maxLength: 3 }), fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(key, tie('value'), { maxKeys: 5 })),
  })).value;
  fc.assert(
    fc.property(value, (v) => {
      // As built in memory, and as JSON.parse makes it (where "__proto__" is an own key).
      for (const form of [v, JSON.parse(JSON.stringify(v) ?? 'null') as unknown]) {
        if (canonicalJSON(form) !== (JSON.stringify(sortedCopy(form)) ?? 'null')) throw new Error(JSON.stringify(form));
      }
    }),
    { numRuns: 20_000 },
  );
  const inOrder = { containers: [{ env: [{ name: 'A', value: '1' }], name: 'x' }] };
  t.equal(canonicalJSON(inOrder), JSON.stringify(inOrder), 'objects already in order serialize as they are');
});
