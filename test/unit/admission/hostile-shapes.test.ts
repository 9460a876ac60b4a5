// Well-formed AdmissionReviews carrying objects of every wrong shape, through the real router
// and handlers: each sample (with a podSpec and container override added) has every value at
// every level replaced by null, a string, false and [1] (in the object, and in the oldObject of
// an UPDATE to the validating webhook).
// The answer is an AdmissionReview allowing or denying (422, or 400 for what the API server
// could never send), never code 500.
import t from 'tap';
import { webhookPath } from '../../../src/admission/webhook-paths.ts';
import { GROUP, KIND_NAMES, VERSION, isKaosKind, type KaosKind } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { isRecord } from '../../../src/api/json.ts';
import { sampleObjects, startHarness, withPodParts } from '../../support/admission-harness.ts';

const WRONG: readonly unknown[] = [null, 'x', false, [1]];

/** Every path to a value inside `value`, the root excluded. */
function paths(value: unknown, prefix: readonly (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [];
  const children: [string | number, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : isRecord(value)
      ? Object.entries(value)
      : [];
  for (const [key, child] of children) {
    const path = [...prefix, key];
    out.push(path, ...paths(child, path));
  }
  return out;
}

function replaced(root: unknown, path: readonly (string | number)[], value: unknown): unknown {
  const copy = structuredClone(root);
  let node = copy as Record<string | number, unknown>;
  for (const step of path.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
  node[path[path.length - 1] as string | number] = value;
  return copy;
}

function review(kind: KaosKind, operation: 'CREATE' | 'UPDATE', object: unknown, oldObject?: unknown): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'u1',
      kind: { group: GROUP, version: VERSION, kind },
      resource: { group: GROUP, version: VERSION, resource: KIND_NAMES[kind].plural },
      operation,
      name: 'n',
      namespace: 'kaos-multi',
      object,
      ...(oldObject === undefined ? {} : { oldObject }),
    },
  });
}

interface Answer {
  response?: { allowed?: boolean; status?: { code?: number; message?: string } };
}

const samples = (await sampleObjects()).map(withPodParts);
const harness = await startHarness(samples);
t.teardown(() => harness.close());

t.test('every wrong value at every level of every sample: never a 500', async (t) => {
  const failures: string[] = [];
  let answered = 0;
  const codes = new Map<string, number>();
  for (const sample of samples) {
    const kind = sample.kind;
    if (kind === undefined || !isKaosKind(kind)) continue;
    for (const path of paths(sample)) {
      for (const wrong of WRONG) {
        const object = replaced(sample, path, wrong);
        const bodies: [string, string][] = [
          ['CREATE', review(kind, 'CREATE', object)],
          ['UPDATE', review(kind, 'UPDATE', object, sample)],
        ];
        for (const type of ['mutate', 'validate'] as const) {
          const all: [string, string][] = type === 'mutate' ? bodies : [...bodies, ['UPDATE from', review(kind, 'UPDATE', sample, object)]];
          for (const [operation, body] of all) {
            const { status, body: answer } = await harness.post(webhookPath(type, kind), body);
            answered++;
            const code = (answer as Answer).response?.status?.code;
            const key = `${status}/${code ?? '-'}`;
            codes.set(key, (codes.get(key) ?? 0) + 1);
            if (status !== 200 || code === 500) {
              failures.push(`${type} ${kind} ${operation} ${path.join('.')}=${JSON.stringify(wrong)}: ${status} ${JSON.stringify(answer).slice(0, 200)}`);
            }
          }
        }
      }
    }
  }
  t.ok(answered > 1000, `${answered} reviews answered (${[...codes].map(([k, n]) => `${k}: ${n}`).join(', ')})`);
  t.same(failures.slice(0, 20), [], `${failures.length} answers were a 500 or not an AdmissionReview`);
});

t.test('wrong metadata shapes: the 400 denial, naming the field', async (t) => {
  const sample = samples.find((s) => s.kind === 'Agent') as KubeObject;
  const cases: [string, unknown, RegExp][] = [
    ['metadata null', { ...sample, metadata: null }, /request.object.metadata must be an object, got null/],
    ['metadata array', { ...sample, metadata: [] }, /request.object.metadata must be an object, got an array/],
    ['metadata string', { ...sample, metadata: 'x' }, /request.object.metadata must be an object, got a string/],
    ['name false', { ...sample, metadata: { ...sample.metadata, name: false } }, /request.object.metadata.name must be a string, got a boolean/],
    ['name [1]', { ...sample, metadata: { ...sample.metadata, name: [1] } }, /request.object.metadata.name must be a string, got an array/],
    ['name 7', { ...sample, metadata: { ...sample.metadata, name: 7 } }, /request.object.metadata.name must be a string, got a number/],
    ['namespace {}', { ...sample, metadata: { ...sample.metadata, namespace: {} } }, /metadata.namespace must be a string, got an object/],
    ['labels []', { ...sample, metadata: { ...sample.metadata, labels: [] } }, /metadata.labels must be a map of strings, got an array/],
    ['label value 1', { ...sample, metadata: { ...sample.metadata, labels: { a: 1 } } }, /metadata.labels must be a map of strings, got a number/],
    ['annotations "x"', { ...sample, metadata: { ...sample.metadata, annotations: 'x' } }, /metadata.annotations must be a map of strings, got a string/],
  ];
  for (const type of ['mutate', 'validate'] as const) {
    for (const [name, object, message] of cases) {
      const { status, body } = await harness.post(webhookPath(type, 'Agent'), review('Agent', 'CREATE', object));
      const response = (body as Answer).response;
      t.equal(status, 200, `${type} ${name}: an AdmissionReview`);
      t.equal(response?.allowed, false, `${type} ${name}: denied`);
      t.equal(response?.status?.code, 400, `${type} ${name}: code 400`);
      t.match(response?.status?.message, message, `${type} ${name}: names the field`);
    }
  }
});
