// Reading a request body with a size limit, as express.json({limit}) would, but without its
// per-request content negotiation: admission accepts exactly one content type (it checks it
// before asking for the body), and answers 413 and 408 in its own words.
import type { IncomingMessage } from 'node:http';
import type { BodyRead } from '../admission/admit.ts';

export type BodyResult = BodyRead;

/**
 * Reads the whole body, refusing more than `limit` bytes: at once when Content-Length says so,
 * otherwise as soon as the body crosses the limit. A refused body is still drained (and
 * dropped), not cut off: closing a socket the client is still writing to makes the kernel reset
 * it, and the client would lose our 413 along with it. The server's requestTimeout bounds the
 * drain; `deadlineMs`, counted from this call (the end of the headers), bounds the whole body.
 */
export function readBody(req: IncomingMessage, limit: number, deadlineMs?: number): Promise<BodyResult> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    // Node drains the unread body itself once the response is sent.
    return Promise.resolve(tooLarge(limit));
  }
  return new Promise<BodyResult>((settle) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // A client that trickles its body would hold the connection (and its memory) until the
    // server's requestTimeout; past the deadline it is answered 408 and the connection is cut
    // (the caller sends the answer with Connection: close), however much is still to come.
    const timer =
      deadlineMs === undefined
        ? undefined
        : setTimeout(() => {
            chunks.length = 0;
            size = limit + 1; // drop whatever still arrives
            settle({ ok: false, code: 408, message: `request body not received within ${deadlineMs / 1000} s` });
          }, deadlineMs);
    const resolve = (result: BodyResult): void => {
      if (timer !== undefined) clearTimeout(timer);
      settle(result);
    };
    // resolve() is idempotent: whatever settles first wins, later events change nothing.
    req.on('data', (chunk: Buffer) => {
      if (size > limit) return; // refused already: drop the rest
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        resolve(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      resolve({ ok: true, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size) });
    });
    req.on('error', (err) => resolve({ ok: false, code: 400, message: `error reading request body: ${err.message}` }));
    // 'close' before 'end' means the client went away mid-body.
    req.on('close', () => resolve({ ok: false, code: 400, message: 'request aborted by the client' }));
  });
}

function tooLarge(limit: number): BodyResult {
  return { ok: false, code: 413, message: `request body exceeds the limit of ${limit} bytes` };
}
