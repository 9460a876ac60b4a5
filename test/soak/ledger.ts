// Nothing lost, on the users' side: the last write each client saw succeed for an object is what
// the cluster holds at the end. Writes are ordered by the resourceVersion the API server answered
// with (etcd's revision; a delete answers with the revision of the deletion, or of the update
// that marked the object for deletion), so concurrent clients need no clock. An object marked
// for deletion (a finalizer holds it) is on its way out whatever is written to it afterwards:
// such a write counts as its deletion. A write that got no complete answer may or may not have
// happened: until a later write settles it, its object cannot be judged, and is counted as in
// doubt instead. Each object's last requests are kept, to explain a violation.
import { jsonEqual } from '../../src/api/json.ts';
import { seconds } from './clock.ts';

export type Json = Record<string, unknown>;

/** What the clients last made of an object. */
type Entry =
  | { readonly revision: number; readonly present: true; readonly content: Json }
  | { readonly revision: number; readonly present: false };

/** What of an object a user writes, to compare: a KAOS object's spec and labels, a Secret's or ConfigMap's data. */
export function contentOf(object: Json): Json {
  const metadata = (object.metadata ?? {}) as Json;
  const out: Json = { labels: metadata.labels ?? {} };
  for (const field of ['spec', 'data']) if (object[field] !== undefined) out[field] = object[field];
  return out;
}

/** Requests of an object told with a violation. */
const HISTORY = 8;

export class WriteLedger {
  readonly #last = new Map<string, Entry>();
  /** Keys with a write in doubt: when its request ended (ms), the latest one. */
  readonly #doubt = new Map<string, number>();
  /** When the last known write of a key was started (ms). */
  readonly #started = new Map<string, number>();
  readonly #history = new Map<string, string[]>();

  /**
   * A write answered with `object` (the object as written, or for a delete as deleted or marked
   * for deletion), its request started at `startedMs`.
   */
  answered(key: string, operation: 'create' | 'update' | 'delete', object: Json, startedMs: number): void {
    const revision = revisionOf(object);
    const leaving = operation === 'delete' || deleting(object);
    this.#note(key, `${operation} at ${seconds(startedMs)}: revision ${revision}${deleting(object) ? ', marked for deletion' : ''}`);
    this.#record(key, leaving ? { revision, present: false } : { revision, present: true, content: contentOf(object) }, startedMs);
  }

  /** A write with no complete answer, ended at `endedMs`. */
  inDoubt(key: string, operation: string, endedMs: number): void {
    this.#note(key, `${operation} ended at ${seconds(endedMs)} without a complete answer`);
    this.#doubt.set(key, Math.max(endedMs, this.#doubt.get(key) ?? 0));
  }

  #note(key: string, line: string): void {
    const lines = this.#history.get(key) ?? [];
    lines.push(line);
    this.#history.set(key, lines.slice(-HISTORY));
  }

  #record(key: string, entry: Entry, startedMs: number): void {
    const last = this.#last.get(key);
    // Ties: a delete answers with the revision of the state it removed, so it comes after.
    if (last === undefined || entry.revision > last.revision || (entry.revision === last.revision && !entry.present)) {
      this.#last.set(key, entry);
      this.#started.set(key, startedMs);
    }
  }

  /**
   * Pure over the ledger: the objects whose live state (`live(key)`: the object, undefined when
   * absent) is not the last write seen to succeed, and how many keys are in doubt (a write in
   * doubt after the last known one).
   */
  check(live: (key: string) => Json | undefined): { violations: { key: string; detail: string }[]; judged: number; inDoubt: number } {
    const violations: { key: string; detail: string }[] = [];
    let judged = 0;
    let inDoubt = 0;
    for (const [key, entry] of this.#last) {
      const doubt = this.#doubt.get(key);
      if (doubt !== undefined && doubt >= (this.#started.get(key) ?? 0)) {
        inDoubt++;
        continue;
      }
      judged++;
      const object = live(key);
      let problem: string | undefined;
      if (!entry.present) {
        if (object !== undefined) problem = `deleted (revision ${entry.revision}) but still there${deleting(object) ? ', marked for deletion' : ''}`;
      } else if (object === undefined) {
        problem = `written (revision ${entry.revision}) but gone`;
      } else if (!jsonEqual(contentOf(object), entry.content)) {
        problem = `holds revision ${String((object.metadata as Json | undefined)?.resourceVersion)}, not what revision ${entry.revision} wrote`;
      }
      if (problem !== undefined) violations.push({ key, detail: `${problem} (its last requests: ${(this.#history.get(key) ?? []).join('; ')})` });
    }
    for (const key of this.#doubt.keys()) if (!this.#last.has(key)) inDoubt++;
    return { violations, judged, inDoubt };
  }
}

function revisionOf(object: Json): number {
  const revision = Number((object.metadata as Json | undefined)?.resourceVersion);
  if (!Number.isFinite(revision)) throw new Error('a write answered without a numeric resourceVersion');
  return revision;
}

function deleting(object: Json): boolean {
  return (object.metadata as Json | undefined)?.deletionTimestamp !== undefined;
}
