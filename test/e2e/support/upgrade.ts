// Upgrades and restores, as data: the fixed set of manifests an upgrade snapshot covers, what a
// snapshot holds (the KAOS objects as stored, the operator's children as it applied them), how a
// backup exports objects (as Velero or a GitOps replay keeps them), and how a snapshot is put
// back into a cluster as the release that made it left it. Used by scripts/upgrade-snapshot.ts
// (which makes a release's snapshot) and test/e2e/upgrade-restore.test.ts (which replays them).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { KINDS, type KaosKind } from '../../../src/api/kinds.ts';
import { CHILD_TYPES, FIELD_MANAGER } from '../../../src/cluster/child-apply.ts';
import { AUTHZ_FIELD_MANAGER } from '../../../src/controller/authz-projection.ts';
import { MANAGED_BY_LABEL } from '../../../src/render/index.ts';
import { kaosPath } from '../../../src/cluster/kaos-resources.ts';
import type { KubeClient } from '../../../src/kube/client.ts';
import { isRecord } from '../../../src/kube/json.ts';
import { SECRET, apiVersionOf, resourcePath, type ResourceType } from '../../../src/kube/paths.ts';
import { OPERATOR_IDENTITY } from '../../../src/cluster/rbac.ts';
import type { GatewayCrds } from '../../../scripts/local-stack.ts';
import { extractApplied } from '../../support/extract-applied.ts';
import { OPERATOR_ENV } from './stack.ts';

export type Json = Record<string, unknown>;

const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures');

/**
 * The manifests an upgrade snapshot covers, each into a namespace of its own (several samples
 * share a namespace name): KAOS's samples in both their forms, KAOS 2026's newer shapes, and
 * test/fixtures/upgrade/newer-shapes.yaml for the shapes those leave out. Not
 * kaos-2026/memory-agents.yaml: its ModelAPI's key comes from a Secret, whose resourceVersion —
 * part of the config hash — a replay into another cluster cannot keep (the restore test has it).
 */
export const UPGRADE_MANIFESTS: Readonly<Record<string, string>> = {
  'samples-simple': 'samples/1-simple-echo-agent.yaml',
  'samples-multi': 'samples/2-multi-agent-mcp.yaml',
  'samples-dev': 'samples/4-dev-ollama-proxy-agent.yaml',
  'v013-simple': 'samples/kaos-v0.1.3/1-simple-echo-agent.yaml',
  'v013-multi': 'samples/kaos-v0.1.3/2-multi-agent-mcp.yaml',
  'v013-dev': 'samples/kaos-v0.1.3/4-dev-ollama-proxy-agent.yaml',
  autonomous: 'kaos-2026/autonomous-agents.yaml',
  security: 'kaos-2026/security-plane.yaml',
  shapes: 'upgrade/newer-shapes.yaml',
};

/**
 * The operator's settings a snapshot is made under, and the replaying operator runs with: the
 * e2e stack's images and model (test/e2e/support/stack.ts), the Gateway API with routes, and
 * KAOS's security plane (agent identity by ServiceAccount, per-route policies, the AccessGrant
 * projection), so that every child type the kind table names is among the children.
 */
export const SNAPSHOT_OPERATOR_ENV: Readonly<Record<string, string>> = {
  ...OPERATOR_ENV,
  GATEWAY_API_ENABLED: 'true',
  GATEWAY_NAME: 'gw',
  GATEWAY_NAMESPACE: 'gw-system',
  SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount',
  SECURITY_AGENT_AUTH_EXT_AUTHZ_URL: 'kaos-pdp.kaos-system.svc:9191',
  AUTHZ_POLICY_CONFIGMAP_NAME: 'kaos-authz-policy',
  AUTHZ_POLICY_CONFIGMAP_NAMESPACE: OPERATOR_IDENTITY.namespace,
  // The ServiceAccount issuer's keys, fixed: discovered, they are the signing key of the cluster
  // the snapshot was made in, which the per-route SecurityPolicies carry inline.
  SECURITY_AGENT_AUTH_SERVICE_ACCOUNT_JWKS: JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', kid: 'upgrade-snapshot', use: 'sig', alg: 'ES256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' }] }),
};
export const SNAPSHOT_GATEWAY_CRDS: readonly GatewayCrds[] = ['gatewayApi', 'envoyGateway'];

/** What a release left in a cluster: scripts/upgrade-snapshot.ts writes it, one file per release. */
export interface UpgradeSnapshot {
  /** package.json's version of the tree that made it. */
  readonly version: string;
  readonly operatorEnv: Readonly<Record<string, string>>;
  readonly gatewayCrds: readonly GatewayCrds[];
  /** Namespaces, then the user's objects (Secrets, KAOS objects) as exportObject gives them. */
  readonly objects: readonly Json[];
  /** Every object the operator applied, as it applied it (extractApplied), owner uids left out. */
  readonly children: readonly Json[];
}

/**
 * The one CRD upgrade command the docs give (docs/upgrade.md, docs/helm.md), run from the
 * repository's root by test/e2e/upgrade-restore.test.ts; test/unit/docs/crd-upgrade-command.test.ts
 * finds no other in the docs.
 */
export const CRD_UPGRADE_COMMAND = 'kubectl apply --server-side --force-conflicts -f chart/crds/';

export const SNAPSHOT_DIR = join(FIXTURES, 'upgrade', 'snapshots');
export const snapshotFile = (version: string): string => join(SNAPSHOT_DIR, `${version}.json`);

/** The objects of a manifest of test/fixtures, moved into `namespace`, in the order a user applies them. */
export function manifestObjects(file: string, namespace: string): Json[] {
  const docs = parseAllDocuments(readFileSync(join(FIXTURES, file), 'utf8')).map((d) => d.toJS() as unknown).filter(isRecord);
  const moved = docs.map((d) => {
    const metadata = { ...(d['metadata'] as Json) };
    if (d['kind'] === 'Namespace') metadata['name'] = namespace;
    else metadata['namespace'] = namespace;
    return { ...d, metadata };
  });
  return moved.sort((a, b) => applyOrder(a) - applyOrder(b));
}

/** Namespaces first, then what objects read (Secrets), then what Agents depend on, then the rest. */
function applyOrder(o: Json): number {
  const order = ['Namespace', 'Secret', 'ConfigMap', 'ModelAPI', 'MCPServer', 'MemoryStore', 'Agent', 'AccessGrant'];
  const at = order.indexOf(String(o['kind']));
  return at < 0 ? order.length : at;
}

const SERVER_METADATA = ['uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields', 'selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds'];

/**
 * An object as a backup keeps it (Velero's restore, or a GitOps repository written from the
 * cluster): no status, and none of the metadata the API server assigns (uid, resourceVersion,
 * generation, creationTimestamp, managedFields); labels, annotations (our
 * `kaos.tools/defaulted` among them) and finalizers kept.
 */
export function exportObject(object: Json): Json {
  const { status: _status, metadata, ...rest } = object;
  const kept: Json = {};
  for (const [key, value] of Object.entries(isRecord(metadata) ? metadata : {})) if (!SERVER_METADATA.includes(key)) kept[key] = value;
  return { ...rest, metadata: kept };
}

/**
 * Every KAOS object of `namespaces`, and the Secrets they may read, exported (exportObject), in
 * the order a restore must create them (applyOrder): under the default reference policy the
 * webhook refuses an Agent whose ModelAPI, MCPServers or MemoryStore do not exist yet
 * (docs/backup-restore.md says how to give Velero this order).
 */
export async function exportNamespaces(client: KubeClient, namespaces: readonly string[]): Promise<Json[]> {
  const out: Json[] = namespaces.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }));
  for (const namespace of namespaces) {
    const secrets = (await client.list<Json>(resourcePath(SECRET, { namespace }))).items
      .filter((s) => (s['type'] ?? 'Opaque') === 'Opaque');
    out.push(...secrets.map((s) => exportObject({ apiVersion: 'v1', kind: 'Secret', ...s })));
    for (const kind of KINDS) {
      const items = (await client.list<Json>(kaosPath(kind, { namespace }))).items;
      out.push(...items.map((o) => exportObject({ apiVersion: 'kaos.tools/v1alpha1', kind, ...o })));
    }
  }
  return out.sort((a, b) => applyOrder(a) - applyOrder(b));
}

const childTypes = (): ResourceType[] => Object.values(CHILD_TYPES);

/** `Kind/namespace/name` of an object. */
export function objectId(o: Json): string {
  const m = (o['metadata'] ?? {}) as Json;
  return `${String(o['kind'])}/${String(m['namespace'] ?? '')}/${String(m['name'] ?? '')}`;
}

/** The kind of a child's controller owner, or `none` (the AccessGrant projection's ConfigMap is nobody's child). */
export function ownerKind(o: Json): string {
  const refs = ((o['metadata'] ?? {}) as Json)['ownerReferences'];
  const controller = Array.isArray(refs) ? refs.find((r) => isRecord(r) && r['controller'] === true) as Json | undefined : undefined;
  return String(controller?.['kind'] ?? 'none');
}

/**
 * The operator's field managers: its children's, and the AccessGrant projection's policy
 * ConfigMap's. Each labels what it applies `app.kubernetes.io/managed-by: <manager>`.
 */
const OPERATOR_MANAGERS = [FIELD_MANAGER, AUTHZ_FIELD_MANAGER] as const;

/**
 * Every object of the child types (the kind table's) in `namespaces` that one of the operator's
 * field managers applied, as it applied it (extractApplied), owner uids left out (a replay has
 * new ones), sorted by id.
 */
export async function exportChildren(client: KubeClient, namespaces: readonly string[]): Promise<Json[]> {
  const out: Json[] = [];
  for (const type of childTypes()) {
    for (const namespace of namespaces) {
      let items: Json[];
      try {
        items = (await client.list<Json>(resourcePath(type, { namespace }))).items;
      } catch {
        continue; // an optional API this cluster does not serve
      }
      for (const item of items) {
        for (const manager of OPERATOR_MANAGERS) {
          const applied = extractApplied({ apiVersion: apiVersionOf(type), kind: type.kind, ...item }, manager);
          if (applied !== undefined) out.push(withoutOwnerUids(applied));
        }
      }
    }
  }
  return out.sort((a, b) => objectId(a).localeCompare(objectId(b)));
}

function withoutOwnerUids(o: Json): Json {
  const metadata = o['metadata'] as Json;
  const refs = metadata['ownerReferences'];
  if (!Array.isArray(refs)) return o;
  return { ...o, metadata: { ...metadata, ownerReferences: refs.map((r) => { const { uid: _uid, ...rest } = r as Json; return rest; }) } };
}

/** A child with the uids of its owners as they are in this cluster (looked up by kind and name in its namespace). */
export async function withOwnerUids(client: KubeClient, child: Json): Promise<Json> {
  const metadata = child['metadata'] as Json;
  const refs = metadata['ownerReferences'];
  if (!Array.isArray(refs)) return child;
  const resolved = [];
  for (const ref of refs as Json[]) {
    const owner = await client.get<Json>(kaosPath(ref['kind'] as KaosKind, { namespace: String(metadata['namespace']), name: String(ref['name']) }));
    resolved.push({ ...ref, uid: (owner['metadata'] as Json)['uid'] });
  }
  return { ...child, metadata: { ...metadata, ownerReferences: resolved } };
}

/** The path of a child from its kind. */
export function childPath(o: Json): string {
  const type = childTypes().find((t) => t.kind === o['kind']);
  if (type === undefined) throw new Error(`not a child type of the kind table: ${String(o['kind'])}`);
  const m = o['metadata'] as Json;
  return resourcePath(type, { namespace: String(m['namespace']), name: String(m['name']) });
}

/**
 * Puts a snapshot into a cluster as its release left it, with no operator running and no
 * webhook registered (the objects are stored as that release's webhooks admitted them): the
 * namespaces and the user's objects created as exported, then every child server-side applied
 * with the operator's field manager, so its managedFields are the ones that release left.
 */
export async function replaySnapshot(client: KubeClient, snapshot: UpgradeSnapshot): Promise<void> {
  for (const o of snapshot.objects) await client.create(objectCollection(o), o, { fieldManager: 'kubectl-create', discardAnswer: true });
  for (const child of snapshot.children) {
    await client.apply(childPath(child), await withOwnerUids(client, child), { fieldManager: managerOf(child), force: true });
  }
}

/** The field manager that applied a child: the one its managed-by label names. */
function managerOf(child: Json): string {
  const labels = ((child['metadata'] ?? {}) as Json)['labels'];
  const named = isRecord(labels) ? labels[MANAGED_BY_LABEL] : undefined;
  return OPERATOR_MANAGERS.find((m) => m === named) ?? FIELD_MANAGER;
}

/** The collection an exported object is created in. */
export function objectCollection(o: Json): string {
  const namespace = String(((o['metadata'] ?? {}) as Json)['namespace'] ?? '');
  if (o['kind'] === 'Namespace') return '/api/v1/namespaces';
  if (o['kind'] === 'Secret') return resourcePath(SECRET, { namespace });
  return kaosPath(o['kind'] as KaosKind, { namespace });
}

/**
 * The objects of `namespaces` that are not yet converged, as `Kind/namespace/name phase`: a
 * workload kind not `Ready` with its observedGeneration current, an AccessGrant without an
 * `Enforced` condition of its generation. Empty: all of them are.
 */
export async function notConverged(client: KubeClient, namespaces: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const namespace of namespaces) {
    for (const kind of KINDS) {
      for (const o of (await client.list<Json>(kaosPath(kind, { namespace }))).items) {
        const generation = (o['metadata'] as Json)['generation'];
        const status = (o['status'] ?? {}) as { phase?: string; observedGeneration?: number; conditions?: { type: string; observedGeneration?: number }[] };
        const done = kind === 'AccessGrant'
          ? (status.conditions ?? []).some((c) => c.type === 'Enforced' && c.observedGeneration === generation)
          : status.phase === 'Ready' && status.observedGeneration === generation;
        if (!done) out.push(`${objectId({ kind, ...o })} ${status.phase ?? '(no status)'}`);
      }
    }
  }
  return out;
}
