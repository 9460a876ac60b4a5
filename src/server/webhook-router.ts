// The routes of the admission webhooks: one POST endpoint per (type, kind), each
// reading the body, decoding the AdmissionReview (review.ts), calling its handler and writing
// the answer. The handlers are a parameter, so this file knows the protocol and nothing of the
// API's rules. Every request is answered exactly once and counted in the metrics; a bad one is
// logged once (warn), a handler failure once (error), a success only at debug. Identifiers are
// logged, objects never: they may carry secrets.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.ts';
import { clip } from '../api/bounded-text.ts';
import type { AdmissionHandler, AdmissionRequest, AdmissionReviewOut, HandlerFactory } from '../admission/types.ts';
import { WEBHOOK_ENDPOINTS, type WebhookEndpoint } from '../admission/paths.ts';
import {
  BODY_LIMIT_BYTES,
  decodeReview,
  encodeDecision,
  errorMessage,
  errorReview,
  isDecision,
  parseJson,
  type RequestFacts,
} from '../admission/review.ts';
import { isJsonContentType, readBody } from './body.ts';
import { noWebhookMetrics, type WebhookMetrics, type WebhookPathMetrics } from './metrics.ts';

export interface WebhookRouterOptions {
  handlers: HandlerFactory;
  logger: Logger;
  metrics?: WebhookMetrics;
  /** Default BODY_LIMIT_BYTES (7 MiB). */
  bodyLimitBytes?: number;
  /** How long the body may take, from the end of the headers; default BODY_TIMEOUT_MS (10 s). */
  bodyTimeoutMs?: number;
}

/** A client that has not sent its whole body 10 s after its headers is trickling it on purpose. */
export const BODY_TIMEOUT_MS = 10_000;

/** Longest handler error message passed to the client; the full one goes to the log. */
const INTERNAL_MESSAGE_LIMIT = 500;

/** Serves one endpoint: reads, decodes, calls the handler, answers. Never rejects. */
export type EndpointServer = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** One server per webhook path, each bound to its handler and its metrics. */
export function createWebhookEndpoints(options: WebhookRouterOptions): ReadonlyMap<string, EndpointServer> {
  const metrics = options.metrics ?? noWebhookMetrics;
  const endpoints = new Map<string, EndpointServer>();
  for (const endpoint of WEBHOOK_ENDPOINTS) {
    endpoints.set(
      endpoint.path,
      endpointServer(endpoint, options.handlers(endpoint.kind, endpoint.type), {
        logger: options.logger,
        metrics: metrics.forPath(endpoint.path),
        limit: options.bodyLimitBytes ?? BODY_LIMIT_BYTES,
        bodyTimeoutMs: options.bodyTimeoutMs ?? BODY_TIMEOUT_MS,
      }),
    );
  }
  return endpoints;
}

/**
 * The request listener of the webhook server. An AdmissionReview POST to a webhook path — every
 * request the API server sends — goes straight to its endpoint. What is left is three answers,
 * written here rather than through a web framework (whose per-request work cost more than our
 * whole validation of an Agent): another method on a webhook path is 405 with `Allow: POST`, any
 * other path 404, both as JSON `{message}` and logged once; paths match exactly (case and a
 * trailing slash count), the query is ignored.
 */
export function createWebhookListener(options: WebhookRouterOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const endpoints = createWebhookEndpoints(options);
  const { logger } = options;
  return (req, res) => {
    const path = pathOf(req.url ?? '');
    const serve = endpoints.get(path);
    if (serve !== undefined && req.method === 'POST') {
      void serve(req, res);
      return;
    }
    try {
      if (serve !== undefined) {
        logger.warn({ webhook: path, code: 405, method: req.method }, 'method not allowed');
        res.setHeader('Allow', 'POST');
        sendJson(res, 405, messageBody(`method ${req.method} not allowed: send POST`));
        return;
      }
      const shown = clipPath(path);
      logger.warn({ code: 404, method: req.method, path: shown }, 'no webhook at this path');
      sendJson(res, 404, messageBody(`no webhook is served at ${shown}`));
    } catch (err) {
      // Only reached by a bug: never crash, never hang.
      logger.error({ code: 500, path: clipPath(path), err }, 'unhandled error in webhook server');
      if (res.headersSent) res.destroy();
      else sendJson(res, 500, messageBody('internal error'));
    }
  };
}

/** The path of a request target without its query (the API server appends ?timeout=5s) or fragment. */
function pathOf(url: string): string {
  const end = url.search(/[?#]/);
  return end < 0 ? url : url.slice(0, end);
}

interface EndpointDeps {
  logger: Logger;
  metrics: WebhookPathMetrics;
  limit: number;
  bodyTimeoutMs: number;
}

function endpointServer(endpoint: WebhookEndpoint, handler: AdmissionHandler, deps: EndpointDeps): EndpointServer {
  const { logger, metrics, limit, bodyTimeoutMs } = deps;
  const { path, kind, type } = endpoint;

  // Answers without an AdmissionReview (no uid to echo): plain HTTP status and {message}.
  const refuse = (res: ServerResponse, code: number, message: string, facts: RequestFacts): number => {
    logger.warn({ webhook: path, code, ...facts }, message);
    sendJson(res, code, messageBody(message));
    return code;
  };

  const review = async (req: IncomingMessage, res: ServerResponse): Promise<number> => {
    if (!isJsonContentType(req.headers['content-type'])) {
      const got = req.headers['content-type'] ?? 'none';
      return refuse(res, 415, `unsupported Content-Type ${JSON.stringify(got.slice(0, 100))}: send application/json`, {});
    }
    const read = await readBody(req, limit, bodyTimeoutMs);
    if (!read.ok) {
      // The rest of a late body is not worth waiting for: answer, then close the connection.
      if (read.code === 408) res.setHeader('Connection', 'close');
      return refuse(res, read.code, read.message, {});
    }
    const parsed = parseJson(read.body);
    if (!parsed.ok) return refuse(res, 400, parsed.message, {});
    const decoded = decodeReview(parsed.value, kind);
    if (!decoded.ok) {
      if (decoded.uid === undefined) return refuse(res, 400, decoded.message, decoded.facts);
      logger.warn({ webhook: path, code: 400, ...decoded.facts }, decoded.message);
      return sendReview(res, errorReview(decoded.uid, 400, decoded.message));
    }
    const request = decoded.request;
    let decision: unknown;
    try {
      decision = await handler(request);
    } catch (err) {
      logger.error({ webhook: path, ...factsOf(request), err }, 'admission handler failed');
      const message = errorMessage(err).slice(0, INTERNAL_MESSAGE_LIMIT);
      return sendReview(res, errorReview(request.uid, 500, `internal error: ${message}`));
    }
    if (!isDecision(decision)) {
      logger.error({ webhook: path, ...factsOf(request) }, 'admission handler returned no decision');
      return sendReview(res, errorReview(request.uid, 500, 'internal error: the handler returned no decision'));
    }
    if (!decision.allowed) {
      logger.info(
        { webhook: path, ...factsOf(request), code: decision.status?.code, reason: decision.status?.reason },
        clipMessage(decision.status?.message ?? 'denied'),
      );
    } else if (logger.isLevelEnabled('debug')) {
      logger.debug(
        { webhook: path, ...factsOf(request), patchOperations: decision.patch?.length ?? 0, warnings: decision.warnings?.length ?? 0 },
        'admitted',
      );
    }
    return sendReview(res, encodeDecision(request.uid, type, decision));
  };

  return async (req, res) => {
    const start = metrics.begin();
    let code = 500;
    try {
      code = await review(req, res);
    } catch (err) {
      // A bug in this file, not in a handler: answer and carry on.
      logger.error({ webhook: path, err }, 'webhook request failed');
      if (!res.headersSent) sendJson(res, 500, messageBody('internal error'));
      else res.destroy();
    } finally {
      metrics.end(start, code);
    }
  };
}

function sendReview(res: ServerResponse, review: AdmissionReviewOut): number {
  sendJson(res, 200, JSON.stringify(review));
  return 200;
}

function sendJson(res: ServerResponse, code: number, body: string): void {
  // writeHead merges these with headers set earlier (Allow, Connection: close while draining).
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body, 'utf8') });
  res.end(body);
}

function messageBody(message: string): string {
  return JSON.stringify({ message });
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

const clipMessage = (message: string): string => clip(message, 1000);
const clipPath = (path: string): string => clip(path, 200);
