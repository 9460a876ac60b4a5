// AccessGrant's rules that are data (docs/api.md, "AccessGrant"): the gates a grant must pass to be
// enforced, in the order its `Enforced` condition reports them, with KAOS's reasons and messages;
// the identities of KAOS objects in the policy data; the resources a grant names. Pure: admission
// (its warnings), the controller (the condition) and the projection (which grants reach
// `user_grants`) read the same rows.
import type { AccessGrantResourceKind } from './enums.ts';
import { asArray, asRecord, asString, isSet } from './json.ts';
import type { WorkloadKind } from './kinds.ts';

/** The condition type of an AccessGrant's status. */
export const ENFORCED_CONDITION = 'Enforced';

/** What the gates read: facts derived from the operator's settings (docs/configuration.md). */
export interface GrantGateFacts {
  /** A PDP, or an ext_authz URL, is configured. */
  readonly securityEnabled: boolean;
  /** A user issuer is configured. */
  readonly userPlaneEnabled: boolean;
  /** The policy ConfigMap is named and its data is the operator's to write. */
  readonly projectionActive: boolean;
}

/** One row of the Enforced condition: its status, reason and message. */
export interface EnforcedState {
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** The gates, first failing one wins. */
const GATES: ReadonlyArray<{ passes: (facts: GrantGateFacts) => boolean; state: EnforcedState }> = [
  {
    passes: (f) => f.securityEnabled,
    state: { status: 'False', reason: 'AuthorizationDisabled', message: 'Gateway authorization is not enabled; this AccessGrant is not enforced' },
  },
  {
    passes: (f) => f.userPlaneEnabled,
    state: { status: 'False', reason: 'NoUserIdentityProvider', message: 'A user identity provider must be configured for this AccessGrant to be enforced' },
  },
  {
    passes: (f) => f.projectionActive,
    state: { status: 'False', reason: 'PolicyProjectionInactive', message: 'Automated policy projection must be active for this AccessGrant to be enforced' },
  },
];

/** A pass of the projection failed: what every grant past the gates then reports. */
export const PROJECTION_FAILED: EnforcedState = {
  status: 'False',
  reason: 'ProjectionFailed',
  message: 'Policy projection failed; this AccessGrant is not currently enforced',
};

/** The policy data holding the grant was written. */
export const ENFORCED: EnforcedState = {
  status: 'True',
  reason: 'Enforced',
  message: 'AccessGrant is included in the successfully projected authorization policy',
};

/** The first gate the settings fail, or undefined when every grant can be enforced. */
export function failingGate(facts: GrantGateFacts): EnforcedState | undefined {
  return GATES.find((gate) => !gate.passes(facts))?.state;
}

/** The path segment of each kind in a KAOS identity (`kaos://agent/<ns>/<name>`). */
const ID_SEGMENT: Readonly<Record<WorkloadKind, string>> = {
  Agent: 'agent',
  MCPServer: 'mcpserver',
  ModelAPI: 'modelapi',
  MemoryStore: 'memorystore',
};

/** `kaos://<agent|mcpserver|modelapi|memorystore>/<namespace>/<name>`: an object's identity in the policy data. */
export function kaosId(kind: WorkloadKind, namespace: string, name: string): string {
  return `kaos://${ID_SEGMENT[kind]}/${namespace}/${name}`;
}

/** A resource a grant names by kind and name (docs/api.md: `kind` and `name` together). */
export interface NamedResource {
  readonly index: number;
  readonly kind: AccessGrantResourceKind;
  readonly name: string;
}

/** The resources a grant's spec names by kind and name, in order; entries of another form are left out. */
export function namedResources(spec: unknown): NamedResource[] {
  const out: NamedResource[] = [];
  (asArray(asRecord(spec)?.resources) ?? []).forEach((entry, index) => {
    const r = asRecord(entry);
    const kind = asString(r?.kind);
    const name = asString(r?.name);
    if (r === undefined || kind === undefined || name === undefined || name === '' || isSet(r.selector)) return;
    out.push({ index, kind: kind as AccessGrantResourceKind, name });
  });
  return out;
}
