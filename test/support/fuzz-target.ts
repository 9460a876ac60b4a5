// What the admission fuzzer runs against: the real HTTPS webhook server, with the real router and
// handlers over the sample objects, on a thread of its own (fuzz-server.ts), so that what a
// request costs is the serving thread's CPU and nothing of the fuzzer's. Also: the normal
// requests (each sample object, as written for mutate and as defaulted for validate) with the
// answers they get from a fresh server, to check that the server still answers them correctly
// between hostile ones.
import { Agent, request } from 'node:https';
import jsonPatch from 'fast-json-patch';
import { webhookPath } from '../../src/admission/webhook-paths.ts';
import type { AdmissionRequest, AdmissionReviewOut, AdmissionResponse } from '../../src/admission/types.ts';
import { GROUP, isKaosKind, KIND_NAMES, VERSION, type KaosKind } from '../../src/api/kinds.ts';
import type { KubeObject } from '../../src/api/lookup.ts';
import { sampleObjects } from './arbitraries.ts';
import { makeTestCerts } from './certs.ts';
import { startServerThread } from './server-thread.ts';

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

/** One request's reply, what it cost the serving thread, and what it logged. */
export interface Sent {
  reply: Reply;
  cpuMs: number;
  /** Log lines the server wrote while it served the request, by message. */
  logged(message: string): number;
}

export interface FuzzTarget {
  post(path: string, body: string): Promise<Reply>;
  /** post, measured on the serving thread. */
  send(path: string, body: string): Promise<Sent>;
  normal: readonly NormalRequest[];
  /** What the serving thread holds on to: its live heap after a full GC, in bytes. */
  retained(): Promise<number>;
  close(): Promise<void>;
}

/** Logged by the podSpec check when it could not reach a verdict (src/admission/pod-spec-check.ts). */
export const POD_SPEC_UNCHECKED = 'spec.podSpec could not be checked';

export async function startFuzzTarget(): Promise<FuzzTarget> {
  const certs = await makeTestCerts();
  const objects = sampleObjects();
  const server = await startServerThread(new URL('./fuzz-server.ts', import.meta.url), { certDir: certs.dir });
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

  const send = async (path: string, body: string): Promise<Sent> => {
    const before = await server.state();
    const reply = await post(path, body);
    const after = await server.state();
    return { reply, cpuMs: after.cpuMs - before.cpuMs, logged: (message) => (after.counts[message] ?? 0) - (before.counts[message] ?? 0) };
  };

  return {
    post,
    send,
    normal,
    retained: () => server.retained(),
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
