// The webhook routes over real HTTPS: the real server on 127.0.0.1, port 0, fake handlers.
// Every bad request must get its answer, be logged once, and leave the server serving.
import t, { type Test } from 'tap';
import { Agent } from 'node:https';
import { connect } from 'node:tls';
import { startWebhookServer, type RunningWebhookServer } from '../../../src/server/webhook-server.ts';
import { createRegistry } from '../../../src/leaves/prometheus.ts';
import { createWebhookMetrics } from '../../../src/server/webhook-metrics.ts';
import { webhookPath, WEBHOOK_ENDPOINTS } from '../../../src/admission/webhook-paths.ts';
import { BODY_LIMIT_BYTES } from '../../../src/admission/admit.ts';
import type { AdmissionDecision, AdmissionRequest, AdmissionReviewOut, WebhookType } from '../../../src/admission/types.ts';
import type { KaosKind } from '../../../src/api/kinds.ts';
import { makeTestCerts, type TestCerts } from '../../support/certs.ts';
import { captureLogger, httpsRequest, type Reply } from './helpers.ts';
import { admissionRequest, review, sampleObject } from '../../support/admission-request.ts';
import { eventually } from '../../support/poll.ts';

const AGENT_VALIDATE = webhookPath('validate', 'Agent');
const AGENT_MUTATE = webhookPath('mutate', 'Agent');

const calls: { kind: KaosKind; type: WebhookType; request: AdmissionRequest }[] = [];
const handlers = (kind: KaosKind, type: WebhookType) =>
  async (request: AdmissionRequest): Promise<AdmissionDecision> => {
    calls.push({ kind, type, request });
    switch (request.name) {
      case 'throw':
        throw new Error('boom');
      case 'garbage':
        return undefined as unknown as AdmissionDecision;
      case 'deny':
        return {
          allowed: false,
          status: { status: 'Failure', message: 'Agent.kaos.tools "deny" is invalid: spec.modelAPI: Required value', reason: 'Invalid', code: 422 },
        };
      case 'patch':
        return { allowed: true, patch: [{ op: 'add', path: '/spec/waitForDependencies', value: true }], warnings: [`${type} ${kind}`] };
      default:
        return { allowed: true, warnings: [`${type} ${kind}`] };
    }
  };

let certs: TestCerts;
let server: RunningWebhookServer;
const log = captureLogger('debug');
const registry = createRegistry({ defaultMetrics: false });

t.before(async () => {
  certs = await makeTestCerts();
  server = await startWebhookServer({
    config: { host: '127.0.0.1', port: 0, certDir: certs.dir, certCheckIntervalSeconds: 3600 },
    handlers,
    logger: log.logger,
    metrics: createWebhookMetrics(registry),
  });
});
t.teardown(async () => {
  await server.close();
  await certs.cleanup();
});

const post = (path: string, body: string | Buffer | undefined, headers: Record<string, string | number> = {}, agent?: Agent): Promise<Reply> =>
  httpsRequest(server.port, path, body, { headers, ca: certs.caPem, ...(agent === undefined ? {} : { agent }) });

const asReview = (reply: Reply): AdmissionReviewOut => JSON.parse(reply.body) as AdmissionReviewOut;
const problems = () => log.lines.filter((l) => l.level === 'warn' || l.level === 'error').length;

/** Sends a bad request, checks it was logged exactly once, and that a valid one works next. */
async function bad(t: Test, path: string, body: string | Buffer | undefined, headers: Record<string, string | number> = {}, agent?: Agent): Promise<Reply> {
  const before = problems();
  const reply = await post(path, body, headers, agent);
  t.equal(problems() - before, 1, 'logged once');
  t.match(reply.headers['content-type'], /^application\/json/, 'JSON answer');
  const ok = await post(AGENT_VALIDATE, review(admissionRequest('Agent', sampleObject('Agent'))), {}, agent);
  t.equal(ok.status, 200, 'a valid request succeeds right after');
  t.equal(asReview(ok).response.allowed, true);
  return reply;
}

t.test('a valid request reaches the handler for its path and is answered in kind', async (t) => {
  for (const endpoint of WEBHOOK_ENDPOINTS) {
    const request = admissionRequest(endpoint.kind, sampleObject(endpoint.kind), { uid: `uid-${endpoint.path}` });
    const reply = await post(endpoint.path, review(request));
    t.equal(reply.status, 200, endpoint.path);
    t.match(reply.headers['content-type'], /^application\/json/);
    const out = asReview(reply);
    t.equal(out.apiVersion, 'admission.k8s.io/v1');
    t.equal(out.kind, 'AdmissionReview');
    t.equal(out.response.uid, request.uid, 'uid echoed');
    t.same(out.response.warnings, [`${endpoint.type} ${endpoint.kind}`], 'the handler of this (type, kind)');
    t.notOk('patch' in out.response, 'no patch when nothing changed');
    t.same(calls.at(-1)?.request, request, 'the handler sees the request as sent');
  }
});

t.test('the API server\'s ?timeout= query does not change the route', async (t) => {
  const reply = await post(`${AGENT_VALIDATE}?timeout=5s`, review(admissionRequest('Agent', sampleObject('Agent'))));
  t.equal(reply.status, 200);
  t.equal(asReview(reply).response.allowed, true);
});

t.test('a mutation comes back as a base64 JSONPatch; a denial status as is', async (t) => {
  const mutated = asReview(await post(AGENT_MUTATE, review(admissionRequest('Agent', sampleObject('Agent'), { name: 'patch' }))));
  t.equal(mutated.response.patchType, 'JSONPatch');
  t.same(JSON.parse(Buffer.from(mutated.response.patch ?? '', 'base64').toString('utf8')), [
    { op: 'add', path: '/spec/waitForDependencies', value: true },
  ]);
  const validated = asReview(await post(AGENT_VALIDATE, review(admissionRequest('Agent', sampleObject('Agent'), { name: 'patch' }))));
  t.notOk('patch' in validated.response, 'validating endpoints never patch');

  const before = log.find('info').length;
  const denied = asReview(await post(AGENT_VALIDATE, review(admissionRequest('Agent', sampleObject('Agent'), { name: 'deny' }))));
  t.equal(denied.response.allowed, false);
  t.same(denied.response.status, {
    status: 'Failure',
    message: 'Agent.kaos.tools "deny" is invalid: spec.modelAPI: Required value',
    reason: 'Invalid',
    code: 422,
  });
  const logged = log.find('info').slice(before);
  t.equal(logged.length, 1, 'a denial is logged once, at info');
  t.equal(logged[0]?.uid, admissionRequest('Agent', sampleObject('Agent')).uid);
  t.equal(logged[0]?.operation, 'CREATE');
});

t.test('body not JSON: 400 with a clear message', async (t) => {
  const reply = await bad(t, AGENT_VALIDATE, '{"apiVersion": ');
  t.equal(reply.status, 400);
  t.match(JSON.parse(reply.body), { message: /^request body is not valid JSON: / });
});

t.test('JSON but not an AdmissionReview: 400', async (t) => {
  const reply = await bad(t, AGENT_VALIDATE, JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: {} }));
  t.equal(reply.status, 400);
  t.match(JSON.parse(reply.body), { message: /expected kind "AdmissionReview", got "Pod"/ });
  const array = await bad(t, AGENT_VALIDATE, '[]');
  t.equal(array.status, 400);
});

t.test('wrong apiVersion: 400 naming the supported one', async (t) => {
  const reply = await bad(t, AGENT_VALIDATE, review(admissionRequest('Agent', sampleObject('Agent')), 'admission.k8s.io/v1beta1'));
  t.equal(reply.status, 400);
  t.match(JSON.parse(reply.body), { message: /"admission.k8s.io\/v1beta1".*supports admission.k8s.io\/v1 only/ });
});

t.test('no request.uid: 400', async (t) => {
  const { uid: _uid, ...request } = admissionRequest('Agent', sampleObject('Agent'));
  const reply = await bad(t, AGENT_VALIDATE, review(request));
  t.equal(reply.status, 400);
  t.match(JSON.parse(reply.body), { message: 'request.uid is required' });
});

t.test('a kind or resource that does not belong on the path: AdmissionReview denial, code 400', async (t) => {
  const pod = admissionRequest('Agent', sampleObject('Agent'), {
    uid: 'pod-uid',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
  });
  for (const [name, request] of [
    ['a Pod on the Agent endpoint', pod],
    ['a ModelAPI on the Agent endpoint', admissionRequest('ModelAPI', sampleObject('ModelAPI'), { uid: 'pod-uid' })],
  ] as const) {
    const reply = await bad(t, AGENT_VALIDATE, review(request));
    t.equal(reply.status, 200, `${name}: answered with a review`);
    const out = asReview(reply);
    t.equal(out.response.uid, 'pod-uid');
    t.equal(out.response.allowed, false);
    t.equal(out.response.status?.code, 400);
    t.equal(out.response.status?.reason, 'BadRequest');
    t.match(out.response.status?.message, /this webhook serves kaos.tools\/v1alpha1 Agent/);
  }
  const line = log.find('warn', 'this webhook serves').at(-1);
  t.equal(line?.uid, 'pod-uid', 'logged with the uid');
  t.equal(line?.kind, 'ModelAPI', 'and the kind');
  t.equal(line?.operation, 'CREATE', 'and the operation');
  t.notOk('object' in (line ?? {}), 'never the object');
});

t.test('no request.object on CREATE or UPDATE: AdmissionReview denial, code 400', async (t) => {
  for (const operation of ['CREATE', 'UPDATE'] as const) {
    const request = admissionRequest('Agent', sampleObject('Agent'), { operation, object: undefined, oldObject: { metadata: {} } });
    const reply = await bad(t, AGENT_VALIDATE, review(request));
    t.equal(reply.status, 200);
    const out = asReview(reply);
    t.equal(out.response.allowed, false);
    t.equal(out.response.status?.code, 400);
    t.equal(out.response.status?.message, `request.object is required for ${operation}`);
  }
});

t.test('a body over the limit: read no further than its head; a denial when it gives the uid, else 413; the connection stays usable', async (t) => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: certs.caPem });
  t.teardown(() => agent.destroy());
  const huge = Buffer.alloc(BODY_LIMIT_BYTES + 1, 0x20);
  const declared = await bad(t, AGENT_VALIDATE, huge, {}, agent);
  t.equal(declared.status, 413, 'refused from Content-Length');
  t.match(JSON.parse(declared.body), { message: `request body of ${BODY_LIMIT_BYTES + 1} bytes exceeds the limit of ${BODY_LIMIT_BYTES} bytes` });
  const chunked = await bad(t, AGENT_VALIDATE, huge, { 'transfer-encoding': 'chunked' }, agent);
  t.equal(chunked.status, 413, 'refused while streaming');
  t.match(JSON.parse(chunked.body), { message: `request body exceeds the limit of ${BODY_LIMIT_BYTES} bytes` });

  // The API server writes the uid first: the refusal is a denial that kubectl shows in words.
  const request = admissionRequest('Agent', sampleObject('Agent'), { uid: 'big-1' });
  const withUid = Buffer.concat([Buffer.from(review(request)).subarray(0, -2), Buffer.from(',"pad":"'), Buffer.alloc(BODY_LIMIT_BYTES, 0x61), Buffer.from('"}}')]);
  for (const [how, headers] of [['Content-Length', {}], ['chunked', { 'transfer-encoding': 'chunked' }]] as const) {
    const denied = await bad(t, AGENT_VALIDATE, withUid, headers, agent);
    t.equal(denied.status, 200, `${how}: an AdmissionReview`);
    t.match(asReview(denied).response, {
      uid: 'big-1',
      allowed: false,
      status: { code: 413, reason: 'RequestEntityTooLarge', message: /exceeds the limit of \d+ bytes: no AdmissionReview of an object the API server can store is that large$/ },
    });
  }
  const justUnder = await post(AGENT_VALIDATE, Buffer.concat([Buffer.from(review(admissionRequest('Agent', sampleObject('Agent')))), Buffer.alloc(BODY_LIMIT_BYTES - 2000, 0x20)]));
  t.equal(justUnder.status, 200, 'a large body within the limit is served');
});

t.test('wrong content type: 415', async (t) => {
  const reply = await bad(t, AGENT_VALIDATE, review(admissionRequest('Agent', sampleObject('Agent'))), { 'content-type': 'text/plain' });
  t.equal(reply.status, 415);
  t.match(JSON.parse(reply.body), { message: /unsupported Content-Type "text\/plain": send application\/json/ });
  const charset = await post(AGENT_VALIDATE, review(admissionRequest('Agent', sampleObject('Agent'))), { 'content-type': 'application/json; charset=utf-8' });
  t.equal(charset.status, 200, 'a charset parameter is fine');
});

t.test('unknown path: 404; wrong method: 405', async (t) => {
  for (const path of ['/validate-kaos-tools-v1alpha1-pod', '/', `${AGENT_VALIDATE}/`, AGENT_VALIDATE.toUpperCase()]) {
    const reply = await bad(t, path, review(admissionRequest('Agent', sampleObject('Agent'))));
    t.equal(reply.status, 404, path);
    t.match(JSON.parse(reply.body), { message: /no webhook is served at/ });
  }
  const before = problems();
  const get = await httpsRequest(server.port, AGENT_VALIDATE, undefined, { method: 'GET', ca: certs.caPem });
  t.equal(get.status, 405);
  t.equal(get.headers.allow, 'POST');
  t.equal(problems() - before, 1, 'logged once');
});

t.test('a handler that throws: AdmissionReview denial, code 500, no stack, and the server carries on', async (t) => {
  const request = admissionRequest('Agent', sampleObject('Agent'), { name: 'throw', uid: 'throw-uid' });
  const before = log.find('error').length;
  const reply = await bad(t, AGENT_VALIDATE, review(request));
  t.equal(reply.status, 200);
  const out = asReview(reply);
  t.equal(out.response.uid, 'throw-uid');
  t.equal(out.response.allowed, false);
  t.same(out.response.status, { status: 'Failure', message: 'internal error: boom', reason: 'InternalError', code: 500 });
  t.notMatch(reply.body, /at .*\.ts:\d+/, 'no stack to the client');
  const logged = log.find('error').slice(before);
  t.equal(logged.length, 1);
  t.equal(logged[0]?.uid, 'throw-uid');

  const garbage = asReview(await bad(t, AGENT_VALIDATE, review(admissionRequest('Agent', sampleObject('Agent'), { name: 'garbage' }))));
  t.equal(garbage.response.status?.code, 500);
  t.match(garbage.response.status?.message, /^internal error: /);
});

t.test('a client that hangs up mid-body is logged once and costs nothing else', async (t) => {
  const before = log.find('warn', 'aborted').length;
  const socket = connect({ host: '127.0.0.1', port: server.port, ca: certs.caPem, servername: 'localhost' });
  await new Promise((r) => socket.once('secureConnect', r));
  socket.write(`POST ${AGENT_VALIDATE} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"apiVersion":`);
  const inFlight = (n: number) => new RegExp(`controller_runtime_webhook_requests_in_flight\\{webhook="${AGENT_VALIDATE}"\\} ${n}`);
  await eventually('the request to be in flight', async () => inFlight(1).test(await registry.metrics()));
  socket.destroy();
  await eventually('the abort to be logged', () => log.find('warn', 'aborted').length === before + 1);
  t.equal(log.find('warn', 'aborted').length, before + 1, 'logged');
  const ok = await post(AGENT_VALIDATE, review(admissionRequest('Agent', sampleObject('Agent'))));
  t.equal(ok.status, 200, 'the server carries on');
  t.match(await registry.metrics(), inFlight(0), 'nothing left in flight');
});

t.test('metrics use controller-runtime names, the path as the webhook label and the HTTP code', async (t) => {
  const text = await registry.metrics();
  t.match(text, new RegExp(`controller_runtime_webhook_requests_total\\{webhook="${AGENT_VALIDATE}",code="200"\\} \\d+`));
  t.match(text, new RegExp(`controller_runtime_webhook_requests_total\\{webhook="${AGENT_VALIDATE}",code="413"\\} 2`));
  t.match(text, new RegExp(`controller_runtime_webhook_requests_total\\{webhook="${AGENT_VALIDATE}",code="415"\\} 1`));
  t.match(text, new RegExp(`controller_runtime_webhook_latency_seconds_bucket\\{le="0.001",webhook="${AGENT_MUTATE}"\\} \\d+`));
  t.match(text, new RegExp(`controller_runtime_webhook_requests_in_flight\\{webhook="${AGENT_VALIDATE}"\\} 0`));
  t.notMatch(text, /webhook="\/"/, 'unknown paths are not counted');
});
