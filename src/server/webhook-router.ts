// The routes of the admission webhooks, on express: one POST route per webhook, each handing the
// request's content type and body to admission's one entry point (admission/admit.ts) and
// writing the answer it returns, with its log line and its metrics. This file knows HTTP —
// paths, methods, reading a body with a size and time limit — and nothing of the protocol or the
// API's rules. Another method on a webhook path is 405 with `Allow: POST`, any other path 404,
// both as JSON `{message}` and logged once; paths match exactly (case and a trailing slash
// count), the query is ignored.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, NextFunction, Request, Response } from 'express';
import { bareExpressApp } from './express-app.ts';
import type { Logger } from '../leaves/logger.ts';
import { clip } from '../api/bounded-text.ts';
import { admit, BODY_HEAD_BYTES, BODY_LIMIT_BYTES, createWebhooks, messageBody, type Answer, type Webhook } from '../admission/admit.ts';
import type { HandlerFactory } from '../admission/types.ts';
import { WEBHOOK_DEFAULTS } from '../config/config.ts';
import { readBody } from './body.ts';
import { noWebhookMetrics, type WebhookMetrics, type WebhookPathMetrics } from './webhook-metrics.ts';

export interface WebhookRouterOptions {
  handlers: HandlerFactory;
  logger: Logger;
  metrics?: WebhookMetrics;
  /** Default BODY_LIMIT_BYTES (5 MiB). */
  bodyLimitBytes?: number;
  /** How long the body may take, from the end of the headers; default WEBHOOK_DEFAULTS' (10 s). */
  bodyTimeoutMs?: number;
}

/** Serves one endpoint: reads, admits, answers. Never rejects. */
export type EndpointServer = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * The express application of the webhook server. Express's own answers are switched off where
 * they would differ from ours: no X-Powered-By, no ETag, exact paths (case-sensitive, strict
 * about a trailing slash), no query parsing (the API server's ?timeout=5s is never read).
 */
export function createWebhookApp(options: WebhookRouterOptions): Express {
  const metrics = options.metrics ?? noWebhookMetrics;
  const limit = options.bodyLimitBytes ?? BODY_LIMIT_BYTES;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? WEBHOOK_DEFAULTS.bodyTimeoutSeconds * 1000;
  const { logger } = options;
  const app = bareExpressApp();

  const webhooks = createWebhooks(options.handlers);
  // Every POST route first: the router tries its routes in order, and a POST to a webhook path is
  // every request the API server sends.
  for (const webhook of webhooks) {
    const serve = endpointServer(webhook, { logger, metrics: metrics.forPath(webhook.path), limit, bodyTimeoutMs });
    app.post(webhook.path, (req, res) => void serve(req, res));
  }
  for (const webhook of webhooks) {
    app.all(webhook.path, (req, res) => {
      logger.warn({ webhook: webhook.path, code: 405, method: req.method }, 'method not allowed');
      res.setHeader('Allow', 'POST');
      sendJson(res, 405, messageBody(`method ${req.method} not allowed: send POST`));
    });
  }
  app.use((req, res) => {
    const shown = clipPath(pathOf(req.originalUrl));
    logger.warn({ code: 404, method: req.method, path: shown }, 'no webhook at this path');
    sendJson(res, 404, messageBody(`no webhook is served at ${shown}`));
  });
  // Only reached by a bug: never crash, never hang. Four parameters: that is how express knows.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    logger.error({ code: 500, path: clipPath(pathOf(req.originalUrl)), err }, 'unhandled error in webhook server');
    if (res.headersSent) res.destroy();
    else sendJson(res, 500, messageBody('internal error'));
  });
  return app;
}

/** The path of a request target without its query or fragment. */
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
      const answer = await admit(webhook, req.headers['content-type'], () => readBody(req, limit, bodyTimeoutMs, BODY_HEAD_BYTES));
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
