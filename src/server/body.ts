// Reading a request body with a size limit, as express.json({limit}) would, but without its
// per-request content negotiation: admission accepts exactly one content type (it checks it
// before asking for the body), and answers 413 and 408 in its own words.
import type { IncomingMessage } from 'node:http';
import type { BodyRead } from '../admission/admit.ts';

export type BodyResult = BodyRead;

/**
 * Reads the whole body, refusing more than `limit` bytes: once its first `headBytes` are in when
 * Content-Length says it is larger, otherwise as soon as the body crosses the limit. A refused
 * body comes with its head (at most `headBytes`), where admission finds the request's uid to
 * answer with; the rest is never kept. It is still drained (and dropped), not cut off: closing a
 * socket the client is still writing to makes the kernel reset it, and the client would lose
 * the answer along with it. The server's requestTimeout bounds the drain; `deadlineMs`, counted
 * from this call (the end of the headers), bounds the whole body.
 */
export function readBody(req: IncomingMessage, limit: number, deadlineMs?: number, headBytes = 0): Promise<BodyResult> {
  const declared = Number(req.headers['content-length']);
  const declaredTooLarge = Number.isFinite(declared) && declared > limit;
  if (declaredTooLarge && headBytes === 0) {
    // Node drains the unread body itself once the response is sent.
    return Promise.resolve({ ok: false, code: 413, message: tooLarge(limit, declared), head: Buffer.alloc(0) });
  }
  return new Promise<BodyResult>((settle) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    // A client that trickles its body would hold the connection (and its memory) until the
    // server's requestTimeout; past the deadline it is answered 408 and the connection is cut
    // (the caller sends the answer with Connection: close), however much is still to come.
    const timer =
      deadlineMs === undefined
        ? undefined
        : setTimeout(() => {
            chunks.length = 0;
            refused = true; // drop whatever still arrives
            settle({ ok: false, code: 408, message: `request body not received within ${deadlineMs / 1000} s` });
          }, deadlineMs);
    const resolve = (result: BodyResult): void => {
      if (timer !== undefined) clearTimeout(timer);
      settle(result);
    };
    const refuse = (): void => {
      refused = true;
      const head = Buffer.concat(chunks, Math.min(size, headBytes)).subarray(0, headBytes);
      chunks.length = 0;
      resolve({ ok: false, code: 413, message: tooLarge(limit, declaredTooLarge ? declared : undefined), head });
    };
    // resolve() is idempotent: whatever settles first wins, later events change nothing.
    req.on('data', (chunk: Buffer) => {
      if (refused) return; // refused already: drop the rest
      size += chunk.length;
      // Of a body refused for its size, only the head is kept.
      if (!declaredTooLarge || chunks.length === 0 || size - chunk.length < headBytes) chunks.push(chunk);
      if (size > limit || (declaredTooLarge && size >= headBytes)) refuse();
    });
    req.on('end', () => {
      if (refused) return;
      if (declaredTooLarge) refuse(); // shorter than it said: still refused, as it said it was larger
      else resolve({ ok: true, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size) });
    });
    req.on('error', (err) => resolve({ ok: false, code: 400, message: `error reading request body: ${err.message}` }));
    // 'close' before 'end' means the client went away mid-body.
    req.on('close', () => resolve({ ok: false, code: 400, message: 'request aborted by the client' }));
  });
}

function tooLarge(limit: number, declared: number | undefined): string {
  return declared === undefined ? `request body exceeds the limit of ${limit} bytes` : `request body of ${declared} bytes exceeds the limit of ${limit} bytes`;
}
