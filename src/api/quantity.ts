// resource.Quantity compared by value lives in the generic Kubernetes runtime (kube/quantity.ts);
// api/ and the layers above it read it through this name.
export * from '../kube/quantity.ts';
