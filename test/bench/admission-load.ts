// bench:admission's other client, in a process of its own so that its work shares neither an
// event loop with the probe that measures admission nor with the webhooks measured: the rollout
// stand-in (no pods run: test/bench/rollout-stand-in.ts), and on the parent's word a GitOps bulk
// apply of a namespace (test/bench/bulk-scenario.ts, CREATE_IN_FLIGHT creates in flight through
// whatever webhooks are registered) followed until the controller has converged it, or the
// deletion of a namespace until it is gone.
//
// fork(admission-load.ts, [kubeconfig]); messages in: LoadCommand; out: LoadReport.
import { KubeClient } from '../../src/kube/client.ts';
import { ApiError } from '../../src/kube/errors.ts';
import { NAMESPACE, resourcePath } from '../../src/kube/paths.ts';
import { bulkScenario, createBulk } from './bulk-scenario.ts';
import { ConvergenceWatch, CREATE_IN_FLIGHT, sleep } from './reconcile.ts';
import { RolloutStandIn } from './rollout-stand-in.ts';

export type LoadCommand =
  | { cmd: 'bulk'; namespace: string; agents: number; modelAPIs: number; mcpServers: number }
  | { cmd: 'delete'; namespace: string }
  | { cmd: 'stop' };

export type LoadReport =
  | { event: 'ready' }
  | { event: 'created'; namespace: string; seconds: number }
  | { event: 'converged'; namespace: string; seconds: number }
  | { event: 'deleted'; namespace: string; seconds: number }
  | { event: 'failed'; message: string };

async function bulk(client: KubeClient, command: Extract<LoadCommand, { cmd: 'bulk' }>, send: (r: LoadReport) => void): Promise<void> {
  const { namespace, agents } = command;
  await client.create(resourcePath(NAMESPACE), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const watch = new ConvergenceWatch(client, namespace, agents);
  await watch.start();
  const t0 = performance.now();
  await createBulk(client, bulkScenario(namespace, { agents, modelAPIs: command.modelAPIs, mcpServers: command.mcpServers }), CREATE_IN_FLIGHT);
  send({ event: 'created', namespace, seconds: (performance.now() - t0) / 1000 });
  await watch.converged();
  send({ event: 'converged', namespace, seconds: (performance.now() - t0) / 1000 });
  await watch.stop();
}

async function deleteNamespace(client: KubeClient, namespace: string, send: (r: LoadReport) => void): Promise<void> {
  const t0 = performance.now();
  const path = resourcePath(NAMESPACE, { name: namespace });
  await client.delete(path);
  for (;;) {
    try {
      await client.get(path);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) break;
      throw err;
    }
    await sleep(500);
  }
  send({ event: 'deleted', namespace, seconds: (performance.now() - t0) / 1000 });
}

if (import.meta.main) {
  const kubeconfig = process.argv[2];
  if (kubeconfig === undefined || process.send === undefined) throw new Error('usage: fork(admission-load.ts, [kubeconfig])');
  const send = (r: LoadReport): void => void process.send?.(r);
  const client = await KubeClient.fromKubeConfig(kubeconfig);
  const standIn = new RolloutStandIn(client, (line) => process.stderr.write(`[load] ${line}\n`));
  await standIn.start();
  process.on('message', (m: LoadCommand) => {
    const fail = (err: unknown): void => send({ event: 'failed', message: err instanceof Error ? err.stack ?? err.message : String(err) });
    if (m.cmd === 'bulk') void bulk(client, m, send).catch(fail);
    else if (m.cmd === 'delete') void deleteNamespace(client, m.namespace, send).catch(fail);
    else void standIn.stop().then(() => { client.close(); process.exit(0); });
  });
  process.on('disconnect', () => process.exit(0));
  send({ event: 'ready' });
}
