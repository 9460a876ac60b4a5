// Nothing lost, on the users' side: the last write each client saw succeed for an object is what
// the cluster holds at the end. Writes are ordered by the resourceVersion the API server answered
// with (etcd's revision; a delete answers with the revision of the deletion, or of the update
// that marked the object for deletion), so concurrent clients need no clock. A write that got
// no complete answer may or may not have happened: until a later write settles it, its object
// cannot be judged, and is counted as in doubt instead.
import { jsonEqual } from '../../src/api/json.ts';

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

export class WriteLedger {
  readonly #last = new Map<string, Entry>();
  /** Keys with a write in doubt: when its request ended (ms), the latest one. */
  readonly #doubt = new Map<string, number>();
  /** When the last known write of a key was started (ms). */
  readonly #started = new Map<string, number>();

  /** A write (create or update) answered with `object`, sent at `startedMs`. */
  written(key: string, object: Json, startedMs: number): void {
    this.#record(key, { revision: revisionOf(object), present: true, content: contentOf(object) }, startedMs);
  }

  /** A delete answered with `object` (the object as deleted, or as marked for deletion). */
  deleted(key: string, object: Json, startedMs: number): void {
    this.#record(key, { revision: revisionOf(object), present: false }, startedMs);
  }

  /** A write with no complete answer, ended at `endedMs`. */
  inDoubt(key: string, endedMs: number): void {
    this.#doubt.set(key, Math.max(endedMs, this.#doubt.get(key) ?? 0));
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
  check(live: (key: string) => Json | undefined): { violations: string[]; judged: number; inDoubt: number } {
    const violations: string[] = [];
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
      if (!entry.present) {
        if (object !== undefined) violations.push(`${key}: deleted (revision ${entry.revision}) but still there${deleting(object) ? ', marked for deletion' : ''}`);
      } else if (object === undefined) {
        violations.push(`${key}: written (revision ${entry.revision}) but gone`);
      } else if (!jsonEqual(contentOf(object), entry.content)) {
        violations.push(`${key}: holds revision ${String((object.metadata as Json | undefined)?.resourceVersion)}, not what revision ${entry.revision} wrote`);
      }
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
