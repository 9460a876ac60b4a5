// End-to-end admission, defaulting: the real kubectl against a real kube-apiserver with
// kaos-operator's webhooks registered (test/e2e/support/admission.ts). Every subtest asserts what a
// user sees — kubectl's exit code, stdout and stderr, whole — and works in namespaces of its own,
// so subtests do not depend on each other. The KAOS samples, every default, idempotence,
// printer columns, the operator's RBAC identity, and last, SIGTERM (which stops the operator).
//
// Run `npm run build` first: the operator process is dist/main.js.
import { request as httpsRequest } from 'node:https';
import t from 'tap';
import { eventually } from '../support/poll.ts';
import type { KubectlResult } from '../cluster/control-plane.ts';
import {
  type Json,
  IMAGES,
  DEFAULT_MODEL,
  SAMPLES,
  DEFAULTED,
  RESOURCE,
  stack,
  useAdmissionStack,
  kubectl,
  kaos,
  manifest,
  nameOf,
  apply,
  lines,
  warnings,
  setup,
  get,
  resourceVersions,
  podSpecOf,
  annotationsOf,
  withoutLastApplied,
  hostedModel,
  pythonTools,
  agent,
} from './support/admission.ts';
import { NEVER_READY } from './support/kwok.ts';

useAdmissionStack(t);

/**
 * Waits until the controller is done with `ns`: every KAOS object Ready (their pods run on the
 * local control plane's kwok nodes) and no resourceVersion moving for a second, so that a
 * comparison of resourceVersions around a kubectl command sees only what that command did.
 */
async function settled(ns: string): Promise<void> {
  await eventually(`every KAOS object in ${ns} Ready, and settled`, async () => {
    const phases = (await kubectl(['get', 'agents,modelapis,mcpservers', '-n', ns, '-o', 'jsonpath={range .items[*]}{.status.phase} {end}'])).stdout.trim().split(' ');
    if (!phases.every((p) => p === 'Ready')) return undefined;
    const before = await resourceVersions(ns);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return (await resourceVersions(ns)) === before ? true : undefined;
  }, { timeoutMs: 90_000, intervalMs: 250 });
}

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

      await settled(c.ns);
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
    // Its pods never become ready: the dependency-not-ready warning below needs one.
    { ...hostedModel('hosted', 'qwen2:0.5b'), spec: { ...(hostedModel('hosted', 'qwen2:0.5b').spec as Json), container: NEVER_READY } },
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
      // The memory block's type and its original-shape defaults are the webhook's (docs/api.md, "Agent remote memory").
      defaulted: 'spec.config.env[MODEL_NAME],spec.config.memory.contextLimit,spec.config.memory.maxSessionEvents,spec.config.memory.maxSessions,spec.config.memory.type,spec.container.image',
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
      defaulted: 'spec.config.memory.maxSessionEvents,spec.config.memory.maxSessions,spec.config.memory.type',
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
    await settled(ns);
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
    // The CRDs default `status` (docs/api.md, "Status and conditions") and the API server drops status on create, so the
    // first write after a create persists the defaulted status and moves resourceVersion once,
    // whatever the webhooks do. From then on a server-side apply is a complete no-op.
    await settled(ns);
    const before = await resourceVersions(ns);
    t.strictSame(await kubectl(ssa, file), { code: 0, stdout: out, stderr: '' });
    t.equal(await resourceVersions(ns), before, 'a further server-side apply changes nothing, not even resourceVersion');
    const a1 = await get(ns, 'Agent', 'a1');
    t.strictSame(
      (podSpecOf(a1).config as Json).env,
      [{ name: 'MODEL_NAME', value: 'qwen2:0.5b' }],
      'MODEL_NAME survives server-side apply of a manifest that omits it',
    );
    t.equal(
      annotationsOf(a1)[DEFAULTED],
      'spec.config.env[MODEL_NAME],spec.config.memory.contextLimit,spec.config.memory.maxSessionEvents,spec.config.memory.maxSessions,spec.config.memory.type,spec.container.image',
      'the memory defaults survive it too, recorded',
    );
    t.match((podSpecOf(a1).config as Json).memory, { type: 'local', contextLimit: 6, maxSessions: 1000, maxSessionEvents: 500 });
  });
});

t.test('defaulted values follow their source; values the user wrote are never overwritten', async (t) => {
  const ns = 'rederive';
  await setup(t, ns, [
    // Its pods never become ready: the dependency-not-ready warning below needs one.
    { ...hostedModel('hosted', 'qwen2:0.5b'), spec: { ...(hostedModel('hosted', 'qwen2:0.5b').spec as Json), container: NEVER_READY } },
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


// ---- printer columns --------------------------------------------------------------------------

t.test('kubectl get shows the printer columns', async (t) => {
  const ns = 'printers';
  await setup(t, ns, [
    hostedModel('llm'),
    kaos('ModelAPI', 'gateway', { mode: 'Proxy', proxyConfig: { apiBase: 'http://ollama:11434', model: 'ollama/llama3.2' }, container: NEVER_READY }),
    { ...pythonTools('py-tools'), spec: { ...(pythonTools('py-tools').spec as Json), container: NEVER_READY } },
    kaos('MCPServer', 'js-tools', { type: 'node-runtime', config: { tools: { fromPackage: '@modelcontextprotocol/server-everything' } }, container: NEVER_READY }),
    agent('researcher', { modelAPI: 'llm', mcpServers: ['py-tools'] }),
    agent('writer', { modelAPI: 'gateway' }),
  ]);
  // The controller writes every status; kwok runs the pods. llm's pod becomes ready; the others'
  // never do (their containers carry kwok's never-ready marker), so the rows show both states.
  const phases = async (): Promise<string> =>
    (await kubectl(['get', 'agents,modelapis,mcpservers', '-n', ns, '-o', 'jsonpath={range .items[*]}{.metadata.name}={.status.phase} {end}'])).stdout;
  const settled = 'researcher=Waiting writer=Waiting gateway=Pending llm=Ready js-tools=Pending py-tools=Pending ';
  await eventually(`the controller's statuses in ${ns}`, async () => (await phases()) === settled, { timeoutMs: 30_000, intervalMs: 200 });

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
      'NAME                          MODELAPI   MODEL   READY   PHASE     AGE',
      'agent.kaos.tools/researcher   llm                false   Waiting   <age>',
      'agent.kaos.tools/writer       gateway            false   Waiting   <age>',
      '',
      'NAME                          MODE     READY   PHASE     AGE',
      'modelapi.kaos.tools/gateway   Proxy    false   Pending   <age>',
      'modelapi.kaos.tools/llm       Hosted   true    Ready     <age>',
      '',
      'NAME                            TYPE             RUNTIME   READY   PHASE     AGE',
      'mcpserver.kaos.tools/js-tools   node-runtime               false   Pending   <age>',
      'mcpserver.kaos.tools/py-tools   python-runtime             false   Pending   <age>',
    ),
    stderr: '',
  }, 'kubectl get agents,modelapis,mcpservers');

  t.strictSame(await table(['api']), {
    code: 0,
    stdout: lines(
      'NAME      MODE     READY   PHASE     AGE',
      'gateway   Proxy    false   Pending   <age>',
      'llm       Hosted   true    Ready     <age>',
    ),
    stderr: '',
  }, 'kubectl get api');
  t.strictSame(await table(['mcp']), {
    code: 0,
    stdout: lines(
      'NAME       TYPE             RUNTIME   READY   PHASE     AGE',
      'js-tools   node-runtime               false   Pending   <age>',
      'py-tools   python-runtime             false   Pending   <age>',
    ),
    stderr: '',
  }, 'kubectl get mcp');
  t.strictSame(await table(['agent']), {
    code: 0,
    stdout: lines(
      'NAME         MODELAPI   MODEL   READY   PHASE     AGE',
      'researcher   llm                false   Waiting   <age>',
      'writer       gateway            false   Waiting   <age>',
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

t.test('the operator runs as its ServiceAccount with the least privilege of src/cluster/rbac.ts', async (t) => {
  if (stack === undefined) throw new Error('no local stack');
  const asOperator = (args: readonly string[]): Promise<KubectlResult> =>
    kubectl(['--kubeconfig', stack?.operatorKubeconfig ?? '', ...args]);
  const whoami = await asOperator(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
  t.strictSame(whoami, { code: 0, stdout: 'system:serviceaccount:kaos-system:kaos-operator', stderr: '' }, 'every test above ran the operator as this identity');
  /** In every namespace, or only in `namespace` (the Lease is granted by a Role in the operator's own). */
  const can = async (verb: string, resource: string, namespace?: string): Promise<string> => {
    // `agents.kaos.tools/status` means the subresource here; kubectl reads `a/b` as a name.
    const [plural = '', subresource] = resource.split('/');
    const sub = subresource === undefined ? [] : [`--subresource=${subresource}`];
    const where = namespace === undefined ? ['-A'] : ['-n', namespace];
    return (await asOperator(['auth', 'can-i', verb, plural, ...sub, ...where])).stdout.trim();
  };
  for (const resource of ['agents.kaos.tools', 'modelapis.kaos.tools', 'mcpservers.kaos.tools', 'namespaces']) {
    t.equal(await can('watch', resource), 'yes', `watch ${resource}`);
  }
  t.equal(await can('create', 'deployments.apps'), 'yes', 'dry-run create of Deployments (the podSpec check)');
  for (const verb of ['get', 'create', 'update']) {
    t.equal(await can(verb, 'leases.coordination.k8s.io', 'kaos-system'), 'yes', `${verb} leases in kaos-system (leader election)`);
    t.equal(await can(verb, 'leases.coordination.k8s.io'), 'no', `no ${verb} leases in every namespace: a Role in its own`);
  }
  for (const verb of ['create', 'patch']) t.equal(await can(verb, 'events.events.k8s.io'), 'yes', `${verb} events`);
  // The controller: children through its cache, server-side apply and prune; status; finalizers.
  // (HTTPRoutes have the same rule, but kubectl cannot ask about a resource whose CRD is not
  // installed; the chart's e2e runs under the same rules.)
  // get: one fresh read before an apply that drops an element of a keyed list (kube/apply.ts).
  for (const resource of ['deployments.apps', 'services', 'configmaps']) {
    for (const verb of ['get', 'list', 'watch', 'create', 'patch', 'delete']) t.equal(await can(verb, resource), 'yes', `${verb} ${resource} (owned children)`);
  }
  for (const verb of ['list', 'watch']) t.equal(await can(verb, 'secrets'), 'yes', `${verb} secrets (metadata only, for the config hash)`);
  t.equal(await can('update', 'agents.kaos.tools/status'), 'yes', 'update agents/status');
  t.equal(await can('patch', 'modelapis.kaos.tools'), 'yes', 'patch modelapis (removing the Go operator\'s finalizers)');
  for (const [verb, resource] of [
    ['get', 'secrets'],
    ['update', 'deployments.apps'],
    ['update', 'services'],
    ['create', 'agents.kaos.tools'],
    ['delete', 'modelapis.kaos.tools'],
    ['update', 'agents.kaos.tools'],
    ['patch', 'agents.kaos.tools/status'],
    ['update', 'namespaces'],
    ['create', 'pods'],
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
t.test('SIGTERM (a pod being stopped): /readyz fails at once, admission goes on for the delay telling each connection to go, then a clean exit', async (t) => {
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
  // Everything but the dry run is done before the signal: only the dry run has to fit in the
  // shutdown delay (SHUTDOWN_DELAY_SECONDS, 5 s), however slowly kubectl starts on a loaded machine.
  const ns = 'shutdown';
  await setup(t, ns);
  process.kill(operator.pid, 'SIGTERM');
  const status = await eventually('readyz to fail after SIGTERM', async () => {
    const code = await readyz();
    return code === 200 ? undefined : code;
  }, { timeoutMs: 2500, intervalMs: 50 });
  t.equal(status, 503, 'unready as soon as the signal arrives');
  const dry = await kubectl(['create', '-n', ns, '--dry-run=server', '-o', 'jsonpath={.spec.container.image}', '-f', '-'], manifest([kaos('ModelAPI', 'm', { mode: 'Hosted', hostedConfig: { model: 'x' } })]));
  t.strictSame(dry, { code: 0, stdout: IMAGES.ollama, stderr: '' }, 'the webhooks still answer during the delay');
  // What the API server reads on its keep-alive connections meanwhile: go, open the next one
  // where the endpoints send you (so close() later cuts no connection under a review).
  const connection = await new Promise<string | undefined>((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port: operator.webhookPort, path: '/healthz', method: 'GET', rejectUnauthorized: false, agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.headers.connection));
    });
    req.once('error', reject);
    req.end();
  });
  t.equal(connection, 'close', 'and every answer says Connection: close');
  t.equal(await operator.stop(), 0, 'then it exits 0');
});
