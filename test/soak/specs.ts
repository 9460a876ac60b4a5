// What the soak's clients write: one spec generator per KAOS kind, and one body generator per
// type the kinds depend on (the kind table's dependencyTypes: Secrets and ConfigMaps). Everything
// else in the soak — pools of names, operations, the final check — is driven by WORKLOAD_KINDS (AccessGrants, which run nothing, are not part of its traffic) and the
// kind table, so a new kind joins the soak with one entry in SPEC_GENERATORS (the Record type
// makes the type check ask for it).
//
// Specs mix both shapes of docs/api.md ("Newer KAOS shapes"), reference names from small pools
// (so references dangle while their target is absent, and targets are deleted under their
// dependents), and now and then break a documented rule on purpose, so that denials are part of
// the traffic. A few objects run pods that never become ready (kwok's NEVER_READY_ENV), so that
// their dependents wait.
import type { WorkloadKind } from '../../src/api/kinds.ts';
import { shapeOf } from '../../src/api/shapes.ts';
import type { DependencyTypeKind } from '../../src/cluster/kind-table.ts';
import { NEVER_READY_ENV } from '../cluster/control-plane.ts';
import type { Random } from './random.ts';

export type Json = Record<string, unknown>;

/** The kinds of objects the soak writes: the KAOS kinds and what they depend on. */
export type PoolKind = WorkloadKind | DependencyTypeKind;

/** What a generator may ask about the object it writes. */
export interface SpecContext {
  readonly rng: Random;
  /** The object's own name. */
  readonly self: string;
  /** A name of `kind` in the object's namespace, from the pool: it may or may not exist now. */
  name(kind: PoolKind): string;
}

/** What an edit of a stored spec does (the report counts updates by it). */
export type EditKind = 'children' | 'no-op' | 'shape';

export interface SpecGenerator {
  /** How many names of this kind each namespace's pool holds. */
  readonly pool: number;
  /** A spec for a new object, in either shape. */
  create(ctx: SpecContext): Json;
  /** Changes of a stored (defaulted) spec that change its children, one of them per edit. */
  readonly tweaks: readonly ((ctx: SpecContext, spec: Json) => void)[];
}

/** The models specs name: ModelAPIs serve some of them, Agents ask for one (not always served). */
const MODELS = ['smollm2:135m', 'gpt-4o-mini', 'ollama/llama3'] as const;

/** Keys of the dependency objects, the ones specs select. */
export const KEYS = { config: 'config.yaml', apiKey: 'api-key', tools: 'tools.py', dsn: 'dsn' } as const;

const env = (rng: Random): Json[] => [{ name: 'SOAK_SETTING', value: `v${rng.int(4)}` }];

/** A container env that keeps its pods from ever being ready, now and then. */
function containerEnv(rng: Random): Json[] {
  return rng.chance(0.06) ? [{ name: NEVER_READY_ENV, value: 'true' }] : env(rng);
}

/** A podSpec fragment now and then: extra metadata on the pod, or a sidecar. */
function podSpec(rng: Random, main: string): Json | undefined {
  if (!rng.chance(0.15)) return undefined;
  return rng.chance(0.5)
    ? { nodeSelector: { 'kubernetes.io/os': 'linux' } }
    : { containers: [{ name: main, env: [{ name: 'FROM_POD_SPEC', value: String(rng.int(3)) }] }] };
}

/** `spec` without its undefined fields (so a generated spec is what the client sends). */
function defined(spec: Json): Json {
  return Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== undefined));
}

const record = (value: unknown): Json => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {});

function getPath(value: unknown, ...keys: string[]): unknown {
  return keys.reduce<unknown>((at, key) => record(at)[key], value);
}

// ---- Agent ------------------------------------------------------------------------------------

/** An Agent's memory: the original form, or (the newer form) bound to a MemoryStore. */
function memory(ctx: SpecContext): Json {
  const { rng } = ctx;
  if (rng.chance(0.6)) return { enabled: rng.chance(0.7), contextLimit: 1 + rng.int(10) };
  return defined({
    memoryStore: ctx.name('MemoryStore'),
    maxReadScope: rng.chance(0.5) ? rng.pick(['session', 'agent']) : undefined,
    tools: rng.chance(0.3) ? rng.pick(['all', 'read', 'write']) : undefined,
  });
}

function agent(ctx: SpecContext): Json {
  const { rng } = ctx;
  const newShape = rng.chance(0.4);
  const access = rng.some([ctx.name('Agent'), ctx.name('Agent')], 2).filter((n, i, all) => all.indexOf(n) === i);
  // Listing itself is a documented denial ("an agent cannot list itself"): rarely, on purpose.
  const peers = rng.chance(0.03) ? [...access, ctx.self] : access.filter((n) => n !== ctx.self);
  const spec: Json = {
    modelAPI: ctx.name('ModelAPI'),
    mcpServers: [...new Set(rng.some([ctx.name('MCPServer'), ctx.name('MCPServer')], 2))],
    agentNetwork: { expose: rng.chance(0.85), access: peers },
    config: defined({
      description: `soak agent ${rng.int(100)}`,
      instructions: rng.chance(0.5) ? 'Answer briefly.' : undefined,
      reasoningLoopMaxSteps: rng.chance(0.5) ? 1 + rng.int(10) : undefined,
      memory: rng.chance(0.3) ? memory(ctx) : undefined,
      env: newShape ? undefined : env(rng),
      telemetry: newShape && rng.chance(0.5) ? { enabled: rng.chance(0.5) } : undefined,
    }),
    waitForDependencies: rng.chance(0.8),
    container: { env: containerEnv(rng) },
    podSpec: podSpec(rng, 'agent'),
    model: newShape ? rng.pick(MODELS) : undefined,
  };
  return defined(spec);
}

const AGENT: SpecGenerator = {
  pool: 6,
  create: agent,
  tweaks: [
    (ctx, s) => { s.config = { ...record(s.config), description: `edited ${ctx.rng.int(1000)}` }; },
    (_, s) => { s.agentNetwork = { ...record(s.agentNetwork), expose: record(s.agentNetwork).expose === false }; },
    (ctx, s) => { s.mcpServers = [ctx.name('MCPServer')]; },
    (ctx, s) => { s.modelAPI = ctx.name('ModelAPI'); },
    (_, s) => { s.waitForDependencies = s.waitForDependencies === false; },
    (ctx, s) => { s.container = { ...record(s.container), env: containerEnv(ctx.rng) }; },
    (ctx, s) => { s.config = { ...record(s.config), memory: memory(ctx) }; },
  ],
};

// ---- ModelAPI ---------------------------------------------------------------------------------

function modelAPI(ctx: SpecContext): Json {
  const { rng } = ctx;
  if (rng.chance(0.25)) {
    // Hosted without a model is a documented denial (`Required value`): rarely.
    const hostedConfig = rng.chance(0.04) ? undefined : { model: rng.pick(MODELS), env: env(rng) };
    return defined({ mode: 'Hosted', hostedConfig, container: { env: containerEnv(rng) }, podSpec: podSpec(rng, 'model-api') });
  }
  const newShape = rng.chance(0.4);
  let proxyConfig: Json;
  if (newShape) {
    const key = rng.weighted({ value: 1, secret: 1, configMap: 1, none: 1 });
    proxyConfig = defined({
      models: rng.some(MODELS, 3).length > 0 ? rng.some(MODELS, 3) : ['*'],
      provider: rng.chance(0.5) ? 'openai' : undefined,
      apiBase: rng.chance(0.5) ? 'http://backend.example:4000' : undefined,
      apiKey: key === 'value' ? { value: `sk-${rng.int(1000)}` }
        : key === 'secret' ? { valueFrom: { secretKeyRef: { name: ctx.name('Secret'), key: KEYS.apiKey } } }
          : key === 'configMap' ? { valueFrom: { configMapKeyRef: { name: ctx.name('ConfigMap'), key: KEYS.apiKey } } }
            : undefined,
    });
    if ((proxyConfig.models as string[]).length === 0) proxyConfig.models = ['*'];
  } else {
    const source = rng.weighted({ apiBase: 3, model: 3, fromString: 2, fromSecret: 2 });
    proxyConfig = {
      ...(source === 'apiBase' ? { apiBase: rng.chance(0.04) ? 'not a url' : 'http://backend.example:4000' } : {}),
      ...(source === 'model' ? { model: rng.pick(MODELS) } : {}),
      ...(source === 'fromString' ? { configYaml: { fromString: `model_list:\n  - model_name: ${rng.pick(MODELS)}\n    litellm_params:\n      model: ${rng.pick(MODELS)}\n` } } : {}),
      ...(source === 'fromSecret' ? { configYaml: { fromSecretKeyRef: { name: ctx.name('Secret'), key: KEYS.config } } } : {}),
      env: env(rng),
    };
  }
  return defined({
    mode: 'Proxy',
    proxyConfig,
    telemetry: newShape && rng.chance(0.3) ? { enabled: true, endpoint: 'http://otel.example:4317' } : undefined,
    container: newShape ? undefined : { env: containerEnv(rng) },
    podSpec: podSpec(rng, 'model-api'),
  });
}

const MODEL_API: SpecGenerator = {
  pool: 4,
  create: modelAPI,
  tweaks: [
    (ctx, s) => {
      const own = s.mode === 'Hosted' ? 'hostedConfig' : 'proxyConfig';
      s[own] = { ...record(s[own]), env: [{ name: 'SOAK_SETTING', value: `edited-${ctx.rng.int(1000)}` }] };
    },
    (ctx, s) => { s.podSpec = podSpec(ctx.rng, 'model-api') ?? { nodeSelector: { 'kubernetes.io/arch': 'amd64' } }; },
    (ctx, s) => { s.container = { ...record(s.container), env: containerEnv(ctx.rng) }; },
  ],
};

// ---- MCPServer --------------------------------------------------------------------------------

function mcpServer(ctx: SpecContext): Json {
  const { rng } = ctx;
  if (rng.chance(0.35)) {
    const runtime = rng.weighted({ 'python-string': 3, kubernetes: 1, custom: 1 });
    return defined({
      runtime,
      params: runtime === 'python-string' ? `def echo(text: str) -> str:\n    return text  # ${rng.int(100)}\n` : undefined,
      container: runtime === 'custom' ? { image: 'soak.local/mcp:1', env: containerEnv(rng) } : { env: containerEnv(rng) },
      telemetry: rng.chance(0.3) ? { enabled: rng.chance(0.5) } : undefined,
    });
  }
  const source = rng.weighted({ fromPackage: 2, fromString: 2, fromSecretKeyRef: 1, two: 0.15 });
  const type = source === 'fromPackage' && rng.chance(0.4) ? 'node-runtime' : 'python-runtime';
  const tools: Json = {
    ...(source === 'fromPackage' ? { fromPackage: type === 'node-runtime' ? '@soak/echo-server' : 'soak-echo-server' } : {}),
    ...(source === 'fromString' || source === 'two' ? { fromString: `def echo(text: str) -> str:\n    return text  # ${rng.int(100)}\n` } : {}),
    // Two sources at once is a documented denial (`exactly one tools source`): rarely.
    ...(source === 'fromSecretKeyRef' || source === 'two' ? { fromSecretKeyRef: { name: ctx.name('Secret'), key: KEYS.tools } } : {}),
  };
  return defined({ type, config: { tools, env: env(rng) }, container: { env: containerEnv(rng) }, podSpec: podSpec(rng, 'mcp-server') });
}

const MCP_SERVER: SpecGenerator = {
  pool: 4,
  create: mcpServer,
  tweaks: [
    (ctx, s) => { s.container = { ...record(s.container), env: containerEnv(ctx.rng) }; },
    (ctx, s) => { s.podSpec = podSpec(ctx.rng, 'mcp-server') ?? { nodeSelector: { 'kubernetes.io/arch': 'amd64' } }; },
  ],
};

// ---- MemoryStore ------------------------------------------------------------------------------

/** The size of a local store's claim, in Gi (the default 5 when unset). */
const claimGi = (spec: Json): number => Number(/^(\d+)Gi$/.exec(String(getPath(spec, 'storage', 'local', 'persistentVolume', 'size') ?? '5Gi'))?.[1] ?? 5);

function memoryStore(ctx: SpecContext): Json {
  const { rng } = ctx;
  const external = rng.chance(0.35);
  const binding = (): Json => ({ modelAPI: ctx.name('ModelAPI'), model: rng.pick(MODELS) });
  return defined({
    storage: external
      ? { type: 'external', external: { connectionSecretRef: { name: ctx.name('Secret'), key: KEYS.dsn }, ...(rng.chance(0.3) ? { embeddingDims: 768 } : {}) } }
      : { type: 'local', ...(rng.chance(0.5) ? { local: { persistentVolume: { size: `${1 + rng.int(5)}Gi` } } } : {}) },
    // Two replicas in local mode is a documented denial (one pod owns the volume): rarely.
    replicas: external ? (rng.chance(0.5) ? 2 + rng.int(2) : undefined) : (rng.chance(0.03) ? 2 : undefined),
    models: { summarization: binding(), embedding: binding() },
    shortTerm: rng.chance(0.3) ? { tokenBudget: 1024 * (2 + rng.int(4)) } : undefined,
    longTerm: rng.chance(0.3) ? { enabled: rng.chance(0.7), defaultTopK: 1 + rng.int(10) } : undefined,
    maxReadScope: rng.chance(0.5) ? rng.pick(['session', 'agent']) : undefined,
    defaultFailureMode: rng.chance(0.3) ? rng.pick(['soft', 'strict']) : undefined,
    container: { env: containerEnv(rng) },
    podSpec: podSpec(rng, 'memory'),
  });
}

const MEMORY_STORE: SpecGenerator = {
  pool: 3,
  create: memoryStore,
  tweaks: [
    (ctx, s) => { s.container = { ...record(s.container), env: containerEnv(ctx.rng) }; },
    (ctx, s) => { s.maxReadScope = ctx.rng.pick(['session', 'agent']); },
    // A local store's claim grows (it may never shrink); an external store scales.
    (ctx, s) => {
      const storage = record(s.storage);
      if (storage.type === 'external') {
        s.replicas = 1 + ctx.rng.int(3);
      } else {
        const local = record(storage.local);
        s.storage = { ...storage, local: { ...local, persistentVolume: { ...record(local.persistentVolume), size: `${claimGi(s) + 1}Gi` } } };
      }
    },
    // Local to external and back: the claim goes, or comes (a warning, not a denial).
    (ctx, s) => {
      const fresh = memoryStore(ctx);
      s.storage = fresh.storage;
      s.replicas = fresh.replicas;
    },
  ],
};

export const SPEC_GENERATORS: Readonly<Record<WorkloadKind, SpecGenerator>> = {
  Agent: AGENT,
  ModelAPI: MODEL_API,
  MCPServer: MCP_SERVER,
  MemoryStore: MEMORY_STORE,
};

/**
 * An edit of the stored (defaulted) spec of a `kind` object: the same spec written again
 * (changes nothing), a whole new spec in the other shape (docs/api.md, "Newer KAOS shapes"), or one of
 * the kind's tweaks (changes its children).
 */
export function editSpec(kind: WorkloadKind, ctx: SpecContext, stored: Json): { spec: Json; edit: EditKind } {
  const generator = SPEC_GENERATORS[kind];
  const roll = ctx.rng.next();
  if (roll < 0.2) return { spec: structuredClone(stored), edit: 'no-op' };
  if (roll < 0.4) {
    const from = shapeOf(kind, stored);
    for (let i = 0; i < 20; i++) {
      const spec = generator.create(ctx);
      if (shapeOf(kind, spec) !== from) return { spec, edit: 'shape' };
    }
  }
  const spec = structuredClone(stored);
  ctx.rng.pick(generator.tweaks)(ctx, spec);
  return { spec, edit: 'children' };
}

// ---- what the kinds depend on -----------------------------------------------------------------

export interface DependencyGenerator {
  readonly pool: number;
  /** The object's body (kind, apiVersion and metadata are the caller's). A new value each time. */
  body(rng: Random): Json;
}

const data = (rng: Random): Record<string, string> =>
  Object.fromEntries(Object.values(KEYS).map((key) => [key, `${key}-${rng.int(1_000_000)}`]));

export const DEPENDENCY_GENERATORS: Readonly<Record<DependencyTypeKind, DependencyGenerator>> = {
  Secret: { pool: 3, body: (rng) => ({ type: 'Opaque', stringData: data(rng) }) },
  ConfigMap: { pool: 3, body: (rng) => ({ data: data(rng) }) },
};

/** The pool size of each kind the soak writes. */
export function poolSize(kind: PoolKind): number {
  return (SPEC_GENERATORS as Readonly<Record<string, { pool: number }>>)[kind]?.pool ?? DEPENDENCY_GENERATORS[kind as DependencyTypeKind].pool;
}
