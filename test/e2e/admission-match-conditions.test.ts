// The webhook configurations' matchConditions (src/admission/match-conditions.ts), through the
// real kube-apiserver: which UPDATEs still reach the operator, counted by the operator's own
// controller_runtime_webhook_requests_total on its metrics port, and that what must happen on
// those that do (re-deriving defaults, refusing a bad policy annotation) still happens.
//
// Run `npm run build` first: the operator process is dist/main.js.
import t, { type Test } from 'tap';
import { eventually } from '../support/poll.ts';
import { startLocalStack, tail, type LocalStack } from '../../scripts/local-stack.ts';
import { webhookPath } from '../../src/admission/webhook-paths.ts';
import type { KubeObject } from '../../src/api/lookup.ts';
import { MAX_INLINE_TEXT_LENGTH } from '../../src/api/schema/limits.ts';
import { ApiError } from '../../src/kube/errors.ts';

type Json = Record<string, unknown>;
const NS = 'match';
const DEFAULTED = 'kaos.tools/defaulted';
const IMAGES = { agent: 'e2e.local/agent:1', ollama: 'e2e.local/ollama:1', litellm: 'e2e.local/litellm:1' };

let stack: LocalStack | undefined;
const stackLog: string[] = [];

t.before(async () => {
  stack = await startLocalStack({
    log: (line) => stackLog.push(line),
    operatorEnv: { DEFAULT_AGENT_IMAGE: IMAGES.agent, DEFAULT_OLLAMA_IMAGE: IMAGES.ollama, DEFAULT_LITELLM_IMAGE: IMAGES.litellm },
  });
  await stack.client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
});

t.teardown(async () => {
  if (stack === undefined) return;
  if (!t.passing()) {
    process.stderr.write(`--- stack log ---\n${stackLog.join('\n')}\n--- operator log (tail) ---\n${tail(stack.operator.log(), 40)}\n`);
  }
  await stack.stop();
});

function live(): LocalStack {
  if (stack === undefined) throw new Error('no local stack');
  return stack;
}

const path = (resource: 'agents' | 'modelapis', name = ''): string =>
  `/apis/kaos.tools/v1alpha1/namespaces/${NS}/${resource}${name === '' ? '' : `/${name}`}`;

/**
 * Requests the operator answered so far, by webhook path. The webhooks' counters are the admission
 * thread's, and a scrape waits only so long for them (src/admission-thread/thread.ts) before it is
 * served without them: on a loaded machine such a scrape would read as no requests at all, and a
 * count taken from it as minus every request before. So a scrape without the thread's part (its
 * in-flight gauge, there for every webhook path from the start) is taken again.
 */
async function calls(): Promise<Map<string, number>> {
  const text = await eventually('a scrape of /metrics that carries the admission thread\'s metrics', async () => {
    const scraped = await (await fetch(`http://127.0.0.1:${live().operator.metricsPort}/metrics`)).text();
    return /^controller_runtime_webhook_requests_in_flight\{/m.test(scraped) ? scraped : undefined;
  }, { timeoutMs: 60_000, intervalMs: 200, retryErrors: true });
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^controller_runtime_webhook_requests_total\{([^}]*)\} (\S+)$/gm)) {
    const hook = /webhook="([^"]*)"/.exec(m[1] ?? '')?.[1] ?? '';
    out.set(hook, (out.get(hook) ?? 0) + Number(m[2]));
  }
  return out;
}

/**
 * Waits until the controller leaves the namespace alone: every object not being deleted Ready at
 * its generation (its pods run on the local control plane's kwok nodes) and no resourceVersion moving for a second. A
 * status write racing an UPDATE makes the API server retry that UPDATE, admission included, which
 * would count twice.
 */
async function quiet(): Promise<void> {
  const versions = async (): Promise<string | undefined> => {
    const items = await Promise.all((['agents', 'modelapis'] as const).map(async (r) => (await live().client.list<KubeObject & { status?: { phase?: string; observedGeneration?: number } }>(path(r))).items));
    const all = items.flat();
    // An object being deleted gets no more status writes; the others settle at Ready.
    const settling = all.filter((o) => o.metadata?.deletionTimestamp === undefined);
    if (!settling.every((o) => o.status?.phase === 'Ready' && o.status.observedGeneration === o.metadata?.generation)) return undefined;
    return all.map((o) => `${o.metadata?.name ?? ''}=${o.metadata?.resourceVersion ?? ''}`).join(' ');
  };
  await eventually('the controller to settle every object at Ready', async () => {
    const before = await versions();
    if (before === undefined) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return (await versions()) === before ? true : undefined;
  }, { timeoutMs: 60_000, intervalMs: 200, retryErrors: true });
}

/** How many calls each of the kind's two webhooks got while `action` ran (on a settled namespace). */
async function callsDuring(kind: 'Agent' | 'ModelAPI', action: () => Promise<unknown>): Promise<{ mutate: number; validate: number }> {
  await quiet();
  const before = await calls();
  await action();
  const after = await calls();
  const d = (type: 'mutate' | 'validate'): number => {
    const p = webhookPath(type, kind);
    return (after.get(p) ?? 0) - (before.get(p) ?? 0);
  };
  return { mutate: d('mutate'), validate: d('validate') };
}

const merge = (resource: 'agents' | 'modelapis', name: string, patch: Json): Promise<KubeObject> =>
  live().client.patch<KubeObject>(path(resource, name), patch, 'merge');

async function createModel(t: Test): Promise<void> {
  const made = await callsDuring('ModelAPI', () =>
    live().client.create(path('modelapis'), {
      apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'model' }, spec: { mode: 'Hosted', hostedConfig: { model: 'm:1b' } },
    }),
  );
  t.same(made, { mutate: 1, validate: 1 }, 'a CREATE reaches both webhooks');
}

t.test('label-only and unrelated-annotation UPDATEs are not sent; spec UPDATEs are', async (t) => {
  await createModel(t);
  const created = await callsDuring('Agent', () =>
    live().client.create(path('agents'), {
      apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name: 'a1' }, spec: { modelAPI: 'model', config: { description: 'one' } },
    }),
  );
  t.same(created, { mutate: 1, validate: 1 }, 'CREATE: both webhooks');

  let stored: KubeObject | undefined;
  t.same(await callsDuring('Agent', async () => { stored = await merge('agents', 'a1', { metadata: { labels: { team: 'blue' } } }); }), { mutate: 0, validate: 0 }, 'a label-only UPDATE reaches neither webhook');
  t.equal(stored?.metadata?.labels?.team, 'blue', '… and is stored');
  t.same(
    await callsDuring('Agent', () => merge('agents', 'a1', { metadata: { annotations: { 'example.com/note': 'hello' } } })),
    { mutate: 0, validate: 0 },
    'an annotation no handler reads: neither webhook',
  );
  t.same(
    await callsDuring('Agent', async () => { stored = await merge('agents', 'a1', { spec: { config: { description: 'two' } } }); }),
    { mutate: 1, validate: 1 },
    'a spec UPDATE reaches both webhooks',
  );
  t.equal((stored?.spec as { container?: { image?: string } }).container?.image, IMAGES.agent, '… and keeps its defaults');
});

t.test('an UPDATE touching an annotation a handler reads is sent to that handler', async (t) => {
  // kaos.tools/defaulted says which values are ours: a change to it must reach the mutating webhook.
  const before = await live().client.get<KubeObject>(path('agents', 'a1'));
  t.equal(before.metadata?.annotations?.[DEFAULTED], 'spec.config.env[MODEL_NAME],spec.container.image', 'the values the webhook chose');
  const removed = await callsDuring('Agent', () => merge('agents', 'a1', { metadata: { annotations: { [DEFAULTED]: null } } }));
  t.same(removed, { mutate: 1, validate: 0 }, 'removing kaos.tools/defaulted reaches the mutating webhook only');

  // An invalid reference policy on an unchanged spec is still refused.
  const refused = await callsDuring('Agent', async () => {
    try {
      await merge('agents', 'a1', { metadata: { annotations: { 'kaos.tools/reference-policy': 'Sometimes' } } });
      t.fail('an invalid reference-policy annotation was admitted');
    } catch (err) {
      t.ok(err instanceof ApiError && err.code === 422, 'refused as Invalid');
      t.match((err as Error).message, /metadata\.annotations\[kaos\.tools\/reference-policy\]: Unsupported value: "Sometimes"/, '… naming the annotation and its value');
    }
  });
  t.equal(refused.validate, 1, 'a reference-policy change reaches the validating webhook');
});

t.test('a defaulted value still follows its source when the spec changes', async (t) => {
  let stored: KubeObject | undefined;
  const changed = await callsDuring('ModelAPI', async () => {
    stored = await merge('modelapis', 'model', { spec: { mode: 'Proxy', hostedConfig: null, proxyConfig: { apiBase: 'http://backend.example:8000' } } });
  });
  t.same(changed, { mutate: 1, validate: 1 }, 'a mode change reaches both webhooks');
  t.equal((stored?.spec as { container?: { image?: string } }).container?.image, IMAGES.litellm, 'the defaulted image follows the new mode');
});

t.test('an object being deleted: the validating webhook is not called, the mutating one is for spec changes', async (t) => {
  await merge('agents', 'a1', { metadata: { finalizers: ['example.com/hold'] } });
  await live().client.delete(path('agents', 'a1'));
  const during = await callsDuring('Agent', () => merge('agents', 'a1', { spec: { config: { description: 'three' } } }));
  t.same(during, { mutate: 1, validate: 0 }, 'spec UPDATE of an object being deleted: mutating only');
  const released = await callsDuring('Agent', () => merge('agents', 'a1', { metadata: { finalizers: null } }));
  t.same(released, { mutate: 0, validate: 0 }, 'removing the last finalizer: neither');
  await t.rejects(live().client.get(path('agents', 'a1')), { code: 404 }, 'then it is gone');
});

t.test('a spec near the size limit: a label-only UPDATE is admitted (the CEL comparison stays within its cost budget)', async (t) => {
  // About 1 MiB of spec (etcd keeps at most ~1.5 MiB per object): every string at its schema limit.
  const text = (c: string) => c.repeat(MAX_INLINE_TEXT_LENGTH);
  const env = ['A', 'B', 'C'].map((name) => ({ name, value: text(name.toLowerCase()) }));
  await live().client.create(path('agents'), {
    apiVersion: 'kaos.tools/v1alpha1',
    kind: 'Agent',
    metadata: { name: 'big' },
    spec: { modelAPI: 'model', config: { instructions: text('x'), env } },
  });
  const relabel = await callsDuring('Agent', () => merge('agents', 'big', { metadata: { labels: { size: 'big' } } }));
  t.same(relabel, { mutate: 0, validate: 0 }, 'admitted without a call');
});
