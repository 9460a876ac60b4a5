// The one way this process makes an express application: express's own additions switched off
// where they would differ from what the webhook and health servers answer — no X-Powered-By, no
// ETag, exact paths (case-sensitive, strict about a trailing slash), no query parsing (the API
// server's ?timeout=5s is never read). Each server adds its routes to it.
import express, { type Express } from 'express';

export function bareExpressApp(): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.set('query parser', false);
  return app;
}
