// What a client's failed request counts as in the soak: a documented denial (a kaos.tools
// webhook's or the CRD schema's 422 naming fields with Kubernetes' kinds of error), a race lost
// (404, 409), the API server away during its restart — or a violation: a 500, a timeout, a 422
// that names no field, no answer while the API server was up.
import t from 'tap';
import { ApiError } from '../../../src/kube/errors.ts';
import { classify } from '../../soak/outcomes.ts';

const denial = (message: string, causes: { reason: string; field: string }[]): ApiError =>
  new ApiError(422, 'Invalid', message, { causes: causes.map((c) => ({ ...c, message: 'x' })) });
const transport = (code: string): Error => new Error('POST /apis/kaos.tools/v1alpha1/namespaces/soak-0/agents: connect', { cause: Object.assign(new Error(code), { code }) });

t.test('documented denials', async (t) => {
  t.same(classify(denial('admission webhook "vagent.kaos.tools" denied the request: Agent.kaos.tools "a" is invalid: spec.modelAPI: Not found: "m"', [{ reason: 'FieldValueNotFound', field: 'spec.modelAPI' }]), false), { outcome: 'denied' });
  t.same(classify(denial('MCPServer.kaos.tools "s" is invalid: spec.type: Unsupported value: "x"', [{ reason: 'FieldValueNotSupported', field: 'spec.type' }]), false), { outcome: 'denied' }, 'the CRD schema');
  t.same(classify(denial('admission webhook "vmodelapi.kaos.tools" denied the request: ModelAPI.kaos.tools "m" is invalid: metadata.annotations[kaos.tools/reference-policy]: Unsupported value: "x"', [{ reason: 'FieldValueNotSupported', field: 'metadata.annotations[kaos.tools/reference-policy]' }]), false), { outcome: 'denied' });
});

t.test('422s that are no documented rule', async (t) => {
  t.match(classify(denial('admission webhook "other.example.com" denied the request: no', []), false), { outcome: 'failed', violation: /neither a kaos.tools webhook nor the CRD schema/ });
  t.match(classify(denial('Agent.kaos.tools "a" is invalid: spec: something odd', [{ reason: 'Whatever', field: 'spec' }]), false), { outcome: 'failed', violation: /undocumented cause Whatever/ });
  t.match(classify(denial('Agent.kaos.tools "a" is invalid: status.x: Invalid value', [{ reason: 'FieldValueInvalid', field: 'status.x' }]), false), { outcome: 'failed', violation: /not a field of the object/ });
});

t.test('races between clients are expected outcomes', async (t) => {
  t.same(classify(new ApiError(404, 'NotFound', 'agents.kaos.tools "a" not found'), false), { outcome: 'not-found' });
  t.same(classify(new ApiError(409, 'AlreadyExists', 'agents.kaos.tools "a" already exists'), false), { outcome: 'exists' });
  t.same(classify(new ApiError(409, 'Conflict', 'the object has been modified'), false), { outcome: 'conflict' });
});

t.test('no answer: expected while the API server restarts, a violation otherwise', async (t) => {
  t.same(classify(transport('ECONNREFUSED'), true), { outcome: 'unavailable', inDoubt: true });
  t.match(classify(transport('ECONNRESET'), false), { outcome: 'failed', inDoubt: true, violation: /no answer from the API server: .*ECONNRESET/ });
  t.same(classify(new ApiError(503, 'ServiceUnavailable', 'apiserver is shutting down'), true), { outcome: 'unavailable', inDoubt: true });
});

t.test('500s and timeouts are violations, even during a restart', async (t) => {
  t.match(classify(new ApiError(500, 'InternalError', 'Internal error occurred: failed calling webhook "vagent.kaos.tools": context deadline exceeded'), false), { outcome: 'failed', inDoubt: true, violation: /^500 InternalError: .*failed calling webhook/ });
  t.match(classify(new ApiError(500, 'InternalError', 'admission webhook "vagent.kaos.tools" denied the request: internal error: GET x: write ECONNRESET'), true), { outcome: 'failed', violation: /internal error/ });
  t.match(classify(new ApiError(504, 'Timeout', 'POST x: no complete response within 30000 ms'), false), { outcome: 'failed', inDoubt: true, violation: /^504 Timeout/ });
});
