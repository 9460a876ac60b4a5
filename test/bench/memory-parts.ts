// What the operator's resident memory is made of at one moment, so that a peak RSS says where it
// came from: the node binary's file-backed pages (its code and read-only data, shared and clean,
// but counted in RSS), other files (shared libraries), each thread's V8 heap (committed, and of it
// the young generation), and the rest of the anonymous memory (malloc: Node's and OpenSSL's
// buffers, V8's compiler zones; thread stacks). Read from /proc (smaps) and from the operator's
// own /metrics, where the admission thread's series carry thread="admission".
import { readFileSync, readlinkSync } from 'node:fs';

const MIB = 2 ** 20;

/** One thread's V8 heap, MiB. */
export interface HeapParts {
  /** Committed (nodejs_heap_size_total_bytes). */
  total: number;
  used: number;
  /** The young generation's committed part (the `new` space, and new large objects); NaN where the thread does not report its spaces. */
  young: number;
}

/** MiB. `rss` = binary + libraries + Σ heaps' total + rest. */
export interface MemoryParts {
  rss: number;
  /** File-backed pages of the node executable. */
  binary: number;
  /** Other file-backed pages: shared libraries. */
  libraries: number;
  /** By thread: `main`, `admission`. */
  heaps: Record<string, HeapParts>;
  /** Anonymous memory outside the V8 heaps (malloc, stacks); RssAnon − Σ heaps' total. */
  rest: number;
}

/** Resident pages of the process by what backs them (MiB), from /proc/<pid>/smaps; undefined once it is gone. */
export function residentFiles(pid: number): { rss: number; anon: number; binary: number; libraries: number } | undefined {
  try {
    const exe = readlinkSync(`/proc/${pid}/exe`);
    const kib = { rss: 0, anon: 0, binary: 0, libraries: 0 };
    // One mapping at a time: its pages, and of them the anonymous ones (a file mapping's written,
    // copied-on-write pages), which count as anonymous memory, not as the file.
    let mapping = { path: '', rss: 0, anon: 0 };
    const close = (): void => {
      kib.rss += mapping.rss;
      kib.anon += mapping.anon;
      const file = mapping.rss - mapping.anon;
      if (mapping.path === exe) kib.binary += file;
      else if (mapping.path.startsWith('/') && !mapping.path.startsWith('/dev/') && !mapping.path.startsWith('/memfd:')) kib.libraries += file;
    };
    for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
      const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
      if (head !== null) {
        close();
        mapping = { path: head[1] ?? '', rss: 0, anon: 0 };
        continue;
      }
      const field = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
      if (field === null) continue;
      if (field[1] === 'Rss') mapping.rss += Number(field[2]);
      else mapping.anon += Number(field[2]);
    }
    close();
    return { rss: kib.rss / 1024, anon: kib.anon / 1024, binary: kib.binary / 1024, libraries: kib.libraries / 1024 };
  } catch {
    return undefined;
  }
}

/** `name{labels} value` lines of one family, each with its labels. */
function series(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  const pattern = new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm');
  for (const m of text.matchAll(pattern)) {
    const labels: Record<string, string> = {};
    for (const l of (m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)) labels[l[1] as string] = l[2] as string;
    out.push({ labels, value: Number(m[2]) });
  }
  return out;
}

/** Each thread's heap from the operator's /metrics text: the main thread's series carry no `thread` label. */
export function heapsFromMetrics(text: string): Record<string, HeapParts> {
  const heaps: Record<string, HeapParts> = {};
  const of = (labels: Record<string, string>): HeapParts => (heaps[labels.thread ?? 'main'] ??= { total: 0, used: 0, young: Number.NaN });
  for (const s of series(text, 'nodejs_heap_size_total_bytes')) of(s.labels).total = s.value / MIB;
  for (const s of series(text, 'nodejs_heap_size_used_bytes')) of(s.labels).used = s.value / MIB;
  for (const s of series(text, 'nodejs_heap_space_size_total_bytes')) {
    if (s.labels.space !== 'new' && s.labels.space !== 'new_large_object') continue;
    const parts = of(s.labels);
    parts.young = (Number.isNaN(parts.young) ? 0 : parts.young) + s.value / MIB;
  }
  return heaps;
}

/** The parts now: /proc and one scrape of the operator's /metrics. */
export async function memoryParts(pid: number, metricsPort: number): Promise<MemoryParts | undefined> {
  let text: string;
  try {
    text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  } catch {
    return undefined;
  }
  const files = residentFiles(pid);
  if (files === undefined) return undefined;
  const heaps = heapsFromMetrics(text);
  const heapTotal = Object.values(heaps).reduce((sum, h) => sum + h.total, 0);
  return { rss: files.rss, binary: files.binary, libraries: files.libraries, heaps, rest: files.anon - heapTotal };
}

/** One line: `rss = binary + libraries + heaps (young) + rest`. */
export function describeParts(p: MemoryParts): string {
  const heaps = Object.entries(p.heaps).map(([thread, h]) => `${thread} heap ${h.total.toFixed(1)} (used ${h.used.toFixed(1)}, young ${h.young.toFixed(1)})`);
  return `RSS ${p.rss.toFixed(1)} MiB = node binary ${p.binary.toFixed(1)} + libraries ${p.libraries.toFixed(1)} + ${heaps.join(' + ')} + rest ${p.rest.toFixed(1)}`;
}
