// The CHANGELOG's "Upgrading" notes, read as data, and the writes an upgrade makes to children
// judged against them (test/e2e/upgrade-restore.test.ts). The convention (CHANGELOG.md's
// opening): a release's section (`## Unreleased`, `## <version>` or `## <version> (<date>)`) may
// hold a `### Upgrading` subsection; each list item there that opens with a code span
//
//     `writes <ChildKind> of <OwnerKind> [<JSON pointer> …]`
//
// announces that the operator of that release writes such children of such owners when it takes
// over a cluster an earlier release left: only at those fields (and below them), or anywhere
// (no pointer). `*` stands for any kind. What the write means for users (a rollout, one pod
// each) is the item's prose.
import { isRecord, jsonEqual } from '../../src/kube/json.ts';

/** One announced write. */
export interface Announcement {
  /** The section it was announced in: `Unreleased` or a version. */
  readonly release: string;
  readonly child: string;
  readonly owner: string;
  /** JSON pointers; empty: any field. */
  readonly paths: readonly string[];
  /** The item's text, for messages. */
  readonly text: string;
}

/** A release's section of the CHANGELOG: its name (`Unreleased`, a version, or a date) and its announcements, newest first. */
export interface ReleaseNotes {
  readonly release: string;
  readonly announcements: readonly Announcement[];
}

const ANNOUNCEMENT = /^[-*]\s+`writes\s+(\S+)\s+of\s+(\S+)((?:\s+\/[^`\s]*)*)\s*`/;

/** Every `## ` section of the CHANGELOG in order (newest first) with the announcements of its `### Upgrading`. */
export function readReleaseNotes(changelog: string): ReleaseNotes[] {
  const out: { release: string; announcements: Announcement[] }[] = [];
  let inUpgrading = false;
  for (const line of changelog.split('\n')) {
    const release = /^## +(\S+)/.exec(line);
    if (release !== null) {
      out.push({ release: release[1] ?? '', announcements: [] });
      inUpgrading = false;
      continue;
    }
    if (/^### /.test(line)) {
      inUpgrading = /^### +Upgrading\s*$/.test(line);
      continue;
    }
    const current = out.at(-1);
    if (!inUpgrading || current === undefined) continue;
    const m = ANNOUNCEMENT.exec(line);
    if (m === null) {
      if (/^[-*]\s+`writes\b/.test(line)) throw new Error(`CHANGELOG: an Upgrading item that does not read \`writes <ChildKind> of <OwnerKind> [/pointer …]\`: ${line}`);
      continue;
    }
    const paths = (m[3] ?? '').trim().split(/\s+/).filter((p) => p !== '');
    current.announcements.push({ release: current.release, child: m[1] ?? '', owner: m[2] ?? '', paths, text: line.trim() });
  }
  return out;
}

/**
 * What an operator of this tree may write over a cluster release `version` left: the
 * announcements of every section above `## <version>`. A version without a section of its own
 * is the one being made (package.json's, not released yet): nothing is announced against it,
 * since its snapshot is made again until it is released.
 */
export function announcedSince(notes: readonly ReleaseNotes[], version: string): Announcement[] {
  const at = notes.findIndex((n) => n.release === version);
  if (at < 0) return [];
  return notes.slice(0, at).flatMap((n) => n.announcements);
}

/** Whether `version` has a section of its own in the CHANGELOG (it has been released). */
export function isReleased(notes: readonly ReleaseNotes[], version: string): boolean {
  return notes.some((n) => n.release === version);
}

const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * JSON pointers of where `before` and `after` differ: a field added, removed or changed, down to
 * the leaves of maps; lists compare whole (their pointer, not their elements'). Equal: none.
 * Absent on one side (a child created or deleted): `/`.
 */
export function changedPaths(before: unknown, after: unknown, at = ''): string[] {
  if (before === undefined || after === undefined) return before === after ? [] : [at === '' ? '/' : at];
  if (isRecord(before) && isRecord(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => {
      const b = before[k];
      const a = after[k];
      const path = `${at}/${escapePointer(k)}`;
      if (b === undefined || a === undefined) return b === a ? [] : [path];
      return changedPaths(b, a, path);
    });
  }
  return jsonEqual(before, after) ? [] : [at === '' ? '/' : at];
}

/** A write of the operator to a child, and what it changed there. */
export interface ChildWrite {
  readonly child: string;
  readonly owner: string;
  /** `Kind/namespace/name`, for messages. */
  readonly id: string;
  readonly verb: string;
  /** changedPaths of the child's content before and after; empty for a write that changed nothing. */
  readonly paths: readonly string[];
}

const matchesKind = (pattern: string, kind: string): boolean => pattern === '*' || pattern === kind;
const under = (path: string, prefix: string): boolean => prefix === '/' || path === prefix || path.startsWith(`${prefix}/`);

/** The announcement that covers `write`: its child and owner kinds match and it names every changed field, or none. */
export function coveringAnnouncement(write: ChildWrite, announcements: readonly Announcement[]): Announcement | undefined {
  return announcements.find((a) => matchesKind(a.child, write.child) && matchesKind(a.owner, write.owner) &&
    (a.paths.length === 0 || write.paths.every((p) => a.paths.some((prefix) => under(p, prefix)))));
}
