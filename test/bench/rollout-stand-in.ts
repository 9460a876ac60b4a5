// The benchmarks' stand-in for the chain that rolls a Deployment out, on a control plane started
// with `pods: false` (test/cluster/control-plane.ts): the Deployment and ReplicaSet controllers,
// kube-scheduler and kwok together cost the API server about eight writes per Deployment (a
// ReplicaSet, a pod, a binding, their statuses), and at 10,000 Agents on two cores that chain
// saturates the API server long before the operator does. This makes one write instead: as soon
// as it sees a Deployment whose status has not observed its generation, it writes the status the
// Deployment controller writes once every replica of that generation is ready and available.
// What the operator and the floors read (src/controller/status.ts's deploymentProgress, the
// benches' rolledOutAndReady) is exactly what that status says, so "Ready" keeps its meaning;
// only the pods' time to start is gone, for the operator and its floor alike.
//
// It writes as the admin (exempt from the API server's flow control, like nothing in a real
// cluster, so that it never queues behind the writes being measured) and not as the operator,
// whose requests the audit log counts.
import type { KubeObject } from '../../src/api/meta.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { DEPLOYMENT, resourcePath } from '../../src/kube/paths.ts';
import { Reflector } from '../../src/kube/reflector.ts';

/** Status writes in flight: the Deployment controller's own default (--concurrent-deployment-syncs). */
const WIDTH = 5;

/** The status the Deployment controller reports for a finished rollout of `deployment`'s generation. */
export function rolledOutStatus(deployment: KubeObject, now: Date): Record<string, unknown> {
  const replicas = (deployment.spec as { replicas?: number } | undefined)?.replicas ?? 1;
  const at = now.toISOString().replace(/\.\d+Z$/, 'Z');
  const condition = (type: string, reason: string, message: string): Record<string, string> =>
    ({ type, status: 'True', reason, message, lastUpdateTime: at, lastTransitionTime: at });
  return {
    observedGeneration: deployment.metadata?.generation ?? 0,
    replicas,
    updatedReplicas: replicas,
    readyReplicas: replicas,
    availableReplicas: replicas,
    conditions: [
      condition('Available', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'),
      condition('Progressing', 'NewReplicaSetAvailable', `ReplicaSet "${deployment.metadata?.name ?? ''}" has successfully progressed.`),
    ],
  };
}

/** A Deployment whose current generation this stand-in has yet to report rolled out. */
export function needsRollout(deployment: KubeObject): boolean {
  const observed = (deployment.status as { observedGeneration?: number } | undefined)?.observedGeneration ?? 0;
  return observed < (deployment.metadata?.generation ?? 0);
}

export class RolloutStandIn {
  readonly #client: KubeClient;
  readonly #deployments: Reflector;
  readonly #queue = new Set<string>();
  readonly #log: (line: string) => void;
  readonly #idle: (() => void)[] = [];
  #stopped = false;
  #workers: Promise<void>[] = [];
  /** Status writes made: one per Deployment generation. */
  writes = 0;

  constructor(client: KubeClient, log: (line: string) => void) {
    this.#client = client;
    this.#log = log;
    this.#deployments = new Reflector({ client, type: DEPLOYMENT });
    this.#deployments.on((event) => {
      if (event.type === 'delete' || !needsRollout(event.object)) return;
      this.#queue.add(`${event.object.metadata?.namespace ?? ''}/${event.object.metadata?.name ?? ''}`);
      this.#wake();
    });
  }

  async start(): Promise<void> {
    this.#deployments.start();
    await this.#deployments.waitForSync();
    this.#workers = Array.from({ length: WIDTH }, () => this.#work());
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake();
    await Promise.all(this.#workers);
    await this.#deployments.stop();
  }

  #wake(): void {
    for (const resolve of this.#idle.splice(0)) resolve();
  }

  async #work(): Promise<void> {
    while (!this.#stopped) {
      const key = this.#queue.values().next().value;
      if (key === undefined) {
        await new Promise<void>((r) => { this.#idle.push(r); });
        continue;
      }
      this.#queue.delete(key);
      const [namespace = '', name = ''] = key.split('/');
      const deployment = this.#deployments.getByName(namespace, name);
      if (deployment === undefined || !needsRollout(deployment)) continue;
      try {
        // A merge patch without a resourceVersion: a newer generation meanwhile is seen by the
        // watch and queued again, as observedGeneration is then behind it.
        await this.#client.patch(resourcePath(DEPLOYMENT, { namespace, name, subresource: 'status' }), { status: rolledOutStatus(deployment, new Date()) }, 'merge');
        this.writes++;
      } catch (err) {
        this.#log(`rollout stand-in: ${key}: ${err instanceof Error ? err.message : String(err)}`);
        if (!this.#stopped) setTimeout(() => { this.#queue.add(key); this.#wake(); }, 1000);
      }
    }
  }
}
