// What the e2e tests ask of kwok, the fake kubelet of the local control plane
// (test/cluster/kwok/stages/): pods that start but never pass readiness, and running pods whose
// readiness fails and recovers. Everything else (scheduling, Running, Ready) happens by itself.
import { NEVER_READY_ENV, NOT_READY_ANNOTATION, type ControlPlane } from '../../cluster/control-plane.ts';

/**
 * A `spec.container` whose pods start but never become ready (kwok's pod-never-ready Stage
 * selects the env var): what a user sees when the app never answers its readiness probe.
 * Removing it from the spec rolls out pods that become ready.
 */
export const NEVER_READY = { env: [{ name: NEVER_READY_ENV, value: 'true' }] } as const;

/** Makes the running pods matching `selector` not ready (`true`) or ready again (`false`), as failing and passing readiness probes would. */
export async function setPodsReady(plane: ControlPlane, namespace: string, selector: string, ready: boolean): Promise<void> {
  const args = ['annotate', 'pods', '-n', namespace, '-l', selector, '--overwrite', ready ? `${NOT_READY_ANNOTATION}-` : `${NOT_READY_ANNOTATION}=true`];
  const res = await plane.kubectl(args);
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${res.code}: ${res.stderr}`);
}
