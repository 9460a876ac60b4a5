// npm run bench:fan-in [base-ref] — what the validating webhook's warnings that name a ModelAPI's
// dependents cost when many use it: deleting it ("still referenced by", one warning per kind) and a
// change of its models that serves none of theirs any more ("no longer serves"), with N Agents and
// N/10 MemoryStores bound to it, over two lookups: the cache-like lookup of bench:webhook (the main
// thread's cache: objects held parsed) and the admission thread's (a CacheView fed the same world,
// each object a JSON text parsed on read, behind the same CacheLookup as admission-worker.ts). Then
// what the dependency index costs to keep: indexing the world (a first list), indexing it again (a
// relist where every object changed), a CacheView applying it as one batch, and, under
// --expose-gc, the heap an index and a view of it hold. This checkout and another commit (default
// main, exported by tree-at.ts) alternate in one process; each figure is this thread's CPU time
// (process.threadCpuUsage; a small world's the mean of many repeats), the median of the rounds. Never part of pass/fail.
//
// Env: BENCH_SIZES (Agents, default 100,1000,10000), BENCH_ROUNDS (default 3).
import { KINDS } from '../../src/api/kinds.ts';
import type { KubeObject } from '../../src/api/lookup.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { silentLogger } from '../../src/leaves/logger.ts';
import { threadCpuMs } from '../support/work-budget.ts';
import { ROOT, loadFrom, treeAt } from './tree-at.ts';

const BASE = process.argv[2] ?? 'main';
const SIZES = (process.env.BENCH_SIZES ?? '100,1000,10000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const NS = 'fan-in';
/** Objects a figure's work goes over, at least (repeatFor). */
const REPEAT_OBJECTS = 50_000;

const object = (kind: string, name: string, spec: unknown): KubeObject => ({ apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name, namespace: NS }, spec });
const serving = (...models: string[]): KubeObject => object('ModelAPI', 'chat', { mode: 'Proxy', proxyConfig: { models, apiBase: 'http://litellm.example:4000' } });
const CHAT = serving('gpt-4o-mini', 'text-embedding-3-small');

/** The ModelAPI `chat`, `agents` Agents asking it for gpt-4o-mini, and a tenth as many MemoryStores binding it for both models. */
function world(agents: number): KubeObject[] {
  const pad = (i: number): string => String(i).padStart(6, '0');
  return [
    CHAT,
    ...Array.from({ length: agents }, (_, i) => object('Agent', `agent-${pad(i)}`, { modelAPI: 'chat', model: 'gpt-4o-mini' })),
    ...Array.from({ length: Math.ceil(agents / 10) }, (_, i) =>
      object('MemoryStore', `store-${pad(i)}`, {
        storage: { type: 'local' },
        models: { summarization: { modelAPI: 'chat', model: 'gpt-4o-mini' }, embedding: { modelAPI: 'chat', model: 'text-embedding-3-small' } },
      }),
    ),
  ];
}

type Request = () => Promise<readonly string[]>;
type Lookup = 'cache' | 'view';

/** One tree's modules, loaded from `root`. */
async function modules(root: string) {
  return {
    validate: (await loadFrom(root, 'src/admission/validate.ts')) as unknown as typeof import('../../src/admission/validate.ts'),
    config: (await loadFrom(root, 'src/config/config.ts')) as unknown as typeof import('../../src/config/config.ts'),
    lookups: (await loadFrom(root, 'test/bench/lookup.ts')) as unknown as typeof import('./lookup.ts'),
    reviews: (await loadFrom(root, 'test/support/admission-request.ts')) as unknown as typeof import('../support/admission-request.ts'),
    views: (await loadFrom(root, 'src/cluster/cache-view.ts')) as unknown as typeof import('../../src/cluster/cache-view.ts'),
    cacheLookup: (await loadFrom(root, 'src/cluster/cache-lookup.ts')) as unknown as typeof import('../../src/cluster/cache-lookup.ts'),
    index: (await loadFrom(root, 'src/cluster/dependency-index.ts')) as unknown as typeof import('../../src/cluster/dependency-index.ts'),
    feed: (await loadFrom(root, 'src/cluster/cache-feed.ts')) as unknown as Partial<typeof import('../../src/cluster/cache-feed.ts')>,
  };
}
type Modules = Awaited<ReturnType<typeof modules>>;

/**
 * The world as the tree's main thread feeds it: one batch of what its view keeps of every object
 * (its cache-feed.ts viewChange), every store synced; a tree from before viewChange sent every
 * object's text.
 */
function batchOf(m: Modules, objects: readonly KubeObject[]): import('../../src/cluster/cache-view.ts').CacheBatch {
  const all = [{ metadata: { name: NS } } as KubeObject, ...objects];
  const { viewChange } = m.feed;
  const changes = viewChange === undefined
    ? all.map((o) => ({ kind: o.kind ?? 'Namespace', op: 'put', text: JSON.stringify(o) }) as unknown as import('../../src/cluster/cache-view.ts').CacheChange)
    : all.map((o) => viewChange((o.kind ?? 'Namespace') as 'Namespace', o));
  return { changes, synced: [...KINDS, 'Namespace'] };
}

/** Every object is in the view: a live read would be a miss the bench did not mean, so it fails loudly. */
const NO_LIVE_READS = {
  get: () => Promise.reject(new Error('bench:fan-in: a live read (the view missed an object)')),
} as unknown as Pick<KubeClient, 'get'>;

/** One tree's two requests over a world of `agents` Agents, through `over`: each answers the warnings it gave. */
function requests(m: Modules, objects: readonly KubeObject[], over: Lookup): Record<'delete' | 'strand', Request> {
  let lookup: import('../../src/api/lookup.ts').ObjectLookup;
  if (over === 'cache') lookup = new m.lookups.CacheLikeLookup().add(...objects);
  else {
    const view = new m.views.CacheView();
    view.apply(batchOf(m, objects));
    lookup = new m.cacheLookup.CacheLookup(view, { client: NO_LIVE_READS, logger: silentLogger });
  }
  const handler = m.validate.createValidatingHandler('ModelAPI', { lookup, config: m.config.loadConfig({}) });
  const answer = async (request: Parameters<typeof handler>[0]): Promise<readonly string[]> => (await handler(request)).warnings ?? [];
  return {
    delete: () => answer(m.reviews.admissionRequest('ModelAPI', undefined, { operation: 'DELETE', name: 'chat', namespace: NS, oldObject: CHAT })),
    strand: () => answer(m.reviews.admissionRequest('ModelAPI', serving('claude'), { operation: 'UPDATE', oldObject: CHAT })),
  };
}

/** What keeping the index costs one tree: each returns this thread's CPU ms. */
function upkeep(m: Modules, objects: readonly KubeObject[], batch: ReturnType<typeof batchOf>): Record<'list' | 'relist' | 'view', () => number> {
  const indexAll = (index: InstanceType<Modules['index']['DependencyIndex']>): number => {
    const before = threadCpuMs();
    for (const o of objects) index.upsert(o.kind as 'Agent', o);
    return threadCpuMs() - before;
  };
  return {
    list: () => indexAll(new m.index.DependencyIndex()),
    relist: () => {
      const index = new m.index.DependencyIndex();
      indexAll(index);
      return indexAll(index);
    },
    view: () => {
      const before = threadCpuMs();
      new m.views.CacheView().apply(batch);
      return threadCpuMs() - before;
    },
  };
}

/** Heap bytes an index of `objects` (kept alive elsewhere) and a view fed their texts hold, after a full GC. */
function heldBytes(m: Modules, objects: readonly KubeObject[], batch: ReturnType<typeof batchOf>): { index: number; view: number } | undefined {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return undefined;
  const heap = (): number => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  let before = heap();
  const index = new m.index.DependencyIndex();
  for (const o of objects) index.upsert(o.kind as 'Agent', o);
  const indexBytes = heap() - before;
  before = heap();
  const view = new m.views.CacheView();
  view.apply(batch);
  const viewBytes = heap() - before;
  // Alive until measured.
  if (index.size + view.sizes().Agent < 0) console.log('unreachable');
  return { index: indexBytes, view: viewBytes };
}

/** The mean CPU of `repeat` answers to `request`, and the warnings of the last. */
async function cpuOf(request: Request, repeat: number): Promise<{ ms: number; warnings: readonly string[] }> {
  const before = threadCpuMs();
  let warnings: readonly string[] = [];
  for (let i = 0; i < repeat; i++) warnings = await request();
  return { ms: (threadCpuMs() - before) / repeat, warnings };
}

/**
 * How many times to repeat a figure's work over `objects` objects: this thread's CPU clock moves in
 * coarse steps (about 4 ms on the development machine), so a small world's figure is the mean of many.
 */
const repeatFor = (objects: number): number => Math.max(1, Math.ceil(REPEAT_OBJECTS / objects));

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const SIDES = ['base', 'head'] as const;
/** Alternates which goes first, so neither always runs on a warmer heap. */
const order = (round: number) => (round % 2 === 0 ? SIDES : ([...SIDES].reverse() as ['head', 'base']));
const row = (label: string, b: number, h: number, unit = 'ms'): string =>
  `  ${label.padEnd(40)} ${b.toFixed(1).padStart(9)} ${unit} → ${h.toFixed(1).padStart(8)} ${unit}   ×${(h / b).toFixed(3)}`;

async function main(): Promise<void> {
  const tree = treeAt(BASE);
  try {
    const m = { base: await modules(tree.dir), head: await modules(ROOT) };
    console.log(`validating webhook, ModelAPI "chat" used by N Agents and N/10 MemoryStores: event-loop CPU per request (median of ${ROUNDS} rounds), ${BASE} (${tree.sha}) → working tree`);
    for (const size of SIZES) {
      const objects = world(size);
      for (const over of ['cache', 'view'] as const) {
        const sides = { base: requests(m.base, objects, over), head: requests(m.head, objects, over) };
        for (const name of ['delete', 'strand'] as const) {
          const times = { base: [] as number[], head: [] as number[] };
          let said: { base: readonly string[]; head: readonly string[] } = { base: [], head: [] };
          for (let round = 0; round < ROUNDS; round++) {
            for (const side of order(round)) {
              const { ms, warnings } = await cpuOf(sides[side][name], repeatFor(objects.length));
              times[side].push(ms);
              said = { ...said, [side]: warnings };
            }
          }
          console.log(row(`N=${size} ${over} ${name}`, median(times.base), median(times.head)));
          if (said.base.join('\n') !== said.head.join('\n')) console.log('      the warnings differ:', said);
          else if (over === 'view') for (const w of said.head) console.log(`      ${w}`);
        }
      }
    }
    console.log(`\nthe dependency index's upkeep: CPU to index N Agents and N/10 MemoryStores (median of ${ROUNDS} rounds)`);
    for (const size of SIZES) {
      const objects = world(size);
      const batches = { base: batchOf(m.base, objects), head: batchOf(m.head, objects) };
      const sides = { base: upkeep(m.base, objects, batches.base), head: upkeep(m.head, objects, batches.head) };
      for (const name of ['list', 'relist', 'view'] as const) {
        const times = { base: [] as number[], head: [] as number[] };
        const repeat = repeatFor(objects.length);
        for (let round = 0; round < ROUNDS; round++) {
          for (const side of order(round)) {
            let ms = 0;
            for (let i = 0; i < repeat; i++) ms += sides[side][name]();
            times[side].push(ms / repeat);
          }
        }
        const b = median(times.base);
        const h = median(times.head);
        const label = { list: 'index a first list', relist: 'index a relist (all changed)', view: 'a view applies it (one batch)' }[name];
        console.log(`${row(`N=${size} ${label}`, b, h)}   (${((b * 1000) / objects.length).toFixed(2)} → ${((h * 1000) / objects.length).toFixed(2)} µs an object)`);
      }
      // The heap of a small world is within a GC's noise.
      const held = size === Math.max(...SIZES) ? { base: heldBytes(m.base, objects, batches.base), head: heldBytes(m.head, objects, batches.head) } : {};
      if (held.base !== undefined && held.head !== undefined) {
        const perObject = (bytes: number): number => bytes / objects.length;
        console.log(`${row(`N=${size} heap: the index`, held.base.index / 1024, held.head.index / 1024, 'KiB')}   (${perObject(held.base.index).toFixed(0)} → ${perObject(held.head.index).toFixed(0)} bytes a dependent)`);
        console.log(`${row(`N=${size} heap: a view`, held.base.view / 1024, held.head.view / 1024, 'KiB')}   (${perObject(held.base.view).toFixed(0)} → ${perObject(held.head.view).toFixed(0)} bytes a dependent)`);
      }
    }
  } finally {
    tree.remove();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
