// The routes of the admission webhooks: one POST endpoint per webhook, each handing the request's
// content type and body to admission's one entry point (admission/admit.ts) and writing the
// answer it returns, with its log line and its metrics. This file knows HTTP — paths, methods,
// reading a body with a size and time limit — and nothing of the protocol or the API's rules.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.ts';
import { clip } from '../api/bounded-text.ts';
import { admit, BODY_LIMIT_BYTES, createWebhooks, messageBody, type Answer, type Webhook } from '../admission/admit.ts';
import type { HandlerFactory } from '../admission/types.ts';
import { readBody } from './body.ts';
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

/** Serves one endpoint: reads, admits, answers. Never rejects. */
export type EndpointServer = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** One server per webhook path, each bound to its webhook and its metrics. */
export function createWebhookEndpoints(options: WebhookRouterOptions): ReadonlyMap<string, EndpointServer> {
  const metrics = options.metrics ?? noWebhookMetrics;
  const limit = options.bodyLimitBytes ?? BODY_LIMIT_BYTES;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? BODY_TIMEOUT_MS;
  const endpoints = new Map<string, EndpointServer>();
  for (const webhook of createWebhooks(options.handlers)) {
    endpoints.set(webhook.path, endpointServer(webhook, { logger: options.logger, metrics: metrics.forPath(webhook.path), limit, bodyTimeoutMs }));
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

function endpointServer(webhook: Webhook, deps: EndpointDeps): EndpointServer {
  const { logger, metrics, limit, bodyTimeoutMs } = deps;
  return async (req, res) => {
    const start = metrics.begin();
    let code = 500;
    try {
      const answer = await admit(webhook, req.headers['content-type'], () => readBody(req, limit, bodyTimeoutMs));
      writeLog(logger, answer);
      if (answer.close) res.setHeader('Connection', 'close');
      sendJson(res, answer.status, answer.body);
      code = answer.status;
    } catch (err) {
      // A bug in this file, not in a handler: answer and carry on.
      logger.error({ webhook: webhook.path, err }, 'webhook request failed');
      if (!res.headersSent) sendJson(res, 500, messageBody('internal error'));
      else res.destroy();
    } finally {
      metrics.end(start, code);
    }
  };
}

function writeLog(logger: Logger, answer: Answer): void {
  const line = answer.log;
  if (line === undefined) return;
  if (line.level === 'debug' && !logger.isLevelEnabled('debug')) return;
  logger[line.level](line.fields, line.message);
}

function sendJson(res: ServerResponse, code: number, body: string): void {
  // writeHead merges these with headers set earlier (Allow, Connection: close while draining).
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body, 'utf8') });
  res.end(body);
}

const clipPath = (path: string): string => clip(path, 200);
