// Agent identity by ServiceAccount (docs/api.md, "Agent identity by ServiceAccount"): under
// SECURITY_AGENT_AUTH_IDENTITY_PROVIDER=serviceaccount, security enabled or not, every Agent gets
// a ServiceAccount of its own, its pod runs under it with a projected token the agent presents
// to the gateway and its memory store, and its env says who it is and where the token is. Under
// another provider none of it renders, so the pod spec is what it was without the security plane.
import { serviceAccountIdentity, tokenDirectory, tokenFileName, type SecurityConfig } from '../config/security.ts';
import { env } from './container.ts';
import type { Container, EnvVar, PodSpec, ServiceAccount, Volume, VolumeMount } from './k8s.ts';
import { childMeta, type ParentIdentity } from './labels.ts';
import { agentServiceAccountName } from './names.ts';

/** The projected token's volume; before any other volume of the pod. */
export const AGENT_TOKEN_VOLUME = 'agent-auth-token';
/** The label that names the Agent on its ServiceAccount (KAOS's). */
export const AGENT_LABEL = 'kaos.tools/agent';

/** An Agent's identity: `kaos://agent/<namespace>/<name>`. */
export function agentIdentityURI(namespace: string, name: string): string {
  return `kaos://agent/${namespace}/${name}`;
}

/** AGENT_AUTH_IDENTITY and AGENT_AUTH_TOKEN_FILE under ServiceAccount identity, else nothing. */
export function agentAuthEnv(parent: Pick<ParentIdentity, 'name' | 'namespace'>, security: SecurityConfig): EnvVar[] {
  if (!serviceAccountIdentity(security)) return [];
  return [env('AGENT_AUTH_IDENTITY', agentIdentityURI(parent.namespace, parent.name)), env('AGENT_AUTH_TOKEN_FILE', security.serviceAccount.tokenPath)];
}

/** The Agent's ServiceAccount `kaos-agent-<name>`, under ServiceAccount identity; else undefined. */
export function renderAgentServiceAccount(parent: ParentIdentity, security: SecurityConfig): ServiceAccount | undefined {
  if (!serviceAccountIdentity(security)) return undefined;
  const metadata = childMeta(parent, agentServiceAccountName(parent.name));
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { ...metadata, labels: { ...metadata.labels, [AGENT_LABEL]: parent.name } },
    // The pod mounts only the projected token of its own audience, never the API token.
    automountServiceAccountToken: false,
  };
}

/**
 * The generated pod under ServiceAccount identity: its ServiceAccount, no API token, and the
 * projected token (audience, lifetime, the token path's file name) mounted read-only at the
 * token path's directory in `container` (the agent's). Else the pod as it is.
 */
export function withAgentIdentity(podSpec: PodSpec, parent: Pick<ParentIdentity, 'name'>, container: string, security: SecurityConfig): PodSpec {
  if (!serviceAccountIdentity(security)) return podSpec;
  const { audience, expirationSeconds, tokenPath } = security.serviceAccount;
  const volume: Volume = {
    name: AGENT_TOKEN_VOLUME,
    projected: { sources: [{ serviceAccountToken: { audience, expirationSeconds, path: tokenFileName(tokenPath) } }] },
  };
  const mount: VolumeMount = { name: AGENT_TOKEN_VOLUME, mountPath: tokenDirectory(tokenPath), readOnly: true };
  const mounted = (c: Container): Container => (c.name === container ? { ...c, volumeMounts: [mount, ...(c.volumeMounts ?? [])] } : c);
  const name = agentServiceAccountName(parent.name);
  return {
    ...podSpec,
    // The deprecated `serviceAccount` too: the API server keeps it as an alias of the name, and
    // reads a pod without serviceAccountName from it, so an apply that stops sending the name
    // (another provider) must own the alias as well to take both away.
    serviceAccountName: name,
    serviceAccount: name,
    automountServiceAccountToken: false,
    containers: podSpec.containers.map(mounted),
    volumes: [volume, ...(podSpec.volumes ?? [])],
  };
}
