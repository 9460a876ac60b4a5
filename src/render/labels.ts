// Labels, owner references and object metadata shared by every child (docs/api.md, "Common behaviour").
import { API_VERSION, type WorkloadKind } from '../api/kinds.ts';
import type { MetadataInput } from './inputs.ts';
import type { ObjectMeta, OwnerReference } from './k8s.ts';
import { APP_LABEL } from './names.ts';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'kaos-operator';

/**
 * `app: <kind>` and `<kind>: <name>`: the Deployment selector, the Service selector and the
 * pod labels. Never anything else, because a Deployment's selector is immutable.
 */
export function selectorLabels(kind: WorkloadKind, name: string): Record<string, string> {
  const app = APP_LABEL[kind];
  return { app, [app]: name };
}

/** Labels on a child's own metadata: the selector labels plus managed-by. */
export function childLabels(kind: WorkloadKind, name: string): Record<string, string> {
  return { ...selectorLabels(kind, name), [MANAGED_BY_LABEL]: MANAGED_BY_VALUE };
}

/** The parent's identity as render needs it; missing fields read as '' (see parentIdentity). */
export interface ParentIdentity {
  readonly kind: WorkloadKind;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
}

/**
 * Objects from the API server always carry name, namespace and uid; a CREATE seen by the
 * webhook has no uid yet (and may lack namespace). Render stays total and lets the API server
 * reject an ownerReference without uid, rather than throwing in pure code.
 */
export function parentIdentity(kind: WorkloadKind, metadata: MetadataInput | undefined): ParentIdentity {
  return {
    kind,
    name: metadata?.name ?? '',
    namespace: metadata?.namespace ?? '',
    uid: metadata?.uid ?? '',
  };
}

/** The controller reference that makes garbage collection cascade from the parent. */
export function ownerReference(parent: ParentIdentity): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: parent.kind,
    name: parent.name,
    uid: parent.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Metadata of a child named `childName`, owned by `parent`. */
export function childMeta(parent: ParentIdentity, childName: string): ObjectMeta {
  return {
    name: childName,
    namespace: parent.namespace,
    labels: childLabels(parent.kind, parent.name),
    ownerReferences: [ownerReference(parent)],
  };
}
