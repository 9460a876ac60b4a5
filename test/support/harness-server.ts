// The admission harness (admission-harness.ts: the real listener over the samples, the API
// server's dry run replaced by one that serializes and accepts) on a thread of its own, as the
// operator's admission thread is: startHarnessThread starts it, from this checkout's modules or
// from another commit's tree (`root`).
import type { KubeObject } from '../../src/api/lookup.ts';
import { harnessListener, listen, stackModulesAt } from './admission-harness.ts';
import { serveThisThread } from './server-thread.ts';

serveThisThread<{ objects: KubeObject[]; root?: string }>(async ({ objects, root }) => {
  const server = await listen(harnessListener(objects, undefined, root === undefined ? undefined : await stackModulesAt(root)));
  const { port } = server.address() as { port: number };
  return { port, counts: () => ({}), close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
});
