import t from 'tap';
import { createPodSpecCheck, podSpecErrors } from '../../../src/admission/pod-spec-check.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { loadConfig } from '../../../src/config.ts';
import type { KubeClient } from '../../../src/kube/client.ts';
import { ApiError } from '../../../src/kube/errors.ts';
import type { Logger } from '../../../src/kube/logger.ts';
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

t.test('the validating webhook\'s podSpec dry run renders the pod with the defaults', async (t) => {
  const withDefaults = loadConfig({
    IMAGE_PULL_SECRETS: 'regcred,mirror',
    DEFAULT_AGENT_RESOURCES: '{"requests":{"cpu":"100m","memory":"256Mi"},"limits":{"memory":"1Gi"}}',
    DEFAULT_NODE_SELECTOR: '{"pool":"kaos"}',
  });
  const object: AgentInput = { metadata: { name: 'x', namespace: 'ns' }, spec: { modelAPI: 'm', podSpec: { hostname: 'h' } } };
  // The check is given the operator's whole Config (as main.ts does) and dry-runs what render makes.
  const sent: unknown[] = [];
  const client = {
    create: async (_path: string, body: unknown) => {
      sent.push(body);
      return body;
    },
  } as unknown as Pick<KubeClient, 'create'>;
  const logger = { warn: () => {} } as unknown as Logger;
  const check = createPodSpecCheck({ client, config: withDefaults, logger });
  t.strictSame(await check('Agent', object as unknown as KubeObject), []);
  const pod = (sent[0] as Deployment).spec.template.spec;
  t.strictSame(pod['imagePullSecrets'], [{ name: 'regcred' }, { name: 'mirror' }]);
  t.strictSame(pod['nodeSelector'], { pool: 'kaos' });
  t.strictSame(pod['securityContext'], { seccompProfile: { type: 'RuntimeDefault' } });
  t.strictSame(pod.containers[0]?.resources, { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } });
  t.equal(pod['hostname'], 'h');
});
