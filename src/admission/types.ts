// The admission.k8s.io/v1 AdmissionReview protocol, as far as kaos-operator reads and writes it.
import type { Operation } from 'fast-json-patch';
import type { KaosKind } from '../api/kinds.ts';
import type { Status } from '../api/meta.ts';

export interface GroupVersionKind { group: string; version: string; kind: string }
export interface GroupVersionResource { group: string; version: string; resource: string }

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  name?: string;
  namespace?: string;
  operation: AdmissionOperation;
  userInfo?: { username?: string; uid?: string; groups?: string[] };
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  options?: unknown;
}

export type { Status, StatusCause } from '../api/meta.ts';

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: Status;
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
}

export interface AdmissionReviewIn {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request: AdmissionRequest;
}

export interface AdmissionReviewOut {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

/**
 * What a webhook handler decides about one request. The protocol layer turns it into an
 * AdmissionResponse (uid echoed, patch base64-encoded, no patch when `patch` is empty).
 */
export interface AdmissionDecision {
  allowed: boolean;
  /** Set when denied: a metav1.Status in Kubernetes' own shape (422 Invalid for field errors). */
  status?: Status;
  /** JSON Patch against request.object; omitted or empty means "no change". */
  patch?: Operation[];
  /** Each ≤ 120 characters, as kubectl prints them after "Warning: ". */
  warnings?: string[];
}

export type WebhookType = 'mutate' | 'validate';

export type AdmissionHandler = (request: AdmissionRequest) => Promise<AdmissionDecision>;
/** Called once per endpoint when the server is built. */
export type HandlerFactory = (kind: KaosKind, type: WebhookType) => AdmissionHandler;
