// The two time formats of the Kubernetes API, written once: metav1.Time (conditions'
// lastTransitionTime) and metav1.MicroTime (Leases, events.k8s.io Events). A shared leaf (src/leaves/):
// the generic kube/ runtime and the controller both write them.

/** metav1.Time's text: RFC 3339 in UTC, whole seconds. */
export function formatTime(now: Date | number): string {
  return new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** metav1.MicroTime's text: RFC 3339 in UTC with exactly six fractional digits. */
export function formatMicroTime(now: Date | number): string {
  return new Date(now).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
