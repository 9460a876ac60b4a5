// The only place that speaks HTTP to the API server: requests, lists, streaming watches and
// writes (create, replace, patch, server-side apply, delete), with errors as ApiError.
//
// @kubernetes/client-node is used for what it does well — loading a kubeconfig or the in-cluster
// configuration and producing TLS material and credentials (tokens, client certificates, exec
// plugins, rotating token files) — but not for watches: 2.0.0 cut every watch after 30 s
// (kubernetes-client/javascript #3020/#3022) and its informer's recovery is not ours to test.
import type { Agent, IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { ApiError, isStatus, type ApiStatus } from './errors.ts';
import { http } from '../leaves/node-http.ts';
import { inClusterConnection, kubeconfigConnection } from './kubeconfig.ts';

/** TLS material for the connection to the API server (node:tls names). */
export interface TlsOptions {
  ca?: string | Buffer | Array<string | Buffer>;
  cert?: string | Buffer;
  key?: string | Buffer;
  pfx?: string | Buffer;
  passphrase?: string;
  rejectUnauthorized?: boolean;
  servername?: string;
}

export interface KubeClientOptions {
  /** Base URL of the API server, e.g. https://127.0.0.1:6443. */
  server: string;
  tls?: TlsOptions;
  /**
   * Headers that authenticate one request (Authorization, Impersonate-User). Called per request
   * so that a rotated service-account token or an exec plugin's fresh token is picked up.
   */
  authHeaders?: () => Promise<Record<string, string>>;
  /** Default deadline of a non-watch request. */
  requestTimeoutMs?: number;
  /** Called with each `Warning` header the API server returns (deprecations, webhook warnings). */
  onWarning?: (warning: string, method: string, path: string) => void;
  userAgent?: string;
}

/** Per-call options shared by every non-watch method. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface ListOptions extends CallOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  limit?: number;
  continue?: string;
  /**
   * Ask for PartialObjectMetadataList: the items carry apiVersion, kind and metadata only, so a
   * list of Secrets never brings their data into the process.
   */
  metadataOnly?: boolean;
}

export interface WatchOptions {
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  /** Asks the server to end the watch after this long; a normal end, not an error. */
  timeoutSeconds?: number;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Client-side limit on silence (no bytes at all) before the connection is declared dead and the
   * watch fails. Defaults to timeoutSeconds + 60 s, so a half-open TCP connection cannot hang a
   * reflector forever. 0 disables it.
   */
  idleTimeoutMs?: number;
  /** Called once the server has accepted the watch (HTTP 200), before any event. */
  onOpen?: () => void;
  /** Events carry PartialObjectMetadata (see ListOptions.metadataOnly). */
  metadataOnly?: boolean;
}

export interface WriteOptions extends CallOptions {
  /** Server-side dry run (`dryRun=All`): admission and validation run, nothing is persisted. */
  dryRun?: boolean;
  fieldManager?: string;
  /**
   * The answer is the object's metadata only (PartialObjectMetadata): for a caller that needs to
   * know the write was accepted, not to read back an object it sent (megabytes, for a pod spec).
   * A refusal is its Status as ever.
   */
  metadataOnly?: boolean;
}

/**
 * A write whose answer the caller does not read (a status write, an Event): the answer of a
 * success is drained, not parsed. The API server answers a write with the whole object, its
 * managedFields too; parsing one to drop it was most of such a write's work and garbage.
 */
export interface DiscardAnswer {
  discardAnswer: true;
}

export interface ApplyOptions extends CallOptions {
  fieldManager: string;
  /** Take ownership of fields other managers own (controllers apply with force: true). */
  force?: boolean;
  dryRun?: boolean;
}

export interface DeleteOptions extends CallOptions {
  dryRun?: boolean;
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export type PatchType = 'merge' | 'json' | 'strategic';

const PATCH_CONTENT_TYPES: Readonly<Record<PatchType, string>> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};
const APPLY_CONTENT_TYPE = 'application/apply-patch+yaml';
/** The Accept headers of client-go's metadata client (JSON only), for a list and for a watch. */
export const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
export const METADATA_WATCH_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
/** One object's metadata (a write's answer); plain JSON from a server that cannot transform it. */
export const METADATA_ACCEPT = `${METADATA_WATCH_ACCEPT}, application/json`;

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: T[];
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** One line of a watch stream. For ERROR the object is a metav1.Status. */
export type WatchEvent<T> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T }
  | { type: 'ERROR'; object: ApiStatus };

interface RawResponse {
  status: number;
  body: string;
}

type Query = Record<string, string | number | boolean | undefined>;

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

export class KubeClient {
  readonly server: URL;
  readonly #authHeaders: () => Promise<Record<string, string>>;
  readonly #requestTimeoutMs: number;
  readonly #onWarning: KubeClientOptions['onWarning'];
  readonly #userAgent: string;
  readonly #transport: typeof http | typeof https;
  /** Keep-alive pool for ordinary requests. */
  readonly #agent: Agent;
  /** Watches get their own pool: long-lived, and dropped together by dropWatchConnections(). */
  readonly #watchAgent: Agent;
  readonly #watchSockets = new Set<Socket>();

  constructor(options: KubeClientOptions) {
    this.server = new URL(options.server);
    if (this.server.protocol !== 'https:' && this.server.protocol !== 'http:') {
      throw new Error(`unsupported API server URL ${options.server}`);
    }
    this.#authHeaders = options.authHeaders ?? (async () => ({}));
    this.#requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.#onWarning = options.onWarning;
    this.#userAgent = options.userAgent ?? 'kaos-operator';
    const https_ = this.server.protocol === 'https:';
    this.#transport = https_ ? https : http;
    const agentOptions = { keepAlive: true, keepAliveMsecs: 30_000, ...(https_ ? options.tls : {}) };
    this.#agent = https_ ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
    this.#watchAgent = https_ ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  }

  /**
   * A client for the kubeconfig at `path`, or for the in-cluster service account when `path`
   * is empty. TLS material is read once (restart to pick up a rotated CA or client certificate);
   * credentials are produced per request.
   */
  static async fromKubeConfig(path: string, options: Omit<KubeClientOptions, 'server' | 'tls' | 'authHeaders'> = {}): Promise<KubeClient> {
    // The service account, or a kubeconfig with a token or a client certificate: read here
    // (kubeconfig.ts). Only anything else loads client-node, whose import costs ~80 MiB of RSS.
    const light = path === '' ? inClusterConnection() : kubeconfigConnection(readFileSync(path, 'utf8'), path);
    if (light !== undefined) return new KubeClient({ ...options, ...light });
    const { KubeConfig } = await import('@kubernetes/client-node');
    const kc = new KubeConfig();
    if (path === '') kc.loadFromCluster();
    else kc.loadFromFile(path);
    const cluster = kc.getCurrentCluster();
    if (cluster === null) throw new Error(`kubeconfig ${path === '' ? '(in-cluster)' : path}: no current cluster`);
    if (cluster.proxyUrl !== undefined && cluster.proxyUrl !== '') {
      throw new Error(`kubeconfig ${path}: proxy-url is not supported`);
    }
    const probe: https.RequestOptions = { headers: {} };
    await kc.applyToHTTPSOptions(probe);
    const tls: TlsOptions = {};
    if (probe.ca !== undefined) tls.ca = probe.ca as TlsOptions['ca'];
    if (probe.cert !== undefined) tls.cert = probe.cert as string | Buffer;
    if (probe.key !== undefined) tls.key = probe.key as string | Buffer;
    if (probe.pfx !== undefined) tls.pfx = probe.pfx as string | Buffer;
    if (probe.passphrase !== undefined) tls.passphrase = probe.passphrase;
    if (probe.rejectUnauthorized !== undefined) tls.rejectUnauthorized = probe.rejectUnauthorized;
    if (probe.servername !== undefined) tls.servername = probe.servername;
    const authHeaders = async (): Promise<Record<string, string>> => {
      const opts: https.RequestOptions = { headers: {} };
      await kc.applyToHTTPSOptions(opts);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(opts.headers ?? {})) {
        if (typeof v === 'string') headers[k] = v;
      }
      if (typeof opts.auth === 'string' && opts.auth !== '') {
        headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
      }
      return headers;
    };
    return new KubeClient({ ...options, server: cluster.server, tls, authHeaders });
  }

  /** A GET of JSON; `accept` for a path that serves JSON under another media type (it is still parsed as JSON). */
  async get<T>(path: string, options: CallOptions & { accept?: string } = {}): Promise<T> {
    return this.#json<T>('GET', path, {}, undefined, options, options.accept);
  }

  /** One page of a collection; follow `metadata.continue` for the next (see listAll). */
  async list<T>(path: string, options: ListOptions = {}): Promise<KubeList<T>> {
    const query: Query = {
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
      resourceVersion: options.resourceVersion,
      resourceVersionMatch: options.resourceVersionMatch,
      limit: options.limit,
      continue: options.continue,
    };
    const accept = options.metadataOnly === true ? METADATA_LIST_ACCEPT : undefined;
    const list = await this.#json<KubeList<T>>('GET', path, query, undefined, options, accept);
    if (!Array.isArray(list.items)) list.items = [];
    return list;
  }

  create(path: string, body: unknown, options: WriteOptions & DiscardAnswer): Promise<void>;
  create<T>(path: string, body: unknown, options?: WriteOptions): Promise<T>;
  async create<T>(path: string, body: unknown, options: WriteOptions & Partial<DiscardAnswer> = {}): Promise<T | void> {
    return this.#json<T>('POST', path, writeQuery(options), jsonBody(body), options, options.metadataOnly === true ? METADATA_ACCEPT : undefined);
  }

  /** PUT: a full update, guarded by the body's metadata.resourceVersion when set. */
  replace(path: string, body: unknown, options: WriteOptions & DiscardAnswer): Promise<void>;
  replace<T>(path: string, body: unknown, options?: WriteOptions): Promise<T>;
  async replace<T>(path: string, body: unknown, options: WriteOptions & Partial<DiscardAnswer> = {}): Promise<T | void> {
    return this.#json<T>('PUT', path, writeQuery(options), jsonBody(body), options);
  }

  patch(path: string, patch: unknown, type: PatchType, options: WriteOptions & DiscardAnswer): Promise<void>;
  patch<T>(path: string, patch: unknown, type: PatchType, options?: WriteOptions): Promise<T>;
  async patch<T>(path: string, patch: unknown, type: PatchType, options: WriteOptions & Partial<DiscardAnswer> = {}): Promise<T | void> {
    const body = { data: JSON.stringify(patch), contentType: PATCH_CONTENT_TYPES[type] };
    return this.#json<T>('PATCH', path, writeQuery(options), body, options);
  }

  /**
   * Server-side apply of `object` (a complete desired state) at `path` (the object's own URL, or
   * its status subresource). JSON is YAML, so it is sent as is with the apply content type.
   */
  async apply<T>(path: string, object: unknown, options: ApplyOptions): Promise<T> {
    const query: Query = { ...writeQuery(options), force: options.force === true ? true : undefined };
    return this.#json<T>('PATCH', path, query, { data: JSON.stringify(object), contentType: APPLY_CONTENT_TYPE }, options);
  }

  /** Returns what the server returns: the object (deletion pending) or a Success Status. */
  async delete<T = unknown>(path: string, options: DeleteOptions = {}): Promise<T> {
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (options.propagationPolicy !== undefined) body.propagationPolicy = options.propagationPolicy;
    if (options.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
    if (options.preconditions !== undefined) body.preconditions = options.preconditions;
    const query: Query = { dryRun: options.dryRun === true ? 'All' : undefined };
    return this.#json<T>('DELETE', path, query, jsonBody(body), options);
  }

  /**
   * Streams a watch: calls `onEvent` for each event until the server ends the stream (the
   * promise resolves: a normal end, e.g. after timeoutSeconds), the connection fails or the server
   * refuses (rejects; an HTTP error is an ApiError), `onEvent` throws (rejects with that error),
   * or `signal` aborts (rejects with the signal's reason). ERROR events are passed to `onEvent`
   * as they are; deciding what they mean is the caller's job.
   */
  async watch<T>(path: string, options: WatchOptions, onEvent: (event: WatchEvent<T>) => void, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const query: Query = {
      watch: 1,
      resourceVersion: options.resourceVersion,
      allowWatchBookmarks: options.allowWatchBookmarks === true ? true : undefined,
      timeoutSeconds: options.timeoutSeconds,
      labelSelector: options.labelSelector,
      fieldSelector: options.fieldSelector,
    };
    const idleTimeoutMs = options.idleTimeoutMs ?? ((options.timeoutSeconds ?? 1800) + 60) * 1000;
    const headers = await this.#headers(options.metadataOnly === true ? METADATA_WATCH_ACCEPT : undefined);
    const url = this.#url(path, query);
    // Aborted while the credentials were produced: the listener below would never fire.
    signal?.throwIfAborted();

    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const finish = (err?: unknown): void => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        if (err === undefined) resolve();
        else reject(err);
      };
      const onAbort = (): void => {
        finish(signal?.reason ?? new Error('watch aborted'));
        req.destroy();
      };
      const req = this.#transport.request(url, { method: 'GET', headers, agent: this.#watchAgent });
      signal?.addEventListener('abort', onAbort, { once: true });
      if (idleTimeoutMs > 0) {
        req.setTimeout(idleTimeoutMs, () => {
          finish(new Error(`watch ${path}: no data for ${idleTimeoutMs} ms, connection presumed dead`));
          req.destroy();
        });
      }
      req.on('socket', (socket) => {
        this.#watchSockets.add(socket);
        socket.once('close', () => this.#watchSockets.delete(socket));
      });
      req.on('error', (err) => finish(new Error(`watch ${path}: ${err.message}`, { cause: err })));
      req.on('response', (res) => {
        this.#warnings(res, 'GET', path);
        if (res.statusCode !== 200) {
          readBody(res).then(
            (body) => finish(ApiError.fromResponse(res.statusCode ?? 0, body)),
            (err: unknown) => finish(err),
          );
          return;
        }
        options.onOpen?.();
        res.setEncoding('utf8');
        let buffered = '';
        res.on('data', (chunk: string) => {
          if (settled) return;
          buffered += chunk;
          let newline = buffered.indexOf('\n');
          while (newline >= 0) {
            const line = buffered.slice(0, newline).trim();
            buffered = buffered.slice(newline + 1);
            newline = buffered.indexOf('\n');
            if (line === '') continue;
            try {
              onEvent(parseWatchLine<T>(line));
            } catch (err) {
              finish(err);
              req.destroy();
              return;
            }
          }
        });
        res.on('end', () => {
          // A complete, clean end of the chunked stream: the server's timeout, or a graceful
          // shutdown. A half line left over means the stream was cut.
          if (buffered.trim() !== '') finish(new Error(`watch ${path}: stream ended inside an event`));
          else finish();
        });
        res.on('aborted', () => finish(new Error(`watch ${path}: connection lost`)));
        res.on('error', (err) => finish(new Error(`watch ${path}: ${err.message}`, { cause: err })));
        res.on('close', () => finish(new Error(`watch ${path}: connection closed`)));
      });
      req.end();
    });
  }

  /**
   * Destroys the sockets of every open watch, as a network failure would (the watches fail, they
   * are not aborted). For tests of recovery, and as a lever after a credential rotation.
   */
  dropWatchConnections(): number {
    const sockets = [...this.#watchSockets];
    for (const socket of sockets) socket.destroy(new Error('watch connection dropped'));
    return sockets.length;
  }

  /** Destroys every connection, pooled or in use: in-flight requests and open watches fail. */
  close(): void {
    this.#agent.destroy();
    this.#watchAgent.destroy();
  }

  async #json<T>(method: string, path: string, query: Query, body: RequestBody | undefined, options: CallOptions & Partial<DiscardAnswer>, accept?: string): Promise<T> {
    const res = await this.#request(method, path, query, body, options, accept);
    if (res.status < 200 || res.status >= 300) throw ApiError.fromResponse(res.status, res.body);
    if (options.discardAnswer === true) return undefined as T;
    try {
      return JSON.parse(res.body) as T;
    } catch (err) {
      throw new ApiError(res.status, 'InternalError', `${method} ${path}: response is not JSON: ${(err as Error).message}`);
    }
  }

  async #request(method: string, path: string, query: Query, body: RequestBody | undefined, options: CallOptions & Partial<DiscardAnswer>, accept?: string): Promise<RawResponse> {
    options.signal?.throwIfAborted();
    const headers = await this.#headers(accept);
    if (body !== undefined) {
      headers['Content-Type'] = body.contentType;
      headers['Content-Length'] = String(Buffer.byteLength(body.data));
    }
    const url = this.#url(path, query);
    options.signal?.throwIfAborted(); // see watch()
    const timeoutMs = options.timeoutMs ?? this.#requestTimeoutMs;
    return new Promise<RawResponse>((resolve, reject) => {
      let settled = false;
      const finish = (err: unknown, res?: RawResponse): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (res !== undefined) resolve(res);
        else reject(err);
      };
      const onAbort = (): void => {
        finish(options.signal?.reason ?? new Error('request aborted'));
        req.destroy();
      };
      // A deadline on the whole exchange, not on idleness: a slow-dripping response must not
      // hold an admission request past the webhook's own timeout.
      const timer = setTimeout(() => {
        finish(new ApiError(504, 'Timeout', `${method} ${path}: no complete response within ${timeoutMs} ms`));
        req.destroy();
      }, timeoutMs);
      const req = this.#transport.request(url, { method, headers, agent: this.#agent });
      options.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => finish(new Error(`${method} ${path}: ${err.message}`, { cause: err })));
      req.on('response', (res) => {
        this.#warnings(res, method, path);
        const status = res.statusCode ?? 0;
        if (options.discardAnswer === true && status >= 200 && status < 300) {
          // Drained, not kept: the socket goes back to the pool once the answer has been read.
          res.on('end', () => finish(undefined, { status, body: '' }));
          res.on('error', (err) => finish(err));
          res.on('aborted', () => finish(new Error('response aborted')));
          res.resume();
          return;
        }
        readBody(res).then(
          (text) => finish(undefined, { status: res.statusCode ?? 0, body: text }),
          (err: unknown) => finish(err),
        );
      });
      req.end(body?.data);
    });
  }

  async #headers(accept = 'application/json'): Promise<Record<string, string>> {
    return { Accept: accept, 'User-Agent': this.#userAgent, ...(await this.#authHeaders()) };
  }

  #url(path: string, query: Query): URL {
    if (!path.startsWith('/')) throw new Error(`API path must be absolute: ${path}`);
    // Keep a path prefix of the server URL (API servers behind a proxy at /k8s/...).
    const base = this.server.pathname.replace(/\/+$/, '');
    const url = new URL(base + path, this.server);
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    }
    return url;
  }

  #warnings(res: IncomingMessage, method: string, path: string): void {
    if (this.#onWarning === undefined) return;
    const raw = res.headers.warning;
    if (raw === undefined) return;
    for (const header of Array.isArray(raw) ? raw : [raw]) {
      for (const warning of parseWarningHeader(header)) this.#onWarning(warning, method, path);
    }
  }
}

interface RequestBody {
  data: string;
  contentType: string;
}

function jsonBody(value: unknown): RequestBody {
  return { data: JSON.stringify(value), contentType: 'application/json' };
}

function writeQuery(options: { dryRun?: boolean; fieldManager?: string }): Query {
  return { dryRun: options.dryRun === true ? 'All' : undefined, fieldManager: options.fieldManager };
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
    res.on('aborted', () => reject(new Error('response aborted')));
  });
}

function parseWatchLine<T>(line: string): WatchEvent<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (err) {
    throw new Error(`watch stream: not JSON: ${(err as Error).message}: ${line.slice(0, 200)}`);
  }
  if (typeof parsed !== 'object' || parsed === null) throw new Error(`watch stream: not an event: ${line.slice(0, 200)}`);
  const { type, object } = parsed as { type?: unknown; object?: unknown };
  if (type === 'ERROR') {
    return { type: 'ERROR', object: isStatus(object) ? object : { message: JSON.stringify(object) } };
  }
  if ((type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED' || type === 'BOOKMARK') && typeof object === 'object' && object !== null) {
    return { type, object: object as T };
  }
  throw new Error(`watch stream: unknown event: ${line.slice(0, 200)}`);
}

/**
 * `299 - "message"` (RFC 7234 warn-code, warn-agent, quoted text), possibly several per header
 * separated by commas. Returns the texts.
 */
export function parseWarningHeader(header: string): string[] {
  const out: string[] = [];
  const re = /\d{3}\s+\S+\s+"((?:[^"\\]|\\.)*)"/g;
  for (const m of header.matchAll(re)) out.push((m[1] ?? '').replace(/\\(.)/g, '$1'));
  if (out.length === 0 && header.trim() !== '') out.push(header.trim());
  return out;
}
