// Shared by the reconciler tests: the KAOS samples as stored objects, and one reconcile call.
import type { KaosKind } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/meta.ts';
import { RECONCILERS } from '../../../src/controller/reconcile/index.ts';
import type { ReconcileResult } from '../../../src/controller/queue.ts';
import type { ObjectLike } from '../../../src/kube/apply.ts';
import type { MemoryReconcileContext } from '../../support/memory-reconcile-context.ts';
import { sample } from '../render/helpers.ts';

export type StoredObject = KubeObject & { kind: string; metadata: { name: string; namespace: string } };

/** The KAOS objects of a sample file (Namespaces left out), uid `uid-<name>`. */
export function sampleObjects(file: string): StoredObject[] {
  return sample(file).filter((o) => o.kind !== 'Namespace') as StoredObject[];
}

export function sampleObject(file: string, kind: KaosKind, name: string): StoredObject {
  const found = sampleObjects(file).find((o) => o.kind === kind && o.metadata.name === name);
  if (found === undefined) throw new Error(`${kind} ${name} not in ${file}`);
  return found;
}

export function reconcile(ctx: MemoryReconcileContext, kind: KaosKind, namespace: string, name: string, signal = new AbortController().signal): Promise<ReconcileResult> {
  return RECONCILERS[kind](ctx, { kind, namespace, name }, signal);
}

/** A reconciled object's status, as a plain record. */
export function statusOf(ctx: MemoryReconcileContext, kind: KaosKind, namespace: string, name: string): Record<string, unknown> {
  return (ctx.kaos(kind, namespace, name)?.status ?? {}) as Record<string, unknown>;
}

/** A Deployment's pod template annotations. */
export function templateAnnotations(deployment: ObjectLike | undefined): Record<string, string> {
  const spec = deployment?.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined;
  return spec?.template?.metadata?.annotations ?? {};
}

export interface ContainerView {
  name: string;
  image?: string;
  args?: string[];
  command?: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
}

export function podSpecOf(deployment: ObjectLike | undefined): { containers: ContainerView[]; initContainers?: ContainerView[]; volumes?: { name: string }[]; serviceAccountName?: string } {
  const spec = deployment?.spec as { template?: { spec?: { containers: ContainerView[] } } } | undefined;
  const pod = spec?.template?.spec;
  if (pod === undefined) throw new Error('no pod spec');
  return pod;
}

/** A Deployment status with `ready` ready replicas of 1. */
export function deploymentStatus(ready: number): Record<string, unknown> {
  return { replicas: 1, readyReplicas: ready, availableReplicas: ready, updatedReplicas: 1 };
}

export const owner = (kind: KaosKind, name: string, uid: string) => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind,
  name,
  uid,
  controller: true,
  blockOwnerDeletion: true,
});
