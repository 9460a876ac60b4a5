// bench:bulk's AccessGrant part (ACCESS_GRANTS > 0): the grants, the policy projection they feed,
// and its figures — how long one pass takes, and how many passes and policy ConfigMap writes the
// burst of Agent creates costs (docs/api.md, "Projection": a burst coalesces into a few passes).
//
// The operator runs with the projection active (AUTHZ_POLICY_CONFIGMAP_*) and ServiceAccount
// identity (the `agents` map), security off: so nothing else of the run changes (no per-route
// policies), and the user grants, which only the gates let through, are measured in-process over
// the same world (projectPolicyData with every gate passed), next to the operator's own passes.
import type { KubeObject } from '../../src/api/meta.ts';
import { projectPolicyData } from '../../src/render/authz-data.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { inParallel, kaosPath } from './reconcile.ts';
import type { BulkObjects, Named } from './bulk-scenario.ts';

export const POLICY_CONFIG_MAP = { namespace: 'kaos-system', name: 'kaos-authz-policy' };
/** Agents fall into this many label shards; each grant selects one, and names one Agent. */
const SHARDS = 10;
export const SHARD_LABEL = 'bench.kaos.tools/shard';

/** The operator's settings for a run with grants. */
export const GRANTS_ENV: Readonly<Record<string, string>> = {
  AUTHZ_POLICY_CONFIGMAP_NAME: POLICY_CONFIG_MAP.name,
  AUTHZ_POLICY_CONFIGMAP_NAMESPACE: POLICY_CONFIG_MAP.namespace,
  SECURITY_AGENT_AUTH_IDENTITY_PROVIDER: 'serviceaccount',
};

/** The scenario's Agents labelled by shard, so that selectors have something to match. */
export function withShards(objects: BulkObjects): BulkObjects {
  return { ...objects, agents: objects.agents.map((a, i) => ({ ...a, metadata: { ...a.metadata, labels: { [SHARD_LABEL]: `s${i % SHARDS}` } } })) };
}

/** Grant i: a user and a group, to Agent 10·i by name and to every Agent of shard i mod 10 by selector. */
export function accessGrants(namespace: string, count: number, agents: number): Named[] {
  return Array.from({ length: count }, (_, i) => ({
    apiVersion: 'kaos.tools/v1alpha1',
    kind: 'AccessGrant',
    metadata: { name: `grant-${i}`, namespace },
    spec: {
      subjects: [{ kind: 'User', name: `user-${i}@example.com` }, { kind: 'Group', name: `team-${i % SHARDS}` }],
      resources: [{ kind: 'Agent', name: `agent-${(10 * i) % Math.max(1, agents)}` }, { selector: { matchLabels: { [SHARD_LABEL]: `s${i % SHARDS}` } } }],
    },
  }) as unknown as Named);
}

export async function createGrants(client: KubeClient, grants: readonly Named[], inFlight: number): Promise<void> {
  await inParallel(grants, inFlight, async (g) => {
    await client.create(kaosPath('AccessGrant', g.metadata.namespace), g);
  });
}

/** The operator's projection metrics, from /metrics. */
export async function projectionMetrics(metricsPort: number): Promise<{ passes: number; failures: number; writes: number; passSeconds: { sum: number; count: number } }> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const value = (pattern: RegExp): number => Number(pattern.exec(text)?.[1] ?? Number.NaN);
  return {
    passes: value(/^kaos_authz_projection_passes_total\{result="success"\} (\S+)$/m) + value(/^kaos_authz_projection_passes_total\{result="error"\} (\S+)$/m),
    failures: value(/^kaos_authz_projection_passes_total\{result="error"\} (\S+)$/m),
    writes: value(/^kaos_authz_projection_writes_total (\S+)$/m),
    passSeconds: { sum: value(/^kaos_authz_projection_pass_seconds_sum (\S+)$/m), count: value(/^kaos_authz_projection_pass_seconds_count (\S+)$/m) },
  };
}

/**
 * One whole pass in-process, the user grants included (every gate passed, a user plane with its
 * keys): the median and the slowest of `runs`, milliseconds, and the data's size.
 */
export function timePass(objects: BulkObjects, grants: readonly Named[], runs = 21): { medianMs: number; maxMs: number; bytes: number } {
  const world = {
    agents: objects.agents as KubeObject[],
    mcpServers: objects.dependencies.filter((o) => o.kind === 'MCPServer') as KubeObject[],
    modelAPIs: objects.dependencies.filter((o) => o.kind === 'ModelAPI') as KubeObject[],
    memoryStores: objects.stores as KubeObject[],
    accessGrants: grants as KubeObject[],
  };
  const keys = { keys: [{ kty: 'RSA', kid: 'bench', e: 'AQAB', n: 'x'.repeat(342) }] };
  const inputs = {
    serviceAccountIdentity: true,
    serviceAccountKeys: { issuer: 'https://kubernetes.default.svc.cluster.local', jwks: keys },
    user: { issuer: 'https://idp.example/realms/kaos', audience: 'kaos', keys: { issuer: 'https://idp.example/realms/kaos', jwks: keys } },
    grantsEnforced: true,
  };
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    bytes = projectPolicyData(world, inputs).json.length;
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { medianMs: times[Math.floor(runs / 2)] ?? Number.NaN, maxMs: times.at(-1) ?? Number.NaN, bytes };
}
