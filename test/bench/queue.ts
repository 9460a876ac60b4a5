// Prints the work queue's own cost: keys per second through a no-op async reconciler, and the
// merge rate of duplicate adds. Not part of pass/fail. Run: node test/bench/queue.ts
import { WorkQueue } from '../../src/controller/queue.ts';
import { createControllerMetrics } from '../../src/controller/metrics.ts';
import { createRegistry } from '../../src/leaves/prometheus.ts';

const KEYS = 100_000;
const metrics = createControllerMetrics(createRegistry({ defaultMetrics: false })).forController('agent');
const q = new WorkQueue({ name: 'agent', concurrency: 4, metrics, reconcile: async () => undefined });
const keys = Array.from({ length: KEYS }, (_, i) => `Agent/ns/a${i}`);

let t0 = performance.now();
for (const k of keys) q.add(k);
for (const k of keys) q.add(k); // duplicates: merged
const addMs = performance.now() - t0;
t0 = performance.now();
q.start();
await q.whenIdle();
const runMs = performance.now() - t0;
console.log(`adds: ${(2 * KEYS).toLocaleString()} (half duplicates) in ${addMs.toFixed(1)} ms = ${((addMs * 1000) / (2 * KEYS)).toFixed(2)} µs/add`);
console.log(`runs: ${KEYS.toLocaleString()} keys through a no-op reconciler in ${runMs.toFixed(0)} ms = ${((runMs * 1000) / KEYS).toFixed(2)} µs/key, ${Math.round(KEYS / (runMs / 1000)).toLocaleString()} keys/s`);
console.log(`heap used after: ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(1)} MiB`);
