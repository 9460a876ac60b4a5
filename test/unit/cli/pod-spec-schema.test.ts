// src/cli/pod-spec.schema.json is what scripts/gen-pod-spec-schema.ts makes of the Kubernetes
// OpenAPI document in k8s.io/kubernetes at the version test/cluster/go.mod names. The module comes
// through `go mod download` (instant when build.sh has fetched it, as in CI, where npm test builds
// the control plane first); no Go toolchain is a failure, never a skip.
import { readFile } from 'node:fs/promises';
import t from 'tap';
import { kubernetesModuleDir, openApiPath, renderSchemaFile, TARGET, trimPodSpecSchema } from '../../../scripts/gen-pod-spec-schema.ts';
import { structuralCauses } from '../../../src/cli/pod-spec-structure.ts';

t.test('the committed schema is what the generator makes from the module (npm run gen:podspec)', async (t) => {
  const { dir, version } = kubernetesModuleDir();
  const document = JSON.parse(await readFile(openApiPath(dir), 'utf8')) as unknown;
  t.equal(await readFile(TARGET, 'utf8'), renderSchemaFile(trimPodSpecSchema(document, version)));
});

t.test('structure: types, required fields, int32, IntOrString and Quantity', async (t) => {
  t.same(structuralCauses({ containers: [{ name: 'a', image: 'x', ports: [{ containerPort: 8000 }], resources: { limits: { cpu: 1, memory: '512Mi' } } }] }), []);
  t.same(structuralCauses({ containers: [{ name: 'a' }], nodeName: null }), [], 'a null field is absent, as the API server decodes it');
  const fields = (pod: unknown): string[] => structuralCauses(pod).map((c) => `${c.field}: ${c.message}`);
  t.same(fields({}), ['spec.template.spec.containers: Required value']);
  t.same(fields({ containers: [{ name: 'a', ports: [{ containerPort: 2 ** 31 }] }] }), [
    'spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 2147483648: containers[0].ports[0].containerPort in body should be less than or equal to 2147483647',
  ]);
  t.same(fields({ containers: [{ name: 'a', readinessProbe: { tcpSocket: { port: true } } }] }), [
    'spec.template.spec.containers[0].readinessProbe.tcpSocket.port: Invalid value: "boolean": containers[0].readinessProbe.tcpSocket.port in body must be of type integer or string: "boolean"',
  ]);
  t.match(fields({ containers: [{ name: 'a', resources: { requests: { memory: '1 GB' } } }] }), [
    /^spec\.template\.spec\.containers\[0\]\.resources\.requests\.memory: Invalid value: "1 GB": .* should match /,
  ]);
});
