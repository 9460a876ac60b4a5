// The one AdmissionRequest builder of the tests, and the AdmissionReview envelope around it.
import type { AdmissionRequest } from '../../src/admission/types.ts';
import { GROUP, KIND_NAMES, VERSION, type KaosKind } from '../../src/api/kinds.ts';
import type { KubeObject } from '../../src/api/lookup.ts';

/** Namespace of a request whose object names none. */
export const REQUEST_NAMESPACE = 'ns';

const SAMPLE_SPECS: Readonly<Record<KaosKind, Record<string, unknown>>> = {
  Agent: { modelAPI: 'm1' },
  ModelAPI: { mode: 'Proxy', proxyConfig: { model: 'x' } },
  MCPServer: { type: 'python-runtime' },
  MemoryStore: { storage: { type: 'local' }, models: { summarization: { modelAPI: 'm1', model: 'x' }, embedding: { modelAPI: 'm1', model: 'x' } } },
  AccessGrant: { subjects: [{ kind: 'User', name: 'alice' }], resources: [{ kind: 'Agent', name: 'a1' }] },
};

/** A small valid object of `kind`: Agent `a1` in `ns1`, for tests about the protocol rather than the object. */
export function sampleObject(kind: KaosKind): KubeObject {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind,
    metadata: { name: 'a1', namespace: 'ns1' },
    spec: SAMPLE_SPECS[kind],
  };
}

/**
 * An AdmissionRequest for `object` as the API server sends it: CREATE, name and namespace from the
 * object, unless `extra` says otherwise. `object` undefined is a request without one (DELETE).
 */
export function admissionRequest(kind: KaosKind, object: KubeObject | undefined, extra: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    uid: 'b6f0c0b1-2b6a-4f4e-9f7b-9c1e1c1e1c1e',
    kind: { group: GROUP, version: VERSION, kind },
    resource: { group: GROUP, version: VERSION, resource: KIND_NAMES[kind].plural },
    name: object?.metadata?.name,
    namespace: object?.metadata?.namespace ?? REQUEST_NAMESPACE,
    operation: 'CREATE',
    object,
    ...extra,
  };
}

/** The AdmissionReview body the API server POSTs around `request`. */
export function review(request: unknown, apiVersion = 'admission.k8s.io/v1', kind = 'AdmissionReview'): string {
  return JSON.stringify({ apiVersion, kind, request });
}
