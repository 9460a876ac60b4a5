// chartRunArgs(): what the chart's Deployment gives its pod, as the arguments of a container run.
import t from 'tap';
import { chartRunArgs, quantity, type ChartDeployment, type PodContext } from '../../support/chart-pod.ts';

const deployment = (patch: { pod?: Record<string, unknown>; container?: Record<string, unknown> } = {}): ChartDeployment => ({
  kind: 'Deployment',
  metadata: { name: 'kaos-operator', namespace: 'kaos-system' },
  spec: {
    template: {
      spec: {
        securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
        terminationGracePeriodSeconds: 30,
        volumes: [{ name: 'serving-certs', secret: { secretName: 'kaos-operator-webhook-tls' } }, { name: 'tmp', emptyDir: {} }],
        containers: [{
          name: 'operator',
          image: 'localhost/kaos-operator:0.1.0',
          env: [
            { name: 'WEBHOOK_PORT', value: '9443' },
            { name: 'LEADER_ELECT', value: 'true' },
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
          ],
          securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          resources: { limits: { memory: '512Mi' } },
          volumeMounts: [{ name: 'serving-certs', mountPath: '/var/run/kaos-operator/serving-certs', readOnly: true }, { name: 'tmp', mountPath: '/tmp' }],
          ...patch.container,
        }],
        ...patch.pod,
      },
    },
  },
});

const ctx: PodContext = {
  engine: 'podman',
  name: 'c1',
  podName: 'kaos-operator-0',
  podNamespace: 'kaos-system',
  secrets: { 'kaos-operator-webhook-tls': '/host/certs' },
  env: { WEBHOOK_PORT: '40001', KUBECONFIG: '/kube/config' },
  mounts: { '/host/kubeconfig': '/kube/config' },
  extra: ['--detach'],
};

t.test('the chart\'s pod, as run arguments', async (t) => {
  t.same(chartRunArgs(deployment(), ctx), [
    '--name', 'c1', '--detach',
    '--user', '1000:1000', '--group-add', '1000',
    '--read-only', '--read-only-tmpfs=false',
    '--cap-drop', 'all', '--security-opt', 'no-new-privileges',
    '--memory', `${512 * 2 ** 20}b`, '--stop-timeout', '30',
    '--env', 'WEBHOOK_PORT=40001', '--env', 'LEADER_ELECT=true', '--env', 'POD_NAME=kaos-operator-0', '--env', 'POD_NAMESPACE=kaos-system',
    '--env', 'KUBECONFIG=/kube/config',
    '--volume', '/host/certs:/var/run/kaos-operator/serving-certs:ro', '--tmpfs', '/tmp',
    '--volume', '/host/kubeconfig:/kube/config:ro',
    'localhost/kaos-operator:0.1.0',
  ]);
});

t.test('Docker\'s --read-only mounts nothing writable of its own', async (t) => {
  t.notOk(chartRunArgs(deployment(), { ...ctx, engine: 'docker' }).includes('--read-only-tmpfs=false'));
});

t.test('the container\'s securityContext wins over the pod\'s', async (t) => {
  const args = chartRunArgs(deployment({ container: { securityContext: { runAsUser: 2000 } } }), ctx);
  t.same(args.slice(args.indexOf('--user'), args.indexOf('--user') + 2), ['--user', '2000:1000']);
  t.notOk(args.includes('--read-only'), 'the container\'s whole securityContext replaces its own fields only');
});

t.test('what it cannot give, it refuses', async (t) => {
  t.throws(() => chartRunArgs(deployment({ pod: { securityContext: { runAsNonRoot: true, runAsUser: 0 } } }), ctx), /runAsNonRoot with runAsUser 0/);
  t.throws(() => chartRunArgs(deployment({ container: { env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }] } }), ctx), /fieldRef spec\.nodeName/);
  t.throws(() => chartRunArgs(deployment({ pod: { volumes: [{ name: 'serving-certs', configMap: { name: 'x' } }, { name: 'tmp', emptyDir: {} }] } }), ctx), /volume serving-certs: only secret and emptyDir/);
  t.throws(() => chartRunArgs(deployment(), { ...ctx, secrets: {} }), /no directory given for Secret kaos-operator-webhook-tls/);
  t.throws(() => chartRunArgs(deployment({ container: { command: ['sh'] } }), ctx), /command/);
  t.throws(() => chartRunArgs(deployment({ pod: { securityContext: { seccompProfile: { type: 'Localhost' } } } }), ctx), /seccompProfile Localhost/);
});

t.test('quantities', async (t) => {
  t.equal(quantity('512Mi'), 536_870_912);
  t.equal(quantity('1G'), 1e9);
  t.equal(quantity('250m'), 0.25);
  t.equal(quantity('2'), 2);
  t.throws(() => quantity('lots'), /not a quantity/);
});
