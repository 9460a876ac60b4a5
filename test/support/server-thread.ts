// A server under test on a thread of its own, as the operator serves admission (its webhook
// server runs on the admission thread: src/admission-thread/). What a request costs is the CPU
// time of that thread while it serves it: none of the client's work (building megabytes of body,
// the client's side of TLS, judging the answer) nor the client's garbage lands on it, as none of
// the API server's does in a cluster.
//
// Both ends are here: `startServerThread` (the test's side) starts a worker from an entry file
// that calls `serveThisThread` with what starts its server.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { threadCpuMs } from './work-budget.ts';

/** A full collection on this thread, for `retained` (the flag is the process's; the function each thread's own). */
const gc = (): void => {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
};

/** What a worker's server gives its thread: where it listens, its counters, how it stops. */
export interface ThreadServer {
  port: number;
  /** Counters the tests read (log lines by message, dry runs made). */
  counts(): Record<string, number>;
  close(): Promise<void>;
}

/** What the serving thread has done so far. */
export interface ThreadState {
  /** Its CPU time, in ms: read before and after a request, the difference is what the request cost. */
  cpuMs: number;
  counts: Record<string, number>;
}

export interface ServerThread {
  readonly port: number;
  state(): Promise<ThreadState>;
  /** The serving thread's live heap (V8 heap used and external memory) after a full GC, in bytes: what it holds on to. */
  retained(): Promise<number>;
  close(): Promise<void>;
}

type Ask = { id: number; ask: 'state' | 'retained' | 'close' };
type Told = { listening: number } | { id: number; value: unknown } | { failed: string };

/** Starts the worker at `entry` with `data` as its workerData; resolves once its server listens. */
export function startServerThread(entry: URL, data: unknown): Promise<ServerThread> {
  const worker = new Worker(entry, { workerData: data });
  const waiting = new Map<number, (value: unknown) => void>();
  let next = 0;
  const ask = <T>(what: Ask['ask']): Promise<T> =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve as (value: unknown) => void);
      worker.postMessage({ id, ask: what } satisfies Ask);
    });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the server thread exited with code ${code} before it listened`)));
    worker.on('message', (message: Told) => {
      if ('failed' in message) reject(new Error(`the server thread did not start: ${message.failed}`));
      else if ('listening' in message) {
        worker.removeAllListeners('exit');
        resolve({
          port: message.listening,
          state: () => ask<ThreadState>('state'),
          retained: () => ask<number>('retained'),
          close: async () => {
            await ask('close');
            await worker.terminate();
          },
        });
      } else {
        waiting.get(message.id)?.(message.value);
        waiting.delete(message.id);
      }
    });
  });
}

/** The worker's side: starts the server with the thread's workerData, then answers the test's questions. */
export function serveThisThread<Data>(start: (data: Data) => Promise<ThreadServer>): void {
  const port = parentPort;
  if (port === null) throw new Error('serveThisThread runs in a worker thread');
  start(workerData as Data).then(
    (server) => {
      port.on('message', (message: Ask) => {
        const reply = (value: unknown): void => port.postMessage({ id: message.id, value } satisfies Told);
        if (message.ask === 'state') reply({ cpuMs: threadCpuMs(), counts: server.counts() } satisfies ThreadState);
        else if (message.ask === 'retained') {
          gc();
          gc();
          const { heapUsed, external } = process.memoryUsage();
          reply(heapUsed + external);
        } else void server.close().then(() => reply(undefined));
      });
      port.postMessage({ listening: server.port } satisfies Told);
    },
    (err: unknown) => port.postMessage({ failed: err instanceof Error ? err.stack ?? err.message : String(err) } satisfies Told),
  );
}
