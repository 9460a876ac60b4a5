import t from 'tap';
import type { PodSpec } from '../../../src/render/k8s.ts';
import { fragmentPath, mergePodSpec } from '../../../src/render/pod-merge.ts';

function base(): PodSpec {
  return {
    containers: [
      {
        name: 'model-api',
        image: 'litellm',
        imagePullPolicy: 'IfNotPresent',
        args: ['--config', '/etc/litellm/config.yaml', '--port', '8000'],
        ports: [{ name: 'http', containerPort: 8000, protocol: 'TCP' }],
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
        volumeMounts: [{ name: 'litellm-config', mountPath: '/etc/litellm' }],
      },
    ],
    volumes: [{ name: 'litellm-config', configMap: { name: 'litellm-config-m' } }],
  };
}

t.test('no or non-object patch: unchanged copy', async (t) => {
  const b = base();
  for (const patch of [undefined, null, 'x', 42, []]) {
    const out = mergePodSpec(b, patch);
    t.strictSame(out, base());
    t.not(out, b, 'a copy');
  }
});

t.test('inputs are never modified', async (t) => {
  const b = base();
  const patch = { containers: [{ name: 'model-api', env: [{ name: 'A', value: 'x' }] }], volumes: null };
  const before = structuredClone(patch);
  const out = mergePodSpec(b, patch);
  t.strictSame(b, base());
  t.strictSame(patch, before);
  (out.containers[0]?.env ?? []).push({ name: 'Z', value: 'z' });
  t.strictSame(b, base(), 'the result shares nothing with the base');
});

t.test('containers merge by name; scalars override; new fields added', async (t) => {
  const out = mergePodSpec(base(), {
    containers: [{ name: 'model-api', image: 'custom:1', resources: { limits: { memory: '1Gi' } } }],
  });
  const c = out.containers[0];
  t.equal(out.containers.length, 1);
  t.equal(c?.image, 'custom:1');
  t.strictSame(c?.resources, { limits: { memory: '1Gi' } });
  t.strictSame(c?.args, ['--config', '/etc/litellm/config.yaml', '--port', '8000'], 'untouched fields kept');
});

t.test('a container with a new name is appended (sidecar)', async (t) => {
  const out = mergePodSpec(base(), { containers: [{ name: 'sidecar', image: 'envoy' }] });
  t.same(
    out.containers.map((c) => c.name),
    ['model-api', 'sidecar'],
  );
  t.strictSame(out.containers[1], { name: 'sidecar', image: 'envoy' });
});

t.test('env merges by name: replaced in place (value vs valueFrom is one-of), new appended', async (t) => {
  const out = mergePodSpec(base(), {
    containers: [
      {
        name: 'model-api',
        env: [
          { name: 'B', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
          { name: 'C', value: '3' },
        ],
      },
    ],
  });
  t.strictSame(out.containers[0]?.env, [
    { name: 'A', value: '1' },
    { name: 'B', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
    { name: 'C', value: '3' },
  ]);
});

t.test('ports merge by containerPort, volumeMounts by mountPath', async (t) => {
  const out = mergePodSpec(base(), {
    containers: [
      {
        name: 'model-api',
        ports: [
          { containerPort: 8000, hostPort: 18000 },
          { containerPort: 9090, name: 'metrics' },
        ],
        volumeMounts: [
          { mountPath: '/etc/litellm', readOnly: true },
          { name: 'tmp', mountPath: '/tmp' },
        ],
      },
    ],
  });
  const c = out.containers[0];
  t.strictSame(c?.ports, [
    { name: 'http', containerPort: 8000, protocol: 'TCP', hostPort: 18000 },
    { containerPort: 9090, name: 'metrics' },
  ]);
  t.strictSame(c?.volumeMounts, [
    { name: 'litellm-config', mountPath: '/etc/litellm', readOnly: true },
    { name: 'tmp', mountPath: '/tmp' },
  ]);
});

t.test('volumes merge by name, and a patched volume takes the patch source only', async (t) => {
  const out = mergePodSpec(base(), {
    volumes: [
      { name: 'litellm-config', secret: { secretName: 's' } },
      { name: 'tmp', emptyDir: {} },
    ],
  });
  t.strictSame(out.volumes, [
    { name: 'litellm-config', secret: { secretName: 's' } },
    { name: 'tmp', emptyDir: {} },
  ]);
});

t.test('initContainers merge by name', async (t) => {
  const b: PodSpec = { ...base(), initContainers: [{ name: 'pull-model', image: 'ollama', imagePullPolicy: 'IfNotPresent' }] };
  const out = mergePodSpec(b, { initContainers: [{ name: 'pull-model', resources: { requests: { cpu: '1' } } }, { name: 'wait', image: 'busybox' }] });
  t.strictSame(out.initContainers, [
    { name: 'pull-model', image: 'ollama', imagePullPolicy: 'IfNotPresent', resources: { requests: { cpu: '1' } } },
    { name: 'wait', image: 'busybox' },
  ]);
});

t.test('other lists replace; objects merge recursively', async (t) => {
  const b: PodSpec = {
    ...base(),
    tolerations: [{ key: 'a', operator: 'Exists' }],
    securityContext: { runAsNonRoot: true, fsGroup: 1000 },
  };
  const out = mergePodSpec(b, {
    tolerations: [{ key: 'b', operator: 'Exists' }],
    securityContext: { fsGroup: 2000 },
    containers: [{ name: 'model-api', args: ['--port', '8000'] }],
    nodeSelector: { gpu: 'true' },
  });
  t.strictSame(out.tolerations, [{ key: 'b', operator: 'Exists' }]);
  t.strictSame(out.securityContext, { runAsNonRoot: true, fsGroup: 2000 });
  t.strictSame(out.containers[0]?.args, ['--port', '8000'], 'args is an unkeyed list: replaced');
  t.strictSame(out.nodeSelector, { gpu: 'true' });
});

t.test('null deletes a field', async (t) => {
  const out = mergePodSpec(base(), { containers: [{ name: 'model-api', args: null }], volumes: null });
  t.notOk('args' in (out.containers[0] ?? {}));
  t.notOk('volumes' in out);
});

t.test('$patch: delete removes a keyed item', async (t) => {
  const out = mergePodSpec(base(), {
    containers: [{ name: 'model-api', env: [{ name: 'A', $patch: 'delete' }], volumeMounts: [{ mountPath: '/etc/litellm', $patch: 'delete' }] }],
    volumes: [{ name: 'litellm-config', $patch: 'delete' }, { name: 'absent', $patch: 'delete' }],
  });
  t.strictSame(out.containers[0]?.env, [{ name: 'B', value: '2' }]);
  t.strictSame(out.containers[0]?.volumeMounts, []);
  t.strictSame(out.volumes, [], 'deleting an absent item is a no-op');
});

t.test('a key given twice merges into the first item that has it; deleted, then given again, it is appended', async (t) => {
  const out = mergePodSpec(base(), {
    containers: [
      {
        name: 'model-api',
        env: [
          { name: 'C', value: '3' },
          { name: 'C', value: 'again' },
          { name: 'A', $patch: 'delete' },
          { name: 'B', value: 'b' },
          { name: 'A', value: 'back' },
          { name: 'A', $patch: 'delete' },
          { name: 'A', value: 'last' },
        ],
      },
    ],
  });
  t.strictSame(out.containers[0]?.env, [
    { name: 'B', value: 'b' },
    { name: 'C', value: 'again' },
    { name: 'A', value: 'last' },
  ]);
});

t.test('$patch: replace on a list and on an object', async (t) => {
  const out = mergePodSpec(base(), {
    containers: [{ name: 'model-api', env: [{ $patch: 'replace' }, { name: 'ONLY', value: 'x' }] }],
    securityContext: { $patch: 'replace', runAsUser: 1 },
  });
  t.strictSame(out.containers[0]?.env, [{ name: 'ONLY', value: 'x' }]);
  t.strictSame(out.securityContext, { runAsUser: 1 });
});

t.test('directive keys never reach the result', async (t) => {
  const out = mergePodSpec(base(), {
    $setElementOrder: { containers: [{ name: 'model-api' }] },
    containers: [{ name: 'new', $patch: 'merge', securityContext: { $patch: 'merge', privileged: false } }],
  });
  t.notOk(JSON.stringify(out).includes('$'));
  t.strictSame(out.containers[1], { name: 'new', securityContext: { privileged: false } });
});

t.test('items without their merge key are kept for the API server to reject', async (t) => {
  const out = mergePodSpec(base(), { containers: [{ image: 'nameless' }] });
  t.equal(out.containers.length, 2);
  t.strictSame(out.containers[1], { image: 'nameless' });
});

t.test('a type mismatch replaces (the webhook dry-run reports it)', async (t) => {
  const out = mergePodSpec(base(), { containers: 'oops' });
  t.equal(out.containers as unknown, 'oops');
});

t.test('fragmentPath: a merged-pod path points back at the field the user wrote', async (t) => {
  const base = {
    containers: [{ name: 'agent', image: 'a', ports: [{ name: 'http', containerPort: 8000 }], env: [{ name: 'A', value: '1' }] }],
    volumes: [{ name: 'data', emptyDir: {} }],
  };
  const fragment = {
    initContainers: [{ name: 'init', image: 'busybox' }],
    containers: [
      { name: 'sidecar', image: 'side' },
      { name: 'agent', ports: [{ containerPort: 70000 }], env: [{ name: 'B', value: '2' }] },
    ],
    volumes: [{ name: 'Bad_Name', emptyDir: {} }],
    dnsPolicy: 'Sometimes',
  };
  const merged = mergePodSpec(base as never, fragment);
  t.equal(fragmentPath(merged, fragment, 'containers[0].ports[1].containerPort'), 'containers[1].ports[0].containerPort', 'keyed by name, then containerPort');
  t.equal(fragmentPath(merged, fragment, 'containers[0].env[1].name'), 'containers[1].env[0].name', 'env keyed by name');
  t.equal(fragmentPath(merged, fragment, 'containers[1].image'), 'containers[0].image', 'an appended container');
  t.equal(fragmentPath(merged, fragment, 'volumes[1].name'), 'volumes[0].name', 'volumes keyed by name');
  t.equal(fragmentPath(merged, fragment, 'initContainers[0].image'), 'initContainers[0].image', 'a list only the user wrote');
  t.equal(fragmentPath(merged, fragment, 'dnsPolicy'), 'dnsPolicy', 'a scalar');
  t.equal(fragmentPath(merged, fragment, 'containers[0].image'), undefined, 'a generated field is not the user\'s');
  t.equal(fragmentPath(merged, fragment, 'containers[0].ports[0].containerPort'), undefined, 'a generated port');
  t.equal(fragmentPath(merged, fragment, 'volumes[0].emptyDir'), undefined, 'a generated volume');
});

t.test('keys every object inherits, and "__proto__", are plain data in a fragment', async (t) => {
  const base = { containers: [{ name: 'agent', image: 'a', env: [{ name: 'X', value: '1' }] }], volumes: [{ name: 'v', emptyDir: {} }] };
  const fragment = JSON.parse('{"containers":[{"name":"agent","env":[{"name":"X","toString":"x"}]}],"volumes":[{"name":"v","constructor":1}],"__proto__":{"polluted":true}}') as unknown;
  const merged = mergePodSpec(base as never, fragment) as unknown as Record<string, unknown>;
  t.same((merged.containers as Array<{ env: unknown[] }>)[0]?.env, [{ name: 'X', toString: 'x' }]);
  t.same(merged.volumes, [{ name: 'v', constructor: 1 }]);
  t.ok(Object.hasOwn(merged, '__proto__'), '"__proto__" stays an own key');
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was touched');
});
