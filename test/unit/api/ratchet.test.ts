// The pure part of ratcheting (src/api/validation/ratchet.ts): which errors an UPDATE keeps.
import t from 'tap';
import { forbidden, invalid, required, type FieldError } from '../../../src/api/field-error.ts';
import { fieldUnchanged, parseFieldPath, ratchet } from '../../../src/api/validation/ratchet.ts';

const lines = (errors: readonly FieldError[]): string[] => errors.map((e) => e.errorString());

t.test('field paths are read the way Kubernetes prints them', async (t) => {
  t.same(parseFieldPath('spec'), ['spec']);
  t.same(parseFieldPath('spec.config.memory.maxReadScope'), ['spec', 'config', 'memory', 'maxReadScope']);
  t.same(parseFieldPath('spec.mcpServers[1]'), ['spec', 'mcpServers', 1]);
  t.same(parseFieldPath('spec.resources[0].selector.matchExpressions[2].operator'), ['spec', 'resources', 0, 'selector', 'matchExpressions', 2, 'operator']);
  t.same(parseFieldPath('metadata.annotations[kaos.tools/reference-policy]'), ['metadata', 'annotations', 'kaos.tools/reference-policy']);
  t.same(parseFieldPath('spec.podSpec.nodeSelector[a.b/c].x'), ['spec', 'podSpec', 'nodeSelector', 'a.b/c', 'x']);
  for (const bad of ['', '.spec', 'spec..a', 'spec[0', 'spec.']) t.equal(parseFieldPath(bad), undefined, `${JSON.stringify(bad)} is not a path`);
});

t.test('a field is unchanged when its value is deep-equal in both objects, absent included', async (t) => {
  const old = { spec: { a: { b: [1, { c: 'x' }] }, n: null }, metadata: { annotations: { 'k.io/p': 'v' } } };
  const now = { spec: { a: { b: [1, { c: 'x' }] }, d: 2 }, metadata: { annotations: { 'k.io/p': 'w' } } };
  t.ok(fieldUnchanged('spec.a', now, old));
  t.ok(fieldUnchanged('spec.a.b[1].c', now, old));
  t.ok(fieldUnchanged('spec.absent', now, old), 'absent on both sides');
  t.notOk(fieldUnchanged('spec.d', now, old), 'added');
  t.notOk(fieldUnchanged('spec.n', now, old), 'removed');
  t.notOk(fieldUnchanged('spec', now, old));
  t.notOk(fieldUnchanged('metadata.annotations[k.io/p]', now, old));
  t.notOk(fieldUnchanged('spec..a', now, old), 'a path it cannot read counts as changed');
  t.ok(fieldUnchanged('spec.a.constructor', now, old), 'inherited members are not values');
  t.notOk(fieldUnchanged('spec.a.b[0]', { spec: { a: { b: [2] } } }, old), 'list items are compared by index');
});

t.test('an error survives unless its field is unchanged and the stored object has the very same error', async (t) => {
  const old = { spec: { url: 'git://x', memory: { type: 'remote' } } };
  const now = { spec: { url: 'git://x', memory: { type: 'remote', tools: ['a'] }, other: 1 } };
  const urlError = invalid('spec.url', 'git://x', 'must be https');
  const remote = required('spec.memory.memoryStore', "type 'remote' requires memoryStore to be set");
  const tools = required('spec.memory.memoryStore', 'tools requires memoryStore to be set');
  const stored = [invalid('spec.url', 'git://x', 'must be https'), required('spec.memory.memoryStore', "type 'remote' requires memoryStore to be set")];
  t.same(lines(ratchet([urlError, remote, tools], now, old, () => stored)), [tools.errorString()], 'the cross-field error the stored object did not have is kept');

  const edited = { spec: { ...now.spec, url: 'git://y' } };
  const editedError = invalid('spec.url', 'git://y', 'must be https');
  t.same(lines(ratchet([editedError], edited, old, () => stored)), [editedError.errorString()], 'a changed field is judged in full');

  const sameFieldOtherRule = forbidden('spec.url', 'something else');
  t.same(lines(ratchet([sameFieldOtherRule], now, old, () => stored)), [sameFieldOtherRule.errorString()], 'another error at an unchanged field is kept');

  let judged = 0;
  const count = (): FieldError[] => {
    judged++;
    return stored;
  };
  t.same(ratchet([editedError], edited, old, count), [editedError]);
  t.same(ratchet([], now, old, count), []);
  t.equal(judged, 0, 'the stored object is judged only when an error sits at an unchanged field');
});
