// What the per-route policies read (render/security.ts's SecurityInputs), from the settings and
// the discovered ServiceAccount issuer: each fact asked of config/security.ts, never worked out again.
import {
  extAuthzAddress,
  networkPoliciesEnabled,
  networkPolicyEgressEnabled,
  securityEnabled,
  serviceAccountIdentity,
  userPlaneEnabled,
  type SecurityConfig,
} from '../config/security.ts';
import type { IssuerKeys } from '../render/authz-data.ts';
import type { SecurityInputs } from '../render/security.ts';

/**
 * Pure: the ext_authz Service of a `name[.namespace[.svc…]]:port` address, as KAOS reads it (the
 * first label is the Service, the second its namespace); undefined for none.
 */
export function extAuthzService(address: string): SecurityInputs['extAuthz'] {
  const m = /^([^:]+):([0-9]+)$/.exec(address.trim());
  if (m === null) return undefined;
  const [name = '', namespace] = (m[1] ?? '').split('.');
  return { name, ...(namespace === undefined || namespace === '' ? {} : { namespace }), port: Number(m[2]) };
}

/**
 * Pure: the inputs of the per-route policies. The `agent` JWT provider needs ServiceAccount identity
 * and its issuer; the `user` provider the URI of the user issuer's keys (undefined: not discovered yet).
 */
export function securityInputs(s: SecurityConfig, issuer: IssuerKeys | undefined, userJwksUri?: string): SecurityInputs {
  return {
    enabled: securityEnabled(s),
    extAuthz: extAuthzService(extAuthzAddress(s)),
    agentIssuer: serviceAccountIdentity(s) ? issuer : undefined,
    agentAudience: s.serviceAccount.audience,
    user: userPlaneEnabled(s) ? { issuer: s.userAuth.issuer, jwksUri: s.userAuth.jwksUri !== '' ? s.userAuth.jwksUri : userJwksUri, audience: s.userAuth.audience } : undefined,
    networkPolicies: networkPoliciesEnabled(s),
    egress: networkPolicyEgressEnabled(s),
    gatewayNamespace: s.gatewayNamespace,
    operatorNamespace: s.operatorNamespace,
  };
}
