// npm run bench:fan-in [base-ref] — what the validating webhook's warnings that name a ModelAPI's
// dependents cost when many use it: deleting it ("still referenced by", one warning per kind) and a
// change of its models that serves none of theirs any more ("no longer serves"), with N Agents and
// N/10 MemoryStores bound to it, over the cache-like lookup of bench:webhook. This checkout and
// another commit (default main, exported by tree-at.ts) alternate in one process; each request's
// cost is the event loop's CPU time (process.threadCpuUsage), the median of the rounds. Never part
// of pass/fail.
//
// Env: BENCH_SIZES (Agents, default 100,1000,10000), BENCH_ROUNDS (default 3).
import type { KubeObject } from '../../src/api/lookup.ts';
import { threadCpuMs } from '../support/work-budget.ts';
import { ROOT, loadFrom, treeAt } from './tree-at.ts';

const BASE = process.argv[2] ?? 'main';
const SIZES = (process.env.BENCH_SIZES ?? '100,1000,10000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const NS = 'fan-in';

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

/** One tree's two requests over a world of `agents` Agents: each answers the warnings it gave. */
async function requests(root: string, agents: number): Promise<Record<'delete' | 'strand', Request>> {
  const validate = (await loadFrom(root, 'src/admission/validate.ts')) as unknown as typeof import('../../src/admission/validate.ts');
  const config = (await loadFrom(root, 'src/config.ts')) as unknown as typeof import('../../src/config.ts');
  const lookups = (await loadFrom(root, 'test/bench/lookup.ts')) as unknown as typeof import('./lookup.ts');
  const reviews = (await loadFrom(root, 'test/support/admission-request.ts')) as unknown as typeof import('../support/admission-request.ts');
  const handler = validate.createValidatingHandler('ModelAPI', { lookup: new lookups.CacheLikeLookup().add(...world(agents)), config: config.loadConfig({}) });
  const answer = async (request: Parameters<typeof handler>[0]): Promise<readonly string[]> => (await handler(request)).warnings ?? [];
  return {
    delete: () => answer(reviews.admissionRequest('ModelAPI', undefined, { operation: 'DELETE', name: 'chat', namespace: NS, oldObject: CHAT })),
    strand: () => answer(reviews.admissionRequest('ModelAPI', serving('claude'), { operation: 'UPDATE', oldObject: CHAT })),
  };
}

async function cpuOf(request: Request): Promise<{ ms: number; warnings: readonly string[] }> {
  const before = threadCpuMs();
  const warnings = await request();
  return { ms: threadCpuMs() - before, warnings };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function main(): Promise<void> {
  const tree = treeAt(BASE);
  try {
    console.log(`validating webhook, ModelAPI "chat" used by N Agents and N/10 MemoryStores: event-loop CPU per request (median of ${ROUNDS} rounds), ${BASE} (${tree.sha}) → working tree`);
    for (const size of SIZES) {
      const base = await requests(tree.dir, size);
      const head = await requests(ROOT, size);
      for (const name of ['delete', 'strand'] as const) {
        const times = { base: [] as number[], head: [] as number[] };
        let said: { base: readonly string[]; head: readonly string[] } = { base: [], head: [] };
        for (let round = 0; round < ROUNDS; round++) {
          // Alternate which goes first, so neither always runs on a warmer heap.
          for (const side of round % 2 === 0 ? (['base', 'head'] as const) : (['head', 'base'] as const)) {
            const { ms, warnings } = await cpuOf((side === 'base' ? base : head)[name]);
            times[side].push(ms);
            said = { ...said, [side]: warnings };
          }
        }
        const b = median(times.base);
        const h = median(times.head);
        console.log(`  N=${String(size).padEnd(6)} ${name.padEnd(7)} ${b.toFixed(1).padStart(9)} ms → ${h.toFixed(1).padStart(7)} ms   ×${(h / b).toFixed(4)}`);
        for (const w of said.head) console.log(`      ${w}`);
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
