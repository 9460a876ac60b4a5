// The AdmissionReview protocol (admission.k8s.io/v1): decoding what the API server sends and
// encoding what the handlers decide. Pure: no I/O, no logging; the router does both.
//
// How bad input is answered, and why:
//
// * While the request's uid is unknown there is no AdmissionReview we could answer with, so the
//   answer is plain HTTP: status 400 (413 oversized, 415 wrong Content-Type, 404 unknown path,
//   405 wrong method) and a JSON body `{"message": "..."}`. The API server turns a non-200 into
//   "failed calling webhook ...: <message>", which is what the user should read. This covers:
//   a body larger than BODY_LIMIT_BYTES (never read past its head), a body that is not JSON,
//   JSON nested deeper than MAX_JSON_DEPTH (100) levels, with an object of more than
//   MAX_JSON_MEMBERS (1,024) members or with an object or oldObject larger than
//   MAX_OBJECT_BYTES or holding more than MAX_OBJECT_VALUES values, or more than
//   MAX_BODY_VALUES values in all (found by a linear scan
//   before JSON.parse, so that no recursive walk of the object can overflow the stack, no object
//   is a hash table costly to read, and no object costs more than the work budget holds) whose
//   head does not give its uid (headUid: the API server's always does, and those are then
//   denials, below: code 413, reason RequestEntityTooLarge, for the sizes and the values; 400
//   for the depth and the width), JSON that is not an
//   AdmissionReview, an apiVersion other than admission.k8s.io/v1 (the message names the
//   supported one), and a missing request.uid.
// * Once the uid is known the protocol expects an AdmissionReview back, so every later problem
//   is HTTP 200 with `allowed: false` and a metav1.Status: code 400 (reason BadRequest) when the
//   request does not belong on this endpoint (kind or resource not the path's, an unknown
//   operation, a subresource, no object on CREATE/UPDATE, no oldObject on UPDATE, an object or
//   oldObject whose metadata is not what the API server's ObjectMeta would have made of it, such
//   as a null, array or string metadata, or a name that is not a string: api/object-meta.ts),
//   and code 500
//   (reason InternalError, message "internal error: <what>", never a stack) when a handler
//   throws or returns something that is not a decision.
// * A subresource (e.g. status) is refused rather than waved through: the generated webhook
//   configurations never route one here, so seeing one means a misconfiguration worth noticing.
// * A validating endpoint never sends a patch, even if a handler returned one: the API server
//   does not apply patches from validating webhooks and some versions reject the response.
// * Warnings go through api/warnings.ts clampWarning: at most 120 characters (code points, as
//   the API server counts them), ending in "..."; control characters become spaces, because the
//   API server passes warnings on as HTTP Warning headers.
import type {
  AdmissionDecision,
  AdmissionOperation,
  AdmissionRequest,
  AdmissionReviewOut,
  Status,
  WebhookType,
} from './types.ts';
import { isRecord } from '../api/json.ts';
import { GROUP, KIND_NAMES, SCALE, SCALE_SUBRESOURCES, VERSION, type KaosKind } from '../api/kinds.ts';
import { kubeObjectProblem } from '../api/object-meta.ts';
import { clampWarning } from '../api/warnings.ts';
import { clip } from '../api/bounded-text.ts';
import { jsonShapeProblem, MAX_BODY_VALUES, MAX_JSON_DEPTH, MAX_JSON_MEMBERS, MAX_OBJECT_BYTES, MAX_OBJECT_VALUES } from './json-depth.ts';
import { errorMessage } from '../leaves/error-message.ts';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_REVIEW_KIND = 'AdmissionReview';
/**
 * The largest AdmissionReview body read: an UPDATE of the largest object the API server can
 * store (an object and its old version of MAX_OBJECT_BYTES each), and 1 MiB for the rest of the
 * review (the user's name, groups and extra, which come from the authenticator: the API server
 * reads at most 1 MiB of a request's headers). The API server sends larger reviews only for writes
 * that cannot be stored (docs/limits.md): they are answered from their head, never parsed.
 */
export const BODY_LIMIT_BYTES = 2 * MAX_OBJECT_BYTES + 1024 * 1024;

/** Facts about a request that are safe to log: identifiers only, never the objects. */
export interface RequestFacts {
  uid?: string;
  kind?: string;
  operation?: string;
  namespace?: string;
  name?: string;
}

export type DecodeResult =
  | { ok: true; request: AdmissionRequest }
  /** Answer with plain HTTP 400 and `{message}`: there is no uid to answer with. */
  | { ok: false; uid: undefined; message: string; facts: RequestFacts }
  /** Answer with an AdmissionReview denial, code 400. */
  | { ok: false; uid: string; message: string; facts: RequestFacts };

export type ParseResult =
  | { ok: true; value: unknown }
  /**
   * `code`: valid JSON, perhaps, but too deep or too wide (400) or holding an object too large
   * (413) to be read (json-depth.ts); the answer is a denial when the head gives the uid.
   */
  | { ok: false; message: string; code?: 400 | 413 };

const OPERATIONS: readonly AdmissionOperation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];
/** Longest piece of client-supplied text quoted back in a message or a log line. */
const QUOTE_LIMIT = 120;

/**
 * UTF-8 to a string as Buffer's toString does it (invalid bytes become U+FFFD, a byte order mark
 * stays, for JSON.parse to refuse), at a quarter of its cost on an ASCII body of megabytes.
 */
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

export function parseJson(body: Buffer): ParseResult {
  const shape = jsonShapeProblem(body, { maxDepth: MAX_JSON_DEPTH, maxMembers: MAX_JSON_MEMBERS, maxMemberBytes: MAX_OBJECT_BYTES, maxMemberValues: MAX_OBJECT_VALUES, maxValues: MAX_BODY_VALUES });
  if (shape?.kind === 'depth') return { ok: false, message: `request body is nested deeper than ${MAX_JSON_DEPTH} levels`, code: 400 };
  if (shape?.kind === 'members') return { ok: false, message: `request body has an object of more than ${MAX_JSON_MEMBERS} members`, code: 400 };
  if (shape?.kind === 'size') {
    const message = `${clip(shape.member, QUOTE_LIMIT)} is ${shape.bytes} bytes of JSON, more than the ${MAX_OBJECT_BYTES} of any object the API server can store`;
    return { ok: false, message, code: 413 };
  }
  if (shape?.kind === 'values') {
    const message = `${clip(shape.member, QUOTE_LIMIT)} holds more than ${shape.values} JSON values: more than the webhooks read in one object`;
    return { ok: false, message, code: 413 };
  }
  if (shape?.kind === 'body-values') return { ok: false, message: `request body holds more than ${shape.values} JSON values: more than the webhooks read in one review`, code: 413 };
  try {
    return { ok: true, value: JSON.parse(UTF8.decode(body)) as unknown };
  } catch (err) {
    return { ok: false, message: `request body is not valid JSON: ${errorMessage(err)}` };
  }
}

/**
 * The uid of a body too deep or too wide to be parsed, read from its head the way the API server
 * writes it: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"…"`
 * (either order of the first two, which are optional here; the uid first in the request, as Go
 * marshals AdmissionRequest). With it, the refusal can be an AdmissionReview denial that the user
 * reads ("admission webhook … denied the request: …") instead of an HTTP 400 the API server
 * reports only as "the server rejected our request for an unknown reason". Undefined for any
 * other head: the refusal stays HTTP 400. Reads at most HEAD_BYTES, so its cost does not depend
 * on the body.
 */
export function headUid(body: Buffer): string | undefined {
  return HEAD_UID.exec(body.subarray(0, HEAD_BYTES).toString('latin1'))?.[1];
}

/** How much of a body headUid reads. */
export const HEAD_BYTES = 512;
const HEAD_UID = /^\s*\{\s*(?:"(?:kind|apiVersion)"\s*:\s*"[^"\\]*"\s*,\s*){0,2}"request"\s*:\s*\{\s*"uid"\s*:\s*"([0-9A-Za-z-]{1,128})"/;

/** Checks that `body` is an AdmissionReview v1 for `kind`, as the endpoint for `kind` expects. */
export function decodeReview(body: unknown, kind: KaosKind): DecodeResult {
  const facts: RequestFacts = {};
  const http = (message: string): DecodeResult => ({ ok: false, uid: undefined, message, facts });
  if (!isRecord(body)) return http(`expected an ${ADMISSION_API_VERSION} AdmissionReview object, got ${typeName(body)}`);
  if (body.kind !== ADMISSION_REVIEW_KIND) {
    return http(`expected kind "${ADMISSION_REVIEW_KIND}", got ${quote(body.kind)}`);
  }
  if (body.apiVersion !== ADMISSION_API_VERSION) {
    return http(
      `unsupported AdmissionReview apiVersion ${quote(body.apiVersion)}: this webhook supports ${ADMISSION_API_VERSION} only (set admissionReviewVersions: [v1])`,
    );
  }
  const request = body.request;
  if (!isRecord(request)) return http('AdmissionReview has no request');
  collectFacts(request, facts);
  const uid = request.uid;
  if (typeof uid !== 'string' || uid === '') return http('request.uid is required');

  const deny = (message: string): DecodeResult => ({ ok: false, uid, message, facts });
  const names = KIND_NAMES[kind];
  // The scale subresource of a kind that has one carries an autoscaling/v1 Scale (an UPDATE only).
  const scale = request.subResource === SCALE.subresource && SCALE_SUBRESOURCES[kind] !== undefined;
  const gvk = request.kind;
  const [group, version, expected] = scale ? [SCALE.group, SCALE.version, SCALE.kind] : [GROUP, VERSION, kind];
  if (!isRecord(gvk) || gvk.group !== group || gvk.version !== version || gvk.kind !== expected) {
    return deny(`this webhook serves ${group}/${version} ${expected}, got request.kind ${describeGroupVersion(gvk, 'kind')}`);
  }
  const gvr = request.resource;
  if (!isRecord(gvr) || gvr.group !== GROUP || gvr.version !== VERSION || gvr.resource !== names.plural) {
    return deny(
      `this webhook serves ${GROUP}/${VERSION} ${names.plural}, got request.resource ${describeGroupVersion(gvr, 'resource')}`,
    );
  }
  if (request.subResource !== undefined && request.subResource !== '' && !scale) {
    return deny(`this webhook does not serve subresources, got ${names.plural}/${quote(request.subResource)}`);
  }
  const operation = request.operation;
  if (scale && operation !== 'UPDATE') return deny(`${names.plural}/${SCALE.subresource} is served for UPDATE only, got request.operation ${quote(operation)}`);
  if (!(OPERATIONS as readonly unknown[]).includes(operation)) {
    return deny(`request.operation ${quote(operation)} is not one of ${OPERATIONS.join(', ')}`);
  }
  for (const field of ['name', 'namespace'] as const) {
    const value = request[field];
    if (value !== undefined && typeof value !== 'string') return deny(`request.${field} must be a string, got ${typeName(value)}`);
  }
  if (operation === 'CREATE' || operation === 'UPDATE') {
    if (request.object === undefined || request.object === null) return deny(`request.object is required for ${operation}`);
    const problem = kubeObjectProblem(request.object, 'request.object');
    if (problem !== undefined) return deny(problem);
  }
  if (operation === 'UPDATE') {
    if (request.oldObject === undefined || request.oldObject === null) return deny('request.oldObject is required for UPDATE');
    const problem = kubeObjectProblem(request.oldObject, 'request.oldObject');
    if (problem !== undefined) return deny(problem);
  }
  // The fields checked above are the ones handlers rely on; the rest are optional in the type.
  return { ok: true, request: request as unknown as AdmissionRequest };
}

/** The AdmissionReview that carries a handler's decision back to the API server. */
export function encodeDecision(uid: string, type: WebhookType, decision: AdmissionDecision): AdmissionReviewOut {
  const response: AdmissionReviewOut['response'] = { uid, allowed: decision.allowed };
  if (decision.status !== undefined) response.status = decision.status;
  const patch = decision.patch;
  if (type === 'mutate' && patch !== undefined && patch.length > 0) {
    response.patchType = 'JSONPatch';
    response.patch = Buffer.from(JSON.stringify(patch), 'utf8').toString('base64');
  }
  const warnings = decision.warnings;
  if (warnings !== undefined && warnings.length > 0) response.warnings = warnings.map(clampWarning);
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_REVIEW_KIND, response };
}

/** An AdmissionReview denial for a request we could not judge (400), would not read (413) or failed to judge (500). */
export function errorReview(uid: string, code: 400 | 413 | 500, message: string): AdmissionReviewOut {
  const status: Status = { status: 'Failure', message, reason: REASONS[code], code };
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_REVIEW_KIND, response: { uid, allowed: false, status } };
}

const REASONS = { 400: 'BadRequest', 413: 'RequestEntityTooLarge', 500: 'InternalError' } as const;

/** A handler's result is trusted only as far as this check goes. */
export function isDecision(value: unknown): value is AdmissionDecision {
  return isRecord(value) && typeof value.allowed === 'boolean';
}

function collectFacts(request: Record<string, unknown>, facts: RequestFacts): void {
  if (typeof request.uid === 'string') facts.uid = clip(request.uid, QUOTE_LIMIT);
  const gvk = request.kind;
  if (isRecord(gvk) && typeof gvk.kind === 'string') facts.kind = clip(gvk.kind, QUOTE_LIMIT);
  if (typeof request.operation === 'string') facts.operation = clip(request.operation, QUOTE_LIMIT);
  if (typeof request.namespace === 'string' && request.namespace !== '') facts.namespace = clip(request.namespace, QUOTE_LIMIT);
  if (typeof request.name === 'string' && request.name !== '') facts.name = clip(request.name, QUOTE_LIMIT);
}

function describeGroupVersion(value: unknown, field: 'kind' | 'resource'): string {
  if (!isRecord(value)) return typeName(value);
  const group = typeof value.group === 'string' ? value.group : '';
  const version = typeof value.version === 'string' ? value.version : '?';
  const name = typeof value[field] === 'string' ? value[field] : '?';
  return clip(`${group === '' ? '' : `${group}/`}${version} ${name}`, QUOTE_LIMIT);
}

function typeName(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

function quote(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(clip(value, QUOTE_LIMIT)) : typeName(value);
}

