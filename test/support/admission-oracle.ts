// What every answer of an admission webhook must look like, whatever the request carried: a
// well-formed AdmissionReview for the request's uid (allowed a boolean, a denial's status a
// metav1.Status, a patch a base64 JSONPatch that applies to the object sent), or a clean 4xx
// with a JSON {message}. Never a 500, neither as the HTTP status nor as the review's code:
// nothing an object contains is an internal error. Pure: the fuzz test and `npm run fuzz` share it.
import { Buffer } from 'node:buffer';
import { isDeepStrictEqual } from 'node:util';
import jsonPatch from 'fast-json-patch';
import type { AdmissionResponse } from '../../src/admission/types.ts';
import type { WebhookType } from '../../src/admission/types.ts';
import { isRecord } from '../../src/api/json.ts';
import { MAX_WARNING_LENGTH } from '../../src/api/warnings.ts';
import type { NormalRequest, Reply } from './fuzz-target.ts';

export interface Verdict {
  /** Empty when the answer is as it must be. */
  problems: string[];
  http: number;
  /** The AdmissionReview's status code: 200 when allowed, the status code when denied. */
  reviewCode: number | undefined;
  /** The denial's or the 4xx's message, for grouping failures. */
  message: string | undefined;
}

const PATCH_OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** Judges the reply to `body` (the exact text sent) on an endpoint of `type`. */
export function judge(type: WebhookType, body: string, reply: Reply): Verdict {
  const problems: string[] = [];
  const verdict: Verdict = { problems, http: reply.status, reviewCode: undefined, message: undefined };
  if (!/^application\/json/.test(reply.contentType)) problems.push(`Content-Type ${JSON.stringify(reply.contentType)}, not JSON`);
  let answer: unknown;
  try {
    answer = JSON.parse(reply.body);
  } catch {
    problems.push(`HTTP ${reply.status} with a body that is not JSON: ${reply.body.slice(0, 200)}`);
    return verdict;
  }
  if (reply.status !== 200) {
    const message = isRecord(answer) && typeof answer.message === 'string' ? answer.message : undefined;
    verdict.message = message;
    if (reply.status < 400 || reply.status >= 500) problems.push(`HTTP ${reply.status}: ${reply.body.slice(0, 300)}`);
    if (message === undefined || message === '') problems.push(`HTTP ${reply.status} without a {message}: ${reply.body.slice(0, 200)}`);
    return verdict;
  }

  // JSON.parse keeps the last of duplicate keys, as the server's decoder does.
  const sent = JSON.parse(body) as unknown;
  const request = isRecord(sent) && isRecord(sent.request) ? sent.request : undefined;
  const uid = request?.uid;
  if (!isRecord(answer) || answer.apiVersion !== 'admission.k8s.io/v1' || answer.kind !== 'AdmissionReview' || !isRecord(answer.response)) {
    problems.push(`HTTP 200 but not an admission.k8s.io/v1 AdmissionReview with a response: ${reply.body.slice(0, 200)}`);
    return verdict;
  }
  const response = answer.response;
  if (typeof uid !== 'string' || uid === '') problems.push(`an AdmissionReview answered to a request without a uid`);
  else if (response.uid !== uid) problems.push(`response.uid ${JSON.stringify(response.uid)} is not the request's ${JSON.stringify(uid).slice(0, 100)}`);
  if (typeof response.allowed !== 'boolean') {
    problems.push(`response.allowed is ${JSON.stringify(response.allowed)}`);
    return verdict;
  }
  if (response.allowed) verdict.reviewCode = 200;
  else {
    const status = response.status;
    if (!isRecord(status)) problems.push('a denial without a status');
    else {
      const code = status.code;
      verdict.reviewCode = typeof code === 'number' ? code : undefined;
      verdict.message = typeof status.message === 'string' ? status.message : undefined;
      if (status.status !== 'Failure') problems.push(`denial status.status ${JSON.stringify(status.status)}`);
      if (typeof status.message !== 'string' || status.message === '') problems.push('denial without a message');
      if (typeof status.reason !== 'string' || status.reason === '') problems.push('denial without a reason');
      if (typeof code !== 'number' || !Number.isInteger(code) || code < 400 || code > 599) problems.push(`denial code ${JSON.stringify(code)}`);
      else if (code >= 500) problems.push(`AdmissionReview code ${code}: ${String(status.message).slice(0, 300)}`);
    }
  }
  if (response.warnings !== undefined) {
    const warnings = response.warnings;
    if (!Array.isArray(warnings) || warnings.some((w) => typeof w !== 'string' || [...w].length > MAX_WARNING_LENGTH || !w.isWellFormed())) {
      problems.push(`warnings not a list of short well-formed strings: ${JSON.stringify(warnings).slice(0, 200)}`);
    }
  }
  if (response.patch !== undefined || response.patchType !== undefined) problems.push(...patchProblems(type, response, request?.object));
  return verdict;
}

function patchProblems(type: WebhookType, response: Record<string, unknown>, object: unknown): string[] {
  if (type !== 'mutate') return ['a validating webhook answered with a patch'];
  if (response.patchType !== 'JSONPatch' || typeof response.patch !== 'string') return [`patchType ${JSON.stringify(response.patchType)} / patch not a string`];
  if (response.allowed !== true) return ['a patch on a denial'];
  let ops: unknown;
  try {
    ops = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
  } catch {
    return ['patch is not base64 JSON'];
  }
  if (!Array.isArray(ops) || ops.some((op) => !isRecord(op) || !PATCH_OPS.has(String(op.op)) || typeof op.path !== 'string')) {
    return [`patch is not a JSONPatch: ${JSON.stringify(ops).slice(0, 200)}`];
  }
  try {
    jsonPatch.applyPatch(object, ops as jsonPatch.Operation[], true, true);
  } catch (err) {
    return [`patch does not apply to the object sent: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`];
  }
  return [];
}

/** A normal request must get exactly the answer a fresh server gave it. */
export function judgeNormal(normal: NormalRequest, reply: Reply): string[] {
  if (reply.status !== 200) return [`normal request to ${normal.path}: HTTP ${reply.status}: ${reply.body.slice(0, 200)}`];
  const response = (JSON.parse(reply.body) as { response?: AdmissionResponse }).response;
  return isDeepStrictEqual(response, normal.expected)
    ? []
    : [`normal request to ${normal.path} answered differently: ${reply.body.slice(0, 300)}`];
}
