// test/bench/memory-parts.ts: what the memory benchmark reads — each thread's heap from the
// operator's /metrics (the admission thread's series labelled), and this process's own resident
// pages by what backs them.
import t from 'tap';
import { describeParts, heapsFromMetrics, residentFiles } from '../../../test/bench/memory-parts.ts';

const MIB = 2 ** 20;

t.test('each thread\'s heap and young generation from the operator\'s metrics', async (t) => {
  const text = [
    '# HELP nodejs_heap_size_total_bytes Process heap size from Node.js in bytes.',
    '# TYPE nodejs_heap_size_total_bytes gauge',
    `nodejs_heap_size_total_bytes ${30 * MIB}`,
    `nodejs_heap_size_total_bytes{thread="admission"} ${12 * MIB}`,
    `nodejs_heap_size_used_bytes ${20 * MIB}`,
    `nodejs_heap_size_used_bytes{thread="admission"} ${9 * MIB}`,
    `nodejs_heap_space_size_total_bytes{space="new"} ${8 * MIB}`,
    `nodejs_heap_space_size_total_bytes{space="new_large_object"} ${1 * MIB}`,
    `nodejs_heap_space_size_total_bytes{space="old"} ${15 * MIB}`,
    `nodejs_heap_space_size_total_bytes{space="new",thread="admission"} ${2 * MIB}`,
  ].join('\n');
  t.same(heapsFromMetrics(text), {
    main: { total: 30, used: 20, young: 9 },
    admission: { total: 12, used: 9, young: 2 },
  });
  const older = heapsFromMetrics(`nodejs_heap_size_total_bytes ${MIB}\nnodejs_heap_size_total_bytes{thread="admission"} ${MIB}\n`);
  t.ok(Number.isNaN(older.admission?.young), 'a thread that does not report its spaces: young unknown, not zero');
  t.same(heapsFromMetrics(''), {}, 'no metrics, no heaps');
});

t.test('this process\'s resident pages: the node binary, other files, anonymous', async (t) => {
  const files = residentFiles(process.pid);
  if (files === undefined) return t.fail('/proc/self/smaps is readable on Linux');
  t.ok(files.binary > 1, `the node binary's pages are resident (${files.binary.toFixed(1)} MiB)`);
  t.ok(files.anon > 1, 'and anonymous memory');
  t.ok(files.binary + files.libraries + files.anon <= files.rss + 0.01, 'the parts are within RSS');
  t.equal(residentFiles(2 ** 30), undefined, 'a process that is gone');
  t.match(
    describeParts({ rss: 100, binary: 50, libraries: 4, heaps: { main: { total: 30, used: 20, young: 8 } }, rest: 16 }),
    'RSS 100.0 MiB = node binary 50.0 + libraries 4.0 + main heap 30.0 (used 20.0, young 8.0) + rest 16.0',
  );
});
