// The soak's final check over an in-memory cluster that the real reconcilers converged
// (test/support/memory-reconcile-context.ts): converged, nothing is found; then each kind of
// damage the soak looks for is found, named by its invariant — a child not what the renderer
// produces, a child left without its owner, a status that does not say what its Deployment does,
// a spec change not reconciled, a wait with nothing to wait for.
import t from 'tap';
import type { KaosKind } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/meta.ts';
import type { ChildKind } from '../../../src/cluster/kind-table.ts';
import type { ObjectLike } from '../../../src/kube/apply.ts';
import { MemoryReconcileContext } from '../../support/memory-reconcile-context.ts';
import { deploymentStatus, reconcile } from '../controller/reconcile-helpers.ts';
import { checkCluster, difference, type ClusterState, type Invariant } from '../../soak/check.ts';

const NS = 'soak-0';
const OBJECTS: { kind: KaosKind; name: string; spec: Record<string, unknown> }[] = [
  { kind: 'ModelAPI', name: 'llm', spec: { mode: 'Proxy', proxyConfig: { apiBase: 'http://backend.example:4000' } } },
  { kind: 'MCPServer', name: 'tools', spec: { type: 'python-runtime', config: { tools: { fromPackage: 'echo' } } } },
  { kind: 'Agent', name: 'a', spec: { modelAPI: 'llm', mcpServers: ['tools'] } },
];

/** A converged cluster: reconciled, every pod ready, reconciled again. */
async function converged(): Promise<MemoryReconcileContext> {
  const ctx = new MemoryReconcileContext();
  for (const o of OBJECTS) ctx.putKaos({ apiVersion: 'kaos.tools/v1alpha1', kind: o.kind, metadata: { name: o.name, namespace: NS }, spec: o.spec });
  for (let round = 0; round < 3; round++) {
    for (const o of OBJECTS) {
      await reconcile(ctx, o.kind, NS, o.name);
      const deployment = ctx.child('Deployment', NS, `${o.kind.toLowerCase()}-${o.name}`);
      if (deployment !== undefined) ctx.setDeploymentStatus(NS, deployment.metadata?.name ?? '', deploymentStatus(1));
    }
  }
  return ctx;
}

function state(ctx: MemoryReconcileContext): ClusterState {
  const children: ObjectLike[] = ctx.childKeys().map((key) => {
    const [kind, namespace, name] = key.split('/') as [ChildKind, string, string];
    return { ...ctx.child(kind, namespace, name), kind };
  });
  return {
    reads: ctx.reads,
    objects: (kind) => OBJECTS.filter((o) => o.kind === kind).map((o) => ctx.kaos(kind, NS, o.name)).filter((o): o is KubeObject => o !== undefined),
    children,
    config: ctx.config,
  };
}

const found = async (ctx: MemoryReconcileContext): Promise<string[]> =>
  (await checkCluster(state(ctx))).map((v) => `${v.invariant}: ${v.subject}: ${v.detail}`);

const invariants = async (ctx: MemoryReconcileContext): Promise<Invariant[]> => [...new Set((await checkCluster(state(ctx))).map((v) => v.invariant))].sort();

t.test('a converged cluster breaks no invariant', async (t) => {
  const ctx = await converged();
  t.equal((ctx.kaos('Agent', NS, 'a')?.status as { phase?: string } | undefined)?.phase, 'Ready', 'the Agent is Ready');
  t.same(await found(ctx), []);
});

t.test('a child changed by someone else: not what the renderer produces, and where', async (t) => {
  const ctx = await converged();
  const deployment = ctx.child('Deployment', NS, 'agent-a') as ObjectLike & { spec: { template: { spec: { containers: { name: string; env: { name: string; value?: string }[] }[] } } } };
  const drifted = structuredClone(deployment);
  drifted.spec.template.spec.containers[0]!.env = drifted.spec.template.spec.containers[0]!.env.map((e) => (e.name === 'AGENT_NAME' ? { ...e, value: 'drifted' } : e));
  ctx.putChild({ ...drifted, kind: 'Deployment', metadata: { ...drifted.metadata, name: 'agent-a', namespace: NS } });
  t.same(await found(ctx), ['children: Agent soak-0/a: Deployment agent-a is not what the renderer produces: spec.template.spec.containers[agent].env[AGENT_NAME].value: "drifted", rendered "a"']);
});

t.test('a child whose owner is gone', async (t) => {
  const ctx = await converged();
  ctx.deleteKaos('MCPServer', NS, 'tools');
  const problems = await found(ctx);
  t.ok(problems.includes('owners: Deployment soak-0/mcpserver-tools: its owner MCPServer tools (uid uid-0002) does not exist'), problems.join('\n'));
  t.ok(problems.some((p) => p.startsWith('status: Agent soak-0/a: the status is not what its children and dependencies say: phase "Ready" → "Failed"')), 'the Agent still says Ready without its MCPServer');
});

t.test('a status that does not say what its Deployment does', async (t) => {
  const ctx = await converged();
  ctx.setDeploymentStatus(NS, 'modelapi-llm', deploymentStatus(0));
  const problems = await found(ctx);
  t.ok(problems.includes('status: ModelAPI soak-0/llm: Ready, but its Deployment is not rolled out and ready ({"replicas":1,"updatedReplicas":1,"readyReplicas":0}, generation undefined)'), problems.join('\n'));
  t.ok(problems.some((p) => p.startsWith('status: ModelAPI soak-0/llm: the status is not what its children and dependencies say: phase "Ready" → "Pending"')));
});

t.test('a spec change never reconciled: children and observedGeneration behind', async (t) => {
  const ctx = await converged();
  ctx.updateKaos('MCPServer', NS, 'tools', (o) => { (o.spec as Record<string, unknown>).config = { tools: { fromPackage: 'other' } }; });
  t.same(await invariants(ctx), ['children', 'generation', 'status']);
});

t.test('Waiting with every dependency there and ready', async (t) => {
  const ctx = await converged();
  ctx.updateKaos('Agent', NS, 'a', (o) => { o.status = { ...(o.status as Record<string, unknown>), phase: 'Waiting', ready: false }; });
  const problems = await found(ctx);
  t.ok(problems.includes('status: Agent soak-0/a: Waiting, but every dependency exists and is ready'), problems.join('\n'));
});

t.test('difference() names the first field a live object does not hold', async (t) => {
  t.equal(difference({ a: { b: [{ name: 'x', v: 1 }] } }, { a: { b: [{ name: 'x', v: 2 }] } }), 'a.b[x].v: 1, rendered 2');
  t.equal(difference({ a: [1, 2] }, { a: [1, 3] }), 'a[1]: 2, rendered 3');
  t.equal(difference({}, { a: { b: 1 } }), 'a: missing');
  t.equal(difference({ a: 1, extra: true }, { a: 1 }), undefined, 'fields the render leaves out do not matter');
});
