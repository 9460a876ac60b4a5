import t from 'tap';
import { createValidatingHandler, type PodSpecCheck } from '../../../src/admission/validate.ts';
import { invalid, type FieldError } from '../../../src/api/field-error.ts';
import { REFERENCE_POLICY_KEY, type KaosKind } from '../../../src/api/kinds.ts';
import { MemoryLookup } from '../../support/memory-lookup.ts';
import { agent, chatAPI, CONFIG, echoMCP, hosted, localStoreSpec, mcpServer, memoryStore, modelAPI, NS, store } from '../api/objects.ts';
import { admissionRequest } from '../../support/admission-request.ts';


const world = () =>
  new MemoryLookup().setNamespace(NS).add(hosted('m'), echoMCP('echo'), echoMCP('tools'), agent('peer', { modelAPI: 'm' }));

t.test('guards', async (t) => {
  const handler = createValidatingHandler('MCPServer', { lookup: world(), config: CONFIG });
  await t.rejects(handler(admissionRequest('Agent', agent('a', {}))), /MCPServer validating handler received a Agent request/);
  await t.rejects(handler(admissionRequest('MCPServer', undefined, { object: [] })), /request.object must be an object, got an? (array|string)/);
  t.same(await handler(admissionRequest('MCPServer', undefined, { operation: 'CONNECT' })), { allowed: true });
});

t.test('a name or namespace longer than Kubernetes allows did not come from the API server: 400, nothing looked up', async (t) => {
  const lookup = world();
  const handler = createValidatingHandler('Agent', { lookup, config: CONFIG });
  const named = (name: string, namespace = NS) => agent('a1', { modelAPI: 'm' }, { metadata: { name, namespace } });
  t.same(await handler(admissionRequest('Agent', named('a'.repeat(253)))), { allowed: true }, '253 characters is a name');
  t.same(await handler(admissionRequest('Agent', named('a'.repeat(254)))), {
    allowed: false,
    status: {
      status: 'Failure',
      message: 'request.object.metadata.name is longer than 253 characters, which the API server never sends to a validating webhook',
      reason: 'BadRequest',
      code: 400,
    },
  });
  const calls = lookup.calls.length;
  t.match(await handler(admissionRequest('Agent', named('a1', 'n'.repeat(64)))), { allowed: false, status: { code: 400, message: /metadata\.namespace is longer than 63 characters/ } });
  t.equal(lookup.calls.length, calls, 'nothing looked up');
});

t.test('a valid Agent is allowed, its references looked up concurrently', async (t) => {
  const lookup = world();
  const handler = createValidatingHandler('Agent', { lookup, config: CONFIG });
  const decision = await handler(admissionRequest('Agent', agent('a1', { modelAPI: 'm', mcpServers: ['echo', 'tools'], agentNetwork: { access: ['peer'] } })));
  t.same(decision, { allowed: true });
  t.same([...lookup.calls].sort(), ['exists Agent ns/peer', 'get MCPServer ns/echo', 'get MCPServer ns/tools', 'get ModelAPI ns/m', 'namespace ns']);
  t.equal(lookup.maxInFlight, 5, 'all five lookups were pending together');
});

t.test('a denial is Kubernetes’ 422 Invalid with every error', async (t) => {
  const handler = createValidatingHandler('Agent', { lookup: world(), config: CONFIG });
  const decision = await handler(admissionRequest('Agent', agent('a1', { modelAPI: 'gpt', agentNetwork: { access: ['a1'] } })));
  t.equal(decision.allowed, false);
  t.same(decision.status, {
    metadata: {},
    status: 'Failure',
    code: 422,
    reason: 'Invalid',
    message: 'Agent.kaos.tools "a1" is invalid: [spec.modelAPI: Not found: "gpt", spec.agentNetwork.access[0]: Invalid value: "a1": an agent cannot list itself]',
    details: {
      name: 'a1',
      group: 'kaos.tools',
      kind: 'Agent',
      causes: [
        { reason: 'FieldValueNotFound', field: 'spec.modelAPI', message: 'Not found: "gpt"' },
        { reason: 'FieldValueInvalid', field: 'spec.agentNetwork.access[0]', message: 'Invalid value: "a1": an agent cannot list itself' },
      ],
    },
  });
  const kubectl = ['The Agent "a1" is invalid:', ...(decision.status?.details?.causes ?? []).map((c) => `* ${c.field}: ${c.message}`)].join('\n');
  t.equal(kubectl, 'The Agent "a1" is invalid:\n* spec.modelAPI: Not found: "gpt"\n* spec.agentNetwork.access[0]: Invalid value: "a1": an agent cannot list itself');
});

t.test('schema errors are denied by the webhook too: reasoningLoopMaxSteps 50', async (t) => {
  const handler = createValidatingHandler('Agent', { lookup: world(), config: CONFIG });
  const decision = await handler(admissionRequest('Agent', agent('a1', { modelAPI: 'm', config: { reasoningLoopMaxSteps: 50 } })));
  t.equal(
    decision.status?.message,
    'Agent.kaos.tools "a1" is invalid: spec.config.reasoningLoopMaxSteps: Invalid value: 50: spec.config.reasoningLoopMaxSteps in body should be less than or equal to 20',
  );
});

t.test('the namespace label turns missing references into warnings; the annotation wins over it', async (t) => {
  const lookup = world().setNamespace(NS, { [REFERENCE_POLICY_KEY]: 'Warn' });
  const handler = createValidatingHandler('Agent', { lookup, config: CONFIG });
  t.same(await handler(admissionRequest('Agent', agent('a1', { modelAPI: 'later' }))), {
    allowed: true,
    warnings: ['spec.modelAPI: Not found: "later" (allowed: reference policy Warn)'],
  });
  const pinned = agent('a1', { modelAPI: 'later' }, { metadata: { annotations: { [REFERENCE_POLICY_KEY]: 'Enforce' } } });
  t.equal((await handler(admissionRequest('Agent', pinned))).allowed, false);
  const unknownNs = new MemoryLookup();
  t.equal((await createValidatingHandler('Agent', { lookup: unknownNs, config: { ...CONFIG, referencePolicy: 'Warn' } })(admissionRequest('Agent', agent('a1', { modelAPI: 'x' })))).allowed, true, 'unknown namespace: the operator setting');
});

t.test('UPDATE: an Agent whose ModelAPI was deleted can still be relabelled', async (t) => {
  const lookup = world();
  const handler = createValidatingHandler('Agent', { lookup, config: CONFIG });
  const old = agent('a1', { modelAPI: 'deleted' });
  const relabelled = agent('a1', { modelAPI: 'deleted' }, { metadata: { labels: { team: 'x' } } });
  t.same(await handler(admissionRequest('Agent', relabelled, { operation: 'UPDATE', oldObject: old })), { allowed: true });
  const moved = agent('a1', { modelAPI: 'also-missing' });
  t.equal((await handler(admissionRequest('Agent', moved, { operation: 'UPDATE', oldObject: old }))).allowed, false);
});

t.test('dry-run requests are judged exactly like real ones', async (t) => {
  const handler = createValidatingHandler('Agent', { lookup: world(), config: CONFIG });
  const object = agent('a1', { modelAPI: 'gpt' });
  t.same(await handler(admissionRequest('Agent', object, { dryRun: true })), await handler(admissionRequest('Agent', object)));
});

t.test('DELETE only warns, naming the Agents still using the object', async (t) => {
  const lookup = world().add(agent('a2', { modelAPI: 'm', mcpServers: ['echo'] }), agent('a1', { modelAPI: 'm' }));
  const modelAPIs = createValidatingHandler('ModelAPI', { lookup, config: CONFIG });
  t.same(await modelAPIs(admissionRequest('ModelAPI', undefined, { operation: 'DELETE', name: 'm', oldObject: hosted('m') })), {
    allowed: true,
    warnings: ['ModelAPI "m" is still referenced by Agents: a1, a2, peer'],
  });
  const mcps = createValidatingHandler('MCPServer', { lookup, config: CONFIG });
  t.same(await mcps(admissionRequest('MCPServer', undefined, { operation: 'DELETE', name: 'echo' })), {
    allowed: true,
    warnings: ['MCPServer "echo" is still referenced by Agents: a2'],
  });
  t.same(await mcps(admissionRequest('MCPServer', undefined, { operation: 'DELETE', name: 'tools' })), { allowed: true });
});

t.test("a MemoryStore's ModelAPIs and an Agent's MemoryStore are looked up; DELETE of a bound store warns", async (t) => {
  const lookup = world().add(chatAPI(), store('shared', { maxReadScope: 'session' }));
  const stores = createValidatingHandler('MemoryStore', { lookup, config: CONFIG });
  t.same(await stores(admissionRequest('MemoryStore', memoryStore('s', localStoreSpec()))), { allowed: true });
  t.same([...lookup.calls].sort(), ['get ModelAPI ns/chat', 'namespace ns'], 'the one ModelAPI both roles name, once; the namespace for the policy');
  const missing = await stores(admissionRequest('MemoryStore', memoryStore('s', localStoreSpec({ models: { summarization: { modelAPI: 'gone', model: 'x' }, embedding: { modelAPI: 'chat', model: 'openai/e' } } }))));
  t.equal(missing.status?.message, 'MemoryStore.kaos.tools "s" is invalid: spec.models.summarization.modelAPI: Not found: "gone"');

  lookup.calls.length = 0;
  const agents = createValidatingHandler('Agent', { lookup, config: CONFIG });
  const above = await agents(admissionRequest('Agent', agent('a', { modelAPI: 'm', model: 'llama3:8b', config: { memory: { memoryStore: 'shared', maxReadScope: 'agent' } } })));
  t.equal(above.status?.message, 'Agent.kaos.tools "a" is invalid: spec.config.memory.maxReadScope: Invalid value: config.memory.maxReadScope "agent" exceeds MemoryStore "shared" maxReadScope "session"');
  t.ok(lookup.calls.includes('get MemoryStore ns/shared'));

  lookup.add(agent('b', { modelAPI: 'm', model: 'llama3:8b', config: { memory: { memoryStore: 'shared' } } }));
  t.same(await stores(admissionRequest('MemoryStore', undefined, { operation: 'DELETE', name: 'shared', oldObject: store('shared') })), {
    allowed: true,
    warnings: ['MemoryStore "shared" is still bound by Agents: b', 'MemoryStore "shared": its PersistentVolumeClaim, and the memories on it, are deleted with it'],
  });
});

t.test('DELETE of a ModelAPI names the MemoryStores that bind it too, a warning per kind', async (t) => {
  const lookup = world().add(chatAPI(), store('notes'), store('facts'), agent('a1', { modelAPI: 'chat', model: 'openai/gpt-4o' }));
  const modelAPIs = createValidatingHandler('ModelAPI', { lookup, config: CONFIG });
  const del = (name: string) => modelAPIs(admissionRequest('ModelAPI', undefined, { operation: 'DELETE', name, oldObject: chatAPI() }));
  t.same(await del('chat'), {
    allowed: true,
    warnings: ['ModelAPI "chat" is still referenced by Agents: a1', 'ModelAPI "chat" is still referenced by MemoryStores: facts, notes'],
  }, 'each store named once, though it binds the ModelAPI for both its models');
  lookup.remove('Agent', NS, 'a1');
  t.same(await del('chat'), { allowed: true, warnings: ['ModelAPI "chat" is still referenced by MemoryStores: facts, notes'] }, 'stores alone');
  lookup.remove('MemoryStore', NS, 'notes').remove('MemoryStore', NS, 'facts');
  t.same(await del('chat'), { allowed: true }, 'nobody left: nothing to say');
});

t.test('a ModelAPI UPDATE that strands a MemoryStore\'s model names the store, beside the Agents, from the cache only', async (t) => {
  const both = { summarization: { modelAPI: 'cloud', model: 'gpt-4o-mini' }, embedding: { modelAPI: 'cloud', model: 'text-embedding-3-small' } };
  const lookup = new MemoryLookup({ liveOnMiss: true })
    .setNamespace(NS)
    .add(
      agent('a1', { modelAPI: 'cloud', model: 'gpt-4o-mini' }),
      memoryStore('notes', localStoreSpec({ models: both })),
      memoryStore('split', localStoreSpec({ models: { summarization: { modelAPI: 'cloud', model: 'gpt-4o-mini' }, embedding: { modelAPI: 'embed', model: 'text-embedding-3-small' } } })),
    );
  const handler = createValidatingHandler('ModelAPI', { lookup, config: CONFIG });
  const old = modelAPI('cloud', { mode: 'Proxy', proxyConfig: { models: ['gpt-4o-mini', 'text-embedding-3-small'] } });
  const update = (models: string[]) => handler(admissionRequest('ModelAPI', modelAPI('cloud', { mode: 'Proxy', proxyConfig: { models } }), { operation: 'UPDATE', oldObject: old }));
  t.same(await update(['gpt-4o-mini']), {
    allowed: true,
    warnings: ['ModelAPI "cloud" no longer serves a model of MemoryStores: notes'],
  }, 'its embedding model gone: the store that asks for it (not the one whose embedding is elsewhere)');
  t.same(await update(['claude']), {
    allowed: true,
    warnings: ['ModelAPI "cloud" no longer serves the model of Agents: a1', 'ModelAPI "cloud" no longer serves a model of MemoryStores: notes, split'],
  }, 'both kinds: a warning each, each store once');
  t.same(await update(['gpt-4o-mini', 'text-embedding-3-small', 'claude']), { allowed: true }, 'nothing stranded: nothing to say');
  t.equal(lookup.liveReads, 0, 'no live read for a warning');
});

t.test('podSpecCheck: called only for a schema-valid spec with podSpec; its errors are appended', async (t) => {
  const seen: Array<[KaosKind, unknown]> = [];
  const podSpecCheck: PodSpecCheck = async (kind, object) => {
    seen.push([kind, (object.spec as { podSpec?: unknown }).podSpec]);
    return [invalid('spec.podSpec.containers[0].image', '', 'must not be empty')] satisfies FieldError[];
  };
  const handler = createValidatingHandler('MCPServer', { lookup: world(), config: CONFIG, podSpecCheck });
  const base = { type: 'node-runtime', config: { tools: { fromString: 'x' } } };

  t.same(await handler(admissionRequest('MCPServer', mcpServer('s', { ...base, config: { tools: { fromPackage: 'p' } } }))), { allowed: true });
  t.same(seen, [], 'no podSpec: not called');

  const withPodSpec = mcpServer('s', { ...base, podSpec: { containers: [{ name: 'mcp-server', image: '' }] } });
  const decision = await handler(admissionRequest('MCPServer', withPodSpec));
  t.same(decision.status?.details?.causes?.map((c) => `${c.field}: ${c.message}`), [
    'spec.config.tools.fromString: Forbidden: only supported when type is python-runtime',
    'spec.podSpec.containers[0].image: Invalid value: "": must not be empty',
  ]);
  t.same(seen, [['MCPServer', { containers: [{ name: 'mcp-server', image: '' }] }]]);

  const schemaBroken = mcpServer('s', { type: 'go', podSpec: { containers: [] } });
  t.equal((await handler(admissionRequest('MCPServer', schemaBroken))).allowed, false);
  t.equal(seen.length, 1, 'a spec that breaks its schema is not merged');

  const relabelled = { ...withPodSpec, metadata: { ...withPodSpec.metadata, labels: { team: 'x' } } };
  await handler(admissionRequest('MCPServer', relabelled, { operation: 'UPDATE', oldObject: withPodSpec }));
  t.equal(seen.length, 1, 'an UPDATE that leaves the spec alone does not call the API server');
  const changed = mcpServer('s', { ...base, podSpec: { containers: [{ name: 'mcp-server', image: 'other' }] } });
  await handler(admissionRequest('MCPServer', changed, { operation: 'UPDATE', oldObject: withPodSpec }));
  t.equal(seen.length, 2, 'an UPDATE that changes the spec is checked');
});

t.test('ModelAPI and MCPServer validation needs no lookups', async (t) => {
  const lookup = world();
  const calls = lookup.calls.length;
  await createValidatingHandler('ModelAPI', { lookup, config: CONFIG })(admissionRequest('ModelAPI', modelAPI('m', { mode: 'Proxy' })));
  t.equal(lookup.calls.length, calls);
});

t.test('ratcheting: an UPDATE is not refused for fields it leaves as they were', async (t) => {
  const handler = createValidatingHandler('ModelAPI', { lookup: world(), config: CONFIG });
  // Admitted by the Go operator: both configs at once.
  const legacy = modelAPI('m', { mode: 'Proxy', proxyConfig: { model: 'm' }, hostedConfig: { model: 'x' } });
  const relabelled = { ...legacy, metadata: { ...legacy.metadata, labels: { team: 'a' } } };
  t.same(await handler(admissionRequest('ModelAPI', relabelled, { operation: 'UPDATE', oldObject: legacy })), { allowed: true }, 'relabel allowed');
  const edited = modelAPI('m', { mode: 'Proxy', proxyConfig: { model: 'n' }, hostedConfig: { model: 'x' } });
  t.same(await handler(admissionRequest('ModelAPI', edited, { operation: 'UPDATE', oldObject: legacy })), { allowed: true }, 'an edit of another field is allowed');
  const touched = modelAPI('m', { mode: 'Proxy', proxyConfig: { model: 'm' }, hostedConfig: { model: 'y' } });
  const denied = await handler(admissionRequest('ModelAPI', touched, { operation: 'UPDATE', oldObject: legacy }));
  t.equal(denied.allowed, false, 'an edit of the invalid field is judged in full');
  t.same(denied.status?.details?.causes?.map((c) => c.field), ['spec.hostedConfig']);
  t.equal((await handler(admissionRequest('ModelAPI', legacy))).allowed, false, 'and so is a CREATE');

  const terminating = { ...legacy, metadata: { ...legacy.metadata, deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: [] } };
  const withFinalizer = { ...legacy, metadata: { ...legacy.metadata, deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['kaos.tools/modelapi-finalizer'] } };
  t.same(
    await handler(admissionRequest('ModelAPI', terminating, { operation: 'UPDATE', oldObject: withFinalizer })),
    { allowed: true },
    'removing the KAOS finalizer from an object being deleted is never blocked',
  );
});

t.test('DELETE is always allowed, whatever the request holds', async (t) => {
  const handler = createValidatingHandler('ModelAPI', { lookup: world(), config: CONFIG });
  t.same(await handler(admissionRequest('ModelAPI', undefined, { operation: 'DELETE', name: 'gone', oldObject: 'garbage' })), { allowed: true });
});

t.test('lookups: only what can change the answer, never a storm', async (t) => {
  const lookup = world();
  const handler = createValidatingHandler('Agent', { lookup, config: CONFIG });
  const peers = Array.from({ length: 2000 }, (_, i) => `p${i}`);
  const old = agent('a1', { modelAPI: 'gone', agentNetwork: { access: peers } });
  const relabelled = { ...old, metadata: { ...old.metadata, labels: { team: 'x' } } };
  const before = lookup.calls.length;
  t.same(await handler(admissionRequest('Agent', relabelled, { operation: 'UPDATE', oldObject: old })), { allowed: true });
  t.same(lookup.calls.slice(before).filter((c) => !c.startsWith('namespace ')), [], 'unchanged references are not looked up');

  // Within the schema's maxItems (100), so every name is judged.
  const created = await handler(admissionRequest('Agent', agent('a2', { modelAPI: 'm', agentNetwork: { access: [...peers.slice(0, 99), 'Not_A_Name'] } })));
  const agentLookups = lookup.calls.filter((c) => c.startsWith('exists Agent'));
  t.equal(agentLookups.length, 20, 'at most 20 new peers are looked up');
  t.equal(created.warnings?.length, 20, 'and warned about');
  t.same(created.status?.details?.causes?.map((c) => c.field), ['spec.agentNetwork.access[99]'], 'the invalid name is an error, not a lookup');
});

t.test('spec.model: a changed model is judged against its (unchanged) ModelAPI; an unchanged pair is not looked up', async (t) => {
  const lookup = world();
  const handler = createValidatingHandler('Agent', { lookup, config: CONFIG });
  const old = agent('a1', { modelAPI: 'm', model: 'llama3:8b' });
  const before = lookup.calls.length;
  const relabelled = agent('a1', { modelAPI: 'm', model: 'llama3:8b' }, { metadata: { labels: { team: 'x' } } });
  t.same(await handler(admissionRequest('Agent', relabelled, { operation: 'UPDATE', oldObject: old })), { allowed: true });
  t.notOk(lookup.calls.slice(before).includes('get ModelAPI ns/m'), 'nothing new to judge: no lookup');
  const changed = agent('a1', { modelAPI: 'm', model: 'gpt-4o' });
  const decision = await handler(admissionRequest('Agent', changed, { operation: 'UPDATE', oldObject: old }));
  t.equal(decision.allowed, false);
  t.same(decision.status?.details?.causes, [
    { reason: 'FieldValueNotFound', field: 'spec.model', message: 'Not found: "gpt-4o": not supported by ModelAPI "m" (supported: [llama3:8b])' },
  ]);
});

t.test('a ModelAPI UPDATE that strands Agents warns, from the cache only', async (t) => {
  const lookup = new MemoryLookup({ liveOnMiss: true })
    .setNamespace(NS)
    .add(agent('a1', { modelAPI: 'cloud', model: 'openai/gpt-4o' }), agent('a2', { modelAPI: 'cloud', model: 'claude' }), agent('a3', { modelAPI: 'cloud' }));
  const handler = createValidatingHandler('ModelAPI', { lookup, config: CONFIG });
  const old = modelAPI('cloud', { mode: 'Proxy', proxyConfig: { models: ['openai/*', 'claude'] } });
  const updated = modelAPI('cloud', { mode: 'Proxy', proxyConfig: { models: ['claude'] } });
  const decision = await handler(admissionRequest('ModelAPI', updated, { operation: 'UPDATE', oldObject: old }));
  t.same(decision, { allowed: true, warnings: ['ModelAPI "cloud" no longer serves the model of Agents: a1'] });
  t.equal(lookup.liveReads, 0, 'no live read for a warning');
  const create = await handler(admissionRequest('ModelAPI', updated));
  t.same(create, { allowed: true }, 'a CREATE strands nobody');
});
