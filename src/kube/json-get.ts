// A GET of a JSON document from an HTTP(S) URL outside the API server — an OIDC issuer's discovery
// document and its keys — without any credentials of the operator: a bounded body, a deadline, and
// an error that names the URL. Generic; nothing of KAOS.
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { http } from '../leaves/node-http.ts';

export interface JsonGetOptions {
  signal?: AbortSignal;
  /** Whole request, headers and body. Default 10 s. */
  timeoutMs?: number;
  /** Larger bodies are refused. Default 1 MiB. */
  maxBytes?: number;
}

export type JsonGet = (url: string, options?: JsonGetOptions) => Promise<unknown>;

/** GETs `url` and parses its body as JSON; rejects on a non-200 answer, a bad body or the deadline. */
export const getJson: JsonGet = (url, options = {}) => {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  return new Promise((resolve, reject) => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      reject(new Error(`${url}: not a URL`));
      return;
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      reject(new Error(`${url}: only http and https URLs can be fetched`));
      return;
    }
    const transport = parsed.protocol === 'https:' ? https : http;
    const req = transport.request(parsed, { method: 'GET', headers: { accept: 'application/json' }, agent: false, ...(options.signal === undefined ? {} : { signal: options.signal }) });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      reject(new Error(`GET ${url}: ${err.message}`));
    };
    req.on('error', fail);
    req.on('response', (res: IncomingMessage) => {
      if (res.statusCode !== 200) {
        res.resume();
        fail(new Error(`unexpected status ${res.statusCode ?? 0} ${res.statusMessage ?? ''}`.trimEnd()));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          req.destroy(new Error(`body larger than ${maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', fail);
      res.on('end', () => {
        clearTimeout(timer);
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (err) {
          reject(new Error(`GET ${url}: the body is not JSON: ${err instanceof Error ? err.message : String(err)}`));
        }
      });
    });
    req.end();
  });
};
