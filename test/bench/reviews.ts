// Realistic AdmissionReviews for the benchmark, built from KAOS sample 2 (a coordinator Agent
// with peers and an MCPServer, a Hosted ModelAPI) the way kube-apiserver sends them after
// `kubectl apply`: server-set metadata, managedFields, the last-applied annotation, userInfo
// and CreateOptions. Mutate bodies carry the objects as written; validate bodies carry them as
// the mutating webhook left them.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { GROUP, KIND_NAMES, VERSION, type KaosKind } from '../../src/api/kinds.ts';
import type { KubeObject } from '../../src/api/lookup.ts';
import type { WebhookType } from '../../src/admission/types.ts';

export const SAMPLE = new URL('../fixtures/samples/2-multi-agent-mcp.yaml', import.meta.url);

/** Every object of the sample, as written. */
export function sampleObjects(): KubeObject[] {
  return parseAllDocuments(readFileSync(SAMPLE, 'utf8')).flatMap((doc) => {
    const object = doc.toJS() as KubeObject | null;
    return object === null ? [] : [object];
  });
}

/** The object as the API server holds it at admission time of a `kubectl apply` create. */
export function asServerSees(object: KubeObject, index: number): KubeObject {
  const metadata = object.metadata ?? {};
  return {
    ...object,
    metadata: {
      ...metadata,
      annotations: {
        ...(metadata.annotations ?? {}),
        'kubectl.kubernetes.io/last-applied-configuration': `${JSON.stringify(object)}\n`,
      },
      uid: `7b2f0f5e-0c55-4bd0-9a3c-1f6d7a5e00${String(index).padStart(2, '0')}`,
      creationTimestamp: '2025-01-01T00:00:00Z',
      generation: 1,
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: `${GROUP}/${VERSION}`,
          time: '2025-01-01T00:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } },
            'f:spec': Object.fromEntries(Object.keys((object.spec as Record<string, unknown>) ?? {}).map((k) => [`f:${k}`, {}])),
          },
        },
      ],
    },
  };
}

export function admissionReview(kind: KaosKind, object: KubeObject, index: number): string {
  const gvk = { group: GROUP, version: VERSION, kind };
  const gvr = { group: GROUP, version: VERSION, resource: KIND_NAMES[kind].plural };
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `0d9a6c1e-3b7f-4c2a-8e5d-${String(index).padStart(12, '0')}`,
      kind: gvk,
      resource: gvr,
      requestKind: gvk,
      requestResource: gvr,
      name: object.metadata?.name,
      namespace: object.metadata?.namespace,
      operation: 'CREATE',
      userInfo: { username: 'kubernetes-admin', groups: ['kubeadm:cluster-admins', 'system:authenticated'] },
      object,
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1', fieldManager: 'kubectl-client-side-apply', fieldValidation: 'Strict' },
    },
  });
}

export interface BenchRequest {
  method: 'POST';
  path: string;
  headers: Record<string, string>;
  body: string;
  kind: KaosKind;
  type: WebhookType;
}
