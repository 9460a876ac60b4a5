// The subset of core/v1, apps/v1, policy/v1 and gateway.networking.k8s.io/v1 that render emits.
// Plain JSON shapes (not @kubernetes/client-node classes) so that rendered objects can be
// hashed, compared and sent with server-side apply as they are. Where user content passes
// through verbatim (valueFrom, resources, anything merged in from spec.podSpec), the type is
// deliberately loose: the API server validates it, render only carries it.

import type { ObjectMeta, OwnerReference } from '../api/meta.ts';

export type { ObjectMeta, OwnerReference };

export interface SecretKeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

export interface EnvVar {
  name: string;
  value?: string;
  /** EnvVarSource, passed through from the user (or a generated secretKeyRef). */
  valueFrom?: object;
}

export interface ContainerPort {
  name: string;
  containerPort: number;
  protocol: 'TCP';
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  [key: string]: unknown;
}

export interface Probe {
  httpGet?: { path: string; port: number; scheme: 'HTTP' };
  tcpSocket?: { port: number };
  initialDelaySeconds: number;
  periodSeconds: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
}

export interface Container {
  name: string;
  image: string;
  imagePullPolicy: 'IfNotPresent';
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: ContainerPort[];
  volumeMounts?: VolumeMount[];
  resources?: object;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  /** spec.podSpec may add any container field. */
  [key: string]: unknown;
}

export interface Volume {
  name: string;
  configMap?: { name: string };
  secret?: { secretName: string; items: { key: string; path: string }[]; optional?: boolean };
  emptyDir?: Record<string, never>;
  persistentVolumeClaim?: { claimName: string };
  projected?: { sources: { serviceAccountToken: { audience: string; expirationSeconds: number; path: string } }[] };
  [key: string]: unknown;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  /** spec.podSpec may add any pod field (nodeSelector, tolerations, securityContext, ...). */
  [key: string]: unknown;
}

export interface Deployment {
  apiVersion: 'apps/v1';
  kind: 'Deployment';
  metadata: ObjectMeta;
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    /** Absent: the Deployment's default, RollingUpdate. */
    strategy?: { type: 'Recreate' };
    template: {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: PodSpec;
    };
  };
}

export interface ServicePort {
  name: 'http';
  port: number;
  targetPort: number;
  protocol: 'TCP';
}

export interface Service {
  apiVersion: 'v1';
  kind: 'Service';
  metadata: ObjectMeta;
  spec: { type: 'ClusterIP'; selector: Record<string, string>; ports: ServicePort[] };
}

export interface ConfigMap {
  apiVersion: 'v1';
  kind: 'ConfigMap';
  metadata: ObjectMeta;
  data: Record<string, string>;
}

export interface HTTPRouteRule {
  matches: { path: { type: 'PathPrefix'; value: string } }[];
  filters: {
    type: 'URLRewrite';
    urlRewrite: { path: { type: 'ReplacePrefixMatch'; replacePrefixMatch: string } };
  }[];
  backendRefs: { name: string; port: number }[];
  timeouts?: { request: string };
}

export interface HTTPRoute {
  apiVersion: 'gateway.networking.k8s.io/v1';
  kind: 'HTTPRoute';
  metadata: ObjectMeta;
  spec: {
    parentRefs: { name: string; namespace: string }[];
    rules: HTTPRouteRule[];
  };
}

export interface PersistentVolumeClaim {
  apiVersion: 'v1';
  kind: 'PersistentVolumeClaim';
  metadata: ObjectMeta;
  /** No storageClassName: the cluster's default StorageClass provides it. */
  spec: { accessModes: ['ReadWriteOnce']; resources: { requests: { storage: string } } };
}

export interface PodDisruptionBudget {
  apiVersion: 'policy/v1';
  kind: 'PodDisruptionBudget';
  metadata: ObjectMeta;
  spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } };
}

/** One `Resource` metric of an HPA: average utilization of a resource, in percent of its request. */
export interface ResourceUtilizationMetric {
  type: 'Resource';
  resource: { name: string; target: { type: 'Utilization'; averageUtilization: number } };
}

export interface HorizontalPodAutoscaler {
  apiVersion: 'autoscaling/v2';
  kind: 'HorizontalPodAutoscaler';
  metadata: ObjectMeta;
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1'; kind: 'Deployment'; name: string };
    minReplicas: number;
    maxReplicas: number;
    metrics: ResourceUtilizationMetric[];
  };
}

/** A NetworkPolicy peer selecting whole namespaces, or an address range. */
export type NetworkPolicyPeer = { namespaceSelector: { matchLabels: Record<string, string> } } | { ipBlock: { cidr: string } };

export interface NetworkPolicy {
  apiVersion: 'networking.k8s.io/v1';
  kind: 'NetworkPolicy';
  metadata: ObjectMeta;
  spec: {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: ('Ingress' | 'Egress')[];
    ingress: { from: NetworkPolicyPeer[] }[];
    egress?: { to: NetworkPolicyPeer[]; ports?: { protocol: 'UDP' | 'TCP'; port: number }[] }[];
  };
}

/** A JWT provider of a SecurityPolicy (Envoy Gateway's JWTProvider, the fields KAOS sets). */
export interface JwtProvider {
  name: string;
  issuer: string;
  audiences?: string[];
  extractFrom?: { headers: { name: string; valuePrefix: string }[] };
  claimToHeaders: { claim: string; header: string }[];
  localJWKS?: { type: 'Inline'; inline: string };
  remoteJWKS?: { uri: string };
}

export interface SecurityPolicy {
  apiVersion: 'gateway.envoyproxy.io/v1alpha1';
  kind: 'SecurityPolicy';
  metadata: ObjectMeta;
  spec: {
    targetRefs: { group: 'gateway.networking.k8s.io'; kind: 'HTTPRoute'; name: string }[];
    extAuth?: {
      failOpen: false;
      headersToExtAuth: string[];
      grpc: { backendRef: { group: ''; kind: 'Service'; name: string; port: number; namespace?: string } };
    };
    jwt?: { providers: JwtProvider[] };
  };
}

/** An Agent's own identity (docs/api.md, "Agent identity by ServiceAccount"). */
export interface ServiceAccount {
  apiVersion: 'v1';
  kind: 'ServiceAccount';
  metadata: ObjectMeta;
  automountServiceAccountToken: false;
}

/** Every child kind render can emit. */
export type Child =
  | Deployment
  | Service
  | ConfigMap
  | HTTPRoute
  | PersistentVolumeClaim
  | PodDisruptionBudget
  | HorizontalPodAutoscaler
  | ServiceAccount
  | NetworkPolicy
  | SecurityPolicy;
