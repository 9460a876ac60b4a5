// What the security settings make of every AccessGrant (docs/api.md, "AccessGrant"): the facts its
// Enforced condition's gates read, and the namespaces the projection reads. Both admission (its
// warnings) and the controller (the condition, the projection) ask here.
import type { GrantGateFacts } from '../api/access-grants.ts';
import { accessGrantProjectionActive, securityEnabled, userPlaneEnabled, type SecurityConfig } from './security.ts';

export function grantGateFacts(s: SecurityConfig): GrantGateFacts {
  return { securityEnabled: securityEnabled(s), userPlaneEnabled: userPlaneEnabled(s), projectionActive: accessGrantProjectionActive(s) };
}

/** AUTHZ_PROJECTION_NAMESPACES; undefined when unset (every namespace the operator watches). */
export function projectionNamespaces(s: SecurityConfig): readonly string[] | undefined {
  return s.projection.namespaces.length === 0 ? undefined : s.projection.namespaces;
}
