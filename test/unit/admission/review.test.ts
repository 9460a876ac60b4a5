import t from 'tap';
import { KINDS } from '../../../src/api/kinds.ts';
import {
  decodeReview,
  encodeDecision,
  errorReview,
  isDecision,
  headUid,
  parseJson,
} from '../../../src/admission/review.ts';
import type { Status } from '../../../src/admission/types.ts';
import { clampWarning, MAX_WARNING_LENGTH } from '../../../src/api/warnings.ts';
import { admissionRequest, sampleObject } from '../../support/admission-request.ts';

const envelope = (request: unknown, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request,
  ...extra,
});

t.test('parseJson', async (t) => {
  t.same(parseJson(Buffer.from('{"a":1}')), { ok: true, value: { a: 1 } });
  const bad = parseJson(Buffer.from('{"a":'));
  t.equal(bad.ok, false);
  if (!bad.ok) t.match(bad.message, /^request body is not valid JSON: /);
  // Decoded as Buffer's toString decodes: a byte order mark is kept (JSON.parse refuses it, as
  // Go's decoder does), a byte that is not UTF-8 becomes U+FFFD inside its string.
  t.match(parseJson(Buffer.from('\ufeff{"a":1}')), { ok: false, message: /^request body is not valid JSON: / }, 'a byte order mark');
  t.same(parseJson(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xc3, 0x22, 0x7d])), { ok: true, value: { a: '\ufffd\ufffd' } }, 'bytes that are not UTF-8');
  t.same(parseJson(Buffer.from('{"a":"é🙂"}')), { ok: true, value: { a: 'é🙂' } });
});

t.test('headUid: the uid of a body too deep to parse, from its head as the API server writes it', async (t) => {
  const head = (text: string): string | undefined => headUid(Buffer.from(text));
  t.equal(head('{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"0b6e-4f1c","kind":{'), '0b6e-4f1c', 'the API server\'s order');
  t.equal(head('{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1"'), 'u1', 'apiVersion first');
  t.equal(head(' { "request" : { "uid" : "u2" } }'), 'u2', 'whitespace, no envelope fields');
  t.equal(head('{"kind":"AdmissionReview","request":{"kind":{},"uid":"u3"}}'), undefined, 'the uid not first in the request: not read');
  t.equal(head('{"request":{"uid":"a\\"b"}}'), undefined, 'not a uid\'s characters');
  t.equal(head(`{"pad":"${'x'.repeat(600)}","request":{"uid":"u4"}}`), undefined, 'only the head is read');
});

t.test('decodeReview answers plain HTTP while the uid is unknown', async (t) => {
  const cases: [string, unknown, RegExp][] = [
    ['not an object', [1, 2], /got an array/],
    ['null', null, /got null/],
    ['wrong kind', { apiVersion: 'admission.k8s.io/v1', kind: 'Pod' }, /expected kind "AdmissionReview", got "Pod"/],
    ['no kind', { apiVersion: 'admission.k8s.io/v1' }, /got nothing/],
    [
      'v1beta1',
      envelope(admissionRequest('Agent', sampleObject('Agent')), { apiVersion: 'admission.k8s.io/v1beta1' }),
      /unsupported AdmissionReview apiVersion "admission.k8s.io\/v1beta1": this webhook supports admission.k8s.io\/v1 only/,
    ],
    ['no request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, /has no request/],
    ['no uid', envelope({ ...admissionRequest('Agent', sampleObject('Agent')), uid: undefined }), /request.uid is required/],
    ['empty uid', envelope({ ...admissionRequest('Agent', sampleObject('Agent')), uid: '' }), /request.uid is required/],
  ];
  for (const [name, body, message] of cases) {
    const result = decodeReview(body, 'Agent');
    t.equal(result.ok, false, name);
    if (!result.ok) {
      t.equal(result.uid, undefined, `${name}: no uid`);
      t.match(result.message, message, name);
    }
  }
});

t.test('decodeReview denies with the uid once it is known', async (t) => {
  const base = admissionRequest('Agent', sampleObject('Agent'));
  const cases: [string, unknown, RegExp][] = [
    [
      'a Pod on the Agent endpoint',
      { ...base, kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' } },
      /serves kaos.tools\/v1alpha1 Agent, got request.kind v1 Pod/,
    ],
    ['a ModelAPI on the Agent endpoint', admissionRequest('ModelAPI', sampleObject('ModelAPI'), { uid: base.uid }), /got request.kind kaos.tools\/v1alpha1 ModelAPI/],
    ['no kind', { ...base, kind: undefined }, /got request.kind nothing/],
    ['resource not matching', { ...base, resource: { group: 'kaos.tools', version: 'v1alpha1', resource: 'modelapis' } }, /serves kaos.tools\/v1alpha1 agents, got request.resource kaos.tools\/v1alpha1 modelapis/],
    ['subresource', { ...base, subResource: 'status' }, /does not serve subresources/],
    ['bad operation', { ...base, operation: 'PATCH' }, /request.operation "PATCH" is not one of/],
    ['no object on CREATE', { ...base, object: undefined }, /request.object is required for CREATE/],
    ['array object on UPDATE', { ...base, operation: 'UPDATE', object: [], oldObject: {} }, /request.object must be an object, got an array/],
    ['no oldObject on UPDATE', { ...base, operation: 'UPDATE' }, /request.oldObject is required for UPDATE/],
  ];
  for (const [name, request, message] of cases) {
    const result = decodeReview(envelope(request), 'Agent');
    t.equal(result.ok, false, name);
    if (!result.ok) {
      t.equal(result.uid, base.uid, `${name}: uid known`);
      t.match(result.message, message, name);
      t.equal(result.facts.uid, base.uid, `${name}: facts carry the uid`);
    }
  }
});

t.test('decodeReview accepts well-formed requests', async (t) => {
  for (const kind of KINDS) {
    const request = admissionRequest(kind, sampleObject(kind));
    t.same(decodeReview(envelope(request), kind), { ok: true, request }, kind);
  }
  const del = admissionRequest('ModelAPI', sampleObject('ModelAPI'), { operation: 'DELETE', object: undefined, oldObject: { metadata: {} } });
  t.equal(decodeReview(envelope(del), 'ModelAPI').ok, true, 'DELETE needs no object');
  const update = admissionRequest('Agent', sampleObject('Agent'), { operation: 'UPDATE', oldObject: { metadata: {} } });
  t.equal(decodeReview(envelope(update), 'Agent').ok, true, 'UPDATE with both objects');
  const emptySub = admissionRequest('Agent', sampleObject('Agent'), { subResource: '' });
  t.equal(decodeReview(envelope(emptySub), 'Agent').ok, true, 'empty subResource is none');
});

t.test('decodeReview quotes client text briefly', async (t) => {
  const result = decodeReview({ apiVersion: 'admission.k8s.io/v1', kind: 'x'.repeat(10_000) }, 'Agent');
  t.equal(result.ok, false);
  if (!result.ok) t.ok(result.message.length < 300, 'message stays short');
});

t.test('encodeDecision', async (t) => {
  const uid = 'u-1';
  const allow = encodeDecision(uid, 'validate', { allowed: true });
  t.same(allow, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true } });
  t.notOk('patch' in allow.response, 'no patch key at all');
  t.notOk('patchType' in allow.response);

  const emptyPatch = encodeDecision(uid, 'mutate', { allowed: true, patch: [] });
  t.notOk('patch' in emptyPatch.response, 'empty patch: nothing changed, no patch');
  t.notOk('patchType' in emptyPatch.response);

  const ops = [{ op: 'add' as const, path: '/spec/waitForDependencies', value: true }];
  const mutated = encodeDecision(uid, 'mutate', { allowed: true, patch: ops });
  t.equal(mutated.response.patchType, 'JSONPatch');
  t.same(JSON.parse(Buffer.from(mutated.response.patch ?? '', 'base64').toString('utf8')), ops);

  const validated = encodeDecision(uid, 'validate', { allowed: true, patch: ops });
  t.notOk('patch' in validated.response, 'a validating endpoint never patches');

  const status: Status = {
    status: 'Failure',
    message: 'Agent.kaos.tools "a1" is invalid: spec.modelAPI: Not found: "gpt"',
    reason: 'Invalid',
    code: 422,
    details: { group: 'kaos.tools', kind: 'Agent', name: 'a1', causes: [{ reason: 'FieldValueNotFound', field: 'spec.modelAPI', message: 'Not found: "gpt"' }] },
  };
  const denied = encodeDecision(uid, 'validate', { allowed: false, status, warnings: ['w1'] });
  t.equal(denied.response.allowed, false);
  t.equal(denied.response.status, status, 'status passed through as is');
  t.same(denied.response.warnings, ['w1']);
  t.notOk('warnings' in encodeDecision(uid, 'validate', { allowed: true, warnings: [] }).response, 'no empty warnings');
});

t.test('clampWarning', async (t) => {
  // The API server counts warnings in runes (code points): k8s.io/apiserver pkg/endpoints/filters/warning.go.
  const length = (w: string) => [...w].length;
  t.equal(clampWarning('short'), 'short');
  const exact = 'x'.repeat(MAX_WARNING_LENGTH);
  t.equal(clampWarning(exact), exact, '120 characters kept');
  const long = clampWarning('y'.repeat(500));
  t.equal(length(long), MAX_WARNING_LENGTH);
  t.ok(long.endsWith('...'));

  // Characters outside the BMP (surrogate pairs) are never split and count once each.
  const emoji = clampWarning('a' + '😀'.repeat(200));
  t.ok(length(emoji) <= MAX_WARNING_LENGTH);
  t.ok(emoji.isWellFormed(), 'no half surrogate');
  t.equal(emoji, 'a' + '😀'.repeat(116) + '...');
  t.equal(clampWarning('😀'.repeat(MAX_WARNING_LENGTH)), '😀'.repeat(MAX_WARNING_LENGTH), '120 characters of 4 bytes each kept');

  const accents = clampWarning('é'.repeat(200));
  t.ok(length(accents) <= MAX_WARNING_LENGTH);
  t.ok(accents.startsWith('éé') && accents.endsWith('...'));

  t.equal(clampWarning('line1\nline2\r\x00end'), 'line1 line2  end', 'control characters become spaces');
  // net.NewWarningHeader refuses any unicode.IsControl rune, tab and C1 included.
  t.equal(clampWarning('tab\tand\u0085c1'), 'tab and c1');
  t.equal(clampWarning('lone \ud800 surrogate'), 'lone \ufffd surrogate');

  const encoded = encodeDecision('u', 'validate', { allowed: true, warnings: ['z'.repeat(300), 'ok'] });
  t.same(encoded.response.warnings?.map((w) => length(w) <= MAX_WARNING_LENGTH), [true, true]);
  t.equal(encoded.response.warnings?.[1], 'ok');
});

t.test('errorReview and isDecision', async (t) => {
  t.same(errorReview('u', 400, 'bad'), {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: 'u', allowed: false, status: { status: 'Failure', message: 'bad', reason: 'BadRequest', code: 400 } },
  });
  t.equal(errorReview('u', 500, 'internal error: x').response.status?.reason, 'InternalError');
  t.equal(isDecision({ allowed: true }), true);
  t.equal(isDecision({ allowed: 'yes' }), false);
  t.equal(isDecision(undefined), false);
});
