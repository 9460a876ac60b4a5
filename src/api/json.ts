// JSON reading lives in the generic Kubernetes runtime (kube/json.ts), which imports nothing of
// KAOS; api/ and the layers above it read it through this name.
export * from '../kube/json.ts';
