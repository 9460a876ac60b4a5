// What the admission fuzzer runs against: the real HTTPS webhook server with the real router
// and the real mutating and validating handlers (podSpec check included) over an in-memory
// lookup holding every sample object. The podSpec check's client accepts every dry run, so a
// "spec.podSpec could not be checked" log line can only mean the check threw because of the
// object itself — the fail-open the fuzzer reports. Also: the normal requests (each sample
// object, as written for mutate and as defaulted for validate) with the answers they get from
// a fresh server, to check that the server still answers them correctly between hostile ones.
import { Agent, request } from 'node:https';
import jsonPatch from 'fast-json-patch';
import { createMutatingHandler } from '../../src/admission/mutate.ts';
import { createPodSpecCheck } from '../../src/admission/pod-spec-check.ts';
import { webhookPath } from '../../src/admission/webhook-paths.ts';
import type { HandlerFactory } from '../../src/admission/types.ts';
import type { AdmissionRequest, AdmissionReviewOut, AdmissionResponse } from '../../src/admission/types.ts';
import { createValidatingHandler } from '../../src/admission/validate.ts';
import { GROUP, isKaosKind, KIND_NAMES, VERSION, type KaosKind } from '../../src/api/kinds.ts';
import type { KubeObject } from '../../src/api/lookup.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/server/pino-logger.ts';
import { startWebhookServer } from '../../src/server/webhook-server.ts';
import { sampleObjects } from './arbitraries.ts';
import { makeTestCerts } from './certs.ts';
import { MemoryLookup } from './memory-lookup.ts';

export interface Reply {
  status: number;
  contentType: string;
  body: string;
  ms: number;
}

export interface NormalRequest {
  path: string;
  body: string;
  /** The response a fresh server gave. */
  expected: AdmissionResponse;
}

export interface FuzzTarget {
  post(path: string, body: string): Promise<Reply>;
  normal: readonly NormalRequest[];
  /** How many log lines carried this message so far. */
  logged(message: string): number;
  close(): Promise<void>;
}

/** Logged by the podSpec check when it could not reach a verdict (src/admission/pod-spec-check.ts). */
export const POD_SPEC_UNCHECKED = 'spec.podSpec could not be checked';

export async function startFuzzTarget(): Promise<FuzzTarget> {
  const certs = await makeTestCerts();
  const objects = sampleObjects();
  const lookup = new MemoryLookup().add(...objects.filter((o) => isKaosKind(o.kind)));
  for (const ns of objects.filter((o) => o.kind === 'Namespace')) lookup.setNamespace(ns.metadata?.name ?? '', ns.metadata?.labels ?? {});

  // Only counts per message are kept: a 100,000-request run must not hold its log in memory.
  const counts = new Map<string, number>();
  const logger = createLogger({
    level: 'warn',
    destination: {
      write: (line: string) => {
        const msg = (JSON.parse(line) as { msg?: string }).msg ?? '';
        counts.set(msg, (counts.get(msg) ?? 0) + 1);
      },
    },
  });
  const config = loadConfig({});
  const podSpecCheck = createPodSpecCheck({ dryRunCreate: async () => ({ ok: true }), config, logger });
  const handlers: HandlerFactory = (kind, type) =>
    type === 'mutate' ? createMutatingHandler(kind, { lookup, config }) : createValidatingHandler(kind, { lookup, config, podSpecCheck });
  const server = await startWebhookServer({
    config: { host: '127.0.0.1', port: 0, certDir: certs.dir, certCheckIntervalSeconds: 3600 },
    handlers,
    logger,
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: certs.caPem });

  const post = (path: string, body: string): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const start = performance.now();
      const req = request(
        { host: '127.0.0.1', port: server.port, path, method: 'POST', agent, headers: { 'content-type': 'application/json' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              contentType: String(res.headers['content-type'] ?? ''),
              body: Buffer.concat(chunks).toString('utf8'),
              ms: performance.now() - start,
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  const normal: NormalRequest[] = [];
  for (const [i, object] of objects.filter((o) => isKaosKind(o.kind)).entries()) {
    const kind = object.kind as KaosKind;
    const mutateBody = reviewOf(kind, object, `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const mutated = await answer(post, webhookPath('mutate', kind), mutateBody);
    const patch = mutated.patch === undefined ? [] : (JSON.parse(Buffer.from(mutated.patch, 'base64').toString('utf8')) as jsonPatch.Operation[]);
    const defaulted = jsonPatch.applyPatch(structuredClone(object), patch, true, false).newDocument;
    const validateBody = reviewOf(kind, defaulted, `00000000-0000-4000-9000-${String(i).padStart(12, '0')}`);
    const validated = await answer(post, webhookPath('validate', kind), validateBody);
    if (!validated.allowed) throw new Error(`sample ${kind} ${object.metadata?.name} is denied: ${validated.status?.message}`);
    normal.push({ path: webhookPath('mutate', kind), body: mutateBody, expected: mutated });
    normal.push({ path: webhookPath('validate', kind), body: validateBody, expected: validated });
  }

  return {
    post,
    normal,
    logged: (message) => counts.get(message) ?? 0,
    close: async () => {
      agent.destroy();
      await server.close();
      await certs.cleanup();
    },
  };
}

async function answer(post: FuzzTarget['post'], path: string, body: string): Promise<AdmissionResponse> {
  const reply = await post(path, body);
  if (reply.status !== 200) throw new Error(`${path}: HTTP ${reply.status}: ${reply.body}`);
  return (JSON.parse(reply.body) as AdmissionReviewOut).response;
}

function reviewOf(kind: KaosKind, object: KubeObject, uid: string): string {
  const gvk = { group: GROUP, version: VERSION, kind };
  const gvr = { group: GROUP, version: VERSION, resource: KIND_NAMES[kind].plural };
  const request: AdmissionRequest = {
    uid,
    kind: gvk,
    resource: gvr,
    requestKind: gvk,
    requestResource: gvr,
    name: object.metadata?.name ?? '',
    namespace: object.metadata?.namespace ?? '',
    operation: 'CREATE',
    object,
    dryRun: false,
  };
  return JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
}
