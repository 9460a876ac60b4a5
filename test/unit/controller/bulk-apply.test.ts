// A GitOps bulk apply: ModelAPIs, MCPServers and Agents created at once, in any order, each Agent
// listing peers created after it (forward references), with the controller reconciling
// everything it can after every creation. Each Agent's Deployment must reach its final pod
// template with one apply (one rollout) once its dependencies are ready, since by then every peer
// it names exists and a peer's endpoint follows from its spec (docs/api.md, "Agent reconcile").
import fc from 'fast-check';
import t from 'tap';
import type { WorkloadKind } from '../../../src/api/kinds.ts';
import { workloadName } from '../../../src/render/index.ts';
import { MemoryReconcileContext } from '../../support/memory-reconcile-context.ts';
import { deploymentStatus, podSpecOf, reconcile, statusOf, type StoredObject } from './reconcile-helpers.ts';

const NS = 'bulk';
const AGENTS = 8;
const MODELAPIS = 2;
const MCPSERVERS = 4;
/** An Agent that is not exposed: listed as a peer, never wired in. */
const HIDDEN = 3;

function scenario(): StoredObject[] {
  const objects: StoredObject[] = [];
  for (let i = 0; i < MODELAPIS; i++) {
    objects.push({ apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: `model-${i}`, namespace: NS }, spec: { mode: 'Proxy', proxyConfig: { model: 'ollama/smollm2:135m' } } });
  }
  for (let i = 0; i < MCPSERVERS; i++) {
    objects.push({ apiVersion: 'kaos.tools/v1alpha1', kind: 'MCPServer', metadata: { name: `tools-${i}`, namespace: NS }, spec: { type: 'python-runtime', config: { tools: { fromString: `def t${i}(x: str) -> str:\n    return x\n` } } } });
  }
  for (let i = 0; i < AGENTS; i++) {
    objects.push({
      apiVersion: 'kaos.tools/v1alpha1',
      kind: 'Agent',
      metadata: { name: `agent-${i}`, namespace: NS },
      spec: {
        modelAPI: `model-${i % MODELAPIS}`,
        mcpServers: [`tools-${(2 * i) % MCPSERVERS}`, `tools-${(2 * i + 1) % MCPSERVERS}`],
        // agent-<AGENTS> and agent-<AGENTS+1> never exist: skipped for good.
        agentNetwork: { access: [`agent-${i + 1}`, `agent-${i + 2}`], ...(i === HIDDEN ? { expose: false } : {}) },
        waitForDependencies: true,
      },
    });
  }
  return objects;
}

const kindName = (o: StoredObject): [WorkloadKind, string] => [o.kind as WorkloadKind, o.metadata.name];

/** Reconciles every created object, in `order`, until a whole pass writes nothing. */
async function settle(ctx: MemoryReconcileContext, created: readonly StoredObject[], order: readonly number[]): Promise<void> {
  for (let pass = 0; pass < 10; pass++) {
    const before = ctx.requests.length;
    for (const i of order) {
      const object = created[i % created.length];
      if (object === undefined) continue;
      const [kind, name] = kindName(object);
      await reconcile(ctx, kind, NS, name);
    }
    if (ctx.requests.length === before) return;
  }
  throw new Error('no convergence after 10 passes');
}

const deploymentApplies = (ctx: MemoryReconcileContext, agent: string): number =>
  ctx.requests.filter((r) => r.verb === 'apply' && r.target === `Deployment/${NS}/${workloadName('Agent', agent)}`).length;

t.test('a bulk create in any order with forward peers: one Deployment apply per Agent, with every peer that exists and is exposed', async (t) => {
  const objects = scenario();
  const indexes = objects.map((_, i) => i);
  await fc.assert(
    fc.asyncProperty(
      fc.shuffledSubarray(indexes, { minLength: indexes.length }),
      fc.shuffledSubarray(indexes, { minLength: indexes.length }),
      async (creation, reconcileOrder) => {
        const ctx = new MemoryReconcileContext();
        const created: StoredObject[] = [];
        // Creation, with every object created so far reconciled after each one (the eagerest
        // controller): the dependencies are not Ready yet.
        for (const i of creation) {
          const object = objects[i] as StoredObject;
          ctx.putKaos(object);
          created.push(object);
          await settle(ctx, created, reconcileOrder);
        }
        // The dependencies' Deployments become ready; then the Agents'.
        for (const o of objects.filter((x) => x.kind !== 'Agent')) ctx.setDeploymentStatus(NS, workloadName(o.kind as WorkloadKind, o.metadata.name), deploymentStatus(1));
        await settle(ctx, created, reconcileOrder);
        for (let i = 0; i < AGENTS; i++) ctx.setDeploymentStatus(NS, workloadName('Agent', `agent-${i}`), deploymentStatus(1));
        await settle(ctx, created, reconcileOrder);

        for (let i = 0; i < AGENTS; i++) {
          const name = `agent-${i}`;
          if (deploymentApplies(ctx, name) !== 1) throw new Error(`${name}: ${deploymentApplies(ctx, name)} Deployment applies (creation order ${creation.join(',')})`);
          if (statusOf(ctx, 'Agent', NS, name).phase !== 'Ready') throw new Error(`${name} is not Ready`);
          const env = podSpecOf(ctx.child('Deployment', NS, workloadName('Agent', name))).containers[0]?.env ?? [];
          const peers = env.find((e) => e.name === 'PEER_AGENTS')?.value ?? '';
          const expected = [i + 1, i + 2].filter((p) => p < AGENTS && p !== HIDDEN).map((p) => `agent-${p}`).join(',');
          if (peers !== expected) throw new Error(`${name}: PEER_AGENTS ${JSON.stringify(peers)}, expected ${JSON.stringify(expected)}`);
        }
      },
    ),
    { numRuns: 20 },
  );
  t.pass('every Agent applied its Deployment once, with its existing exposed peers');
});

t.test('every write carries news: an Agent created after its dependencies are Ready costs one apply per child, two status writes (Pending, Ready) and one Event', async (t) => {
  const ctx = new MemoryReconcileContext();
  const objects = scenario();
  const dependencies = objects.filter((o) => o.kind !== 'Agent');
  for (const o of dependencies) ctx.putKaos(o);
  await settle(ctx, dependencies, dependencies.map((_, i) => i));
  for (const o of dependencies) ctx.setDeploymentStatus(NS, workloadName(o.kind as WorkloadKind, o.metadata.name), deploymentStatus(1));
  await settle(ctx, dependencies, dependencies.map((_, i) => i));
  ctx.clearRecords();

  const agents = objects.filter((o) => o.kind === 'Agent');
  for (const o of agents) ctx.putKaos(o);
  const order = agents.map((_, i) => i);
  await settle(ctx, agents, order);
  for (let i = 0; i < AGENTS; i++) ctx.setDeploymentStatus(NS, workloadName('Agent', `agent-${i}`), deploymentStatus(1));
  await settle(ctx, agents, order);
  const writes = (verb: string, target: string) => ctx.requests.filter((r) => r.verb === verb && r.target === target).length;
  for (let i = 0; i < AGENTS; i++) {
    const name = `agent-${i}`;
    t.equal(writes('status', `Agent/${NS}/${name}`), 2, `${name}: two status writes`);
    t.same(ctx.requests.filter((r) => r.verb === 'status' && r.target === `Agent/${NS}/${name}`).map((r) => (r.body as { phase?: string }).phase), ['Pending', 'Ready']);
    t.equal(ctx.recorded.filter((e) => e.regarding.name === name).length, 1, `${name}: one Event`);
  }
  t.equal(ctx.requests.filter((r) => r.verb === 'apply').length, AGENTS * 2 - 1, 'a Deployment each, a Service each exposed Agent');
  const idle = ctx.requests.length;
  await settle(ctx, objects, objects.map((_, i) => i));
  t.equal(ctx.requests.length, idle, 'then nothing');
});
