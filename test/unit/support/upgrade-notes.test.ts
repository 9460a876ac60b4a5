// The CHANGELOG's Upgrading notes as data (test/support/upgrade-notes.ts): which writes to
// children a release announces, which releases count for an upgrade from a snapshot's version,
// and whether a write the upgrade test saw is covered.
import t from 'tap';
import { announcedSince, changedPaths, coveringAnnouncement, isReleased, readReleaseNotes } from '../../support/upgrade-notes.ts';

const CHANGELOG = `# Changelog

Intro text with \`writes Deployment of Agent\` in prose, not an announcement.

## Unreleased

### Upgrading

- \`writes Deployment of Agent /spec/template /metadata/labels\` — every Agent's pods roll once.
- \`writes PodDisruptionBudget of *\` — new PDBs.
- Prose only: not an announcement.

### Something else

- \`writes Service of ModelAPI\` — outside Upgrading: ignored.

## 0.2.0 (2027-01-10)

### Upgrading

- \`writes Service of ModelAPI /spec/ports\` — a port renamed.

## 0.1.0

### Upgrading

- 0.1.0 is the first release.

## 2026-11-23

### Controller
`;

t.test('sections and their announcements, newest first', async (t) => {
  const notes = readReleaseNotes(CHANGELOG);
  t.same(notes.map((n) => n.release), ['Unreleased', '0.2.0', '0.1.0', '2026-11-23']);
  t.same(notes[0]?.announcements.map((a) => [a.child, a.owner, a.paths]), [
    ['Deployment', 'Agent', ['/spec/template', '/metadata/labels']],
    ['PodDisruptionBudget', '*', []],
  ]);
  t.same(notes[1]?.announcements.map((a) => [a.child, a.owner, a.paths]), [['Service', 'ModelAPI', ['/spec/ports']]]);
  t.same(notes[2]?.announcements, []);
});

t.test('an Upgrading item that starts like an announcement but does not parse is an error, not silence', async (t) => {
  t.throws(() => readReleaseNotes('## Unreleased\n\n### Upgrading\n\n- `writes Deployment` — no owner\n'), /does not read/);
});

t.test('an upgrade from a release counts every section above it; the version being made counts none', async (t) => {
  const notes = readReleaseNotes(CHANGELOG);
  t.same(announcedSince(notes, '0.1.0').map((a) => a.release), ['Unreleased', 'Unreleased', '0.2.0']);
  t.same(announcedSince(notes, '0.2.0').map((a) => a.release), ['Unreleased', 'Unreleased']);
  t.same(announcedSince(notes, '0.3.0'), [], 'not released: no section of its own');
  t.equal(isReleased(notes, '0.2.0'), true);
  t.equal(isReleased(notes, '0.3.0'), false);
});

t.test('changedPaths: JSON pointers of what differs, lists whole, creation and deletion at /', async (t) => {
  t.same(changedPaths({ a: 1, b: { c: [1, 2] } }, { a: 1, b: { c: [1, 2] } }), []);
  t.same(changedPaths(
    { metadata: { annotations: { 'kaos.tools/pod-spec-hash': 'x' } }, spec: { replicas: 1, env: [{ name: 'A' }] } },
    { metadata: { annotations: { 'kaos.tools/pod-spec-hash': 'y' } }, spec: { env: [{ name: 'A', value: '1' }] } },
  ), ['/metadata/annotations/kaos.tools~1pod-spec-hash', '/spec/env', '/spec/replicas']);
  t.same(changedPaths(undefined, { a: 1 }), ['/']);
  t.same(changedPaths({ a: 1 }, undefined), ['/']);
});

t.test('a write is covered when kinds match and every changed field is under an announced pointer', async (t) => {
  const [notes] = readReleaseNotes(CHANGELOG);
  const announced = notes?.announcements ?? [];
  const write = (child: string, owner: string, paths: string[]) => ({ child, owner, id: `${child}/ns/x`, verb: 'patch', paths });
  t.ok(coveringAnnouncement(write('Deployment', 'Agent', ['/spec/template/spec/containers']), announced), 'below /spec/template');
  t.ok(coveringAnnouncement(write('Deployment', 'Agent', ['/metadata/labels/app', '/spec/template']), announced), 'under two pointers');
  t.notOk(coveringAnnouncement(write('Deployment', 'Agent', ['/spec/template', '/spec/strategy']), announced), 'one field outside them');
  t.notOk(coveringAnnouncement(write('Deployment', 'Agent', ['/spec/templates']), announced), 'a pointer is a path, not a prefix of a name');
  t.notOk(coveringAnnouncement(write('Deployment', 'ModelAPI', ['/spec/template']), announced), 'another owner');
  t.ok(coveringAnnouncement(write('PodDisruptionBudget', 'MemoryStore', ['/']), announced), '* owner, no pointer: created anywhere');
  t.ok(coveringAnnouncement(write('Deployment', 'Agent', []), announced), 'a write that changed nothing, of an announced child');
  t.notOk(coveringAnnouncement(write('Service', 'Agent', []), [] ), 'nothing announced: nothing covered');
});
