// The metav1 shapes (k8s.io/apimachinery/pkg/apis/meta/v1) every layer speaks: objects as read,
// metadata as written, and Status in both directions. One home, so admission, render, the
// runtime and the controller cannot drift apart; it imports nothing (api/meta.ts re-exports it).

/** The part of any Kubernetes object that admission and the controller read generically. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    [key: string]: unknown;
  };
  spec?: unknown;
  status?: unknown;
  [key: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
  blockOwnerDeletion: boolean;
}

/** The metadata of an object the operator writes: always all of these. */
export interface ObjectMeta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  ownerReferences: OwnerReference[];
}

/**
 * metav1.StatusCause on the wire: Go's field `Type` is serialized as `reason` (json:"reason"), so
 * that is the key the API server and its clients read the FieldValue* type from.
 */
export interface StatusCause { reason: string; field?: string; message: string }

/** metav1.Status as the operator sends it (an admission denial): every field it needs is set. */
export interface Status {
  metadata?: Record<string, never>;
  status: 'Success' | 'Failure';
  message: string;
  reason: string;
  code: number;
  details?: { name?: string; group?: string; kind?: string; causes?: StatusCause[] };
}

/** metav1.StatusDetails as the API server sends it: any field may be missing. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: Array<Partial<StatusCause>>;
  retryAfterSeconds?: number;
}

/** metav1.Status as received: the body of every API error response and of watch ERROR events. */
export interface ApiStatus {
  kind?: 'Status';
  apiVersion?: string;
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  code?: number;
  details?: StatusDetails;
}

/** An API server's refusal of a request: its Status, with the fields every refusal carries. */
export type Refusal = Required<Pick<ApiStatus, 'code' | 'reason' | 'message'>> & Pick<ApiStatus, 'details'>;
