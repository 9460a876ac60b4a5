// The real admission stack for hostile-input tests: the real listener (router, decode, both
// handlers for every kind, the podSpec check with its render and merge) on a plain-HTTP
// loopback server, over the shared samples. Only the API server's dry run is replaced, by a
// client that serializes what it is sent, as the real one does, and accepts it. In this thread
// (startHarness: the tests see the dry runs), or on a thread of its own as the operator's
// admission thread is (startHarnessThread, harness-server.ts: what a request costs is that
// thread's CPU alone).
import { readdir, readFile } from 'node:fs/promises';
import { createServer, request, Agent, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { createMutatingHandler } from '../../src/admission/mutate.ts';
import { createPodSpecCheck } from '../../src/admission/pod-spec-check.ts';
import { createWebhookApp } from '../../src/server/webhook-router.ts';
import { withServerTimeouts } from '../../src/server/https-server.ts';
import { createValidatingHandler } from '../../src/admission/validate.ts';
import { loadConfig } from '../../src/config/config.ts';
import { isRecord } from '../../src/api/json.ts';
import { isWorkloadKind } from '../../src/api/kinds.ts';
import { CONTAINER_NAME } from '../../src/render/names.ts';
import type { KubeObject } from '../../src/api/lookup.ts';
import { createLogger } from '../../src/server/pino-logger.ts';
import { MemoryLookup } from './memory-lookup.ts';
import { deploymentDryRun } from '../../src/kube/dry-run.ts';
import { startServerThread } from './server-thread.ts';
import { measured, type BudgetTarget } from './work-budget.ts';

export const CONFIG = loadConfig({});

/** The KAOS objects of every shared sample, each with a podSpec and container override added. */
export async function sampleObjects(): Promise<KubeObject[]> {
  const dir = new URL('../fixtures/samples/', import.meta.url);
  const objects: KubeObject[] = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of parseAllDocuments(await readFile(new URL(file, dir), 'utf8'))) {
      const value: unknown = doc.toJS();
      if (isRecord(value) && typeof value.kind === 'string' && value.kind !== 'Namespace') objects.push(value as KubeObject);
    }
  }
  return objects;
}


/** `object` with the parts that reach the pod merge: spec.podSpec and spec.container. */
export function withPodParts(object: KubeObject): KubeObject {
  const spec = isRecord(object.spec) ? object.spec : {};
  return {
    ...object,
    metadata: { ...object.metadata, labels: { team: 'a' }, annotations: { note: 'x' } },
    spec: {
      ...spec,
      container: { image: 'img:1', env: [{ name: 'A', value: '1' }], resources: { limits: { cpu: '1' } } },
      podSpec: {
        containers: [{ name: isWorkloadKind(object.kind) ? CONTAINER_NAME[object.kind] : '', env: [{ name: 'B', value: '2' }], volumeMounts: [{ name: 'v', mountPath: '/v' }] }],
        volumes: [{ name: 'v', emptyDir: {} }],
        nodeSelector: { disk: 'ssd' },
      },
    },
  };
}

export interface Harness extends BudgetTarget {
  /** POSTs `body` to `path`; resolves with the HTTP status and the parsed answer. */
  post(path: string, body: string): Promise<{ status: number; body: unknown }>;
  /** Bodies the podSpec check's dry run was given, serialized. */
  readonly dryRuns: string[];
  close(): Promise<void>;
}

/** What the harness builds the stack from: this checkout's modules, or another commit's (stackModulesAt). */
export interface StackModules {
  createWebhookApp: typeof createWebhookApp;
  createMutatingHandler: typeof createMutatingHandler;
  createValidatingHandler: typeof createValidatingHandler;
  createPodSpecCheck: typeof createPodSpecCheck;
  deploymentDryRun: typeof deploymentDryRun;
  loadConfig: typeof loadConfig;
  createLogger: typeof createLogger;
  MemoryLookup: typeof MemoryLookup;
}

const THIS_CHECKOUT: StackModules = { createWebhookApp, createMutatingHandler, createValidatingHandler, createPodSpecCheck, deploymentDryRun, loadConfig, createLogger, MemoryLookup };

/**
 * The same modules from the tree exported at `root` (test/bench/tree-at.ts), for a benchmark that
 * runs two commits' stacks side by side; typed as this checkout's.
 */
export async function stackModulesAt(root: string): Promise<StackModules> {
  const load = async (path: string): Promise<Record<string, unknown>> => (await import(pathToFileURL(join(root, path)).href)) as Record<string, unknown>;
  const [router, mutate, validate, podSpecCheck, dryRun, config, logger, lookup] = await Promise.all(
    ['src/server/webhook-router.ts', 'src/admission/mutate.ts', 'src/admission/validate.ts', 'src/admission/pod-spec-check.ts', 'src/kube/dry-run.ts', 'src/config/config.ts', 'src/server/pino-logger.ts', 'test/support/memory-lookup.ts'].map(load),
  );
  return {
    createWebhookApp: router?.createWebhookApp,
    createMutatingHandler: mutate?.createMutatingHandler,
    createValidatingHandler: validate?.createValidatingHandler,
    createPodSpecCheck: podSpecCheck?.createPodSpecCheck,
    deploymentDryRun: dryRun?.deploymentDryRun,
    loadConfig: config?.loadConfig,
    createLogger: logger?.createLogger,
    MemoryLookup: lookup?.MemoryLookup,
  } as StackModules;
}

/**
 * The webhook application over `objects`, its dry runs kept in `dryRuns` (or only serialized and
 * dropped, as a client sending them would, when it is undefined), built from `modules`.
 */
export function harnessListener(objects: readonly KubeObject[], dryRuns?: string[], modules: StackModules = THIS_CHECKOUT): RequestListener {
  const config = modules.loadConfig({});
  const lookup = new modules.MemoryLookup().add(...objects);
  const logger = modules.createLogger({ level: 'fatal', destination: { write: () => undefined } });
  const podSpecCheck = modules.createPodSpecCheck({
    dryRunCreate: modules.deploymentDryRun({ create: async <T>(_path: string, body: unknown) => {
      const serialized = JSON.stringify(body);
      dryRuns?.push(serialized);
      return body as T;
    } }),
    config,
    logger,
  });
  return modules.createWebhookApp({
    handlers: (kind, type) =>
      type === 'mutate'
        ? modules.createMutatingHandler(kind, { lookup, config })
        : modules.createValidatingHandler(kind, { lookup, config, podSpecCheck }),
    logger,
  });
}

/**
 * The listener on 127.0.0.1, a free port, with the webhook server's timeouts. Node's default
 * keep-alive (5 s) would close an idle connection under a client that a loaded machine starved
 * for longer between two requests, and its next request would meet a closed socket ("socket
 * hang up"): the race src/server/https-server.ts's SERVER_TIMEOUTS exist to avoid.
 */
export async function listen(listener: RequestListener): Promise<Server> {
  const server: Server = withServerTimeouts(createServer(listener));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

export async function startHarness(objects: readonly KubeObject[]): Promise<Harness> {
  const dryRuns: string[] = [];
  const server = await listen(harnessListener(objects, dryRuns));
  const client = httpClient((server.address() as AddressInfo).port);
  return {
    dryRuns,
    post: client.post,
    send: async (path, body) => {
      const { result, cpuMs } = await measured(() => client.post(path, body));
      return { ...result, cpuMs };
    },
    close: async () => {
      client.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The same stack on a thread of its own (harness-server.ts), its dry runs serialized and dropped;
 * built from the tree exported at `root` when given (a benchmark's base commit).
 */
export async function startHarnessThread(objects: readonly KubeObject[], root?: string): Promise<BudgetTarget & { close(): Promise<void> }> {
  const thread = await startServerThread(new URL('./harness-server.ts', import.meta.url), { objects, root });
  const client = httpClient(thread.port);
  return {
    send: async (path, body) => {
      const before = await thread.state();
      const result = await client.post(path, body);
      const after = await thread.state();
      return { ...result, cpuMs: after.cpuMs - before.cpuMs };
    },
    close: async () => {
      client.close();
      await thread.close();
    },
  };
}

function httpClient(port: number): { post: Harness['post']; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    post: (path, body) =>
      new Promise((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json' } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown }));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(body);
      }),
    close: () => agent.destroy(),
  };
}
