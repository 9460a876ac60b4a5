// The connection settings of the two cases the operator meets in practice, read without
// @kubernetes/client-node: the in-cluster service account, and a kubeconfig whose user is a
// bearer token, a token file, a client certificate or basic auth. Loading client-node's
// KubeConfig loads its whole generated API (thousands of classes): about 80 MiB of RSS and
// 30 MiB of heap, more than the operator's whole cache of 1,000 Agents. Anything else (exec
// plugins, auth providers, proxies) returns undefined, and client.ts falls back to client-node.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';
import { isRecord } from './json.ts';

/** Where a pod finds its service account (client-go's rest.InClusterConfig). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** How often a token file is read again (client-go rereads the projected token once a minute). */
const TOKEN_FILE_REREAD_MS = 60_000;

/** TLS material (node:tls names; client.ts's TlsOptions takes it as is). */
export interface ConnectionTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  rejectUnauthorized?: boolean;
  servername?: string;
}

export interface Connection {
  server: string;
  tls: ConnectionTls;
  authHeaders: () => Promise<Record<string, string>>;
}

export interface InClusterOptions {
  env?: Readonly<Record<string, string | undefined>>;
  dir?: string;
  now?: () => number;
}

/** The in-cluster service account, as client-go's rest.InClusterConfig reads it. */
export function inClusterConnection(options: InClusterOptions = {}): Connection {
  const env = options.env ?? process.env;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (host === undefined || host === '' || port === undefined || port === '') {
    throw new Error('not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set');
  }
  const dir = options.dir ?? SERVICE_ACCOUNT_DIR;
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    tls: { ca: readFileSync(join(dir, 'ca.crt')) },
    authHeaders: bearerFromFile(join(dir, 'token'), options.now ?? Date.now),
  };
}

/**
 * The current context of the kubeconfig `text` (read from `path`, against which relative file
 * names resolve), or undefined when it needs more than this module knows.
 */
export function kubeconfigConnection(text: string, path: string, now: () => number = Date.now): Connection | undefined {
  const config: unknown = parse(text);
  if (!isRecord(config)) throw new Error(`kubeconfig ${path}: not a mapping`);
  const named = (list: unknown, name: unknown, field: string): Record<string, unknown> | undefined => {
    if (!Array.isArray(list)) return undefined;
    const entry: unknown = list.find((e: unknown) => isRecord(e) && e.name === name);
    return isRecord(entry) && isRecord(entry[field]) ? entry[field] : undefined;
  };
  const context = named(config.contexts, config['current-context'], 'context');
  if (context === undefined) throw new Error(`kubeconfig ${path}: no current context`);
  const cluster = named(config.clusters, context.cluster, 'cluster');
  if (cluster === undefined || typeof cluster.server !== 'string' || cluster.server === '') throw new Error(`kubeconfig ${path}: no current cluster`);
  const user = named(config.users, context.user, 'user') ?? {};
  const known = new Set(['token', 'tokenFile', 'client-certificate', 'client-certificate-data', 'client-key', 'client-key-data', 'username', 'password']);
  if (cluster['proxy-url'] !== undefined || Object.keys(user).some((k) => !known.has(k))) return undefined;

  const base = dirname(path);
  const file = (name: unknown): Buffer => readFileSync(isAbsolute(String(name)) ? String(name) : join(base, String(name)));
  const material = (data: unknown, name: unknown): Buffer | undefined =>
    typeof data === 'string' && data !== '' ? Buffer.from(data, 'base64') : typeof name === 'string' && name !== '' ? file(name) : undefined;

  const tls: ConnectionTls = {};
  const ca = material(cluster['certificate-authority-data'], cluster['certificate-authority']);
  if (ca !== undefined) tls.ca = ca;
  if (cluster['insecure-skip-tls-verify'] === true) tls.rejectUnauthorized = false;
  if (typeof cluster['tls-server-name'] === 'string' && cluster['tls-server-name'] !== '') tls.servername = cluster['tls-server-name'];
  const cert = material(user['client-certificate-data'], user['client-certificate']);
  const key = material(user['client-key-data'], user['client-key']);
  if (cert !== undefined) tls.cert = cert;
  if (key !== undefined) tls.key = key;

  let authHeaders: () => Promise<Record<string, string>> = async () => ({});
  if (typeof user.token === 'string' && user.token !== '') {
    const headers = { Authorization: `Bearer ${user.token}` };
    authHeaders = async () => ({ ...headers });
  } else if (typeof user.tokenFile === 'string' && user.tokenFile !== '') {
    authHeaders = bearerFromFile(isAbsolute(user.tokenFile) ? user.tokenFile : join(base, user.tokenFile), now);
  } else if (typeof user.username === 'string' && user.username !== '') {
    const headers = { Authorization: `Basic ${Buffer.from(`${user.username}:${typeof user.password === 'string' ? user.password : ''}`).toString('base64')}` };
    authHeaders = async () => ({ ...headers });
  }
  return { server: cluster.server, tls, authHeaders };
}

/** A bearer token read from `file`, read again at most once a minute (rotated tokens). */
function bearerFromFile(file: string, now: () => number): () => Promise<Record<string, string>> {
  let token = '';
  let readAt = -Infinity;
  return async () => {
    if (now() - readAt >= TOKEN_FILE_REREAD_MS) {
      token = readFileSync(file, 'utf8').trim();
      readAt = now();
    }
    return { Authorization: `Bearer ${token}` };
  };
}
