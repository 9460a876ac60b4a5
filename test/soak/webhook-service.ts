// The webhooks' Service in the soak: an HTTPS proxy over the operator's replicas, as a Service
// behind a mesh proxy with retries (Envoy's `retry_on: reset,connect-failure` with a per-try
// timeout) is in a cluster. Each AdmissionReview goes to a ready replica in turn; when that
// replica dies before it answers (a reset, a refused connection) or does not answer within the
// per-try timeout (it is frozen), the review is sent to a replica ready then — another one first —
// until its time (4 s, inside the API server's 5) is up. That is safe because
// the webhooks have no side effects (sideEffects: None): the same review gets the same answer.
//
// Why a retrying proxy: kube-apiserver itself never retries a webhook call (client-go retries
// only GETs), so without one every review in flight on a replica that is killed or frozen
// fails the user's request with a 500 — a plain Service's behaviour, and not the operator's to
// change. The retries are counted; the soak reports them.
//
// A replica is in the rotation while its readiness probe (/readyz, as a kubelet probes it:
// timeout 1 s, failureThreshold 3) passes.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { withServerTimeouts } from '../../src/server/https-server.ts';

export interface Backend {
  /** Names it (the replica). */
  readonly id: string;
  readonly webhookPort: number;
  readonly metricsPort: number;
}

export interface WebhookServiceOptions {
  /** Where the serving certificate (tls.crt, tls.key) and its CA (ca.crt) are: the replicas'. */
  readonly certDir: string;
  /** The replicas now. */
  readonly backends: () => readonly Backend[];
  /** Called when a replica leaves or rejoins the rotation. */
  readonly onChange?: (id: string, ready: boolean) => void;
  /** How long one try may take before the next replica is tried (default 2 s). */
  readonly perTryTimeoutMs?: number;
  /** How long all the tries of one review may take (default 4 s: the API server waits 5 s in all). */
  readonly reviewBudgetMs?: number;
  /** The readiness probe (default: every 500 ms, timeout 1 s, 3 failures in a row). */
  readonly probe?: { periodMs: number; timeoutMs: number; failureThreshold: number };
}

const MAX_BODY = 8 * 1024 * 1024;

export class WebhookService {
  readonly #o: WebhookServiceOptions;
  readonly #server: https.Server;
  readonly #ca: Buffer;
  readonly #agents = new Map<string, https.Agent>();
  readonly #ready = new Map<string, { ready: boolean; failures: number }>();
  #next = 0;
  #probing: NodeJS.Timeout | undefined;
  /** Reviews sent again to another replica after one failed to answer. */
  retries = 0;
  /** Reviews no replica answered (the API server then fails the request). */
  failures = 0;

  constructor(options: WebhookServiceOptions) {
    this.#o = options;
    this.#ca = readFileSync(join(options.certDir, 'ca.crt'));
    // The operator's own timeouts (a Node server closes idle connections after 5 s otherwise, and
    // the API server would then now and then send a review on a connection being closed).
    this.#server = withServerTimeouts(https.createServer(
      { key: readFileSync(join(options.certDir, 'tls.key')), cert: readFileSync(join(options.certDir, 'tls.crt')) },
      (req, res) => void this.#serve(req, res),
    ));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(0, '127.0.0.1', () => resolve());
    });
    const probe = this.#o.probe ?? { periodMs: 500, timeoutMs: 1000, failureThreshold: 3 };
    this.#probing = setInterval(() => {
      for (const backend of this.#o.backends()) void this.#probe(backend, probe);
    }, probe.periodMs);
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('the webhook Service has no port');
    return address.port;
  }

  /** Whether a replica is in the rotation (a new one is, until its probe fails). */
  isReady(id: string): boolean {
    return this.#ready.get(id)?.ready ?? true;
  }

  async close(): Promise<void> {
    clearInterval(this.#probing);
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const agent of this.#agents.values()) agent.destroy();
  }

  async #serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readBody(req).catch(() => undefined);
    if (body === undefined) {
      res.writeHead(413).end();
      return;
    }
    // Each try picks among the replicas ready now (one may have come back meanwhile), those not
    // tried yet first, until the review's time is up.
    const deadline = Date.now() + (this.#o.reviewBudgetMs ?? 4000);
    const start = this.#next++;
    const tried = new Set<string>();
    while (Date.now() < deadline) {
      const ready = this.#o.backends().filter((b) => this.isReady(b.id));
      const fresh = ready.filter((b) => !tried.has(endpoint(b)));
      const candidates = fresh.length > 0 ? fresh : ready;
      const backend = candidates[start % Math.max(1, candidates.length)];
      if (backend === undefined || fresh.length === 0) await sleep(100);
      if (backend === undefined) continue;
      if (tried.size > 0) this.retries++;
      tried.add(endpoint(backend));
      const answer = await this.#try(backend, req, body, Math.max(1, Math.min(this.#o.perTryTimeoutMs ?? 2000, deadline - Date.now()))).catch(() => undefined);
      if (answer === undefined) continue;
      res.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body);
      return;
    }
    this.failures++;
    res.writeHead(503, { 'content-type': 'text/plain' }).end('no replica answered');
  }

  /** One try: the replica's answer, or a rejection when it drops the review or `timeoutMs` passes. */
  #try(backend: Backend, req: http.IncomingMessage, body: Buffer, timeoutMs: number): Promise<{ status: number; contentType: string; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const upstream = https.request({
        host: '127.0.0.1',
        port: backend.webhookPort,
        path: req.url,
        method: req.method,
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json', 'content-length': body.length },
        agent: this.#agent(backend),
        servername: 'localhost',
      }, (response) => {
        readBody(response).then(
          (text) => resolve({ status: response.statusCode ?? 502, contentType: String(response.headers['content-type'] ?? 'application/json'), body: text }),
          reject,
        );
      });
      // A deadline on the whole try, not the socket's idle timeout: a frozen replica's TLS
      // handshake keeps that from firing for twice as long.
      const timer = setTimeout(() => upstream.destroy(new Error('per-try timeout')), timeoutMs);
      upstream.on('close', () => clearTimeout(timer));
      upstream.on('error', reject);
      upstream.end(body);
    });
  }

  #agent(backend: Backend): https.Agent {
    const key = `${backend.id}:${backend.webhookPort}`;
    let agent = this.#agents.get(key);
    if (agent === undefined) {
      // Idle connections dropped long before the replica's 90 s, so none is reused as it closes.
      agent = new https.Agent({ keepAlive: true, ca: this.#ca, timeout: 30_000 });
      this.#agents.set(key, agent);
    }
    return agent;
  }

  async #probe(backend: Backend, probe: { timeoutMs: number; failureThreshold: number }): Promise<void> {
    const state = this.#ready.get(backend.id) ?? { ready: true, failures: 0 };
    this.#ready.set(backend.id, state);
    const ok = await readyz(backend.metricsPort, probe.timeoutMs);
    if (ok) {
      state.failures = 0;
      if (!state.ready) this.#o.onChange?.(backend.id, true);
      state.ready = true;
      return;
    }
    state.failures++;
    if (state.ready && state.failures >= probe.failureThreshold) {
      state.ready = false;
      this.#o.onChange?.(backend.id, false);
    }
  }
}

/** A replica's incarnation: its name and port (a restarted one is another). */
function endpoint(backend: Backend): string {
  return `${backend.id}:${backend.webhookPort}`;
}

function readBody(stream: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) stream.destroy(new Error('body too large'));
      else chunks.push(chunk);
    });
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
    stream.on('close', () => reject(new Error('closed before its end')));
  });
}

function readyz(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/readyz', timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}
