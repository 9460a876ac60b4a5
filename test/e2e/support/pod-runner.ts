// The kubelet's part for the chart's operator pods, played by the test: kwok schedules them and
// starts them (phase Running, a pod IP, not ready: test/cluster/kwok/stages/pod-run-by-test.yaml,
// for pods annotated RUN_BY_TEST_ANNOTATION), and this runs each as a container of the operator's
// image the way its pod says (container.ts), listening on the pod's IP — an address this host
// takes on its loopback interface, so that the Service's endpoints reach it — with the pod's
// Secret as its certificate files and a token of the pod's ServiceAccount; marks the pod ready once
// the container answers /readyz (the chart's readiness probe); once the pod is deleted, stops the
// container with SIGTERM and the pod's grace period and, when it has exited, removes the pod (which
// frees its IP for kwok to give another pod). The Service's EndpointSlice is the real
// controller's, from these pods' IPs, readiness and deletion. Needs root (`ip addr`).
//
// Where this differs from a kubelet, and why it does not matter here: the token is not bound to
// the pod; and /readyz is polled every 200 ms rather than every probe period, which only makes a
// rollout faster.
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Engine } from '../../../scripts/image/engine.ts';
import { writeTokenKubeconfig } from '../../../scripts/local-stack.ts';
import type { KubeClient } from '../../../src/kube/client.ts';
import { runCommand, type ControlPlane } from '../../cluster/control-plane.ts';
import type { ChartDeployment } from '../../support/chart-pod.ts';
import { startContainerOperator, type ContainerOperator } from './container.ts';

interface Pod {
  metadata: { name: string; namespace: string; deletionTimestamp?: string };
  spec: Omit<ChartDeployment['spec']['template']['spec'], 'volumes'> & {
    nodeName?: string;
    serviceAccountName?: string;
    volumes?: Array<{ name: string; secret?: { secretName: string }; emptyDir?: Record<string, unknown>; projected?: unknown }>;
  };
  status?: { phase?: string; podIP?: string };
}

/** A pod this runner ran: where, its container, and when things happened to it (ms since the epoch). */
export interface RunPod {
  readonly name: string;
  readonly nodeName: string;
  readonly podIP: string;
  container?: ContainerOperator;
  /** When the container answered /readyz and the pod was marked ready. */
  readyAt?: number;
  /** When the pod's deletion was seen and the container was sent SIGTERM. */
  stopAskedAt?: number;
  /** The container's exit code, once it has exited. */
  exitCode?: number | null;
}

export interface PodRunnerOptions {
  plane: ControlPlane;
  client: KubeClient;
  engine: Engine;
  namespace: string;
  /** The pods' label selector (`a=b,c=d`). */
  selector: string;
  log: (line: string) => void;
}

export interface PodRunner {
  /** Every pod run so far, by name. */
  readonly pods: ReadonlyMap<string, RunPod>;
  /** What went wrong while running a pod (a container that did not start, a failed status patch). */
  readonly errors: readonly string[];
  /** Stops watching, stops every container still running, gives the addresses back. */
  stop(): Promise<void>;
}

const POLL_MS = 200;

/** The kube-api-access volume the API server adds to a pod (the token a kubeconfig replaces here) and its mounts taken out. */
function withoutServiceAccountVolume(pod: Pod): ChartDeployment {
  const injected = new Set((pod.spec.volumes ?? []).filter((v) => v.projected !== undefined && v.name.startsWith('kube-api-access-')).map((v) => v.name));
  const spec = {
    ...pod.spec,
    volumes: (pod.spec.volumes ?? []).filter((v) => !injected.has(v.name)).map(({ projected: _, ...v }) => v),
    containers: pod.spec.containers.map((c) => ({ ...c, volumeMounts: (c.volumeMounts ?? []).filter((m) => !injected.has(m.name)) })),
  };
  return { kind: 'Deployment', metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace }, spec: { template: { spec } } };
}

export function startPodRunner(o: PodRunnerOptions): PodRunner {
  const pods = new Map<string, RunPod>();
  const errors: string[] = [];
  const work = new Set<Promise<void>>();
  const addresses = new Set<string>();
  let stopped = false;
  const track = (p: Promise<void>): void => {
    work.add(p);
    void p.finally(() => work.delete(p));
  };
  const giveBack = (ip: string): void => {
    spawnSync('ip', ['addr', 'del', `${ip}/32`, 'dev', 'lo'], { stdio: 'ignore' });
    addresses.delete(ip);
  };
  const onExit = (): void => { for (const ip of addresses) giveBack(ip); };
  process.once('exit', onExit);

  const run = async (pod: Pod, entry: RunPod): Promise<void> => {
    const files = await mkdtemp(join(tmpdir(), 'kaos-pod-'));
    try {
      const add = await runCommand('ip', ['addr', 'add', `${entry.podIP}/32`, 'dev', 'lo']);
      // Already there: left by a run killed before it could give it back.
      if (add.code !== 0 && !/already assigned|File exists/.test(add.stderr)) throw new Error(`ip addr add ${entry.podIP}: ${add.stderr}`);
      addresses.add(entry.podIP);
      // The kubelet's Secret volume: the Secret's keys as files.
      const secretName = (pod.spec.volumes ?? []).find((v) => v.secret !== undefined)?.secret?.secretName;
      if (secretName === undefined) throw new Error('the pod mounts no Secret');
      const secret = await o.client.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${o.namespace}/secrets/${secretName}`);
      const certDir = join(files, 'certs');
      await mkdir(certDir);
      for (const [key, value] of Object.entries(secret.data ?? {})) await writeFile(join(certDir, key), Buffer.from(value, 'base64'));
      // The kubelet's projected token: one of the pod's ServiceAccount, so the chart's RBAC is what the operator has.
      const token = await o.plane.kubectl(['create', 'token', pod.spec.serviceAccountName ?? 'default', '-n', o.namespace, '--duration=2h']);
      if (token.code !== 0) throw new Error(`kubectl create token: ${token.stderr}`);
      const kubeconfig = join(files, 'kubeconfig');
      await writeTokenKubeconfig(o.plane.kubeconfigPath, kubeconfig, token.stdout.trim(), `system:serviceaccount:${o.namespace}:${pod.spec.serviceAccountName ?? 'default'}`);
      entry.container = await startContainerOperator(o.engine, withoutServiceAccountVolume(pod), {
        kubeconfig, certDir, podName: entry.name, podIP: entry.podIP,
        logFile: join(o.plane.dir, `${entry.name}.log`), readyTimeoutMs: 180_000,
      });
      const ready = [{ type: 'Ready', status: 'True' }, { type: 'ContainersReady', status: 'True' }];
      const patch = await o.plane.kubectl(['patch', 'pod', entry.name, '-n', o.namespace, '--subresource=status', '--type=strategic', '-p', JSON.stringify({ status: { conditions: ready } })]);
      // Deleted meanwhile: its container is stopped by the next poll.
      if (patch.code !== 0 && !/NotFound/.test(patch.stderr)) throw new Error(`marking ${entry.name} ready: ${patch.stderr}`);
      entry.readyAt = Date.now();
      o.log(`[pods] ${entry.name} on ${entry.nodeName} (${entry.podIP}) ready`);
    } finally {
      await rm(files, { recursive: true, force: true });
    }
  };

  const stopPod = async (entry: RunPod, starting: Promise<void>): Promise<void> => {
    await starting.catch(() => undefined);
    entry.stopAskedAt ??= Date.now();
    if (entry.container !== undefined) {
      entry.exitCode = await entry.container.stop();
      o.log(`[pods] ${entry.name} exited ${entry.exitCode ?? '?'}, ${Date.now() - entry.stopAskedAt} ms after SIGTERM`);
    }
    giveBack(entry.podIP);
    if (stopped) return;
    const removed = await o.plane.kubectl(['delete', 'pod', entry.name, '-n', o.namespace, '--grace-period=0', '--force', '--wait=false']);
    if (removed.code !== 0 && !/NotFound/.test(removed.stderr)) throw new Error(`removing ${entry.name}: ${removed.stderr}`);
  };

  const starts = new Map<string, Promise<void>>();
  const poll = async (): Promise<void> => {
    while (!stopped) {
      try {
        const list = await o.client.get<{ items: Pod[] }>(`/api/v1/namespaces/${o.namespace}/pods?labelSelector=${encodeURIComponent(o.selector)}`);
        const live = new Map(list.items.map((p) => [p.metadata.name, p]));
        for (const pod of list.items) {
          const { podIP } = pod.status ?? {};
          if (pods.has(pod.metadata.name) || pod.metadata.deletionTimestamp !== undefined || pod.status?.phase !== 'Running' || podIP === undefined) continue;
          const entry: RunPod = { name: pod.metadata.name, nodeName: pod.spec.nodeName ?? '', podIP };
          pods.set(entry.name, entry);
          const starting = run(pod, entry).catch((err: unknown) => { errors.push(`${entry.name}: ${String(err)}`); });
          starts.set(entry.name, starting);
          track(starting);
        }
        for (const entry of pods.values()) {
          const pod = live.get(entry.name);
          if (entry.stopAskedAt !== undefined || (pod !== undefined && pod.metadata.deletionTimestamp === undefined)) continue;
          entry.stopAskedAt = Date.now();
          o.log(`[pods] ${entry.name} deleted: SIGTERM`);
          track(stopPod(entry, starts.get(entry.name) ?? Promise.resolve()).catch((err: unknown) => { errors.push(`${entry.name}: stop: ${String(err)}`); }));
        }
      } catch (err) {
        errors.push(`listing pods: ${String(err)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  };
  const polling = poll();

  return {
    pods,
    errors,
    stop: async () => {
      stopped = true;
      await polling;
      for (const entry of pods.values()) {
        if (entry.stopAskedAt === undefined) track(stopPod(entry, starts.get(entry.name) ?? Promise.resolve()));
      }
      while (work.size > 0) await Promise.allSettled([...work]);
      process.removeListener('exit', onExit);
      onExit();
    },
  };
}
