// One user must never stall admission for everyone: through the real kube-apiserver,
// hostile Agents are sent while a stream of normal creates from other namespaces runs. Every
// normal create must succeed, and each hostile Agent must get a short denial that names the field.
//
// The hostile Agents are sized from the CRD itself, so the test means the same thing before and
// after `maxItems` lands on spec.mcpServers:
// * "as many as the schema allows": spec.mcpServers at its maxItems (10,000 while there is none),
//   every name valid and missing, so each one is a lookup the webhook could be tricked into;
// * "a huge invalid list": more items than maxItems (at least 20,000), every name invalid, which
//   either the schema or the webhook refuses — in few words either way.
//
// Run `npm run build` first: the operator process is dist/main.js. No timing is asserted.
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT, startLocalStack, tail, type LocalStack } from '../../scripts/local-stack.ts';
import { ApiError } from '../../src/kube/errors.ts';

type Json = Record<string, unknown>;

/**
 * A denial message longer than this is not "short": kubectl prints it whole. Counted without the
 * API server's own prefix (`admission webhook "vagent.kaos.tools" denied the request: `), which
 * is not ours to shorten.
 */
const MAX_MESSAGE_BYTES = 4096;
/**
 * The whole Status: the message plus the typed causes, which repeat each of its lines with
 * their field and reason — at most about a hundred, then one counting the rest, as Kubernetes
 * does. (Before the bounds, 230,000 invalid names made a 160 MB answer.)
 */
const MAX_STATUS_BYTES = 32 * 1024;
const API_SERVER_PREFIX = /^admission webhook "[^"]+" denied the request: /;
const NORMAL_NAMESPACES = ['tenant-a', 'tenant-b', 'tenant-c', 'tenant-d'];
const IN_FLIGHT = 8;
/** The stream runs at least this long in creates, and on until every hostile request is answered. */
const MIN_NORMAL_CREATES = 120;
/** A bound, so that a run where the hostile requests never end still ends. */
const MAX_NORMAL_CREATES = 3000;
const HOSTILE_NS = 'mallory';

let stack: LocalStack | undefined;
const stackLog: string[] = [];

t.before(async () => {
  stack = await startLocalStack({ log: (line) => stackLog.push(line) });
});

t.teardown(async () => {
  if (stack === undefined) return;
  if (!t.passing()) {
    process.stderr.write(`--- stack log ---\n${stackLog.join('\n')}\n--- operator log (tail) ---\n${tail(stack.operator.log(), 40)}\n`);
  }
  await stack.stop();
});

/** spec.mcpServers' maxItems in crds/, or undefined while the schema sets none. */
async function mcpServersMaxItems(): Promise<number | undefined> {
  const crd = parse(await readFile(join(ROOT, 'crds', 'agents.kaos.tools.yaml'), 'utf8')) as {
    spec: { versions: Array<{ schema: { openAPIV3Schema: { properties: { spec: { properties: { mcpServers: { maxItems?: number } } } } } } }> };
  };
  return crd.spec.versions[0]?.schema.openAPIV3Schema.properties.spec.properties.mcpServers.maxItems;
}

const agentsPath = (ns: string): string => `/apis/kaos.tools/v1alpha1/namespaces/${ns}/agents`;
const agent = (ns: string, name: string, spec: Json): Json => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind: 'Agent',
  metadata: { name, namespace: ns },
  spec,
});

interface Denial {
  code: number;
  /** The Status the client received, re-serialized: message, reason and causes. */
  bytes: number;
  /** The message without the API server's prefix. */
  messageBytes: number;
  message: string;
}

/** Sends the hostile Agent and returns how it was refused (or throws if it was admitted). */
async function sendHostile(client: LocalStack['client'], name: string, mcpServers: string[]): Promise<Denial> {
  try {
    await client.create(agentsPath(HOSTILE_NS), agent(HOSTILE_NS, name, { modelAPI: 'model', mcpServers }), { timeoutMs: 120_000 });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const status = { message: err.message, reason: err.reason, details: err.details };
    return { code: err.code, bytes: Buffer.byteLength(JSON.stringify(status)), messageBytes: Buffer.byteLength(err.message.replace(API_SERVER_PREFIX, '')), message: err.message };
  }
  throw new Error(`hostile Agent ${name} with ${mcpServers.length} mcpServers was admitted`);
}

t.test('a hostile Agent does not stall the normal creates of others, and gets a short, clear denial', async (t) => {
  if (stack === undefined) throw new Error('no local stack');
  const { client } = stack;
  for (const ns of [...NORMAL_NAMESPACES, HOSTILE_NS]) {
    await client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  }
  // Every namespace has the ModelAPI its Agents name, so a hostile denial is about mcpServers only.
  for (const ns of [...NORMAL_NAMESPACES, HOSTILE_NS]) {
    await client.create(`/apis/kaos.tools/v1alpha1/namespaces/${ns}/modelapis`, {
      apiVersion: 'kaos.tools/v1alpha1',
      kind: 'ModelAPI',
      metadata: { name: 'model' },
      spec: { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } },
    });
  }

  const maxItems = await mcpServersMaxItems();
  const allowed = maxItems ?? 10_000;
  const tooMany = Math.max((maxItems ?? 0) + 1, 20_000);
  const missing = Array.from({ length: allowed }, (_, i) => `missing-${i}`);
  // Upper case and underscores: not a DNS-1123 subdomain, so never a lookup, always an error.
  const invalid = Array.from({ length: tooMany }, (_, i) => `Not_A_Name_${i}`);
  t.comment(`spec.mcpServers maxItems: ${maxItems ?? 'none'}; hostile lists of ${allowed} missing and ${tooMany} invalid names`);

  // The normal stream: Agents that reference their namespace's ModelAPI, IN_FLIGHT at a time,
  // until the hostile requests are answered (and at least MIN_NORMAL_CREATES of them).
  let hostileDone = false;
  let next = 0;
  let startedStream!: () => void;
  const streaming = new Promise<void>((res) => { startedStream = res; });
  const failures: string[] = [];
  let succeeded = 0;
  const worker = async (): Promise<void> => {
    while ((next < MIN_NORMAL_CREATES || !hostileDone) && next < MAX_NORMAL_CREATES) {
      const i = next++;
      const ns = NORMAL_NAMESPACES[i % NORMAL_NAMESPACES.length] ?? 'tenant-a';
      try {
        await client.create(agentsPath(ns), agent(ns, `agent-${i}`, { modelAPI: 'model', config: { description: `normal ${i}` } }));
        succeeded += 1;
        if (succeeded === IN_FLIGHT * 2) startedStream();
      } catch (err) {
        failures.push(`agent-${i} in ${ns}: ${err instanceof Error ? err.message.slice(0, 300) : String(err)}`);
      }
    }
  };
  const stream = Promise.all(Array.from({ length: IN_FLIGHT }, worker));

  await Promise.race([streaming, stream]);
  let missingDenial: Denial;
  let invalidDenial: Denial;
  try {
    missingDenial = await sendHostile(client, 'hostile-missing', missing);
    invalidDenial = await sendHostile(client, 'hostile-invalid', invalid);
  } finally {
    hostileDone = true;
    await stream;
  }

  t.comment(`normal creates: ${succeeded} succeeded, ${failures.length} failed`);
  t.comment(`hostile (missing): ${missingDenial.code}, ${missingDenial.bytes} bytes (message ${missingDenial.messageBytes}): ${missingDenial.message.slice(0, 200)}`);
  t.comment(`hostile (invalid): ${invalidDenial.code}, ${invalidDenial.bytes} bytes (message ${invalidDenial.messageBytes}): ${invalidDenial.message.slice(0, 200)}`);

  t.same(failures.slice(0, 5), [], `every normal create succeeds (${failures.length} of ${next} failed)`);
  t.ok(next >= MIN_NORMAL_CREATES, 'the stream ran its minimum');

  for (const [what, denial] of [['missing references', missingDenial], ['huge invalid list', invalidDenial]] as const) {
    t.equal(denial.code, 422, `${what}: refused as Invalid`);
    t.ok(denial.messageBytes < MAX_MESSAGE_BYTES, `${what}: the message is short (${denial.messageBytes} bytes < ${MAX_MESSAGE_BYTES})`);
    t.ok(denial.bytes < MAX_STATUS_BYTES, `${what}: the whole Status is bounded (${denial.bytes} bytes < ${MAX_STATUS_BYTES})`);
    t.match(denial.message, /spec\.mcpServers/, `${what}: the denial names spec.mcpServers`);
  }
  t.match(missingDenial.message, /[Nn]ot found|does not exist|not checked|too many/i, 'missing references: says the MCPServers are not there');

  const stored = await client.list(agentsPath(HOSTILE_NS));
  t.equal(stored.items.length, 0, 'no hostile Agent is stored');
});
