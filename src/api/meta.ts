// The metav1 shapes live in the generic Kubernetes runtime (kube/meta.ts), which imports nothing
// of KAOS; api/ and the layers above it read them through this name.
export type * from '../kube/meta.ts';
