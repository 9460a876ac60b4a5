// End-to-end: MemoryStores and Agents bound to them (docs/api.md, "MemoryStore" and "Agent remote
// memory"), against a real kube-apiserver, kube-controller-manager (its volume binder and host-path
// provisioner bind the claims), kube-scheduler and kwok's nodes, with the operator started through
// dist/main.js under its own ServiceAccount and an audit log of its requests. A KAOS-style manifest
// applied unchanged reaches Ready with the children the contract describes (written out here,
// never computed with the renderer); a store waits for its ModelAPI; an Agent waits for its store
// at first creation, and a running one degrades and recovers without a rollout; every refusal of
// the contract answers `kubectl apply` and `--dry-run=server` alike; a claim grows; two replicas in
// external mode bring a PodDisruptionBudget and one takes it away; a ModelAPI that drops a store's
// model, and then its deletion, warn naming the store beside the Agents, and the store reports it;
// deleting a bound store warns; Agents that scale (docs/api.md, "Agent replicas, kubectl scale and
// autoscaling"): one bound to a store with replicas 3 runs three pods and its PodDisruptionBudget,
// `kubectl scale` reaches the Deployment and status.replicas, a GitOps re-apply keeps the declared
// count, an autoscaled one gets its HPA, which kube-controller-manager's HPA controller accepts
// (AbleToScale), in-process memory above one replica is refused at `kubectl apply` and `kubectl
// scale`, replicas 0 is ScaledToZero; and a converged cluster with all of them gets no write from
// the operator. Here, because bound Agents need this file's MemoryStores and running pods already.
//
// Run `npm run build` first: the operator process is dist/main.js.
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { OPERATOR_USER } from '../../src/cluster/rbac.ts';
import { eventually } from '../support/poll.ts';
import {
  HARDENED,
  POD_SECURITY,
  applyObjects,
  at,
  childIdentity,
  createNamespace,
  deploymentShape,
  expectedIdentity,
  getObject,
  httpGet,
  kaos,
  kubectlOk,
  podSpecOf,
  probe,
  serviceShape,
  servicePorts,
  waitForGone,
  waitForObject,
  waitForPhase,
  type Json,
} from './support/children.ts';
import { auditMark, auditSince, changedKeys, describeRequest, resourceVersions, sleep, writesBy } from './support/lifecycle.ts';
import { IMAGES, OPERATOR_ENV, useStack } from './support/stack.ts';

const s = useStack(t, OPERATOR_ENV, { users: [OPERATOR_USER] });
const FIXTURE = fileURLToPath(new URL('../fixtures/kaos-2026/memory-agents.yaml', import.meta.url));
const IDLE_SECONDS = Number(process.env.KAOS_E2E_IDLE_SECONDS ?? '60');
const HASH = /^[0-9a-f]{16}$/;

const svc = (prefix: string, name: string, ns: string, port: number): string => `http://${prefix}-${name}.${ns}.svc.cluster.local:${port}`;
const containerOf = (deployment: Json): Json => ((podSpecOf(deployment).containers as Json[] | undefined) ?? [])[0] ?? {};
const envLines = (deployment: Json): string[] =>
  ((containerOf(deployment).env as Json[] | undefined) ?? []).map((e) => `${String(e.name)}=${e.value === undefined ? JSON.stringify(e.valueFrom) : String(e.value)}`);
const conditionOf = (o: Json, type: string): Json | undefined => ((at(o, 'status', 'conditions') as Json[] | undefined) ?? []).find((c) => c.type === type);
const applyJson = (ns: string, objects: readonly Json[], ...args: string[]) =>
  s().plane.kubectl(['apply', '-n', ns, '-f', '-', ...args], { input: objects.map((o) => JSON.stringify(o)).join('\n---\n') });

/** `kubectl delete` of one object: deleted, with exactly these warnings as kubectl prints them. */
async function deletedWarning(t: Test, resource: string, ns: string, name: string, warnings: readonly string[]): Promise<void> {
  t.strictSame(await s().plane.kubectl(['delete', resource, name, '-n', ns]), {
    code: 0,
    stdout: `${resource}.kaos.tools "${name}" deleted from ${ns} namespace\n`,
    stderr: warnings.map((w) => `Warning: ${w}\n`).join(''),
  });
}

/** A Proxy ModelAPI that serves any model (its apiBase: the wildcard of docs/api.md, "Proxy mode"). */
const anyModel = (name: string): Json => kaos('ModelAPI', name, { mode: 'Proxy', proxyConfig: { apiBase: 'http://litellm.example:4000' } });
const models = (modelAPI: string): Json => ({ summarization: { modelAPI, model: 'gpt-4o-mini' }, embedding: { modelAPI, model: 'text-embedding-3-small' } });
const localStore = (name: string, modelAPI: string, extra: Json = {}): Json => kaos('MemoryStore', name, { storage: { type: 'local' }, models: models(modelAPI), ...extra });
const boundAgent = (name: string, modelAPI: string, memory: Json): Json => kaos('Agent', name, { modelAPI, model: 'gpt-4o-mini', config: { memory } });

t.test('a KAOS-style manifest applies unchanged and converges to Ready with the children of the contract', async (t) => {
  const res = await s().plane.kubectl(['apply', '-f', FIXTURE]);
  t.equal(res.code, 0, `applied: ${res.stderr}`);
  t.equal(res.stderr, '', 'no warning');
  const ns = 'kaos-memory';
  const store = await waitForPhase(s(), 'memorystore', ns, 'support-memory', 'Ready');
  for (const agent of ['support-assistant', 'session-assistant']) await waitForPhase(s(), 'agent', ns, agent, 'Ready');

  t.match(store.spec, { engine: 'mem0', replicas: 1, defaultFailureMode: 'soft', storage: { type: 'local', local: { provider: 'chroma', persistentVolume: { size: '1Gi' } } } });
  t.equal(at(store, 'metadata', 'annotations', 'kaos.tools/defaulted'), 'spec.container.image,spec.replicas');
  t.match(store.status, { phase: 'Ready', ready: true, endpoint: svc('memorystore', 'support-memory', ns, 8080), message: 'Deployment ready replicas: 1/1' });
  const columns = await kubectlOk(s(), ['get', 'memstores', '-n', ns]);
  t.match(columns, /^NAME\s+ENGINE\s+STORAGE\s+READY\s+PHASE\s+AGE\n/, 'the printer columns, through the short name');
  t.match(columns, /\nsupport-memory\s+mem0\s+local\s+true\s+Ready\s/);
  const explained = await kubectlOk(s(), ['explain', 'memorystore.spec.storage.type']);
  t.match(explained, /KIND:\s+MemoryStore/);
  t.match(explained, /local \(one pod with a PersistentVolume\) or external \(pgvector\)/, 'kubectl explain reads the CRD\'s descriptions');
  t.match(await kubectlOk(s(), ['explain', 'agent.spec.config.memory.maxReadScope']), /at most its MemoryStore's maxReadScope/);

  const claim = await waitForObject(s(), 'persistentvolumeclaim', ns, 'memorystore-support-memory-data', (c) => at(c, 'status', 'phase') === 'Bound');
  t.strictSame(childIdentity(claim), expectedIdentity('MemoryStore', store, 'memorystore-support-memory-data'));
  t.strictSame(at(claim, 'spec', 'accessModes'), ['ReadWriteOnce']);
  t.strictSame(at(claim, 'spec', 'resources'), { requests: { storage: '1Gi' } });
  t.equal(at(claim, 'spec', 'storageClassName'), 'standard', "the cluster's default StorageClass");

  const deployment = await waitForObject(s(), 'deployment', ns, 'memorystore-support-memory');
  t.strictSame(childIdentity(deployment), expectedIdentity('MemoryStore', store, 'memorystore-support-memory'));
  t.strictSame(deploymentShape(deployment), {
    replicas: 1,
    selector: { matchLabels: { app: 'memorystore', memorystore: 'support-memory' } },
    podLabels: { app: 'memorystore', memorystore: 'support-memory' },
    podAnnotationKeys: ['kaos.tools/pod-spec-hash', 'kubectl.kubernetes.io/default-container'],
  });
  t.strictSame(at(deployment, 'spec', 'strategy'), { type: 'Recreate' }, 'one pod owns the ReadWriteOnce volume at a time');
  t.match(at(deployment, 'spec', 'template', 'metadata', 'annotations', 'kaos.tools/pod-spec-hash'), HASH);
  t.strictSame(podSpecOf(deployment), {
    containers: [
      {
        name: 'memory',
        image: IMAGES.memoryService,
        imagePullPolicy: 'IfNotPresent',
        ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
        env: [
          { name: 'KAOS_MEMORY_STORAGE_TYPE', value: 'local' },
          { name: 'KAOS_MEMORY_LOCAL_PATH', value: '/data/memory' },
          { name: 'KAOS_MEMORY_MODEL_BASE_URL', value: `${svc('modelapi', 'support-modelapi', ns, 8000)}/v1` },
          { name: 'KAOS_MEMORY_SUMMARIZATION_MODEL', value: 'gpt-4o-mini' },
          { name: 'KAOS_MEMORY_EMBEDDING_MODEL', value: 'text-embedding-3-small' },
          { name: 'KAOS_MEMORY_TOKEN_BUDGET', value: '64' },
          { name: 'KAOS_MEMORY_ROLLING_SUMMARY', value: 'true' },
          { name: 'KAOS_MEMORY_DEFAULT_FAILURE_MODE', value: 'soft' },
        ],
        volumeMounts: [{ name: 'data', mountPath: '/data/memory' }],
        livenessProbe: probe(httpGet('/healthz', 8080), 10, 15, 5, 3),
        readinessProbe: probe(httpGet('/readyz', 8080), 5, 10, 5, 3),
        resources: {},
        securityContext: HARDENED,
      },
    ],
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'memorystore-support-memory-data' } }],
    securityContext: POD_SECURITY,
  });
  const service = await waitForObject(s(), 'service', ns, 'memorystore-support-memory');
  t.strictSame(childIdentity(service), expectedIdentity('MemoryStore', store, 'memorystore-support-memory'));
  t.strictSame(serviceShape(service), { type: 'ClusterIP', selector: { app: 'memorystore', memorystore: 'support-memory' }, ports: servicePorts(8080) });
  t.equal(await getObject(s(), 'poddisruptionbudget', ns, 'memorystore-support-memory'), undefined, 'one replica: no PodDisruptionBudget');

  const support = await waitForObject(s(), 'agent', ns, 'support-assistant');
  t.match(support.status, { linkedResources: { modelapi: 'support-modelapi', memorystore: 'support-memory' } });
  t.match(conditionOf(support, 'MemoryDegraded'), { status: 'False', reason: 'MemoryHealthy', message: 'MemoryStore support-memory is ready' });
  const supportEnv = envLines(await waitForObject(s(), 'deployment', ns, 'agent-support-assistant'));
  t.same(supportEnv.slice(supportEnv.indexOf('AGENTIC_LOOP_MAX_STEPS=5')), [
    'AGENTIC_LOOP_MAX_STEPS=5',
    'TOOL_CALL_MODE=auto',
    'MEMORY_ENABLED=true',
    'MEMORY_TYPE=remote',
    `MEMORY_STORE_ENDPOINT=${svc('memorystore', 'support-memory', ns, 8080)}`,
    'MEMORY_MAX_READ_SCOPE=agent',
    'MEMORY_TOOLS=read',
    'MEMORY_SHORT_TERM_TOKEN_BUDGET=64',
    'MEMORY_ROLLING_SUMMARY=true',
    `AGENT_IDENTITY=kaos://agent/${ns}/support-assistant`,
    'LOG_LEVEL=INFO',
  ], 'the MEMORY_* block after TOOL_CALL_MODE, AGENT_IDENTITY last of it');
  const session = await waitForObject(s(), 'agent', ns, 'session-assistant');
  t.equal(at(session, 'spec', 'config', 'memory', 'type'), 'remote', 'the derived type, recorded');
  t.match(String(at(session, 'metadata', 'annotations', 'kaos.tools/defaulted')), /spec\.config\.memory\.type/);
  const sessionEnv = envLines(await waitForObject(s(), 'deployment', ns, 'agent-session-assistant'));
  t.same(sessionEnv.filter((l) => l.startsWith('MEMORY_')), [
    'MEMORY_ENABLED=true',
    'MEMORY_TYPE=remote',
    `MEMORY_STORE_ENDPOINT=${svc('memorystore', 'support-memory', ns, 8080)}`,
    'MEMORY_MAX_READ_SCOPE=session',
    'MEMORY_FAILURE_MODE=strict',
  ]);
});

t.test('a store waits for its ModelAPI (Pending, nothing created), then reaches Ready', async (t) => {
  const ns = 'memory-waits';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [localStore('notes', 'later')].map((o) => ({ ...o, metadata: { ...(o.metadata as Json), annotations: { 'kaos.tools/reference-policy': 'Warn' } } })));
  const waiting = await waitForObject(s(), 'memorystore', ns, 'notes', (o) => at(o, 'status', 'message') === 'summarization ModelAPI "later" not found');
  t.match(waiting.status, { phase: 'Pending', ready: false });
  t.equal(await getObject(s(), 'deployment', ns, 'memorystore-notes'), undefined, 'no Deployment meanwhile');
  t.equal(await getObject(s(), 'persistentvolumeclaim', ns, 'memorystore-notes-data'), undefined, 'no claim meanwhile');
  await applyObjects(s(), ns, [anyModel('later')]);
  await waitForPhase(s(), 'memorystore', ns, 'notes', 'Ready');
  t.ok(await getObject(s(), 'persistentvolumeclaim', ns, 'memorystore-notes-data'));
});

t.test('an Agent created before its store waits; a running one degrades and recovers without a rollout', async (t) => {
  const ns = 'memory-degrade';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [anyModel('chat'), anyModel('mem')]);
  await waitForPhase(s(), 'modelapi', ns, 'chat', 'Ready');
  const early = { ...boundAgent('early', 'chat', { memoryStore: 'shared' }), metadata: { name: 'early', annotations: { 'kaos.tools/reference-policy': 'Warn' } } };
  const res = await applyJson(ns, [early]);
  t.equal(res.code, 0, res.stderr);
  t.match(res.stderr, /^Warning: spec\.config\.memory\.memoryStore: Not found: "shared" \(allowed: reference policy Warn\)/, 'a missing store is a reference error, here under Warn');
  const waiting = await waitForObject(s(), 'agent', ns, 'early', (o) => at(o, 'status', 'message') === 'MemoryStore shared not found');
  t.equal(at(waiting, 'status', 'phase'), 'Waiting');
  t.equal(await getObject(s(), 'deployment', ns, 'agent-early'), undefined);

  await applyObjects(s(), ns, [localStore('shared', 'mem')]);
  await waitForPhase(s(), 'memorystore', ns, 'shared', 'Ready');
  const running = await waitForPhase(s(), 'agent', ns, 'early', 'Ready');
  t.match(conditionOf(running, 'MemoryDegraded'), { status: 'False', reason: 'MemoryHealthy' });
  const before = await waitForObject(s(), 'deployment', ns, 'agent-early');

  // The store's ModelAPI goes: the store turns Pending, the Agent keeps serving, degraded.
  await kubectlOk(s(), ['delete', 'modelapi', 'mem', '-n', ns]);
  await waitForObject(s(), 'memorystore', ns, 'shared', (o) => at(o, 'status', 'phase') === 'Pending');
  const degraded = await waitForObject(s(), 'agent', ns, 'early', (o) => conditionOf(o, 'MemoryDegraded')?.status === 'True');
  t.match(conditionOf(degraded, 'MemoryDegraded'), { reason: 'MemoryStoreNotReady', message: 'MemoryStore shared is not ready' });
  t.match(degraded.status, { phase: 'Ready' }, 'still serving');
  await applyObjects(s(), ns, [anyModel('mem')]);
  const recovered = await waitForObject(s(), 'agent', ns, 'early', (o) => conditionOf(o, 'MemoryDegraded')?.status === 'False');
  t.match(conditionOf(recovered, 'MemoryDegraded'), { reason: 'MemoryHealthy', message: 'MemoryStore shared is ready' });
  const after = await waitForObject(s(), 'deployment', ns, 'agent-early');
  t.equal(at(after, 'metadata', 'generation'), at(before, 'metadata', 'generation'), 'the Agent\'s Deployment never changed: no rollout of its own');
  const events = await kubectlOk(s(), ['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=early', '-o', 'jsonpath={range .items[*]}{.reason}{"\\n"}{end}']);
  t.match(events, /MemoryDegraded/);
  t.match(events, /MemoryRecovered/);
});

/** Each refusal of docs/api.md, "MemoryStore" and "Agent remote memory": the object, and what kubectl prints. */
const REFUSALS: readonly { what: string; object: Json; stderr: string }[] = [
  {
    what: 'external mode without its block',
    object: kaos('MemoryStore', 'ext', { storage: { type: 'external' }, models: models('chat') }),
    stderr: 'The MemoryStore "ext" is invalid: spec.storage.external: Required value: storage.external is required when storage.type is external',
  },
  {
    what: 'two replicas in local mode',
    object: localStore('two', 'chat', { replicas: 2 }),
    stderr: 'The MemoryStore "two" is invalid: spec.replicas: Invalid value: 2: replicas must be 1 in local storage mode',
  },
  {
    what: 'compaction marks that cannot work',
    object: localStore('marks', 'chat', { shortTerm: { tokenBudget: 64 }, mediumTerm: { compactionTrigger: 32, compactionTarget: 48 } }),
    stderr: 'The MemoryStore "marks" is invalid: spec.mediumTerm: Invalid value: short-term compaction marks must satisfy 0 < compactionTarget < compactionTrigger <= tokenBudget (0 or absent marks derive from the token budget)',
  },
  {
    what: 'a ModelAPI that does not exist, a model the ModelAPI does not serve',
    object: kaos('MemoryStore', 'refs', { storage: { type: 'local' }, models: { summarization: { modelAPI: 'nope', model: 'x' }, embedding: { modelAPI: 'hosted', model: 'text-embedding-3-small' } } }),
    stderr: 'The MemoryStore "refs" is invalid: \n* spec.models.summarization.modelAPI: Not found: "nope"\n* spec.models.embedding.model: Not found: "text-embedding-3-small": not supported by ModelAPI "hosted" (supported: [smollm2:135m])',
  },
  {
    what: "type 'remote' without a store",
    object: boundAgent('a1', 'chat', { type: 'remote' }),
    stderr: "The Agent \"a1\" is invalid: spec.config.memory.memoryStore: Required value: type 'remote' requires memoryStore to be set",
  },
  {
    what: "type 'local' with a store",
    object: boundAgent('a2', 'chat', { type: 'local', memoryStore: 'narrow' }),
    stderr: "The Agent \"a2\" is invalid: spec.config.memory.memoryStore: Forbidden: type 'local' must not set memoryStore",
  },
  {
    what: 'tools without a store',
    object: boundAgent('a3', 'chat', { tools: 'all' }),
    stderr: 'The Agent "a3" is invalid: spec.config.memory.memoryStore: Required value: tools requires memoryStore to be set',
  },
  {
    what: "KAOS's earlier read-scope forms",
    object: boundAgent('a4', 'chat', { memoryStore: 'narrow', scope: 'session', readScopes: ['session'] }),
    stderr: 'The Agent "a4" is invalid: \n* spec.config.memory.scope: Forbidden: an earlier KAOS form of the read scope: use spec.config.memory.maxReadScope\n* spec.config.memory.readScopes: Forbidden: an earlier KAOS form of the read scope: use spec.config.memory.maxReadScope',
  },
  {
    what: 'a store that does not exist',
    object: boundAgent('a5', 'chat', { memoryStore: 'nope' }),
    stderr: 'The Agent "a5" is invalid: spec.config.memory.memoryStore: Not found: "nope"',
  },
  {
    what: "a read scope above the store's ceiling",
    object: boundAgent('a6', 'chat', { memoryStore: 'narrow', maxReadScope: 'agent' }),
    stderr: 'The Agent "a6" is invalid: spec.config.memory.maxReadScope: Invalid value: config.memory.maxReadScope "agent" exceeds MemoryStore "narrow" maxReadScope "session"',
  },
  {
    what: 'the user read scope on an Agent without a user identity (security and the user plane off)',
    object: boundAgent('a7', 'chat', { memoryStore: 'narrow', maxReadScope: 'user' }),
    stderr: 'The Agent "a7" is invalid: spec.config.memory.maxReadScope: Forbidden: config.memory.maxReadScope references user scope, but cluster security posture has no user identity',
  },
  {
    what: 'the original memory fields beside a store',
    object: boundAgent('a8', 'chat', { memoryStore: 'narrow', contextLimit: 6 }),
    stderr: 'The Agent "a8" is invalid: spec.config.memory.memoryStore: Forbidden: may not be set together with spec.config.memory.contextLimit',
  },
];

t.test('every refusal of the contract answers kubectl apply and --dry-run=server alike', async (t) => {
  const ns = 'memory-refusals';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [anyModel('chat'), kaos('ModelAPI', 'hosted', { mode: 'Hosted', hostedConfig: { model: 'smollm2:135m' } }), localStore('narrow', 'chat', { maxReadScope: 'session' })]);
  for (const { what, object, stderr } of REFUSALS) {
    for (const args of [['--dry-run=server'], []]) {
      t.strictSame(await applyJson(ns, [object], ...args), { code: 1, stdout: '', stderr: `${stderr}\n` }, `${what} ${args.join(' ')}`);
    }
  }
});

t.test('a store\'s user ceiling is admitted, with a warning while no user identity is enforced', async (t) => {
  const ns = 'memory-user-ceiling';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [anyModel('chat')]);
  for (const args of [['--dry-run=server'], []]) {
    const res = await applyJson(ns, [localStore('users', 'chat', { maxReadScope: 'user' })], ...args);
    t.equal(res.code, 0, `admitted ${args.join(' ')}`);
    t.equal(res.stderr, 'Warning: spec.maxReadScope: no Agent reads at "user" scope without a user identity (security and the user plane on)\n', 'the warning, as kubectl prints it');
  }
});

t.test('a claim grows when the store asks for more, and is refused when it asks for less', async (t) => {
  const ns = 'memory-grow';
  await createNamespace(s(), ns);
  const sized = (size: string): Json => localStore('grow', 'chat', { storage: { type: 'local', local: { persistentVolume: { size } } } });
  await applyObjects(s(), ns, [anyModel('chat'), sized('1Gi')]);
  await waitForPhase(s(), 'memorystore', ns, 'grow', 'Ready');
  await waitForObject(s(), 'persistentvolumeclaim', ns, 'memorystore-grow-data', (c) => at(c, 'status', 'phase') === 'Bound');
  await applyObjects(s(), ns, [sized('2Gi')]);
  const grown = await waitForObject(s(), 'persistentvolumeclaim', ns, 'memorystore-grow-data', (c) => at(c, 'spec', 'resources', 'requests', 'storage') === '2Gi');
  t.equal(at(grown, 'status', 'phase'), 'Bound', 'the same claim, still bound');
  for (const args of [['--dry-run=server'], []]) {
    t.strictSame(await applyJson(ns, [sized('1Gi')], ...args), {
      code: 1,
      stdout: '',
      stderr: 'The MemoryStore "grow" is invalid: spec.storage.local.persistentVolume.size: Forbidden: a PersistentVolumeClaim cannot shrink\n',
    }, `shrinking refused ${args.join(' ')}`);
  }
});

t.test('external mode: two replicas bring a PodDisruptionBudget, one takes it away; the DSN only by reference', async (t) => {
  const ns = 'memory-external';
  await createNamespace(s(), ns);
  const external = (replicas?: number): Json =>
    kaos('MemoryStore', 'pg', { storage: { type: 'external', external: { connectionSecretRef: { name: 'pg', key: 'dsn' } } }, models: models('chat'), ...(replicas === undefined ? {} : { replicas }) });
  await kubectlOk(s(), ['create', 'secret', 'generic', 'pg', '-n', ns, '--from-literal=dsn=postgresql://memory@pg.example:5432/memory']);
  await applyObjects(s(), ns, [anyModel('chat'), external()]);
  const store = await waitForPhase(s(), 'memorystore', ns, 'pg', 'Ready');
  t.equal(at(store, 'spec', 'replicas'), 2, "external mode's default");
  const pdb = await waitForObject(s(), 'poddisruptionbudget', ns, 'memorystore-pg');
  t.strictSame(childIdentity(pdb), expectedIdentity('MemoryStore', store, 'memorystore-pg'));
  t.strictSame(at(pdb, 'spec'), { minAvailable: 1, selector: { matchLabels: { app: 'memorystore', memorystore: 'pg' } } });
  const deployment = await waitForObject(s(), 'deployment', ns, 'memorystore-pg');
  t.equal(at(deployment, 'spec', 'replicas'), 2);
  t.strictSame((containerOf(deployment).env as Json[]).slice(0, 3), [
    { name: 'KAOS_MEMORY_STORAGE_TYPE', value: 'external' },
    { name: 'KAOS_MEMORY_EXTERNAL_DSN', valueFrom: { secretKeyRef: { name: 'pg', key: 'dsn' } } },
    { name: 'KAOS_MEMORY_EXTERNAL_DIMS', value: '1536' },
  ]);
  t.equal(await getObject(s(), 'persistentvolumeclaim', ns, 'memorystore-pg-data'), undefined, 'no claim in external mode');

  await applyObjects(s(), ns, [external(1)]);
  await waitForGone(s(), 'poddisruptionbudget', ns, 'memorystore-pg');
  await waitForObject(s(), 'deployment', ns, 'memorystore-pg', (d) => at(d, 'spec', 'replicas') === 1);
  await waitForPhase(s(), 'memorystore', ns, 'pg', 'Ready');
});

t.test('external → local: the Deployment turns Recreate (the defaulted rollingUpdate goes), the claim is made and bound', async (t) => {
  // The API server defaults a RollingUpdate Deployment's strategy.rollingUpdate, which nobody
  // owns; a Recreate strategy may not carry it, so an apply of `type: Recreate` alone is refused.
  const ns = 'memory-to-local';
  await createNamespace(s(), ns);
  await kubectlOk(s(), ['create', 'secret', 'generic', 'pg', '-n', ns, '--from-literal=dsn=postgresql://memory@pg.example:5432/memory']);
  await applyObjects(s(), ns, [anyModel('chat'), kaos('MemoryStore', 'move', { storage: { type: 'external', external: { connectionSecretRef: { name: 'pg', key: 'dsn' } } }, models: models('chat') })]);
  await waitForPhase(s(), 'memorystore', ns, 'move', 'Ready');
  const rolling = await waitForObject(s(), 'deployment', ns, 'memorystore-move');
  t.equal(at(rolling, 'spec', 'strategy', 'type'), 'RollingUpdate', 'external mode: the default strategy');
  t.ok(at(rolling, 'spec', 'strategy', 'rollingUpdate'), 'with the rollingUpdate the API server defaulted');

  await applyObjects(s(), ns, [localStore('move', 'chat', { replicas: 1 })]);
  const recreate = await waitForObject(s(), 'deployment', ns, 'memorystore-move', (d) => at(d, 'spec', 'strategy', 'type') === 'Recreate', 'strategy Recreate');
  t.strictSame(at(recreate, 'spec', 'strategy'), { type: 'Recreate' }, 'Recreate, and nothing of RollingUpdate left');
  const claim = await waitForObject(s(), 'persistentvolumeclaim', ns, 'memorystore-move-data', (c) => at(c, 'status', 'phase') === 'Bound', 'the claim bound');
  t.ok(claim, 'the claim is bound');
  const store = await waitForPhase(s(), 'memorystore', ns, 'move', 'Ready');
  t.equal(at(store, 'status', 'observedGeneration'), at(store, 'metadata', 'generation'), 'the local generation reconciled');
});

t.test('a ModelAPI that stops serving a store\'s models, then is deleted, warns naming the store beside its Agents; the store reports it', async (t) => {
  const ns = 'memory-stranded';
  await createNamespace(s(), ns);
  const serving = (...served: string[]): Json => kaos('ModelAPI', 'chat', { mode: 'Proxy', proxyConfig: { models: served, apiBase: 'http://litellm.example:4000' } });
  await applyObjects(s(), ns, [serving('gpt-4o-mini', 'text-embedding-3-small'), localStore('notes', 'chat'), kaos('Agent', 'helper', { modelAPI: 'chat', model: 'gpt-4o-mini' })]);
  await waitForPhase(s(), 'memorystore', ns, 'notes', 'Ready');
  // The webhook names what the operator's cache holds: the Agent is there once it has a status.
  await waitForObject(s(), 'agent', ns, 'helper', (o) => at(o, 'status', 'phase') !== undefined);

  const dropped = await applyJson(ns, [serving('gpt-4o-mini')]);
  t.equal(dropped.code, 0);
  t.equal(dropped.stdout, 'modelapi.kaos.tools/chat configured\n');
  t.equal(dropped.stderr, 'Warning: ModelAPI "chat" no longer serves a model of MemoryStores: notes\n', 'the store whose embedding model it dropped; not the Agent, whose model it still serves');
  const failed = await waitForPhase(s(), 'memorystore', ns, 'notes', 'Failed');
  t.equal(at(failed, 'status', 'message'), 'embedding model "text-embedding-3-small" not supported by ModelAPI "chat" (supported: [gpt-4o-mini])', "the Agent's wording, with the role");
  t.match(conditionOf(failed, 'Stalled'), { status: 'True', reason: 'ModelNotSupported' }, 'only a change fixes it');
  t.ok(await getObject(s(), 'deployment', ns, 'memorystore-notes'), 'its Deployment is left running');
  const events = await eventually('the store\'s ModelNotSupported Event', async () => {
    const listed = await kubectlOk(s(), ['get', 'events', '-n', ns, '--field-selector', 'involvedObject.kind=MemoryStore,reason=ModelNotSupported', '-o', 'jsonpath={range .items[*]}{.type} {.message}{"\\n"}{end}']);
    return listed === '' ? undefined : listed;
  }, { timeoutMs: 30_000, intervalMs: 500 });
  t.equal(events, 'Warning embedding model "text-embedding-3-small" not supported by ModelAPI "chat" (supported: [gpt-4o-mini])\n');

  const none = await applyJson(ns, [serving('claude')]);
  t.equal(none.code, 0);
  t.equal(none.stderr, [
    'Warning: ModelAPI "chat" no longer serves the model of Agents: helper',
    'Warning: ModelAPI "chat" no longer serves a model of MemoryStores: notes',
    '',
  ].join('\n'), 'both kinds, a warning each: the store again, for its summarization model');
  await waitForObject(s(), 'memorystore', ns, 'notes', (o) => at(o, 'status', 'message') === 'summarization model "gpt-4o-mini" not supported by ModelAPI "chat" (supported: [claude])');

  await deletedWarning(t, 'modelapi', ns, 'chat', [
    'ModelAPI "chat" is still referenced by Agents: helper',
    'ModelAPI "chat" is still referenced by MemoryStores: notes',
  ]);
  const waiting = await waitForObject(s(), 'memorystore', ns, 'notes', (o) => at(o, 'status', 'message') === 'summarization ModelAPI "chat" not found');
  t.match(waiting.status, { phase: 'Pending', ready: false }, 'then it waits for its ModelAPI, as at creation');

  // Nothing of this namespace is left to the idle window below.
  await kubectlOk(s(), ['delete', 'agent,memorystore', '--all', '-n', ns]);
  await waitForGone(s(), 'memorystore', ns, 'notes');
});

t.test('deleting a store that Agents still bind warns, naming them', async (t) => {
  const ns = 'memory-delete';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [anyModel('chat'), localStore('shared', 'chat')]);
  await waitForPhase(s(), 'memorystore', ns, 'shared', 'Ready');
  await applyObjects(s(), ns, [boundAgent('b', 'chat', { memoryStore: 'shared' }), boundAgent('a', 'chat', { memoryStore: 'shared' })]);
  await deletedWarning(t, 'memorystore', ns, 'shared', [
    'MemoryStore "shared" is still bound by Agents: a, b',
    'MemoryStore "shared": its PersistentVolumeClaim, and the memories on it, are deleted with it',
  ]);
  await waitForGone(s(), 'deployment', ns, 'memorystore-shared');
});

// docs/api.md, "Agent replicas, kubectl scale and autoscaling": written out from the contract.
const IN_PROCESS = 'an Agent with in-process memory must run one replica (each replica would keep its own sessions): bind a MemoryStore (config.memory.memoryStore) or disable memory';
const scaledAgent = (name: string, extra: Json): Json => kaos('Agent', name, { modelAPI: 'chat', model: 'gpt-4o-mini', config: { memory: { memoryStore: 'mem' } }, ...extra });
/** The names of the running pods of an Agent (not being deleted). */
const agentPods = async (ns: string, name: string): Promise<string[]> => {
  const list = JSON.parse(await kubectlOk(s(), ['get', 'pods', '-n', ns, '-l', `agent=${name}`, '-o', 'json'])) as { items: Json[] };
  return list.items.filter((p) => at(p, 'metadata', 'deletionTimestamp') === undefined && at(p, 'status', 'phase') === 'Running').map((p) => String(at(p, 'metadata', 'name')));
};

t.test('an Agent with a MemoryStore and replicas 3 runs three pods and its PDB; kubectl scale reaches the Deployment and status; a re-apply keeps the declared count', async (t) => {
  const ns = 'memory-scale';
  await createNamespace(s(), ns);
  await applyObjects(s(), ns, [anyModel('chat'), localStore('mem', 'chat'), scaledAgent('helper', { replicas: 3 })]);
  const agent = await waitForPhase(s(), 'agent', ns, 'helper', 'Ready');
  await eventually('three running pods', async () => ((await agentPods(ns, 'helper')).length === 3 ? true : undefined), { timeoutMs: 60_000, intervalMs: 500 });
  const pdb = await waitForObject(s(), 'poddisruptionbudget', ns, 'agent-helper');
  t.strictSame(childIdentity(pdb), expectedIdentity('Agent', agent, 'agent-helper'));
  t.strictSame(at(pdb, 'spec'), { minAvailable: 1, selector: { matchLabels: { app: 'agent', agent: 'helper' } } });
  const ready = await waitForObject(s(), 'agent', ns, 'helper', (a) => at(a, 'status', 'replicas') === 3 && at(a, 'status', 'message') === 'Deployment ready replicas: 3/3');
  t.equal(at(ready, 'status', 'selector'), 'agent=helper,app=agent');
  t.match(await kubectlOk(s(), ['get', 'agent', 'helper', '-n', ns, '-o', 'wide']), /^NAME\s+MODELAPI\s+MODEL\s+REPLICAS\s+READY\s+PHASE\s+AGE\nhelper\s+chat\s+gpt-4o-mini\s+3\s+true\s+Ready\s/, 'the Replicas column with -o wide');
  t.notMatch(await kubectlOk(s(), ['get', 'agent', 'helper', '-n', ns]), /REPLICAS/, 'not without it');

  t.equal(await kubectlOk(s(), ['scale', 'agent/helper', '-n', ns, '--replicas=1']), 'agent.kaos.tools/helper scaled\n');
  await waitForObject(s(), 'deployment', ns, 'agent-helper', (d) => at(d, 'spec', 'replicas') === 1);
  await waitForGone(s(), 'poddisruptionbudget', ns, 'agent-helper');
  await waitForObject(s(), 'agent', ns, 'helper', (a) => at(a, 'status', 'replicas') === 1 && at(a, 'status', 'phase') === 'Ready');
  t.match(JSON.parse(await kubectlOk(s(), ['get', '--raw', `/apis/kaos.tools/v1alpha1/namespaces/${ns}/agents/helper/scale`])), {
    kind: 'Scale',
    spec: { replicas: 1 },
    status: { replicas: 1, selector: 'agent=helper,app=agent' },
  }, 'the scale subresource, as an HPA or KEDA reads it');

  // GitOps: the repository says 3; re-applying it takes the Agent back to 3, and the count then stays.
  await applyObjects(s(), ns, [scaledAgent('helper', { replicas: 3 })]);
  await waitForObject(s(), 'deployment', ns, 'agent-helper', (d) => at(d, 'spec', 'replicas') === 3);
  await waitForObject(s(), 'poddisruptionbudget', ns, 'agent-helper');
  const settled = await waitForObject(s(), 'agent', ns, 'helper', (a) => at(a, 'status', 'replicas') === 3 && at(a, 'status', 'message') === 'Deployment ready replicas: 3/3');
  const deployment = await getObject(s(), 'deployment', ns, 'agent-helper');
  await sleep(3000);
  const later = await getObject(s(), 'deployment', ns, 'agent-helper');
  t.equal(at(later, 'metadata', 'generation'), at(deployment, 'metadata', 'generation'), 'no fight: the Deployment is not written again');
  t.equal(at(later, 'spec', 'replicas'), 3);
  t.equal(await applyJson(ns, [scaledAgent('helper', { replicas: 3 })]).then((r) => r.stdout), 'agent.kaos.tools/helper unchanged\n', 'the same manifest again: unchanged');
  t.equal(at(await getObject(s(), 'agent', ns, 'helper'), 'metadata', 'resourceVersion'), at(settled, 'metadata', 'resourceVersion'), 'nor the Agent');
});

t.test('in-process memory and more than one replica: refused at kubectl apply and at kubectl scale, in the contract\'s words', async (t) => {
  const ns = 'memory-scale';
  const solo = kaos('Agent', 'solo', { modelAPI: 'chat', model: 'gpt-4o-mini', replicas: 2 });
  for (const args of [['--dry-run=server'], []]) {
    t.strictSame(await applyJson(ns, [solo], ...args), { code: 1, stdout: '', stderr: `The Agent "solo" is invalid: spec.replicas: Invalid value: 2: ${IN_PROCESS}\n` }, `kubectl apply ${args.join(' ')}`);
  }
  await applyObjects(s(), ns, [kaos('Agent', 'solo', { modelAPI: 'chat', model: 'gpt-4o-mini', replicas: 1 })]);
  await waitForPhase(s(), 'agent', ns, 'solo', 'Ready');
  const scaled = await s().plane.kubectl(['scale', 'agent/solo', '-n', ns, '--replicas=2']);
  t.equal(scaled.code, 1, 'kubectl scale refused');
  t.equal(scaled.stderr, `The Agent "solo" is invalid: spec.replicas: Invalid value: 2: ${IN_PROCESS}\n`, 'as kubectl prints it');
  t.equal(at(await getObject(s(), 'agent', ns, 'solo'), 'spec', 'replicas'), 1, 'nothing changed');
});

t.test('autoscaling: an HPA created and owned, accepted by kube-controller-manager\'s HPA controller, refused beside replicas, deleted with autoscaling', async (t) => {
  const ns = 'memory-scale';
  const requests = { container: { resources: { requests: { cpu: '100m', memory: '128Mi' } } } };
  const autoscaled = scaledAgent('elastic', { ...requests, autoscaling: { minReplicas: 2, maxReplicas: 5, targetMemoryUtilizationPercentage: 70 } });
  const res = await applyJson(ns, [autoscaled]);
  t.equal(res.code, 0, res.stderr);
  t.equal(res.stderr, '', 'no warning: both targets have requests');
  const agent = await waitForPhase(s(), 'agent', ns, 'elastic', 'Ready');
  const hpa = await waitForObject(s(), 'horizontalpodautoscaler', ns, 'agent-elastic');
  t.strictSame(childIdentity(hpa), expectedIdentity('Agent', agent, 'agent-elastic'));
  t.strictSame(at(hpa, 'spec'), {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'agent-elastic' },
    minReplicas: 2,
    maxReplicas: 5,
    metrics: [{ type: 'Resource', resource: { name: 'memory', target: { type: 'Utilization', averageUtilization: 70 } } }],
  });
  t.equal(at(await waitForObject(s(), 'deployment', ns, 'agent-elastic'), 'spec', 'replicas'), 2, 'created at minReplicas');
  await waitForObject(s(), 'poddisruptionbudget', ns, 'agent-elastic');
  // The real HPA controller reads its target through the Deployment's scale subresource.
  const accepted = await eventually('the HPA controller accepts its target', async () => {
    const live = await getObject(s(), 'horizontalpodautoscaler', ns, 'agent-elastic');
    const able = ((at(live ?? {}, 'status', 'conditions') as Json[] | undefined) ?? []).find((c) => c.type === 'AbleToScale');
    return able?.status === 'True' ? able : undefined;
  }, { timeoutMs: 90_000, intervalMs: 1000 });
  t.equal(accepted.reason, 'SucceededGetScale');

  const scaled = await s().plane.kubectl(['scale', 'agent/elastic', '-n', ns, '--replicas=3']);
  t.equal(scaled.code, 1, 'kubectl scale on an autoscaled Agent: refused');
  t.equal(scaled.stderr, 'The Agent "elastic" is invalid: spec.autoscaling: Forbidden: may not be set together with spec.replicas\n', 'as kubectl prints it');
  const both = await applyJson(ns, [scaledAgent('elastic', { ...requests, replicas: 2, autoscaling: { maxReplicas: 5 } })]);
  t.strictSame(both, { code: 1, stdout: '', stderr: 'The Agent "elastic" is invalid: spec.autoscaling: Forbidden: may not be set together with spec.replicas\n' });

  await applyObjects(s(), ns, [scaledAgent('elastic', requests)]);
  await waitForGone(s(), 'horizontalpodautoscaler', ns, 'agent-elastic');
  await waitForGone(s(), 'poddisruptionbudget', ns, 'agent-elastic');
  t.equal(at(await getObject(s(), 'deployment', ns, 'agent-elastic'), 'spec', 'replicas'), 2, 'the Deployment keeps its current count');
  await waitForPhase(s(), 'agent', ns, 'elastic', 'Ready');
});

t.test('replicas 0: ScaledToZero, Service kept; scaled up it serves again', async (t) => {
  const ns = 'memory-scale';
  await kubectlOk(s(), ['scale', 'agent/solo', '-n', ns, '--replicas=0']);
  const zero = await waitForObject(s(), 'agent', ns, 'solo', (a) => at(a, 'status', 'phase') === 'Pending' && at(a, 'status', 'replicas') === 0);
  t.match(zero.status, { ready: false, message: 'Agent is scaled to zero replicas', endpoint: svc('agent', 'solo', ns, 8000) });
  t.match(conditionOf(zero, 'Ready'), { status: 'False', reason: 'ScaledToZero' });
  t.match(conditionOf(zero, 'Reconciling'), { status: 'False' }, 'settled, not in progress');
  t.ok(await getObject(s(), 'service', ns, 'agent-solo'), 'the Service is kept');
  await kubectlOk(s(), ['scale', 'agent/solo', '-n', ns, '--replicas=1']);
  await waitForPhase(s(), 'agent', ns, 'solo', 'Ready');
});

t.test('idle means idle with MemoryStores: no write from the operator for a whole window', async (t) => {
  const auditLog = s().plane.logs.audit;
  if (auditLog === undefined) throw new Error('the control plane was started without its audit log');
  const namespaces = ['kaos-memory', 'memory-waits', 'memory-degrade', 'memory-grow', 'memory-external', 'memory-scale'];
  // Settled first: every object of the tests above Ready, nothing left in flight.
  await eventually('every MemoryStore and Agent Ready', async () => {
    for (const ns of namespaces) {
      for (const resource of ['memorystores', 'agents']) {
        const list = JSON.parse(await kubectlOk(s(), ['get', resource, '-n', ns, '-o', 'json'])) as { items: Json[] };
        if (list.items.some((o) => at(o, 'status', 'phase') !== 'Ready')) return undefined;
      }
    }
    return true;
  }, { timeoutMs: 60_000, intervalMs: 500, retryErrors: true });
  await sleep(3000);
  const before = await resourceVersions(s().client, namespaces);
  t.ok([...before.keys()].some((k) => k.startsWith('PersistentVolumeClaim/')), 'claims are part of the snapshot');
  const mark = auditMark(auditLog);
  t.comment(`idle window: ${IDLE_SECONDS} s`);
  await sleep(IDLE_SECONDS * 1000);
  const writes = writesBy(auditSince(auditLog, mark), OPERATOR_USER).filter((e) => e.objectRef?.resource !== 'leases');
  t.same(writes.map(describeRequest), [], 'no write request from the operator');
  t.same(changedKeys(before, await resourceVersions(s().client, namespaces)), [], 'no resourceVersion changed');
});
