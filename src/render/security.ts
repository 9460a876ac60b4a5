// The per-route policies of the security plane (docs/api.md, "Per-route SecurityPolicy and
// NetworkPolicy"): with security enabled, each workload with a Service gets a SecurityPolicy
// (Envoy Gateway) on its HTTPRoute — the ext_authz check, fail closed, and the JWT providers that
// verify agent and user tokens — and, unless switched off, a NetworkPolicy that lets only the
// gateway's and the operator's namespaces reach its pods. Both are named as the HTTPRoute and owned
// by the workload. Pure: what the settings and the discovered issuer say comes in as inputs.
import { goMarshal } from './go-json.ts';
import type { JwtProvider, NetworkPolicy, NetworkPolicyPeer, SecurityPolicy } from './k8s.ts';
import { childMeta, selectorLabels, type ParentIdentity } from './labels.ts';
import { routeName } from './names.ts';

/** What the security children read, derived from the settings (controller/security-inputs.ts). */
export interface SecurityInputs {
  /** Security enabled (a PDP or an ext_authz URL): without it, no policy at all. */
  readonly enabled: boolean;
  /** The ext_authz Service, from `name[.namespace]:port`. */
  readonly extAuthz: { readonly name: string; readonly namespace?: string; readonly port: number } | undefined;
  /** The ServiceAccount issuer and its keys (discovered): the `agent` JWT provider. */
  readonly agentIssuer: { readonly issuer: string; readonly jwks: unknown } | undefined;
  /** SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_AUDIENCE: what an agent token must be for. */
  readonly agentAudience: string;
  /** The user plane: the `user` JWT provider. */
  /** `jwksUri`: the setting, else the discovery document's; undefined while not discovered (the policy is then held: children.ts). */
  readonly user: { readonly issuer: string; readonly jwksUri: string | undefined; readonly audience: string } | undefined;
  /** NetworkPolicies (strict, or security enabled and not SECURITY_NETWORK_POLICY_DISABLED). */
  readonly networkPolicies: boolean;
  readonly egress: boolean;
  readonly gatewayNamespace: string;
  readonly operatorNamespace: string;
}

const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';
const namespacePeer = (namespace: string): NetworkPolicyPeer => ({ namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: namespace } } });
const distinct = (values: readonly string[]): string[] => [...new Set(values.filter((v) => v !== ''))];

/** The JWT providers: `agent` when the issuer is known, `user` with the user plane. */
function jwtProviders(inputs: SecurityInputs): JwtProvider[] {
  const providers: JwtProvider[] = [];
  if (inputs.agentIssuer !== undefined) {
    providers.push({
      name: 'agent',
      issuer: inputs.agentIssuer.issuer,
      audiences: [inputs.agentAudience],
      extractFrom: { headers: [{ name: 'x-agent-authorization', valuePrefix: 'Bearer ' }] },
      claimToHeaders: [{ claim: 'sub', header: 'x-agent-claim-sub' }],
      // As KAOS's json.Marshal writes the key set: the same bytes for the same keys.
      localJWKS: { type: 'Inline', inline: goMarshal(inputs.agentIssuer.jwks) },
    });
  }
  if (inputs.user !== undefined) {
    const audience = inputs.user.audience.trim();
    providers.push({
      name: 'user',
      issuer: inputs.user.issuer.trim(),
      ...(audience === '' ? {} : { audiences: [audience] }),
      ...(inputs.user.jwksUri === undefined ? {} : { remoteJWKS: { uri: inputs.user.jwksUri } }),
      claimToHeaders: [
        { claim: 'sub', header: 'x-user-claim-sub' },
        { claim: 'preferred_username', header: 'x-user-claim-username' },
      ],
    });
  }
  return providers;
}

/** The SecurityPolicy on the parent's HTTPRoute, or undefined without security. */
export function renderSecurityPolicy(parent: ParentIdentity, inputs: SecurityInputs): SecurityPolicy | undefined {
  if (!inputs.enabled) return undefined;
  const route = routeName(parent.kind, parent.name);
  const spec: SecurityPolicy['spec'] = { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: route }] };
  if (inputs.extAuthz !== undefined) {
    const { name, namespace, port } = inputs.extAuthz;
    spec.extAuth = {
      failOpen: false,
      headersToExtAuth: ['authorization', 'x-agent-authorization'],
      grpc: { backendRef: { group: '', kind: 'Service', name, port, ...(namespace === undefined ? {} : { namespace }) } },
    };
  }
  const providers = jwtProviders(inputs);
  if (providers.length > 0) spec.jwt = { providers };
  return { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'SecurityPolicy', metadata: childMeta(parent, route), spec };
}

/**
 * The NetworkPolicy of the parent's pods: ingress only from the gateway's namespace and (if
 * another) the operator's; with egress isolation, DNS in kube-system, those namespaces and the
 * ext_authz Service's, and for a ModelAPI (which calls providers outside) any address.
 */
export function renderNetworkPolicy(parent: ParentIdentity, inputs: SecurityInputs): NetworkPolicy | undefined {
  if (!inputs.networkPolicies) return undefined;
  const allowed = distinct([inputs.gatewayNamespace, inputs.operatorNamespace]);
  const spec: NetworkPolicy['spec'] = {
    podSelector: { matchLabels: selectorLabels(parent.kind, parent.name) },
    policyTypes: inputs.egress ? ['Ingress', 'Egress'] : ['Ingress'],
    ingress: [{ from: allowed.map(namespacePeer) }],
  };
  if (inputs.egress) {
    spec.egress = [
      { to: [namespacePeer('kube-system')], ports: [{ protocol: 'UDP', port: 53 }, { protocol: 'TCP', port: 53 }] },
      ...distinct([...allowed, inputs.extAuthz?.namespace ?? '']).map((ns) => ({ to: [namespacePeer(ns)] })),
      ...(parent.kind === 'ModelAPI' ? [{ to: [{ ipBlock: { cidr: '0.0.0.0/0' } }] }] : []),
    ];
  }
  return { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: childMeta(parent, routeName(parent.kind, parent.name)), spec };
}

/**
 * Both, for a parent whose Service exists (an Agent with `agentNetwork.expose: false` has neither
 * a Service nor a route to guard); each undefined when not desired.
 */
export function renderSecurityChildren(parent: ParentIdentity, exposed: boolean, inputs: SecurityInputs): { networkPolicy?: NetworkPolicy; securityPolicy?: SecurityPolicy } {
  if (!exposed) return {};
  const networkPolicy = renderNetworkPolicy(parent, inputs);
  const securityPolicy = renderSecurityPolicy(parent, inputs);
  return { ...(networkPolicy === undefined ? {} : { networkPolicy }), ...(securityPolicy === undefined ? {} : { securityPolicy }) };
}
