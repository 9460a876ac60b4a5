// JSON as Go's encoding/json writes a decoded document: the bytes KAOS's policy data and a
// SecurityPolicy's inline JWKS have, written out here from Go's documented behaviour.
import t from 'tap';
import { compareUtf8, goMarshal, goMarshalIndent, goQuoteJson } from '../../../src/render/go-json.ts';

t.test('MarshalIndent: sorted keys at every level, two spaces, ": ", empty containers inline, no trailing newline', async (t) => {
  const doc = { b: [1, 'two', true, null], a: { z: {}, y: [] } };
  t.equal(goMarshalIndent(doc), '{\n  "a": {\n    "y": [],\n    "z": {}\n  },\n  "b": [\n    1,\n    "two",\n    true,\n    null\n  ]\n}');
  t.equal(goMarshal(doc), '{"a":{"y":[],"z":{}},"b":[1,"two",true,null]}');
});

t.test('strings: HTML characters, control characters, line and paragraph separators escaped as Go escapes them', async (t) => {
  t.equal(goQuoteJson('<a href="x">&</a>'), '"\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e"');
  t.equal(goQuoteJson('\b\f\n\r\t\u0001\u001f\\'), '"\\b\\f\\n\\r\\t\\u0001\\u001f\\\\"');
  t.equal(goQuoteJson('\u2028\u2029'), '"\\u2028\\u2029"');
  t.equal(goQuoteJson('ü€😀'), '"ü€😀"', 'other characters as they are');
  t.equal(goQuoteJson('\ud800x'), '"\\ufffdx"', 'a lone surrogate is invalid UTF-8: the replacement character');
});

t.test('numbers in strconv\'s shortest form, exponents where Go switches to them', async (t) => {
  t.equal(goMarshal([0, -0, 1.5, 65537, 1e21, 1e-7, 123456789012, 0.000001]), '[0,-0,1.5,65537,1e+21,1e-7,123456789012,0.000001]');
});

t.test('keys sort by UTF-8 bytes (code points), not UTF-16 units', async (t) => {
  const keys = ['\uff61', '😀', 'a', 'B'].sort(compareUtf8);
  t.same(keys, ['B', 'a', '\uff61', '😀']);
});
