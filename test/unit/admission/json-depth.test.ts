// The depth, width and size limits: the scan itself (strings of any length and content never
// count; every object at level 3 is sized and named), every path of the real admission stack at
// exactly the depth limit (answered, never a 500), one level more refused with a clean denial,
// and headroom in every recursive walk of an object: each survives ten times the limit. An object
// of exactly the most members is answered, one more is a clean denial (HTTP 400 when the body's
// head does not give its uid); an object and an old object of exactly the largest size are
// answered, one byte more is a denial with code 413, and so for the most values an object holds.
import t from 'tap';
import fc from 'fast-check';
import jsonPatch from 'fast-json-patch';
import { jsonShapeProblem, MAX_JSON_DEPTH, MAX_JSON_MEMBERS, MAX_OBJECT_BYTES, MAX_OBJECT_VALUES, nestsDeeperThan } from '../../../src/admission/json-depth.ts';
import { webhookPath } from '../../../src/admission/webhook-paths.ts';
import { cloneJson, isRecord, jsonEqual } from '../../../src/api/json.ts';
import { goJSON } from '../../../src/api/go-format.ts';
import { GROUP, KIND_NAMES, VERSION, type KaosKind } from '../../../src/api/kinds.ts';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { validateSchema } from '../../../src/api/validation/schema-validation.ts';
import { defaultObject } from '../../../src/api/defaulting/default-object.ts';
import { mergePodSpec } from '../../../src/render/pod-merge.ts';
import type { PodSpec } from '../../../src/render/k8s.ts';
import { CONFIG, sampleObjects, startHarness, withPodParts } from '../../support/admission-harness.ts';
import { countedValues } from '../../support/arbitraries.ts';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');

/** `levels` levels of objects and arrays, alternating: {"d":[{"d":[...]}]}. */
function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { d: value };
  return value;
}

t.test('the scan counts brackets outside strings only', async (t) => {
  t.equal(nestsDeeperThan(bytes('1'), 0), false, 'a scalar is level 0');
  t.equal(nestsDeeperThan(bytes('{}'), 0), true);
  t.equal(nestsDeeperThan(bytes('{}'), 1), false);
  t.equal(nestsDeeperThan(bytes('[[{"a":[]}]]'), 4), false);
  t.equal(nestsDeeperThan(bytes('[[{"a":[]}]]'), 3), true);
  t.equal(nestsDeeperThan(bytes('{"a":"[[[[{{{{"}'), 1), false, 'brackets in a string');
  t.equal(nestsDeeperThan(bytes('{"a\\"[[":"\\\\","b":"x\\"]]"}'), 1), false, 'escaped quotes and backslashes');
  t.equal(nestsDeeperThan(bytes('["\\\\",[[]]]'), 2), true, 'an escaped backslash ends no string');
  t.equal(nestsDeeperThan(bytes('{"ü€😀[":"{"}'), 1), false, 'multi-byte UTF-8 never looks like a bracket');
  t.equal(nestsDeeperThan(bytes(JSON.stringify(nested(MAX_JSON_DEPTH))), MAX_JSON_DEPTH), false);
  t.equal(nestsDeeperThan(bytes(JSON.stringify(nested(MAX_JSON_DEPTH + 1))), MAX_JSON_DEPTH), true);
});

/** Nesting depth at `index` of a JSON text (outside strings), counted like nestsDeeperThan. */
function depthAt(text: string, index: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < index; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return depth;
}

const PLACE = '"@@DEEP@@"';

/** A review whose deepest point is `extra` levels beyond MAX_JSON_DEPTH, at the placeholder. */
function deepReview(kind: KaosKind, object: unknown, oldObject: unknown, extra: number): string {
  const request = {
    uid: 'u1',
    kind: { group: GROUP, version: VERSION, kind },
    resource: { group: GROUP, version: VERSION, resource: KIND_NAMES[kind].plural },
    operation: oldObject === undefined ? 'CREATE' : 'UPDATE',
    namespace: 'kaos-multi',
    object,
    ...(oldObject === undefined ? {} : { oldObject }),
  };
  let text = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
  // Each placeholder becomes as many levels as take it to the limit (plus `extra`).
  for (let at = text.indexOf(PLACE); at >= 0; at = text.indexOf(PLACE)) {
    text = text.slice(0, at) + JSON.stringify(nested(MAX_JSON_DEPTH + extra - depthAt(text, at))) + text.slice(at + PLACE.length);
  }
  return text;
}

/** Where deep values go: inside the podSpec the merge walks, and where the schema objects. */
function deepVariants(object: KubeObject): [string, KubeObject][] {
  const spec = object.spec as Record<string, unknown>;
  const podSpec = spec.podSpec as { containers: Record<string, unknown>[] };
  const container = podSpec.containers[0] as Record<string, unknown>;
  return [
    ['spec.podSpec.affinity', { ...object, spec: { ...spec, podSpec: { ...podSpec, affinity: PLACE_VALUE } } }],
    ['spec.podSpec.containers[0] (merged by name)', { ...object, spec: { ...spec, podSpec: { ...podSpec, containers: [{ ...container, deep: PLACE_VALUE }] } } }],
    ['spec.container.image (a schema error quoting it)', { ...object, spec: { ...spec, container: { image: PLACE_VALUE } } }],
    ['metadata.annotations (a non-string value)', { ...object, metadata: { ...object.metadata, annotations: { a: PLACE_VALUE } } } as unknown as KubeObject],
  ];
}
const PLACE_VALUE = '@@DEEP@@';

interface Answer {
  response?: { allowed?: boolean; status?: { code?: number; message?: string; reason?: string } };
  message?: string;
}

t.test('the scan counts the members of each object, outside strings and arrays', async (t) => {
  const shape = (text: string, maxMembers: number) => jsonShapeProblem(bytes(text), { maxDepth: MAX_JSON_DEPTH, maxMembers })?.kind;
  t.equal(shape('{}', 0), undefined, 'an empty object has no members');
  t.equal(shape('{"a":1}', 1), undefined);
  t.equal(shape('{"a":1,"b":2}', 1), 'members');
  t.equal(shape('{"a":1,"b":2}', 2), undefined);
  t.equal(shape('[1,2,3,4,5]', 2), undefined, 'array items are not members');
  t.equal(shape('{"a":[1,2,3,4],"b":"x,y,z"}', 2), undefined, 'commas of an array or a string count for nothing');
  t.equal(shape('{"a":{"x":1,"y":2},"b":{"x":1,"y":2}}', 2), undefined, 'each object counts its own');
  t.equal(shape('{"a":{"x":1,"y":2,"z":3},"b":1}', 2), 'members', 'a nested object over the limit');
  t.equal(shape('[{"a":1},{"a":1,"b":2,"c":3}]', 2), 'members', 'an object inside an array');
  t.equal(shape('{"a\\",":1,"b":"\\"}', 2), undefined, 'escaped quotes and backslashes');
  t.equal(shape(`{${'"k":1,'.repeat(50)}"d":${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}`, 100), 'depth', 'the first problem found');
});

t.test('strings of any length and content: what is in them never counts', async (t) => {
  // The scan reads a long string's rest with indexOf; a reference walk of the parsed value must
  // agree with it on every text, escapes at every position included.
  const depthOf = (value: unknown): number =>
    value !== null && typeof value === 'object' ? 1 + Math.max(0, ...Object.values(value as object).map(depthOf)) : 0;
  const widthOf = (value: unknown): number =>
    value !== null && typeof value === 'object'
      ? Math.max(Array.isArray(value) ? 0 : Object.keys(value).length, ...Object.values(value as object).map(widthOf))
      : 0;
  const text = fc.string({ unit: fc.constantFrom('"', '\\', '[', '{', ']', '}', ',', ':', 'a', 'é', '\u0000', '\ud800'), maxLength: 120 });
  const json = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.array(tie('value'), { maxLength: 5 }), fc.dictionary(text, tie('value'), { maxKeys: 5 })),
  })).value;
  fc.assert(
    fc.property(json, fc.integer({ min: 0, max: 8 }), fc.integer({ min: 1, max: 6 }), (value, maxDepth, maxMembers) => {
      const found = jsonShapeProblem(bytes(JSON.stringify(value)), { maxDepth, maxMembers })?.kind;
      const expected = depthOf(value) > maxDepth ? 'depth' : widthOf(value) > maxMembers ? 'members' : undefined;
      // Both problems present: the scan names whichever comes first in the text.
      if (expected === undefined ? found !== undefined : found === undefined) throw new Error(`expected ${expected}, found ${found}`);
    }),
    { numRuns: 5_000 },
  );
  const long = (inner: string) => bytes(`{"a":"${inner}","b":[[1]]}`);
  for (const inner of ['x'.repeat(31) + '\\"[[[', 'x'.repeat(32) + '\\"[[[', 'x'.repeat(33) + '\\\\', '\\"'.repeat(40), '['.repeat(100)]) {
    t.equal(nestsDeeperThan(long(inner), 3), false, `a string of ${inner.length} bytes ending ${JSON.stringify(inner.slice(-6))}`);
    t.equal(nestsDeeperThan(long(inner), 2), true, `a string of ${inner.length} bytes, then the nesting after it`);
  }
  t.equal(jsonShapeProblem(bytes(`{"a":"${'x'.repeat(100)}`), { maxDepth: 0, maxMembers: 1 })?.kind, 'depth', 'the object before an unterminated string');
  t.equal(jsonShapeProblem(bytes(`["${'x'.repeat(100)}`), { maxDepth: 1, maxMembers: 1 }), undefined, 'an unterminated string: no verdict, the parse reports it');
});

t.test('the scan sizes every object and array at level 3 and names where it is', async (t) => {
  const size = (text: string, maxMemberBytes: number) => jsonShapeProblem(bytes(text), { maxDepth: MAX_JSON_DEPTH, maxMembers: MAX_JSON_MEMBERS, maxMemberBytes });
  const object = '{"spec":"0123456789"}'; // 21 bytes
  t.equal(size(`{"request":{"uid":"u","object":${object}}}`, 21), undefined, 'exactly at the limit');
  t.same(size(`{"request":{"uid":"u","object":${object}}}`, 20), { kind: 'size', member: 'request.object', bytes: 21 });
  t.same(size(`{"request":{"object":{},"oldObject":${object}}}`, 20), { kind: 'size', member: 'request.oldObject', bytes: 21 });
  t.same(size(`{"request":{"obj\\u0065ct":${object}}}`, 20), { kind: 'size', member: 'request.object', bytes: 21 }, 'an escaped key is named as JSON.parse reads it');
  t.same(size(`{"request":[1,${object}]}`, 20), { kind: 'size', member: 'request[…]', bytes: 21 }, 'an item of an array');
  t.same(size(`{"request":{"object":${object.slice(0, -1)}`, 19), { kind: 'size', member: 'request.object', bytes: 20 }, 'never closed: what there is of it');
  t.equal(size(`{"request":{"object":"${'x'.repeat(100)}"}}`, 20), undefined, 'a string is not an object: its parse costs what its bytes cost');
  t.equal(size(`{"request":{"object":{"a":{"b":{"c":${object}}}}}}`, 64), undefined, 'deeper levels count toward their level-3 object only');
  t.same(size(`{"request":{"object":{"a":{"b":{"c":${object}}}}}}`, 38), { kind: 'size', member: 'request.object', bytes: 39 });
});

t.test('the scan counts the values of every object and array at level 3: each object and array, and each member or item after the first', async (t) => {
  const values = (text: string, maxMemberValues: number) => jsonShapeProblem(bytes(text), { maxDepth: MAX_JSON_DEPTH, maxMembers: MAX_JSON_MEMBERS, maxMemberValues });
  // {, then "a", [ and the two commas in it, then "b": 1 + 1 + 1 + 2 + 1 = 6.
  const object = '{"a":[1,2,{"x":"y,z"}],"b":"[{,"}';
  t.equal(values(`{"request":{"uid":"u","object":${object}}}`, 6), undefined, 'exactly at the limit (commas and brackets in strings count for nothing)');
  t.same(values(`{"request":{"uid":"u","object":${object}}}`, 5), { kind: 'values', member: 'request.object', values: 5 });
  t.same(values(`{"request":{"oldObject":[${'0,'.repeat(99)}0]}}`, 99), { kind: 'values', member: 'request.oldObject', values: 99 }, 'items of a list');
  t.equal(values(`{"request":{"object":{}},"other":{"object":{}},"request2":[${'0,'.repeat(99)}0]}`, 10), undefined, 'a level 2 list is not an object of the request: its parse costs what its bytes cost');
  t.equal(values(`{"request":{"object":${object},"oldObject":${object}}}`, 6), undefined, 'each object counts its own');
  const all = (text: string, maxValues: number) => jsonShapeProblem(bytes(text), { maxDepth: MAX_JSON_DEPTH, maxMembers: MAX_JSON_MEMBERS, maxMemberValues: 6, maxValues });
  // The review's {, request's { and its two commas, then the two objects of 6: 2 + 2 + 12 = 16.
  const review = `{"request":{"uid":"u","object":${object},"oldObject":${object}}}`;
  t.equal(all(review, 16), undefined, 'the whole body: exactly at its limit');
  t.same(all(review, 15), { kind: 'body-values', values: 15 }, 'the whole body: one more');
  t.same(all(`{"request":{${Array.from({ length: 5 }, (_, i) => `"m${i}":[1,2,3]`).join(',')}}}`, 12), { kind: 'body-values', values: 12 }, 'many members of the request, each under the limit of one');
});

t.test('an object of exactly the most members is answered; one more is a clean denial', async (t) => {
  const samples = (await sampleObjects()).map(withPodParts);
  const harness = await startHarness(samples);
  t.teardown(() => harness.close());
  // No placeholder in these objects: deepReview is the review as is.
  const labels = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`l${i}`, 'x']));
  for (const sample of samples) {
    const kind = sample.kind as KaosKind;
    for (const type of ['mutate', 'validate'] as const) {
      const name = `${type} ${kind} ${sample.metadata?.name}`;
      const atLimit = { ...sample, metadata: { ...sample.metadata, labels: labels(MAX_JSON_MEMBERS) } };
      const ok = await harness.post(webhookPath(type, kind), deepReview(kind, atLimit, undefined, 0));
      t.equal(ok.status, 200, `${name}: ${MAX_JSON_MEMBERS} labels are an AdmissionReview`);
      t.not((ok.body as Answer).response?.status?.code, 500, `${name}: not a 500`);
      const over = { ...sample, metadata: { ...sample.metadata, labels: labels(MAX_JSON_MEMBERS + 1) } };
      const refused = await harness.post(webhookPath(type, kind), deepReview(kind, over, undefined, 0));
      t.equal(refused.status, 200, `${name}: ${MAX_JSON_MEMBERS + 1} labels are denied in an AdmissionReview (its uid read from the head)`);
      t.match((refused.body as Answer).response, { uid: 'u1', allowed: false, status: { code: 400, reason: 'BadRequest', message: `request body has an object of more than ${MAX_JSON_MEMBERS} members` } });
    }
  }
});

t.test('an object (and an old one) of exactly the largest size is answered; one byte more is a denial with code 413', async (t) => {
  const samples = (await sampleObjects()).map(withPodParts);
  const harness = await startHarness(samples);
  t.teardown(() => harness.close());
  /** `sample` with an annotation that takes its JSON to exactly `bytes`. */
  const sized = (sample: KubeObject, bytes: number): KubeObject => {
    const padded = (n: number): KubeObject => ({ ...sample, metadata: { ...sample.metadata, annotations: { ...sample.metadata?.annotations, pad: 'x'.repeat(n) } } });
    return padded(bytes - Buffer.byteLength(JSON.stringify(padded(0))));
  };
  for (const sample of samples.filter((o, i) => samples.findIndex((p) => p.kind === o.kind) === i)) {
    const kind = sample.kind as KaosKind;
    const largest = sized(sample, MAX_OBJECT_BYTES);
    t.equal(Buffer.byteLength(JSON.stringify(largest)), MAX_OBJECT_BYTES);
    for (const type of ['mutate', 'validate'] as const) {
      for (const [operation, object, old] of [['CREATE', largest, undefined], ['UPDATE', largest, largest], ['UPDATE', sample, sized(sample, MAX_OBJECT_BYTES + 1)]] as const) {
        const name = `${type} ${kind} ${operation} ${old === undefined ? 'object' : 'object and oldObject'}`;
        const body = deepReview(kind, object, old, 0);
        const answer = await harness.post(webhookPath(type, kind), body);
        if (old === undefined || old === largest) {
          t.equal(answer.status, 200, `${name} of ${MAX_OBJECT_BYTES} bytes (a body of ${body.length}): an AdmissionReview`);
          t.not((answer.body as Answer).response?.status?.code, 413, `${name}: read`);
          t.not((answer.body as Answer).response?.status?.code, 500, `${name}: not a 500`);
        } else {
          t.match((answer.body as Answer).response, {
            uid: 'u1',
            allowed: false,
            status: { code: 413, message: `request.oldObject is ${MAX_OBJECT_BYTES + 1} bytes of JSON, more than the ${MAX_OBJECT_BYTES} of any object the API server can store` },
          }, `${name}: one byte more is denied`);
        }
      }
      const over = await harness.post(webhookPath(type, kind), deepReview(kind, sized(sample, MAX_OBJECT_BYTES + 1), undefined, 0));
      t.match((over.body as Answer).response, { uid: 'u1', allowed: false, status: { code: 413, reason: 'RequestEntityTooLarge' } }, `${type} ${kind}: an object one byte larger is denied`);
    }
  }
});

t.test('an object of exactly the most values is answered; one more is a denial with code 413', async (t) => {
  const samples = (await sampleObjects()).map(withPodParts);
  const harness = await startHarness(samples);
  t.teardown(() => harness.close());
  for (const sample of samples.filter((o, i) => samples.findIndex((p) => p.kind === o.kind) === i)) {
    const kind = sample.kind as KaosKind;
    const spec = sample.spec as Record<string, unknown>;
    // A list of zeros in the podSpec (its own value, and one more for each item after the first).
    const withZeros = (n: number): KubeObject => ({ ...sample, spec: { ...spec, podSpec: { ...(spec.podSpec as object), zeros: Array.from({ length: n }, () => 0) } } });
    const atLimit = withZeros(MAX_OBJECT_VALUES - countedValues(JSON.stringify(withZeros(1))) + 1);
    t.equal(countedValues(JSON.stringify(atLimit)), MAX_OBJECT_VALUES);
    for (const type of ['mutate', 'validate'] as const) {
      const ok = await harness.post(webhookPath(type, kind), deepReview(kind, atLimit, atLimit, 0));
      t.equal(ok.status, 200, `${type} ${kind}: an UPDATE from an object of ${MAX_OBJECT_VALUES} values to another is read`);
      t.not((ok.body as Answer).response?.status?.code, 413);
      const over = withZeros(MAX_OBJECT_VALUES - countedValues(JSON.stringify(withZeros(1))) + 2);
      const refused = await harness.post(webhookPath(type, kind), deepReview(kind, sample, over, 0));
      t.match((refused.body as Answer).response, {
        uid: 'u1',
        allowed: false,
        status: { code: 413, reason: 'RequestEntityTooLarge', message: `request.oldObject holds more than ${MAX_OBJECT_VALUES} JSON values: more than the webhooks read in one object` },
      }, `${type} ${kind}: one value more is denied`);
    }
  }
});

t.test('every path at exactly the limit is answered; one level more is a clean denial', async (t) => {
  const samples = (await sampleObjects()).map(withPodParts);
  const harness = await startHarness(samples);
  t.teardown(() => harness.close());
  for (const sample of samples) {
    const kind = sample.kind as KaosKind;
    for (const [where, object] of deepVariants(sample)) {
      for (const [operation, old] of [['CREATE', undefined], ['UPDATE', sample]] as const) {
        for (const type of ['mutate', 'validate'] as const) {
          const name = `${type} ${kind} ${sample.metadata?.name} ${operation} ${where}`;
          const atLimit = deepReview(kind, object, old, 0);
          t.equal(nestsDeeperThan(bytes(atLimit), MAX_JSON_DEPTH), false, `${name}: at the limit`);
          t.equal(nestsDeeperThan(bytes(atLimit), MAX_JSON_DEPTH - 1), true, `${name}: exactly at the limit`);
          const dryRuns = harness.dryRuns.length;
          const ok = await harness.post(webhookPath(type, kind), atLimit);
          const response = (ok.body as Answer).response;
          t.equal(ok.status, 200, `${name}: an AdmissionReview`);
          t.not(response?.status?.code, 500, `${name}: not a 500 (${response?.status?.message?.slice(0, 200)})`);
          if (type === 'validate' && where.startsWith('spec.podSpec')) {
            t.equal(harness.dryRuns.length, dryRuns + 1, `${name}: the pod was rendered, merged and sent`);
          }
          const over = await harness.post(webhookPath(type, kind), deepReview(kind, object, old, 1));
          t.equal(over.status, 200, `${name}: one level more is denied`);
          t.match((over.body as Answer).response, { uid: 'u1', allowed: false, status: { code: 400, message: `request body is nested deeper than ${MAX_JSON_DEPTH} levels` } });
        }
      }
    }
  }
});

t.test('every recursive walk of an object survives ten times the limit', async (t) => {
  const deep = nested(10 * MAX_JSON_DEPTH);
  const sample = withPodParts((await sampleObjects()).find((o) => o.kind === 'Agent') as KubeObject);
  const spec = sample.spec as Record<string, unknown>;
  const object: KubeObject = { ...sample, spec: { ...spec, deep, podSpec: { ...(spec.podSpec as object), affinity: deep } } };
  const text = JSON.stringify(object);
  t.same(JSON.parse(text), object, 'JSON.parse and JSON.stringify');
  t.same(cloneJson(object), object, 'cloneJson');
  t.ok(goJSON(object).length > 0, 'goJSON');
  t.ok(jsonEqual(object, JSON.parse(text)), 'jsonEqual');
  t.ok(jsonPatch.compare({ spec: object.spec }, { spec: { ...object.spec as object, deep: nested(10 * MAX_JSON_DEPTH - 1) } }).length > 0, 'fast-json-patch compare');
  t.ok(validateSchema('Agent', { ...object, spec: { ...spec, container: { image: deep } } }).length > 0, 'ajv validation, quoting the value');
  t.ok(isRecord(defaultObject('Agent', object, { config: CONFIG }).object.spec), 'defaulting');
  const merged = mergePodSpec({ containers: [{ name: 'agent', image: 'i' }] } as unknown as PodSpec, { affinity: deep, containers: [{ name: 'agent', deep }] });
  t.same((merged as Record<string, unknown>).affinity, deep, 'podSpec merge');
  const replaced = mergePodSpec({ containers: [] } as unknown as PodSpec, { $patch: 'replace', affinity: { $patch: 'replace', deep } });
  t.same((replaced as Record<string, unknown>).affinity, { deep }, 'podSpec merge with $patch: replace');
});
