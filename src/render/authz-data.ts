// The policy data of the PDP (docs/api.md, "Policy ConfigMap"): one pure function of the whole
// world — every projected Agent, MCPServer, ModelAPI, MemoryStore and AccessGrant — the settings
// and the issuers' keys, to the `data.json` KAOS's Rego reads. Its text is Go's
// json.MarshalIndent (go-json.ts), so an unchanged world gives the same bytes and the projection
// writes nothing.
import { kaosId } from '../api/access-grants.ts';
import { referencedNames } from '../api/agent-references.ts';
import { asArray, asRecord, asString, getIn, isSet } from '../api/json.ts';
import type { WorkloadKind } from '../api/kinds.ts';
import { matchesLabels, parseLabelSelector } from '../api/label-selector.ts';
import type { KubeObject } from '../api/meta.ts';
import { goMarshalIndent } from './go-json.ts';

/** The objects the projection reads, each already within the projected namespaces. */
export interface ProjectionWorld {
  readonly agents: readonly KubeObject[];
  readonly mcpServers: readonly KubeObject[];
  readonly modelAPIs: readonly KubeObject[];
  readonly memoryStores: readonly KubeObject[];
  readonly accessGrants: readonly KubeObject[];
}

/** An issuer and its JSON Web Key Set, as discovered (the JWKS document as it was served, parsed). */
export interface IssuerKeys {
  readonly issuer: string;
  readonly jwks: unknown;
}

export interface ProjectionInputs {
  /** ServiceAccount identity (SECURITY_AGENT_AUTH_IDENTITY_PROVIDER=serviceaccount): `agents` maps each Agent to its ServiceAccount. */
  readonly serviceAccountIdentity: boolean;
  /** The ServiceAccount issuer and its keys, when discovered. */
  readonly serviceAccountKeys?: IssuerKeys;
  /** The user plane (SECURITY_USER_AUTH_ISSUER set): its settings, and the keys its discovery gave. */
  readonly user?: { readonly issuer: string; readonly audience: string; readonly keys: IssuerKeys };
  /** Every gate of the Enforced condition passes: the grants reach `user_grants`. */
  readonly grantsEnforced: boolean;
}

/** The document, and its text as the ConfigMap's `data.json`. */
export interface PolicyData {
  readonly document: { kaos: Record<string, unknown> };
  readonly json: string;
}

const WORKLOAD_OF = {
  agents: 'Agent',
  mcpServers: 'MCPServer',
  modelAPIs: 'ModelAPI',
  memoryStores: 'MemoryStore',
} as const satisfies Record<string, WorkloadKind>;

const nameOf = (o: KubeObject): string => o.metadata?.name ?? '';
const namespaceOf = (o: KubeObject): string => o.metadata?.namespace ?? '';
const sortedUnique = (values: Iterable<string>): string[] => [...new Set(values)].sort();

/** An Agent's edges (docs/api.md, "Projection"): what it calls, each as its identity. */
function agentTargets(agent: KubeObject): string[] {
  const ns = namespaceOf(agent);
  const refs = referencedNames(agent.spec);
  return sortedUnique([
    ...refs.mcpServers.map((n) => kaosId('MCPServer', ns, n)),
    ...refs.modelAPIs.map((n) => kaosId('ModelAPI', ns, n)),
    ...refs.memoryStores.map((n) => kaosId('MemoryStore', ns, n)),
    ...refs.agents.filter((n) => n !== nameOf(agent)).map((n) => kaosId('Agent', ns, n)),
  ]);
}

/** Whether an Agent loops on its own: a goal that is not blank (KAOS's IsAutonomous). */
const isAutonomous = (agent: KubeObject): boolean => (asString(getIn(agent.spec, 'config', 'autonomous', 'goal')) ?? '').trim() !== '';

/**
 * The identities a grant reaches: a resource named by kind and name (kept when it does not exist
 * yet), or every workload of its namespace its selector matches (an unparsable selector matches
 * nothing). A resource with a selector is read as a selector, as KAOS does.
 */
function grantTargets(grant: KubeObject, byNamespace: ReadonlyMap<string, readonly { kind: WorkloadKind; object: KubeObject }[]>): string[] {
  const ns = namespaceOf(grant);
  const out = new Set<string>();
  for (const entry of asArray(getIn(grant.spec, 'resources')) ?? []) {
    const r = asRecord(entry);
    if (r === undefined) continue;
    if (isSet(r.selector)) {
      const requirements = parseLabelSelector(r.selector);
      if (requirements === undefined) continue;
      for (const { kind, object } of byNamespace.get(ns) ?? []) {
        if (matchesLabels(requirements, object.metadata?.labels)) out.add(kaosId(kind, ns, nameOf(object)));
      }
      continue;
    }
    const kind = asString(r.kind);
    const name = asString(r.name);
    if (name !== undefined && name !== '' && (kind === 'Agent' || kind === 'MCPServer' || kind === 'ModelAPI' || kind === 'MemoryStore')) out.add(kaosId(kind, ns, name));
  }
  return [...out];
}

/** `user:<name>` / `group:<name>` → the sorted identities their grants reach; Agent subjects are not projected. */
function userGrants(world: ProjectionWorld): Record<string, string[]> {
  const byNamespace = new Map<string, { kind: WorkloadKind; object: KubeObject }[]>();
  for (const [list, kind] of Object.entries(WORKLOAD_OF) as [keyof typeof WORKLOAD_OF, WorkloadKind][]) {
    for (const object of world[list]) {
      const ns = namespaceOf(object);
      const bucket = byNamespace.get(ns) ?? [];
      bucket.push({ kind, object });
      byNamespace.set(ns, bucket);
    }
  }
  const sets = new Map<string, Set<string>>();
  for (const grant of world.accessGrants) {
    const targets = grantTargets(grant, byNamespace);
    for (const subject of asArray(getIn(grant.spec, 'subjects')) ?? []) {
      const s = asRecord(subject);
      const name = asString(s?.name);
      if (name === undefined || name === '' || (s?.kind !== 'User' && s?.kind !== 'Group')) continue;
      const key = `${s.kind === 'User' ? 'user' : 'group'}:${name}`;
      const set = sets.get(key) ?? new Set<string>();
      for (const t of targets) set.add(t);
      sets.set(key, set);
    }
  }
  const out: Record<string, string[]> = {};
  // A subject whose grants reach nothing has no entry (KAOS writes none either).
  for (const [key, set] of sets) if (set.size > 0) out[key] = sortedUnique(set);
  return out;
}

/** Pure: the policy data of `world` (docs/api.md, "Policy ConfigMap"). */
export function projectPolicyData(world: ProjectionWorld, inputs: ProjectionInputs): PolicyData {
  const grants: Record<string, string[]> = {};
  const agents: Record<string, { autonomous: boolean; issuer_sub: string }> = {};
  for (const agent of world.agents) {
    const id = kaosId('Agent', namespaceOf(agent), nameOf(agent));
    const targets = agentTargets(agent);
    // An Agent that names nothing is in neither map, as KAOS leaves it out: with no edge it may
    // call nothing either way, and its entry would only grow the data every PDP loads.
    if (targets.length === 0) continue;
    grants[id] = targets;
    if (inputs.serviceAccountIdentity) {
      agents[id] = { autonomous: isAutonomous(agent), issuer_sub: `system:serviceaccount:${namespaceOf(agent)}:kaos-agent-${nameOf(agent)}` };
    }
  }
  const jwks: Record<string, unknown> = {};
  if (inputs.serviceAccountKeys !== undefined && inputs.serviceAccountKeys.issuer !== '') jwks[inputs.serviceAccountKeys.issuer] = inputs.serviceAccountKeys.jwks;
  const kaos: Record<string, unknown> = { grants };
  if (Object.keys(agents).length > 0) kaos.agents = agents;
  if (inputs.user !== undefined) {
    const { keys } = inputs.user;
    if (!Object.hasOwn(jwks, keys.issuer)) jwks[keys.issuer] = keys.jwks;
    kaos.user = { audience: inputs.user.audience.trim(), issuer: inputs.user.issuer.trim() };
    const users = inputs.grantsEnforced ? userGrants(world) : {};
    if (Object.keys(users).length > 0) kaos.user_grants = users;
  }
  if (Object.keys(jwks).length > 0) kaos.jwks = jwks;
  const document = { kaos };
  return { document, json: goMarshalIndent(document) };
}
