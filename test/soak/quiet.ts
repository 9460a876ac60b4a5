// The quiet window's verdict from the audit log of its time: while nobody else changes the
// cluster, the operator must write nothing. A window in which another user wrote (a PVC bound by
// kube-controller-manager's provisioner, pods turned ready by kwok and the Deployment status that
// follows) is disturbed: the operator must follow such a change, so the window does not count.
import { othersWrites, writesBy, type AuditEvent } from '../e2e/support/lifecycle.ts';

/**
 * Writes of others that do not disturb a window: leader elections' and kwok's Leases, kwok's node
 * heartbeats, Events, and the IPAddresses of Services gone that the API server's own repair loop
 * releases (none of which the operator reads).
 */
const NOT_DISTURBING: ReadonlySet<string> = new Set(['leases', 'nodes', 'events', 'ipaddresses']);

export interface QuietVerdict {
  /** Others' writes that the operator may have had to follow; the window counts only without them. */
  readonly disturbedBy: readonly AuditEvent[];
  /** The operator's writes but its Lease renewals: each one a violation of a window that counts. */
  readonly operatorWrites: readonly AuditEvent[];
  readonly leaseWrites: number;
}

export function quietVerdict(events: readonly AuditEvent[], operatorUser: string): QuietVerdict {
  const writes = writesBy(events, operatorUser);
  const operatorWrites = writes.filter((e) => e.objectRef?.resource !== 'leases');
  return {
    disturbedBy: othersWrites(events, operatorUser).filter((e) => !NOT_DISTURBING.has(e.objectRef?.resource ?? '')),
    operatorWrites,
    leaseWrites: writes.length - operatorWrites.length,
  };
}
