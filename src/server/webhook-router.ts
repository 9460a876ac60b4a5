// The express routes of the admission webhooks: one POST endpoint per (type, kind), each
// reading the body, decoding the AdmissionReview (review.ts), calling its handler and writing
// the answer. The handlers are a parameter, so this file knows the protocol and nothing of the
// API's rules. Every request is answered exactly once and counted in the metrics; a bad one is
// logged once (warn), a handler failure once (error), a success only at debug. Identifiers are
// logged, objects never: they may carry secrets.
import express from 'express';
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

export function createWebhookRouter(
  options: WebhookRouterOptions,
  endpoints: ReadonlyMap<string, EndpointServer> = createWebhookEndpoints(options),
): express.Router {
  const router = express.Router({ caseSensitive: true, strict: true });
  for (const [path, serve] of endpoints) {
    router.post(path, serve);
    router.all(path, (req, res) => {
      options.logger.warn({ webhook: path, code: 405, method: req.method }, 'method not allowed');
      res.setHeader('Allow', 'POST');
      sendJson(res, 405, messageBody(`method ${req.method} not allowed: send POST`));
    });
  }
  return router;
}

/**
 * The request listener of the webhook server. An AdmissionReview POST to a webhook path — every
 * request the API server sends — goes straight to its endpoint: express's per-request work
 * (re-prototyping req and res, walking the route stack) costs more than our whole validation of
 * an Agent, and the endpoint needs none of it. Everything else (other methods, unknown paths,
 * malformed URLs) goes through the express app, which answers with the same endpoints.
 */
export function createWebhookListener(options: WebhookRouterOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const endpoints = createWebhookEndpoints(options);
  const app = createWebhookApp(options, endpoints);
  return (req, res) => {
    if (req.method === 'POST') {
      const url = req.url ?? '';
      const query = url.indexOf('?');
      // The API server appends ?timeout=5s; the path alone names the endpoint.
      const serve = endpoints.get(query < 0 ? url : url.slice(0, query));
      if (serve !== undefined) {
        void serve(req, res);
        return;
      }
    }
    app(req, res);
  };
}

/** The whole webhook application: the routes, a JSON 404, and a last-resort error answer. */
export function createWebhookApp(
  options: WebhookRouterOptions,
  endpoints: ReadonlyMap<string, EndpointServer> = createWebhookEndpoints(options),
): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(createWebhookRouter(options, endpoints));
  app.use((req: express.Request, res: express.Response) => {
    const path = clipPath(req.path);
    options.logger.warn({ code: 404, method: req.method, path }, 'no webhook at this path');
    sendJson(res, 404, messageBody(`no webhook is served at ${path}`));
  });
  // Only reached by a bug or by express itself (e.g. a malformed URL): never crash, never hang.
  app.use((err: unknown, req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const status = statusOf(err);
    options.logger.error({ code: status, path: clipPath(req.path), err }, 'unhandled error in webhook server');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendJson(res, status, messageBody(status < 500 ? errorMessage(err) : 'internal error'));
  });
  return app;
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

function statusOf(err: unknown): number {
  if (typeof err === 'object' && err !== null) {
    const status = (err as { status?: unknown; statusCode?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 600) return status;
  }
  return 500;
}
