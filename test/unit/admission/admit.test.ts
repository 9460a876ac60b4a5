// admission's one entry point, without a server: bytes and a content type in, the HTTP answer
// (status, body, log line) out. The server tests (test/unit/server) check the same answers over
// HTTPS; these pin that admission decides them on its own.
import t from 'tap';
import { admit, createWebhooks, type BodyRead, type Webhook } from '../../../src/admission/admit.ts';
import { MAX_OBJECT_BYTES } from '../../../src/admission/json-depth.ts';
import type { AdmissionDecision, AdmissionRequest } from '../../../src/admission/types.ts';
import { admissionRequest, review, sampleObject } from '../../support/admission-request.ts';

const decisions: Record<string, () => Promise<AdmissionDecision>> = {
  allow: async () => ({ allowed: true }),
  throw: async () => {
    throw new Error('boom');
  },
};
const webhooks = createWebhooks(() => async (request: AdmissionRequest) => (decisions[request.name ?? 'allow'] ?? decisions.allow!)());
const validateAgent = webhooks.find((w) => w.path === '/validate-kaos-tools-v1alpha1-agent') as Webhook;

const bytes = (text: string) => async (): Promise<BodyRead> => ({ ok: true, body: Buffer.from(text) });

t.test('one webhook per (type, kind), at the kubebuilder paths', async (t) => {
  t.same(
    webhooks.map((w) => w.path),
    [
      '/mutate-kaos-tools-v1alpha1-agent',
      '/mutate-kaos-tools-v1alpha1-modelapi',
      '/mutate-kaos-tools-v1alpha1-mcpserver',
      '/mutate-kaos-tools-v1alpha1-memorystore',
      '/mutate-kaos-tools-v1alpha1-accessgrant',
      '/validate-kaos-tools-v1alpha1-agent',
      '/validate-kaos-tools-v1alpha1-modelapi',
      '/validate-kaos-tools-v1alpha1-mcpserver',
      '/validate-kaos-tools-v1alpha1-memorystore',
      '/validate-kaos-tools-v1alpha1-accessgrant',
    ],
  );
});

t.test('a valid review: 200, the AdmissionReview, a debug line', async (t) => {
  const answer = await admit(validateAgent, 'application/json', bytes(review(admissionRequest('Agent', sampleObject('Agent'), { uid: 'u1' }))));
  t.equal(answer.status, 200);
  t.same(JSON.parse(answer.body), { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u1', allowed: true } });
  t.equal(answer.log?.level, 'debug');
  t.equal(answer.log?.message, 'admitted');
});

t.test('a wrong content type is refused before the body is read', async (t) => {
  let read = false;
  const answer = await admit(validateAgent, 'text/plain', async () => ((read = true), { ok: true, body: Buffer.from('{}') }));
  t.equal(answer.status, 415);
  t.same(JSON.parse(answer.body), { message: 'unsupported Content-Type "text/plain": send application/json' });
  t.equal(answer.log?.level, 'warn');
  t.equal(read, false, 'body not read');
});

t.test('a body that could not be read: its code and message; 408 closes the connection', async (t) => {
  const late = await admit(validateAgent, 'application/json', async () => ({ ok: false, code: 408, message: 'request body not received within 10 s' }));
  t.equal(late.status, 408);
  t.equal(late.close, true);
  t.same(JSON.parse(late.body), { message: 'request body not received within 10 s' });
  const large = await admit(validateAgent, 'application/json', async () => ({ ok: false, code: 413, message: 'too big', head: Buffer.from('{"request":{}}') }));
  t.equal(large.status, 413, 'too large, and no uid in its head: plain 413');
  t.same(JSON.parse(large.body), { message: 'too big' });
  t.equal(large.close, undefined);
});

/** The response of a denial for a body or an object too large to read. */
const tooLarge = (uid: string, message: string) => ({ uid, allowed: false, status: { status: 'Failure', message, reason: 'RequestEntityTooLarge', code: 413 } });

t.test('too large to read, the uid in its head: a denial with code 413 the user gets to read', async (t) => {
  const head = Buffer.from('{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u7","kind":{"group":"kaos.tools"');
  const message = 'request body of 9000000 bytes exceeds the limit of 5242880 bytes';
  const denied = await admit(validateAgent, 'application/json', async () => ({ ok: false, code: 413, message, head }));
  t.equal(denied.status, 200);
  t.same(JSON.parse(denied.body).response, tooLarge('u7', `${message}: no AdmissionReview of an object the API server can store is that large`));
  t.match(denied.log, { level: 'warn', fields: { webhook: '/validate-kaos-tools-v1alpha1-agent', code: 413, uid: 'u7' } });
});

t.test('an object too large to be stored: a denial with code 413 naming it, before it is parsed', async (t) => {
  const object = JSON.stringify({ ...sampleObject('Agent'), metadata: { name: 'big', annotations: { pad: 'x'.repeat(MAX_OBJECT_BYTES) } } });
  const body = `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u8","operation":"CREATE","object":${object}}}`;
  const denied = await admit(validateAgent, 'application/json', bytes(body));
  t.equal(denied.status, 200);
  t.same(JSON.parse(denied.body).response, tooLarge('u8', `request.object is ${Buffer.byteLength(object)} bytes of JSON, more than the ${MAX_OBJECT_BYTES} of any object the API server can store`));
  const headless = await admit(validateAgent, 'application/json', bytes(`{"request":{"object":${object},"uid":"u8"}}`));
  t.equal(headless.status, 413, 'no uid in its head: plain 413');
  t.match(JSON.parse(headless.body), { message: /^request\.object is \d+ bytes of JSON/ });
});

t.test('not JSON: plain 400 with a warn line', async (t) => {
  const answer = await admit(validateAgent, 'application/json', bytes('{'));
  t.equal(answer.status, 400);
  t.match(JSON.parse(answer.body), { message: /^request body is not valid JSON: / });
  t.match(answer.log, { level: 'warn', fields: { webhook: '/validate-kaos-tools-v1alpha1-agent', code: 400 } });
});

t.test('too deep to read: a denial when the head gives the uid, else plain 400', async (t) => {
  const deep = `${'['.repeat(200)}${']'.repeat(200)}`;
  const denied = await admit(validateAgent, 'application/json', bytes(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u9","object":${deep}}}`));
  t.equal(denied.status, 200);
  t.same(JSON.parse(denied.body).response, {
    uid: 'u9',
    allowed: false,
    status: { status: 'Failure', message: 'request body is nested deeper than 100 levels', reason: 'BadRequest', code: 400 },
  });
  t.match(denied.log, { level: 'warn', fields: { webhook: '/validate-kaos-tools-v1alpha1-agent', code: 400, uid: 'u9' } });
  const headless = await admit(validateAgent, 'application/json', bytes(`{"request":{"object":${deep},"uid":"u9"}}`));
  t.equal(headless.status, 400, 'the uid not at the head: no review to answer with');
  t.same(JSON.parse(headless.body), { message: 'request body is nested deeper than 100 levels' });
});

t.test('a handler that throws: a 500 denial in the review, an error line with the facts', async (t) => {
  const answer = await admit(validateAgent, 'application/json', bytes(review(admissionRequest('Agent', sampleObject('Agent'), { uid: 'u2', name: 'throw' }))));
  t.equal(answer.status, 200);
  t.same(JSON.parse(answer.body).response, {
    uid: 'u2',
    allowed: false,
    status: { status: 'Failure', message: 'internal error: boom', reason: 'InternalError', code: 500 },
  });
  t.match(answer.log, { level: 'error', message: 'admission handler failed', fields: { uid: 'u2', name: 'throw' } });
});
