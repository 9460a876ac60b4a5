// errorReason: the bounded label of a reconcile error (kaos_operator_reconcile_errors_total's
// `reason`, docs/metrics.md).
import t from 'tap';
import { ApiError, errorReason } from '../../../src/kube/errors.ts';

t.test('an API server answer is named by its Status reason, or by its HTTP code without one', async (t) => {
  t.equal(errorReason(ApiError.fromStatus({ kind: 'Status', code: 403, reason: 'Forbidden', message: 'exceeded quota' })), 'Forbidden');
  t.equal(errorReason(ApiError.fromStatus({ kind: 'Status', code: 409, reason: 'Conflict', message: 'x' })), 'Conflict');
  t.equal(errorReason(ApiError.fromResponse(503, 'upstream connect error')), 'ServiceUnavailable', 'a proxy\'s text: by the code');
  t.equal(errorReason(new ApiError(500, 'made up: with spaces', 'x')), 'Unknown', 'a reason that is no single word is not a label value');
});

t.test('a request that never got an answer: Timeout or Unreachable; anything else Internal', async (t) => {
  t.equal(errorReason(new DOMException('timed out', 'TimeoutError')), 'Timeout');
  t.equal(errorReason(new DOMException('aborted', 'AbortError')), 'Timeout');
  t.equal(errorReason(Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) })), 'Unreachable');
  t.equal(errorReason(Object.assign(new Error('reset'), { code: 'ECONNRESET' })), 'Unreachable');
  t.equal(errorReason(Object.assign(new Error('slow'), { code: 'UND_ERR_HEADERS_TIMEOUT' })), 'Timeout');
  t.equal(errorReason(new Error('a bug')), 'Internal');
  t.equal(errorReason('a string'), 'Internal');
});
