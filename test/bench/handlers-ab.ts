// node test/bench/handlers-ab.ts [base-ref] — the admission pipeline of this checkout against the
// same pipeline at another commit (default HEAD~1), side by side in one process, so that a change
// is judged by a ratio measured under the same background load rather than by two runs' absolute
// times on a shared machine.
//
// The pipeline is what an endpoint does with a body once it has read it, without the network:
// parseJson (depth scan + JSON.parse) → decodeReview → handler → encodeDecision → JSON.stringify,
// for the AdmissionReviews kube-apiserver sends for KAOS sample 2 (test/bench/reviews.ts), over
// the cache-like lookup of bench:webhook. The base ref's src/ and test/ are exported with
// `git archive` into a temporary directory. Rounds alternate base and head; the figure is the
// median of the per-round times. Never part of pass/fail.
//
// BENCH_PART=handler times the handler and the encoding of its decision only, on a request decoded
// once (JSON.parse, half of the pipeline and the same in both trees, then stops diluting the ratio).
//
// Env: BENCH_ROUNDS (default 15), BENCH_ITERATIONS per round and request (default 400), BENCH_PART.
import { ROOT, loadFrom, treeAt } from './tree-at.ts';

const BASE = process.argv[2] ?? 'HEAD~1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 400);
const HANDLER_ONLY = process.env.BENCH_PART === 'handler';

type Run = () => Promise<void>;

/** Loads one tree's modules and returns, per (type, kind), a function that runs the pipeline once. */
async function pipelines(root: string): Promise<Map<string, Run>> {
  const load = (path: string): Promise<Record<string, unknown>> => loadFrom(root, path);
  // The two trees' modules are the same modules at two commits: typed by this checkout's.
  const review = (await load('src/admission/review.ts')) as unknown as typeof import('../../src/admission/review.ts');
  const mutate = (await load('src/admission/mutate.ts')) as unknown as typeof import('../../src/admission/mutate.ts');
  const validate = (await load('src/admission/validate.ts')) as unknown as typeof import('../../src/admission/validate.ts');
  const config = (await load('src/config/config.ts')) as unknown as typeof import('../../src/config/config.ts');
  const reviews = (await load('test/bench/reviews.ts')) as unknown as typeof import('./reviews.ts');
  const lookupModule = (await load('test/bench/lookup.ts')) as unknown as typeof import('./lookup.ts');
  const jsonPatch = (await import('fast-json-patch')).default;
  const kinds = ['Agent', 'ModelAPI', 'MCPServer'] as const;
  const objects = reviews.sampleObjects();
  const lookup = new lookupModule.CacheLikeLookup().add(...objects);
  const cfg = config.loadConfig({});
  const out = new Map<string, Run>();
  for (const [i, kind] of kinds.entries()) {
    const written = objects.find((o) => o.kind === kind);
    if (written === undefined) throw new Error(`the sample has no ${kind}`);
    const asSent = reviews.asServerSees(written, i);
    const mutateBody: string = reviews.admissionReview(kind, asSent, i);
    const m = mutate.createMutatingHandler(kind, { lookup, config: cfg });
    const v = validate.createValidatingHandler(kind, { lookup, config: cfg });
    const decision = await m((JSON.parse(mutateBody) as { request: Parameters<typeof m>[0] }).request);
    const defaulted = jsonPatch.applyPatch(structuredClone(asSent), decision.patch ?? [], false, false).newDocument;
    const validateBody: string = reviews.admissionReview(kind, defaulted, i);
    for (const [type, handler, text] of [['mutate', m, mutateBody], ['validate', v, validateBody]] as const) {
      const body = Buffer.from(text);
      const once = review.decodeReview(JSON.parse(text), kind);
      if (!once.ok) throw new Error(once.message);
      const request = once.request;
      out.set(`${type} ${kind}`, HANDLER_ONLY ? async () => {
        const d = await handler(request);
        if (!d.allowed) throw new Error(`${type} ${kind} denied`);
        JSON.stringify(review.encodeDecision(request.uid, type, d));
      } : async () => {
        const parsed = review.parseJson(body);
        if (!parsed.ok) throw new Error(parsed.message);
        const decoded = review.decodeReview(parsed.value, kind);
        if (!decoded.ok) throw new Error(decoded.message);
        const d = await handler(decoded.request);
        if (!d.allowed) throw new Error(`${type} ${kind} denied`);
        JSON.stringify(review.encodeDecision(decoded.request.uid, type, d));
      });
    }
  }
  return out;
}

async function timePerCall(run: Run): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) await run();
  return Number(process.hrtime.bigint() - start) / 1000 / ITERATIONS;
}

const median = (values: number[]): number => {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

async function main(): Promise<void> {
  const tree = treeAt(BASE);
  const { sha } = tree;
  try {
    const base = await pipelines(tree.dir);
    const head = await pipelines(ROOT);
    const times = new Map<string, { base: number[]; head: number[] }>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, run] of head) {
        const entry = times.get(name) ?? { base: [], head: [] };
        const other = base.get(name);
        if (other === undefined) throw new Error(`${name}: not in ${BASE}`);
        // Alternate which goes first, so neither always runs on a warmer cache.
        if (round % 2 === 0) {
          entry.base.push(await timePerCall(other));
          entry.head.push(await timePerCall(run));
        } else {
          entry.head.push(await timePerCall(run));
          entry.base.push(await timePerCall(other));
        }
        times.set(name, entry);
      }
    }
    console.log(`admission ${HANDLER_ONLY ? 'handler + encode' : 'pipeline'}, µs per request (median of ${ROUNDS} rounds × ${ITERATIONS}): ${BASE} (${sha}) → working tree`);
    let sumBase = 0;
    let sumHead = 0;
    for (const [name, t] of times) {
      const b = median(t.base);
      const h = median(t.head);
      sumBase += b;
      sumHead += h;
      console.log(`  ${name.padEnd(18)} ${b.toFixed(1).padStart(7)} → ${h.toFixed(1).padStart(7)}   ×${(h / b).toFixed(2)}`);
    }
    console.log(`  ${'all six'.padEnd(18)} ${sumBase.toFixed(1).padStart(7)} → ${sumHead.toFixed(1).padStart(7)}   ×${(sumHead / sumBase).toFixed(2)}`);
  } finally {
    tree.remove();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
