// Shared by the server and router tests: a captured logger, an HTTPS client that trusts the
// test CA, a deferred (requests: test/support/admission-request.ts; polling: test/support/poll.ts).
import { request, Agent } from 'node:https';
import { connect, type TLSSocket } from 'node:tls';
import type { Logger } from '../../../src/leaves/logger.ts';
import { createLogger } from '../../../src/server/pino-logger.ts';

export interface LogLine {
  level: string;
  msg: string;
  [key: string]: unknown;
}

export interface CapturedLogger {
  logger: Logger;
  lines: LogLine[];
  /** Lines at `level` (and, if given, whose msg contains `text`). */
  find(level: string, text?: string): LogLine[];
}

export function captureLogger(level: 'debug' | 'info' | 'warn' = 'debug'): CapturedLogger {
  const lines: LogLine[] = [];
  const logger = createLogger({
    level,
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  });
  return {
    logger,
    lines,
    find: (lvl, text) => lines.filter((l) => l.level === lvl && (text === undefined || l.msg.includes(text))),
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Of the certificate on the connection that carried the answer. */
  fingerprint: string;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string | number>;
  agent?: Agent | false;
  ca?: string;
}

export function httpsRequest(port: number, path: string, body: string | Buffer | undefined, options: RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'POST',
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
        agent: options.agent ?? false,
        ...(options.ca === undefined ? { rejectUnauthorized: false } : { ca: options.ca }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), fingerprint }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The SHA-256 fingerprint of the certificate the server presents in a fresh handshake. */
export function peerFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.on('error', reject);
  });
}

export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
