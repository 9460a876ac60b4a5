// The soak's spec generators against the webhooks' own handlers: in a namespace where every name
// of the pools exists (ready, serving every model, the runtime registry the chart ships), what a
// generator writes — new specs and edits of stored ones — is admitted, or denied by a documented
// rule (the denials it makes on purpose); most of it is admitted. An edit called a shape change
// changes the shape; one called no-op changes nothing.
import t from 'tap';
import { ApiError } from '../../../src/kube/errors.ts';
import { shapeOf } from '../../../src/api/shapes.ts';
import { WORKLOAD_KINDS, type WorkloadKind } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { parseRuntimes, type RegistryState } from '../../../src/api/mcp-runtimes.ts';
import { runtimesYaml } from '../../../src/api/mcp-runtime-defaults.ts';
import { KIND_TABLE } from '../../../src/cluster/kind-table.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { applyPatch, createHandlers, createRequest } from '../../../src/cli/judge.ts';
import { MemoryLookup } from '../../support/memory-lookup.ts';
import { classify } from '../../soak/outcomes.ts';
import { Random } from '../../soak/random.ts';
import { SPEC_GENERATORS, editSpec, poolSize, type Json, type PoolKind, type SpecContext } from '../../soak/specs.ts';
import { poolName } from '../../soak/traffic.ts';

const NS = 'soak-0';
const CONFIG = loadConfig({});

class World extends MemoryLookup {
  readonly #runtimes = parseRuntimes(runtimesYaml());
  mcpRuntimes(): RegistryState {
    return this.#runtimes;
  }
}

/** Every pool name of every kind, existing and ready; ModelAPIs serve any model. */
function world(): World {
  const lookup = new World().setNamespace(NS);
  const ready = { ready: true, phase: 'Ready' };
  const specs: Record<WorkloadKind, Json> = {
    Agent: { modelAPI: poolName('ModelAPI', 0) },
    ModelAPI: { mode: 'Proxy', proxyConfig: { apiBase: 'http://backend.example:4000' } },
    MCPServer: { type: 'python-runtime', config: { tools: { fromPackage: 'echo' } } },
    MemoryStore: { storage: { type: 'external' }, maxReadScope: 'agent', models: {} },
  };
  for (const kind of WORKLOAD_KINDS) {
    for (let i = 0; i < poolSize(kind); i++) {
      lookup.add({ apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name: poolName(kind, i), namespace: NS }, spec: specs[kind], status: ready });
    }
  }
  return lookup;
}

const context = (rng: Random, self: string): SpecContext => ({ rng, self, name: (k: PoolKind) => poolName(k, rng.int(poolSize(k))) });

interface Judged { admitted: boolean; object: KubeObject; problem?: string }

/** Through the mutating and validating handlers, as the API server sends a create or an update. */
async function judge(handlers: ReturnType<typeof createHandlers>, kind: WorkloadKind, object: KubeObject, oldObject?: KubeObject): Promise<Judged> {
  const request = (o: KubeObject) => ({ ...createRequest(kind, o), dryRun: false, ...(oldObject === undefined ? {} : { operation: 'UPDATE' as const, oldObject }) });
  const mutation = await handlers.mutate[kind](request(object));
  const defaulted = applyPatch(object, mutation.patch);
  const decision = await handlers.validate[kind](request(defaulted));
  if (decision.allowed) return { admitted: true, object: defaulted };
  const status = decision.status ?? {};
  const outcome = classify(ApiError.fromStatus(status), false);
  return { admitted: false, object: defaulted, ...(outcome.outcome === 'denied' ? {} : { problem: outcome.violation ?? outcome.outcome }) };
}

t.test('every kind and every type the kinds depend on has a generator', async (t) => {
  for (const kind of WORKLOAD_KINDS) t.ok(SPEC_GENERATORS[kind].pool > 0, `${kind}: a pool`);
  for (const kind of Object.keys(KIND_TABLE.dependencyTypes) as PoolKind[]) t.ok(poolSize(kind) > 0, `${kind}: a pool`);
});

for (const kind of WORKLOAD_KINDS) {
  t.test(`${kind}: created and edited specs are admitted, or denied by a documented rule`, async (t) => {
    const handlers = createHandlers(world(), CONFIG, async () => []);
    const rng = new Random(`specs-${kind}`);
    let admitted = 0;
    let denied = 0;
    const problems: string[] = [];
    const edits = { children: 0, 'no-op': 0, shape: 0 };
    const shapes = new Set<string>();
    const RUNS = 150;
    for (let i = 0; i < RUNS; i++) {
      const name = poolName(kind, rng.int(poolSize(kind)));
      const object: KubeObject = { apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name, namespace: NS, uid: `uid-${i}`, generation: 1 }, spec: SPEC_GENERATORS[kind].create(context(rng, name)) };
      shapes.add(shapeOf(kind, object.spec));
      const created = await judge(handlers, kind, object);
      if (created.problem !== undefined) problems.push(`create: ${created.problem}`);
      if (!created.admitted) {
        denied++;
        continue;
      }
      admitted++;
      const stored = created.object;
      const { spec, edit } = editSpec(kind, context(rng, name), stored.spec as Json);
      edits[edit]++;
      if (edit === 'no-op' && JSON.stringify(spec) !== JSON.stringify(stored.spec)) problems.push('a no-op edit changed the spec');
      if (edit === 'shape' && shapeOf(kind, spec) === shapeOf(kind, stored.spec)) problems.push('a shape edit kept the shape');
      const edited = await judge(handlers, kind, { ...stored, spec }, stored);
      if (edited.problem !== undefined) problems.push(`edit (${edit}): ${edited.problem}`);
    }
    t.same(problems, [], 'no answer but admitted or a documented denial; edits are what they say');
    t.ok(admitted >= RUNS * 0.8, `mostly admitted: ${admitted} of ${RUNS} creates (${denied} denied on purpose)`);
    t.ok(denied > 0, `${denied} denied: the generator breaks rules now and then`);
    // A kind with one shape (MemoryStore: KAOS's only) has no shape to switch to.
    const twoShapes = shapes.size === 2;
    t.ok(edits.children > 0 && edits['no-op'] > 0 && (edits.shape > 0) === twoShapes, `every kind of edit it has: ${JSON.stringify(edits)}, shapes ${[...shapes].join(', ')}`);
  });
}

t.test('the same seed writes the same specs', async (t) => {
  for (const kind of WORKLOAD_KINDS) {
    const a = new Random('same');
    const b = new Random('same');
    t.same(SPEC_GENERATORS[kind].create(context(a, 'x')), SPEC_GENERATORS[kind].create(context(b, 'x')), kind);
  }
});
