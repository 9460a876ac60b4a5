// The one entry point of admission: a webhook's request in (content type and a way to read the
// body), its HTTP answer out — status, body and the one log line it deserves. The server routes
// bytes here and writes what comes back; every rule of the protocol (415, 400, the review
// decode, the handler call, the encoded decision) lives on this side. Every request gets exactly
// one answer: a bad one carries a warn line, a handler failure an error line, a denial an info
// line, a success a debug line. Identifiers are logged, objects never: they may carry secrets.
import { clip } from '../api/bounded-text.ts';
import type { KaosKind } from '../api/kinds.ts';
import { WEBHOOK_ENDPOINTS } from './webhook-paths.ts';
import { BODY_LIMIT_BYTES, decodeReview, encodeDecision, errorReview, HEAD_BYTES, headUid, isDecision, parseJson, type RequestFacts } from './review.ts';
import type { AdmissionHandler, AdmissionRequest, AdmissionReviewOut, HandlerFactory, WebhookType } from './types.ts';
import { errorMessage } from '../leaves/error-message.ts';

export { BODY_LIMIT_BYTES };
/** How much of a body refused for its size the server keeps: its head, where the uid is. */
export const BODY_HEAD_BYTES = HEAD_BYTES;

/**
 * What reading a request body gave (server/body.ts): the bytes, or why there are none; a body
 * refused for its size (413) comes with its head, for the uid to answer with.
 */
export type BodyRead = { ok: true; body: Buffer } | { ok: false; code: 400 | 408; message: string } | { ok: false; code: 413; message: string; head: Buffer };

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** The log line an answer deserves; the server writes it with its logger. */
export interface AnswerLog {
  level: LogLevel;
  fields: Record<string, unknown>;
  message: string;
}

/** An HTTP answer: always a JSON body. */
export interface Answer {
  status: number;
  body: string;
  log?: AnswerLog;
  /** Answer with `Connection: close`: the rest of the request is not worth reading (408). */
  close?: true;
}

/** One webhook: a path, the (kind, type) it judges and its handler, bound once. */
export interface Webhook {
  readonly path: string;
  readonly kind: KaosKind;
  readonly type: WebhookType;
  readonly handler: AdmissionHandler;
}

/** Longest handler error message passed to the client; the full one goes to the log. */
const INTERNAL_MESSAGE_LIMIT = 500;

/** Every webhook the operator serves, each bound to its handler (called once per endpoint, here). */
export function createWebhooks(handlers: HandlerFactory): readonly Webhook[] {
  return WEBHOOK_ENDPOINTS.map(({ path, kind, type }) => ({ path, kind, type, handler: handlers(kind, type) }));
}

/**
 * Judges one request to `webhook`. `readBody` is called at most once, after the content type is
 * accepted, so a request refused for its type is never read. Never rejects.
 */
export async function admit(webhook: Webhook, contentType: string | undefined, readBody: () => Promise<BodyRead>): Promise<Answer> {
  const { path, kind, type, handler } = webhook;
  // Answers without an AdmissionReview (no uid to echo): plain HTTP status and {message}.
  const refuse = (status: number, message: string, facts: RequestFacts): Answer => ({
    status,
    body: messageBody(message),
    log: { level: 'warn', fields: { webhook: path, code: status, ...facts }, message },
  });

  if (!isJsonContentType(contentType)) {
    const got = contentType ?? 'none';
    return refuse(415, `unsupported Content-Type ${JSON.stringify(got.slice(0, 100))}: send application/json`, {});
  }
  const read = await readBody();
  if (!read.ok) {
    // Larger than any review of a write the API server can store, but its uid is in its head: a
    // denial the user gets to read, as for a body too deep or too wide.
    const uid = read.code === 413 ? headUid(read.head) : undefined;
    if (uid !== undefined) {
      const message = `${read.message}: no AdmissionReview of an object the API server can store is that large`;
      return review(errorReview(uid, 413, message), { level: 'warn', fields: { webhook: path, code: 413, uid }, message });
    }
    const answer = refuse(read.code, read.message, {});
    // The rest of a late body is not worth waiting for: answer, then close the connection.
    return read.code === 408 ? { ...answer, close: true } : answer;
  }
  const parsed = parseJson(read.body);
  if (!parsed.ok) {
    // Too deep, too wide or too large to read, but its uid is in its head: a denial the user gets to read.
    const uid = parsed.code === undefined ? undefined : headUid(read.body);
    const code = parsed.code ?? 400;
    if (uid === undefined) return refuse(code, parsed.message, {});
    return review(errorReview(uid, code, parsed.message), { level: 'warn', fields: { webhook: path, code, uid }, message: parsed.message });
  }
  const decoded = decodeReview(parsed.value, kind);
  if (!decoded.ok) {
    if (decoded.uid === undefined) return refuse(400, decoded.message, decoded.facts);
    return review(errorReview(decoded.uid, 400, decoded.message), {
      level: 'warn',
      fields: { webhook: path, code: 400, ...decoded.facts },
      message: decoded.message,
    });
  }
  const request = decoded.request;
  let decision: unknown;
  try {
    decision = await handler(request);
  } catch (err) {
    const message = errorMessage(err).slice(0, INTERNAL_MESSAGE_LIMIT);
    return review(errorReview(request.uid, 500, `internal error: ${message}`), {
      level: 'error',
      fields: { webhook: path, ...factsOf(request), err },
      message: 'admission handler failed',
    });
  }
  if (!isDecision(decision)) {
    return review(errorReview(request.uid, 500, 'internal error: the handler returned no decision'), {
      level: 'error',
      fields: { webhook: path, ...factsOf(request) },
      message: 'admission handler returned no decision',
    });
  }
  const log: AnswerLog = decision.allowed
    ? {
        level: 'debug',
        fields: { webhook: path, ...factsOf(request), patchOperations: decision.patch?.length ?? 0, warnings: decision.warnings?.length ?? 0 },
        message: 'admitted',
      }
    : {
        level: 'info',
        fields: { webhook: path, ...factsOf(request), code: decision.status?.code, reason: decision.status?.reason },
        message: clip(decision.status?.message ?? 'denied', 1000),
      };
  return review(encodeDecision(request.uid, type, decision), log);
}

/** True when the Content-Type is application/json, parameters (charset) allowed. */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const semi = header.indexOf(';');
  const type = (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
  return type === 'application/json';
}

/** `{"message": ...}`: the body of every answer that is not an AdmissionReview. */
export function messageBody(message: string): string {
  return JSON.stringify({ message });
}

function review(out: AdmissionReviewOut, log: AnswerLog): Answer {
  return { status: 200, body: JSON.stringify(out), log };
}

function factsOf(request: AdmissionRequest): RequestFacts {
  return {
    uid: request.uid,
    kind: request.kind.kind,
    operation: request.operation,
    namespace: request.namespace,
    name: request.name,
  };
}
