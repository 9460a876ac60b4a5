import t from 'tap';
import { createPodSpecCheck, isOutage, podSpecErrors } from '../../../src/admission/pod-spec-check.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { MAX_CAUSES } from '../../../src/api/validation/answer-limits.ts';
import type { Agent, MCPServer } from '../../../src/api/schema/index.ts';
import { silentLogger, type Logger } from '../../../src/leaves/logger.ts';
import { deploymentDryRun } from '../../../src/kube/dry-run.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import type { AgentInput, Deployment } from '../../../src/render/index.ts';

// What the API server answers to a dry-run create of a Deployment whose pod is invalid.
function invalidDeployment(causes: Array<{ reason: string; field: string; message: string }>): ApiError {
  return new ApiError(422, 'Invalid', 'Deployment.apps "kaos-podspec-check-x" is invalid: ...', {
    name: 'kaos-podspec-check-x',
    group: 'apps',
    kind: 'Deployment',
    causes,
  });
}

const merged = {
  containers: [
    {
      name: 'agent',
      image: 'img',
      ports: [{ name: 'http', containerPort: 8000 }, { containerPort: 70000 }],
      volumeMounts: [{ name: 'cache', mountPath: '/cache' }],
    },
  ],
};
const fragment = { containers: [{ name: 'agent', ports: [{ containerPort: 70000 }], volumeMounts: [{ name: 'cache', mountPath: '/cache' }] }] };

t.test('causes under the pod template point at the user\'s fragment, with the API server\'s text', async (t) => {
  const errors = podSpecErrors(
    invalidDeployment([
      { reason: 'FieldValueInvalid', field: 'spec.template.spec.containers[0].ports[1].containerPort', message: 'Invalid value: 70000: must be between 1 and 65535, inclusive' },
      { reason: 'FieldValueRequired', field: 'spec.template.spec.containers[0].image', message: 'Required value' },
      { reason: 'FieldValueNotFound', field: 'spec.template.spec.containers[0].volumeMounts[0].name', message: 'Not found: "cache"' },
      { reason: 'FieldValueInvalid', field: 'metadata.name', message: 'Invalid value: "x": not about the pod' },
    ]),
    merged,
    fragment,
  );
  t.same(
    errors.map((e) => [e.type, e.errorString()]),
    [
      ['FieldValueInvalid', 'spec.podSpec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive'],
      ['FieldValueInvalid', 'spec: Invalid value: the pod it generates is invalid: containers[0].image: Required value'],
      ['FieldValueNotFound', 'spec.podSpec.containers[0].volumeMounts[0].name: Not found: "cache"'],
    ],
    'user fields re-mapped, others reported on spec with the generated pod\'s path, non-pod causes dropped',
  );
});

t.test('of a list of causes as long as the fragment\'s lists, only those a denial can show are traced back to the fragment', async (t) => {
  // One cause per item of a 20,000-item env list: tracing each scans the list, so only the first
  // MAX_CAUSES are; the rest are counted on spec, as a denial counts them anyway.
  const env = Array.from({ length: 20_000 }, (_, i) => ({ name: `bad name ${i}`, value: 'x' }));
  const big = { containers: [{ name: 'agent', image: 'img', env }] };
  const causes = env.map((e, i) => ({ reason: 'FieldValueInvalid', field: `spec.template.spec.containers[0].env[${i}].name`, message: `Invalid value: "${e.name}": a valid environment variable name` }));
  const errors = podSpecErrors(invalidDeployment(causes), big, { containers: [{ name: 'agent', env }] });
  t.equal(errors.length, env.length, 'every cause is counted');
  t.equal(errors.filter((e) => e.field.startsWith('spec.podSpec.containers[0].env[')).length, MAX_CAUSES, 'the first ones point at the fragment');
  t.equal(errors[MAX_CAUSES - 1]?.field, `spec.podSpec.containers[0].env[${MAX_CAUSES - 1}].name`);
  t.equal(errors[MAX_CAUSES]?.field, 'spec', 'the rest are on spec');
});

t.test('a 422 without pod causes is still a refusal of the pod', async (t) => {
  const errors = podSpecErrors(invalidDeployment([]), merged, fragment);
  t.equal(errors.length, 1);
  t.equal(errors[0]?.field, 'spec');
  t.match(errors[0]?.errorString() ?? '', /^spec: Invalid value: the pod it generates is invalid: Deployment\.apps/);
});

t.test('without a podSpec fragment every cause is reported on spec', async (t) => {
  const errors = podSpecErrors(
    invalidDeployment([{ reason: 'FieldValueInvalid', field: 'spec.template.spec.containers[0].resources.limits[cpu]', message: 'Invalid value: "lots": must be a quantity' }]),
    merged,
    undefined,
  );
  t.same(errors.map((e) => e.errorString()), ['spec: Invalid value: the pod it generates is invalid: containers[0].resources.limits[cpu]: Invalid value: "lots": must be a quantity']);
});

// The check end to end, with the dry run's answer chosen by the test.
function checkWith(answer: () => Promise<unknown>, logger: Logger = silentLogger) {
  let calls = 0;
  const check = createPodSpecCheck({
    dryRunCreate: deploymentDryRun({ create: async <T>() => (calls++, (await answer()) as T) }),
    config: loadConfig({}),
    logger,
  });
  return { check, calls: () => calls };
}

// Some of these specs are ones the schema refuses: the check must stay total on them (the
// handler calls it only for conforming specs, so the type says Agent).
const agentWith = (spec: Record<string, unknown>): Agent =>
  ({
    apiVersion: 'kaos.tools/v1alpha1',
    kind: 'Agent',
    metadata: { name: 'a', namespace: 'ns' },
    spec: { modelAPI: 'm', ...spec },
  }) as Agent;

t.test('a pod that cannot be built from the object refuses the object, without a dry run', async (t) => {
  const { check, calls } = checkWith(async () => ({}));
  const noFragment = await check('Agent', agentWith({ config: { env: 'not a list' } }));
  t.same(noFragment.map((e) => e.field), ['spec'], 'on spec when there is no podSpec');
  t.match(noFragment[0]?.errorString(), /^spec: Invalid value: no pod can be built from it: /);
  const withFragment = await check('Agent', agentWith({ container: { env: [null] }, podSpec: { nodeSelector: { a: 'b' } } }));
  t.same(withFragment.map((e) => e.field), ['spec.podSpec'], 'on spec.podSpec when there is one');
  t.match(withFragment[0]?.errorString(), /^spec\.podSpec: Invalid value: no pod can be built from it: /);
  t.equal(calls(), 0, 'nothing sent to the API server');
});

t.test('only outages of the API server let the object through', async (t) => {
  const object = agentWith({ podSpec: { nodeSelector: { a: 'b' } } });
  const outages: [string, unknown][] = [
    ['timeout', new Error('request timed out after 2500 ms')],
    ['network', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' })],
    ['500', new ApiError(500, 'InternalError', 'etcd is unhappy')],
    ['503', new ApiError(503, 'ServiceUnavailable', 'HTTP 503')],
    ['429', new ApiError(429, 'TooManyRequests', 'slow down')],
    ['401', new ApiError(401, 'Unauthorized', 'Unauthorized')],
    ['403', new ApiError(403, 'Forbidden', 'deployments.apps is forbidden')],
  ];
  for (const [name, err] of outages) {
    const warned: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (_o: object, msg: string) => void warned.push(msg) };
    const { check, calls } = checkWith(() => Promise.reject(err), logger);
    t.same(await check('Agent', object), [], `${name}: allowed`);
    t.equal(calls(), 1, `${name}: the dry run was tried`);
    t.same(warned, ['spec.podSpec could not be checked'], `${name}: logged once`);
    if (err instanceof ApiError) t.equal(isOutage(err.code), true, `${name}: an outage`);
  }
  const verdicts: [string, ApiError, RegExp][] = [
    ['422', invalidDeployment([{ reason: 'FieldValueRequired', field: 'spec.template.spec.containers[0].name', message: 'Required value' }]), /Required value/],
    ['400', new ApiError(400, 'BadRequest', 'quantities must match the regular expression'), /quantities must match/],
    ['413', new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728'), /^spec: Invalid value: the pod it generates is invalid: Request entity too large/],
  ];
  for (const [name, err, message] of verdicts) {
    const { check } = checkWith(() => Promise.reject(err));
    const errors = await check('Agent', object);
    t.equal(errors.length, 1, `${name}: refused`);
    t.match(errors[0]?.errorString(), message, `${name}: in the API server's words`);
    t.equal(isOutage(err.code), false, `${name}: a verdict on the object`);
  }
});

t.test('the validating webhook\'s podSpec dry run renders the pod with the defaults', async (t) => {
  const withDefaults = loadConfig({
    IMAGE_PULL_SECRETS: 'regcred,mirror',
    DEFAULT_AGENT_RESOURCES: '{"requests":{"cpu":"100m","memory":"256Mi"},"limits":{"memory":"1Gi"}}',
    DEFAULT_NODE_SELECTOR: '{"pool":"kaos"}',
  });
  const object: AgentInput = { metadata: { name: 'x', namespace: 'ns' }, spec: { modelAPI: 'm', podSpec: { hostname: 'h' } } };
  // The check is given the operator's whole Config (as main.ts does) and dry-runs what render makes.
  const sent: unknown[] = [];
  const dryRunCreate = async (_namespace: string, body: object) => {
    sent.push(body);
    return { ok: true as const };
  };
  const check = createPodSpecCheck({ dryRunCreate, config: withDefaults, logger: silentLogger });
  t.strictSame(await check('Agent', object as unknown as Agent), []);
  const pod = (sent[0] as Deployment).spec.template.spec;
  t.strictSame(pod['imagePullSecrets'], [{ name: 'regcred' }, { name: 'mirror' }]);
  t.strictSame(pod['nodeSelector'], { pool: 'kaos' });
  t.strictSame(pod['securityContext'], { seccompProfile: { type: 'RuntimeDefault' } });
  t.strictSame(pod.containers[0]?.resources, { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } });
  t.equal(pod['hostname'], 'h');
});

t.test('a runtime MCPServer\'s pod is rendered from its registry entry; an unresolved runtime gets a placeholder image', async (t) => {
  const { runtimesYaml } = await import('../../../src/api/mcp-runtime-defaults.ts');
  const { parseRuntimes } = await import('../../../src/api/mcp-runtimes.ts');
  const sent: Deployment[] = [];
  const check = createPodSpecCheck({
    dryRunCreate: async (_ns, deployment) => {
      sent.push(deployment as Deployment);
      return { ok: true };
    },
    config: loadConfig({}),
    logger: silentLogger,
    mcpRuntimes: () => parseRuntimes(runtimesYaml()),
  });
  const mcp = (runtime: string): MCPServer => ({
    apiVersion: 'kaos.tools/v1alpha1',
    kind: 'MCPServer',
    metadata: { name: 'm', namespace: 'ns' },
    spec: { runtime, container: { env: [{ name: 'SLACK_BOT_TOKEN', value: 't' }, { name: 'SLACK_TEAM_ID', value: 'T' }] } },
  });
  t.same(await check('MCPServer', mcp('slack')), []);
  t.equal(sent[0]?.spec.template.spec.containers[0]?.image, 'zencoderai/slack-mcp:latest');
  t.same(sent[0]?.spec.template.spec.containers[0]?.args, ['--transport', 'http', '--port', '8000']);
  await check('MCPServer', mcp('discord'));
  t.equal(sent[1]?.spec.template.spec.containers[0]?.image, 'kaos.invalid/unresolved-runtime');
});

t.test('the dry run is a create with dryRun, asking for the metadata only: the Deployment is not sent back', async (t) => {
  const sent: { path: string; options: unknown }[] = [];
  const dryRun = deploymentDryRun({ create: async <T>(path: string, _body: unknown, options: unknown) => (sent.push({ path, options }), {} as T) });
  t.same(await dryRun('ns', { kind: 'Deployment' }), { ok: true });
  t.match(sent, [{ path: '/apis/apps/v1/namespaces/ns/deployments', options: { dryRun: true, metadataOnly: true } }]);
});
