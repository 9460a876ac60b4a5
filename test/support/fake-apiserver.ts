// An in-memory API server on loopback for unit tests of the client, reflector and cache: list
// with pagination, watch with replay from a resourceVersion (410 once compacted), bookmarks,
// single-object GET, and scripted failures. Only what those components use; not a test of them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeObject } from '../../src/api/lookup.ts';
import { storeKey, resourcePath, type ResourceType } from '../../src/kube/paths.ts';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface ScriptedFailure {
  /** Which request to fail; the first matching failure is consumed. */
  match: (req: RecordedRequest) => boolean;
  status: number;
  body: unknown;
}

interface LogEntry {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: KubeObject;
}

export class WatchConnection {
  readonly query: URLSearchParams;
  readonly collection: string;
  readonly res: http.ServerResponse;
  closed = false;
  constructor(collection: string, query: URLSearchParams, res: http.ServerResponse) {
    this.collection = collection;
    this.query = query;
    this.res = res;
    res.on('close', () => { this.closed = true; });
  }
  send(type: string, object: unknown): void {
    if (!this.closed) this.res.write(JSON.stringify({ type, object }) + '\n');
  }
  /** A clean end of the stream (as on the server's timeout). */
  end(): void {
    if (!this.closed) this.res.end();
    this.closed = true;
  }
  /** The connection dies mid-stream. */
  destroy(): void {
    this.res.socket?.destroy();
    this.closed = true;
  }
}

class Collection {
  readonly type: ResourceType;
  readonly items = new Map<string, KubeObject>();
  log: LogEntry[] = [];
  /** Oldest resourceVersion a watch may start from; older gets 410. */
  compactedThrough = 0;
  constructor(type: ResourceType) {
    this.type = type;
  }
}

export class FakeApiServer {
  readonly requests: RecordedRequest[] = [];
  readonly watches: WatchConnection[] = [];
  readonly failures: ScriptedFailure[] = [];
  /** When true, watches do not replay the log on connect (the test drives them by hand). */
  manualWatches = false;
  rv = 100;
  url = '';
  readonly #server: http.Server;
  readonly #collections = new Map<string, Collection>();
  readonly #watchWaiters: Array<(w: WatchConnection) => void> = [];

  constructor() {
    this.#server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => { body += c; });
      req.on('end', () => this.#handle(req, res, body));
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', () => resolve()));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const w of this.watches) w.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  serve(type: ResourceType): void {
    this.#collections.set(resourcePath(type), new Collection(type));
  }

  /** Creates or updates an object (new resourceVersion), notifying open watches. */
  put(type: ResourceType, object: KubeObject): KubeObject {
    const c = this.#collection(type);
    const key = storeKey(object.metadata?.namespace, object.metadata?.name ?? '');
    const existed = c.items.has(key);
    const stored: KubeObject = { ...object, metadata: { ...object.metadata, resourceVersion: String(++this.rv) } };
    c.items.set(key, stored);
    this.#record(c, existed ? 'MODIFIED' : 'ADDED', stored);
    return stored;
  }

  remove(type: ResourceType, namespace: string | undefined, name: string): void {
    const c = this.#collection(type);
    const key = storeKey(namespace, name);
    const old = c.items.get(key);
    if (old === undefined) return;
    c.items.delete(key);
    this.#record(c, 'DELETED', { ...old, metadata: { ...old.metadata, resourceVersion: String(++this.rv) } });
  }

  /** Forgets the event log: watches from an older resourceVersion now get 410 Gone. */
  compact(type: ResourceType): void {
    const c = this.#collection(type);
    c.log = [];
    c.compactedThrough = this.rv;
  }

  /** Resolves with the next watch opened (or one already opened and not yet taken). */
  nextWatch(): Promise<WatchConnection> {
    return new Promise((resolve) => this.#watchWaiters.push(resolve));
  }

  failNext(match: (req: RecordedRequest) => boolean, status: number, body: unknown): void {
    this.failures.push({ match, status, body });
  }

  listRequests(type: ResourceType): RecordedRequest[] {
    const path = resourcePath(type);
    return this.requests.filter((r) => r.path === path && r.query.get('watch') === null);
  }

  watchRequests(type: ResourceType): RecordedRequest[] {
    const path = resourcePath(type);
    return this.requests.filter((r) => r.path === path && r.query.get('watch') === '1');
  }

  #collection(type: ResourceType): Collection {
    const c = this.#collections.get(resourcePath(type));
    if (c === undefined) throw new Error(`fake apiserver does not serve ${type.plural}`);
    return c;
  }

  #record(c: Collection, type: LogEntry['type'], object: KubeObject): void {
    c.log.push({ rv: this.rv, type, object });
    for (const w of this.watches) {
      if (!w.closed && w.collection === resourcePath(c.type) && !this.manualWatches) w.send(type, object);
    }
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body };
    this.requests.push(recorded);
    const failure = this.failures.findIndex((f) => f.match(recorded));
    if (failure >= 0) {
      const f = this.failures.splice(failure, 1)[0]!;
      return json(res, f.status, f.body);
    }
    const collection = this.#collections.get(url.pathname);
    if (collection !== undefined && recorded.method === 'GET') {
      if (url.searchParams.get('watch') === '1') return this.#watch(collection, url.searchParams, res);
      return this.#list(collection, url.searchParams, res);
    }
    for (const c of this.#collections.values()) {
      const m = objectPattern(c.type).exec(url.pathname);
      if (m !== null) {
        const key = c.type.namespaced ? `${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}` : decodeURIComponent(m[1]!);
        const obj = c.items.get(key);
        if (obj === undefined) return json(res, 404, status(404, 'NotFound', `${c.type.plural} "${key}" not found`));
        return json(res, 200, obj);
      }
    }
    json(res, 404, status(404, 'NotFound', `no route ${url.pathname}`));
  }

  #list(c: Collection, query: URLSearchParams, res: http.ServerResponse): void {
    const all = [...c.items.values()].sort((a, b) => storeKey(a.metadata?.namespace, a.metadata?.name ?? '').localeCompare(storeKey(b.metadata?.namespace, b.metadata?.name ?? '')));
    const limit = Number(query.get('limit') ?? '0');
    const start = Number(query.get('continue') ?? '0');
    const page = limit > 0 ? all.slice(start, start + limit) : all;
    const next = limit > 0 && start + limit < all.length ? String(start + limit) : undefined;
    // Built-in lists omit apiVersion/kind on items, as the real server does for core types.
    const items = page.map((o) => (c.type.group === '' ? { ...o, apiVersion: undefined, kind: undefined } : o));
    json(res, 200, { kind: `${c.type.kind}List`, apiVersion: c.type.version, metadata: { resourceVersion: String(this.rv), ...(next === undefined ? {} : { continue: next }) }, items });
  }

  #watch(c: Collection, query: URLSearchParams, res: http.ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    const w = new WatchConnection(resourcePath(c.type), query, res);
    this.watches.push(w);
    const from = Number(query.get('resourceVersion') ?? '0');
    if (!this.manualWatches) {
      if (from < c.compactedThrough) {
        w.send('ERROR', status(410, 'Expired', `too old resource version: ${from} (${c.compactedThrough})`));
        w.end();
      } else {
        for (const e of c.log) if (e.rv > from) w.send(e.type, e.object);
      }
    }
    const waiter = this.#watchWaiters.shift();
    if (waiter !== undefined) waiter(w);
  }
}

function objectPattern(type: ResourceType): RegExp {
  const prefix = type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  return type.namespaced
    ? new RegExp(`^${escape(prefix)}/namespaces/([^/]+)/${type.plural}/([^/]+)$`)
    : new RegExp(`^${escape(prefix)}/${type.plural}/([^/]+)$`);
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function status(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function json(res: http.ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

