// src/admission-thread/thread.ts with a real worker thread running a stand-in entry
// (test/fixtures/admission-thread-entry.ts): it listens once it has applied its first batch and
// says its port, batches arrive in order (those posted before it listened too), metrics come back
// per scrape, drain reaches its server, close ends the thread, and a thread that fails — before or after it started — is
// reported, never silent.
import t from 'tap';
import { startAdmissionThread } from '../../../src/admission-thread/thread.ts';
import { captureLogger } from '../server/helpers.ts';

const ENTRY = new URL('../../fixtures/admission-thread-entry.ts', import.meta.url);

t.test('starts, is fed in order, reports its metrics, closes', async (t) => {
  const log = captureLogger('info');
  const failures: Error[] = [];
  const thread = startAdmissionThread<{ n: number }>({ entry: ENTRY, logger: log.logger, onFailure: (err) => failures.push(err) });
  const unfed = await Promise.race([thread.listening, new Promise((resolve) => setTimeout(() => resolve('not listening'), 300))]);
  t.equal(unfed, 'not listening', 'no batch, no server');
  thread.feed({ n: 0 });
  t.equal(await thread.listening, 4201, 'listening, with the first batch applied');
  for (let n = 1; n < 5; n++) thread.feed({ n });
  const text = await thread.metrics();
  t.match(text, /^applied_batches 5$/m);
  t.match(text, /applied \[\{"n":0\},\{"n":1\},\{"n":2\},\{"n":3\},\{"n":4\}\]/, 'in the order fed');
  t.match(text, /^drained 0$/m, 'not draining');
  thread.drain();
  t.match(await thread.metrics(), /^drained 1$/m, 'drain() reaches the thread\'s server');
  await thread.close();
  await thread.close();
  t.same(failures, [], 'closing is not a failure');
});

t.test('a thread that cannot start rejects the start with its error', async (t) => {
  const log = captureLogger('info');
  const thread = startAdmissionThread({ entry: ENTRY, logger: log.logger, onFailure: () => t.fail('not started yet'), workerData: { mode: 'fail-start' } });
  thread.feed({});
  await t.rejects(thread.listening, /no certificate/);
});

t.test('a thread that dies after it started is reported', async (t) => {
  const log = captureLogger('info');
  let failed: (err: Error) => void = () => undefined;
  const failure = new Promise<Error>((resolve) => { failed = resolve; });
  const thread = startAdmissionThread({ entry: ENTRY, logger: log.logger, onFailure: (err) => failed(err), workerData: { mode: 'crash' } });
  thread.feed({});
  await thread.listening;
  thread.feed({});
  t.match((await failure).message, /crashed on a batch/);
  t.equal(await thread.metrics(), '', 'a scrape does not wait for a dead thread');
});
