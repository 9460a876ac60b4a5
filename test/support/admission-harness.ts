// The real admission stack for hostile-input tests: the real listener (router, decode, both
// handlers for every kind, the podSpec check with its render and merge) on a plain-HTTP
// loopback server, over the shared samples. Only the API server's dry run is replaced, by a
// client that serializes what it is sent, as the real one does, and accepts it.
import { readdir, readFile } from 'node:fs/promises';
import { createServer, request, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseAllDocuments } from 'yaml';
import { createMutatingHandler } from '../../src/admission/mutate.ts';
import { createPodSpecCheck } from '../../src/admission/pod-spec-check.ts';
import { createWebhookApp } from '../../src/server/webhook-router.ts';
import { createValidatingHandler } from '../../src/admission/validate.ts';
import { loadConfig } from '../../src/config/config.ts';
import { isRecord } from '../../src/api/json.ts';
import { isWorkloadKind } from '../../src/api/kinds.ts';
import { CONTAINER_NAME } from '../../src/render/names.ts';
import type { KubeObject } from '../../src/api/lookup.ts';
import { createLogger } from '../../src/server/pino-logger.ts';
import { MemoryLookup } from './memory-lookup.ts';
import { deploymentDryRun } from '../../src/kube/dry-run.ts';

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

export interface Harness {
  /** POSTs `body` to `path`; resolves with the HTTP status and the parsed answer. */
  post(path: string, body: string): Promise<{ status: number; body: unknown }>;
  /** Bodies the podSpec check's dry run was given, serialized. */
  readonly dryRuns: string[];
  close(): Promise<void>;
}

export async function startHarness(objects: readonly KubeObject[]): Promise<Harness> {
  const lookup = new MemoryLookup().add(...objects);
  const dryRuns: string[] = [];
  const logger = createLogger({ level: 'fatal', destination: { write: () => undefined } });
  const podSpecCheck = createPodSpecCheck({
    dryRunCreate: deploymentDryRun({ create: async <T>(_path: string, body: unknown) => (dryRuns.push(JSON.stringify(body)), body as T) }),
    config: CONFIG,
    logger,
  });
  const listener = createWebhookApp({
    handlers: (kind, type) =>
      type === 'mutate'
        ? createMutatingHandler(kind, { lookup, config: CONFIG })
        : createValidatingHandler(kind, { lookup, config: CONFIG, podSpecCheck }),
    logger,
  });
  const server: Server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    dryRuns,
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
    close: async () => {
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
