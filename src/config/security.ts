// The security plane's settings (docs/api.md, "Security settings"; every variable
// in docs/configuration.md): KAOS's SECURITY_* and AUTHZ_* names and defaults, parsed once, and the
// facts derived from them as KAOS derives them, each a pure function of the settings so that every
// layer asks the same question the same way.
import { dns1123SubdomainProblems } from '../api/name-validation.ts';
import { dns1123LabelProblems, parseNameList } from './workload.ts';

/** The one agent identity provider kaos-operator implements; unset: none. */
export const SERVICE_ACCOUNT_PROVIDER = 'serviceaccount';
export type IdentityProvider = typeof SERVICE_ACCOUNT_PROVIDER;

/** Who authors the policy data: the operator's projection, or the user by hand. */
export const POLICY_DATA_SOURCES = ['automated', 'manual'] as const;
export type PolicyDataSource = (typeof POLICY_DATA_SOURCES)[number];

/** The projected ServiceAccount token an Agent presents (docs/api.md, "Agent identity"). */
export interface ServiceAccountTokenSettings {
  readonly audience: string;
  readonly expirationSeconds: number;
  /** Absolute, normalized; its directory is mounted, its basename is the projected file. */
  readonly tokenPath: string;
  /** SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_ISSUER: replaces the discovered issuer; '' = discover. */
  readonly issuer: string;
  /** SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_JWKS: replaces the discovered keys; undefined = discover. */
  readonly jwks?: Readonly<Record<string, unknown>>;
}

/** A ConfigMap key named `<configmap>/<key>`. */
export interface ConfigMapKeyRef {
  readonly name: string;
  readonly key: string;
}

export interface SecurityConfig {
  /** SECURITY_PDP_ENABLED: the chart-managed OPA PDP, the default ext_authz backend. */
  readonly pdpEnabled: boolean;
  /** SECURITY_AGENT_AUTH_EXT_AUTHZ_URL as written (trimmed, `name[.ns]:port`); '' = none. */
  readonly extAuthzUrl: string;
  /** SECURITY_OPERATOR_NAMESPACE, else POD_NAMESPACE, else kaos-system. */
  readonly operatorNamespace: string;
  /** SECURITY_AGENT_AUTH_IDENTITY_PROVIDER; undefined: none. */
  readonly identityProvider?: IdentityProvider;
  readonly serviceAccount: ServiceAccountTokenSettings;
  readonly userAuth: {
    /** '' = the user plane is off. */
    readonly issuer: string;
    readonly audience: string;
    /** SECURITY_USER_AUTH_JWKS_URI; '' = the `jwks_uri` of the issuer's discovery document (controller/user-issuer.ts). */
    readonly jwksUri: string;
  };
  readonly gatewayNamespace: string;
  /** host[:port] of the gateway inside the cluster; '' = the Gateway's status address. */
  readonly gatewayHost: string;
  readonly gatewayRouting: boolean;
  readonly strictGatewayApi: boolean;
  readonly networkPolicy: { readonly disabled: boolean; readonly egress: boolean };
  readonly authorization: {
    readonly policyDataSource: PolicyDataSource;
    readonly policyRegoOverride: boolean;
    /** AUTHZ_POLICY_REGO_FROM; undefined: none. */
    readonly policyRegoFrom?: ConfigMapKeyRef;
  };
  readonly projection: {
    /** AUTHZ_POLICY_CONFIGMAP_NAME / _NAMESPACE; '' = unset. */
    readonly policyConfigMap: { readonly name: string; readonly namespace: string };
    /** AUTHZ_PROJECTION_NAMESPACES; empty = every watched namespace. */
    readonly namespaces: readonly string[];
  };
  /** AUTHZ_JWKS_REFRESH_INTERVAL, in seconds: how often discovered keys are fetched again. */
  readonly jwksRefreshIntervalSeconds: number;
}

export const SECURITY_DEFAULTS = {
  operatorNamespace: 'kaos-system',
  audience: 'kaos-gateway',
  expirationSeconds: 3600,
  tokenPath: '/var/run/secrets/kaos-agent/token',
  gatewayNamespace: 'envoy-gateway-system',
  jwksRefreshInterval: '10m',
  pdpService: 'kaos-pdp',
  pdpPort: 9191,
} as const;

/** What Kubernetes accepts for a projected token's expirationSeconds (below 600 it refuses the pod). */
const EXPIRATION_RANGE = { min: 600, max: 4_294_967_296 } as const;

/** KAOS's message for an identity provider this operator does not implement. */
export function unsupportedProviderMessage(value: string): string {
  return `SECURITY_AGENT_AUTH_IDENTITY_PROVIDER "${value}" is not supported by kaos-operator: only "serviceaccount" is implemented (oidc and aib need an external identity service)`;
}

export const TOKEN_EXCHANGE_MESSAGE =
  'TOKEN_EXCHANGE_ENABLED=true is not supported by kaos-operator: delegated token exchange needs the Agentic Identity Broker';

/** KAOS's AIB settings, which mean nothing without an identity broker: named, and warned about when set. */
export const IGNORED_AIB_SETTINGS = ['SECURITY_AGENT_AUTH_ISSUER', 'SECURITY_AGENT_AUTH_CREDENTIAL_SECRET_PREFIX'] as const;
/** Every variable with this prefix is one of the Agentic Identity Broker's. */
export const AIB_PREFIX = 'AIB_';

type Env = Readonly<Record<string, string | undefined>>;

/** Go's strconv.ParseBool on the trimmed value, false when it does not parse (KAOS's rule). */
export function goParseBool(raw: string | undefined): boolean {
  return /^(1|t|T|TRUE|true|True)$/.test((raw ?? '').trim());
}

const DURATION_UNIT_SECONDS: Readonly<Record<string, number>> = { h: 3600, m: 60, s: 1, ms: 0.001 };

/** `1h30m`, `10m`, `90s` → seconds; undefined when not such a duration. */
export function durationSeconds(raw: string): number | undefined {
  if (!/^([0-9]+(h|ms|m|s)){1,4}$/.test(raw)) return undefined;
  let total = 0;
  for (const m of raw.matchAll(/([0-9]+)(h|ms|m|s)/g)) total += Number(m[1]) * (DURATION_UNIT_SECONDS[m[2] ?? ''] ?? 0);
  return total;
}

/** A Service name: a DNS-1035 label (a lowercase letter first), as the API server requires of Services. */
const DNS1035_LABEL = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * A `name[.namespace[.svc…]]:port` ext_authz address's problem, or undefined when it is one. The
 * first label becomes a Service's name (a DNS-1035 label), the rest DNS-1123 labels: an IP address
 * such as 10.0.0.5:9191 is not a Service and would render a backendRef named `10` in namespace `0`.
 */
function hostPortProblem(value: string): string | undefined {
  const m = /^([^:]+):([0-9]+)$/.exec(value);
  const port = Number(m?.[2]);
  const [service = '', ...rest] = (m?.[1] ?? '').split('.');
  if (m === null || !DNS1035_LABEL.test(service) || rest.some((l) => dns1123LabelProblems(l).length > 0) || !(port >= 1 && port <= 65535)) {
    return 'must be a Service address name[.namespace]:port whose name is a Service name (a DNS-1035 label: a lowercase letter first; not an IP address), such as kaos-pdp.kaos-system.svc:9191';
  }
  return undefined;
}

/** An absolute token path's problem: a file in a directory other than `/`, no `.`/`..` or empty segments. */
function tokenPathProblem(value: string): string | undefined {
  if (!value.startsWith('/')) return 'must be an absolute path, such as /var/run/secrets/kaos-agent/token';
  const segments = value.slice(1).split('/');
  if (segments.length < 2 || segments.some((s) => s === '' || s === '.' || s === '..')) {
    return 'must name a file in a directory (the directory is mounted), without empty, "." or ".." segments';
  }
  return undefined;
}

function httpURLProblem(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? undefined : 'must be an http(s) URL';
  } catch {
    return 'must be an http(s) URL';
  }
}

/** The ServiceAccount token directory mounted in the agent container. */
export function tokenDirectory(tokenPath: string): string {
  return tokenPath.slice(0, tokenPath.lastIndexOf('/'));
}

/** The file name the projected token gets inside its directory. */
export function tokenFileName(tokenPath: string): string {
  return tokenPath.slice(tokenPath.lastIndexOf('/') + 1);
}

/** Parses the security plane's settings; each problem (naming its variable) goes to `problems`. */
export function parseSecurity(env: Env, problems: string[]): SecurityConfig {
  const trimmed = (name: string): string => (env[name] ?? '').trim();
  const checked = (name: string, value: string, problem: (v: string) => string | undefined): string => {
    if (value === '') return value;
    const p = problem(value);
    if (p !== undefined) problems.push(`${name}: ${p}, got "${value}"`);
    return p === undefined ? value : '';
  };
  const label = (v: string): string | undefined => (dns1123LabelProblems(v).length > 0 ? 'must be a namespace name (a DNS-1123 label)' : undefined);
  const subdomain = (v: string): string | undefined => (dns1123SubdomainProblems(v).length > 0 ? 'must be a ConfigMap name (a DNS-1123 subdomain)' : undefined);

  const provider = trimmed('SECURITY_AGENT_AUTH_IDENTITY_PROVIDER');
  let identityProvider: IdentityProvider | undefined;
  if (provider.toLowerCase() === SERVICE_ACCOUNT_PROVIDER) identityProvider = SERVICE_ACCOUNT_PROVIDER;
  else if (provider !== '') problems.push(unsupportedProviderMessage(provider));
  if (trimmed('TOKEN_EXCHANGE_ENABLED').toLowerCase() === 'true') problems.push(TOKEN_EXCHANGE_MESSAGE);

  const rawExpiration = trimmed('SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_EXPIRATION_SECONDS');
  let expirationSeconds: number = SECURITY_DEFAULTS.expirationSeconds;
  if (rawExpiration !== '') {
    const n = Number(rawExpiration);
    if (!/^[0-9]+$/.test(rawExpiration) || n < EXPIRATION_RANGE.min || n > EXPIRATION_RANGE.max) {
      problems.push(
        `SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_EXPIRATION_SECONDS: must be a whole number of seconds from ${EXPIRATION_RANGE.min} to ${EXPIRATION_RANGE.max} (Kubernetes refuses a shorter projected token), got "${rawExpiration}"`,
      );
    } else {
      expirationSeconds = n;
    }
  }
  const tokenPath = checked('SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_TOKEN_PATH', trimmed('SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_TOKEN_PATH'), tokenPathProblem) || SECURITY_DEFAULTS.tokenPath;

  const rawJwks = trimmed('SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_JWKS');
  let jwks: Record<string, unknown> | undefined;
  if (rawJwks !== '') {
    try {
      const parsed: unknown = JSON.parse(rawJwks);
      if (typeof parsed !== 'object' || parsed === null || !Array.isArray((parsed as { keys?: unknown }).keys)) throw new Error('no keys');
      jwks = parsed as Record<string, unknown>;
    } catch {
      problems.push('SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_JWKS: must be a JSON Web Key Set, a JSON object with a "keys" list');
    }
  }

  const userIssuer = checked('SECURITY_USER_AUTH_ISSUER', trimmed('SECURITY_USER_AUTH_ISSUER'), httpURLProblem);
  const userJwksUri = checked('SECURITY_USER_AUTH_JWKS_URI', trimmed('SECURITY_USER_AUTH_JWKS_URI'), httpURLProblem);

  const dataSource = trimmed('SECURITY_AUTHORIZATION_POLICY_DATA_SOURCE').toLowerCase() || 'automated';
  if (!(POLICY_DATA_SOURCES as readonly string[]).includes(dataSource)) {
    problems.push(`SECURITY_AUTHORIZATION_POLICY_DATA_SOURCE: must be one of ${POLICY_DATA_SOURCES.join(', ')}, got "${trimmed('SECURITY_AUTHORIZATION_POLICY_DATA_SOURCE')}"`);
  }

  const regoFrom = trimmed('AUTHZ_POLICY_REGO_FROM');
  let policyRegoFrom: ConfigMapKeyRef | undefined;
  if (regoFrom !== '') {
    const [name = '', key = '', ...rest] = regoFrom.split('/');
    if (rest.length > 0 || subdomain(name) !== undefined || !/^[-._a-zA-Z0-9]{1,253}$/.test(key)) {
      problems.push(`AUTHZ_POLICY_REGO_FROM: must be <configmap>/<key> (a ConfigMap name and one of its keys), got "${regoFrom}"`);
    } else {
      policyRegoFrom = { name, key };
    }
  }

  const rawInterval = trimmed('AUTHZ_JWKS_REFRESH_INTERVAL') || SECURITY_DEFAULTS.jwksRefreshInterval;
  let jwksRefreshIntervalSeconds = durationSeconds(SECURITY_DEFAULTS.jwksRefreshInterval) ?? 600;
  const interval = durationSeconds(rawInterval);
  if (interval === undefined || interval < 1 || interval > 86_400) {
    problems.push(`AUTHZ_JWKS_REFRESH_INTERVAL: must be a duration from 1s to 24h, such as 10m, got "${rawInterval}"`);
  } else {
    jwksRefreshIntervalSeconds = interval;
  }

  return {
    pdpEnabled: goParseBool(env['SECURITY_PDP_ENABLED']),
    extAuthzUrl: checked('SECURITY_AGENT_AUTH_EXT_AUTHZ_URL', trimmed('SECURITY_AGENT_AUTH_EXT_AUTHZ_URL'), hostPortProblem),
    operatorNamespace:
      checked('SECURITY_OPERATOR_NAMESPACE', trimmed('SECURITY_OPERATOR_NAMESPACE'), label) || trimmed('POD_NAMESPACE') || SECURITY_DEFAULTS.operatorNamespace,
    ...(identityProvider === undefined ? {} : { identityProvider }),
    serviceAccount: {
      audience: trimmed('SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_AUDIENCE') || SECURITY_DEFAULTS.audience,
      expirationSeconds,
      tokenPath,
      issuer: trimmed('SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_ISSUER'),
      ...(jwks === undefined ? {} : { jwks }),
    },
    userAuth: {
      issuer: userIssuer,
      audience: trimmed('SECURITY_USER_AUTH_AUDIENCE'),
      jwksUri: userJwksUri,
    },
    gatewayNamespace: checked('SECURITY_GATEWAY_NAMESPACE', trimmed('SECURITY_GATEWAY_NAMESPACE'), label) || SECURITY_DEFAULTS.gatewayNamespace,
    gatewayHost: checked('SECURITY_GATEWAY_HOST', trimmed('SECURITY_GATEWAY_HOST'), (v) => (/^[^\s/:]+(:[0-9]{1,5})?$/.test(v) ? undefined : 'must be a host[:port], without a scheme or path')),
    gatewayRouting: goParseBool(env['SECURITY_GATEWAY_ROUTING_ENABLED']),
    strictGatewayApi: goParseBool(env['SECURITY_STRICT_GATEWAY_API_ENABLED']),
    networkPolicy: {
      disabled: goParseBool(env['SECURITY_NETWORK_POLICY_DISABLED']),
      egress: goParseBool(env['SECURITY_NETWORK_POLICY_EGRESS_ENABLED']),
    },
    authorization: {
      policyDataSource: (POLICY_DATA_SOURCES as readonly string[]).includes(dataSource) ? (dataSource as PolicyDataSource) : 'automated',
      policyRegoOverride: goParseBool(env['SECURITY_AUTHORIZATION_POLICY_REGO_OVERRIDE']),
      ...(policyRegoFrom === undefined ? {} : { policyRegoFrom }),
    },
    projection: {
      policyConfigMap: {
        name: checked('AUTHZ_POLICY_CONFIGMAP_NAME', trimmed('AUTHZ_POLICY_CONFIGMAP_NAME'), subdomain),
        namespace: checked('AUTHZ_POLICY_CONFIGMAP_NAMESPACE', trimmed('AUTHZ_POLICY_CONFIGMAP_NAMESPACE'), label),
      },
      namespaces: parseNameList('AUTHZ_PROJECTION_NAMESPACES', env['AUTHZ_PROJECTION_NAMESPACES'] ?? '', problems, dns1123LabelProblems),
    },
    jwksRefreshIntervalSeconds,
  };
}

// The derived facts, as KAOS derives them. Nothing else decides these questions.

/** Security enabled: the PDP on, or an ext_authz backend named. */
export function securityEnabled(s: SecurityConfig): boolean {
  return s.pdpEnabled || s.extAuthzUrl !== '';
}

/** The user plane: a user issuer configured. */
export function userPlaneEnabled(s: SecurityConfig): boolean {
  return s.userAuth.issuer !== '';
}

/**
 * User identity enforced: security enabled with the user plane. Memory then requires a principal,
 * and an Agent may read at `user` scope.
 */
export function userIdentityEnforced(s: SecurityConfig): boolean {
  return securityEnabled(s) && userPlaneEnabled(s);
}

/** ServiceAccount identity: the provider alone decides, security enabled or not. */
export function serviceAccountIdentity(s: SecurityConfig): boolean {
  return s.identityProvider === SERVICE_ACCOUNT_PROVIDER;
}

/** AccessGrant projection active: the policy ConfigMap named, data source automated, no rego override. */
export function accessGrantProjectionActive(s: SecurityConfig): boolean {
  const { name, namespace } = s.projection.policyConfigMap;
  return name !== '' && namespace !== '' && s.authorization.policyDataSource === 'automated' && !s.authorization.policyRegoOverride;
}

/** The ext_authz backend `name[.ns]:port`: the one named, else with the PDP its Service; '' = none. */
export function extAuthzAddress(s: SecurityConfig): string {
  if (s.extAuthzUrl !== '') return s.extAuthzUrl;
  return s.pdpEnabled ? `${SECURITY_DEFAULTS.pdpService}.${s.operatorNamespace}.svc:${SECURITY_DEFAULTS.pdpPort}` : '';
}

/** NetworkPolicies per route: strict gateway-only traffic, or security enabled and not switched off. */
export function networkPoliciesEnabled(s: SecurityConfig): boolean {
  return s.strictGatewayApi || (securityEnabled(s) && !s.networkPolicy.disabled);
}

/** Egress isolation too: only with NetworkPolicies, and asked for. */
export function networkPolicyEgressEnabled(s: SecurityConfig): boolean {
  return networkPoliciesEnabled(s) && s.networkPolicy.egress;
}

/** An Agent's dependency URLs through the gateway: routing asked for, or strict gateway-only traffic. */
export function gatewayRoutingEnabled(s: SecurityConfig): boolean {
  return s.gatewayRouting || s.strictGatewayApi;
}

/**
 * What the operator ignores and says so at start: KAOS's AIB settings, which need an identity
 * broker this operator does not run (KAOS itself ignores them under ServiceAccount identity).
 */
export function securityWarnings(env: Env, s: SecurityConfig): string[] {
  const set = [
    ...IGNORED_AIB_SETTINGS.filter((name) => (env[name] ?? '').trim() !== ''),
    ...Object.keys(env).filter((name) => name.startsWith(AIB_PREFIX) && (env[name] ?? '').trim() !== '').sort(),
  ];
  const under = serviceAccountIdentity(s) ? 'SECURITY_AGENT_AUTH_IDENTITY_PROVIDER=serviceaccount' : 'no identity provider';
  return set.map((name) => `${name} is ignored under ${under}: it configures the Agentic Identity Broker, which kaos-operator does not run`);
}
