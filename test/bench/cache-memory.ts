// npm run bench:cache-memory — what each cached kind costs per object, as the API server sends it
// and as the cache keeps it (src/kube/slim.ts), measured as the heap growth of holding N frozen
// copies (the reflector freezes what it stores). Synthetic objects, shaped like the bulk-apply
// scenario's (test/bench/bulk-apply.ts): an Agent with its status, its Deployment and Service
// rendered by src/render with the server's metadata, managedFields built from the applied fields
// (structured-merge-diff's fieldsV1) and a rolled-out Deployment status; each KAOS object also
// with the last-applied-configuration annotation `kubectl apply` adds. Never part of pass/fail.
//
// Env: N (2000 copies per kind).
import { isRecord } from '../../src/api/json.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import { loadConfig } from '../../src/config/config.ts';
import { nextStatus, deploymentProgress } from '../../src/controller/status.ts';
import { FIELD_MANAGER } from '../../src/cluster/child-apply.ts';
import { LAST_APPLIED_ANNOTATION, slimChild, slimDeployment, slimObject } from '../../src/kube/slim.ts';
import { renderAgent, renderMCPServer, renderModelAPI, type AgentInput, type MCPServerInput, type ModelAPIInput } from '../../src/render/index.ts';

const N = Number(process.env.N ?? 2000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (npm run bench:cache-memory does)');
const NS = 'bulk';
const config = loadConfig({});
const NAMED_LISTS = new Set(['containers', 'initContainers', 'env', 'volumes', 'volumeMounts', 'ports', 'conditions', 'ownerReferences']);

/** structured-merge-diff's fieldsV1 of the fields `value` sets (named list elements by key). */
function fieldsV1(value: unknown, field = ''): Record<string, unknown> {
  if (Array.isArray(value)) {
    const out: Record<string, unknown> = {};
    value.forEach((e, i) => {
      if (!isRecord(e)) { out[`v:${JSON.stringify(e)}`] = {}; return; }
      const key = NAMED_LISTS.has(field) ? (field === 'ports' ? { containerPort: e.containerPort ?? e.port, protocol: e.protocol ?? 'TCP' } : field === 'volumeMounts' ? { mountPath: e.mountPath } : field === 'conditions' ? { type: e.type } : field === 'ownerReferences' ? { uid: e.uid } : { name: e.name }) : undefined;
      out[key === undefined ? `i:${i}` : `k:${JSON.stringify(key)}`] = { '.': {}, ...fieldsV1(e) };
    });
    return out;
  }
  if (!isRecord(value)) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const inner = fieldsV1(v, k);
    out[`f:${k}`] = isRecord(v) && Object.keys(inner).length > 0 ? { '.': {}, ...inner } : inner;
  }
  return out;
}

let serial = 0;
function served(object: KubeObject, managed: { manager: string; operation: string; subresource?: string; fields: unknown }[], lastApplied: boolean): KubeObject {
  serial++;
  const m = object.metadata ?? {};
  return {
    ...object,
    metadata: {
      ...m,
      uid: `0f8c7e2a-5b1d-4c3e-9a7f-${String(serial).padStart(12, '0')}`,
      resourceVersion: String(100000 + serial),
      generation: 1,
      creationTimestamp: '2026-11-25T03:00:00Z',
      ...(lastApplied ? { annotations: { ...(m.annotations ?? {}), [LAST_APPLIED_ANNOTATION]: JSON.stringify({ apiVersion: object.apiVersion, kind: object.kind, metadata: { name: m.name, namespace: m.namespace }, spec: object.spec }) } } : {}),
      managedFields: managed.map((e) => ({ manager: e.manager, operation: e.operation, apiVersion: object.apiVersion, time: '2026-11-25T03:00:01Z', fieldsType: 'FieldsV1', fieldsV1: e.fields, ...(e.subresource === undefined ? {} : { subresource: e.subresource }) })),
    },
  };
}

function agentObjects(i: number): { agent: KubeObject; deployment: KubeObject; service: KubeObject } {
  const spec = {
    modelAPI: `model-${i % 10}`,
    mcpServers: [`tools-${(2 * i) % 20}`, `tools-${(2 * i + 1) % 20}`],
    agentNetwork: { expose: true, access: [`agent-${i + 1}`, `agent-${i + 2}`] },
    waitForDependencies: true,
    config: { description: `bulk agent ${i}`, instructions: 'You answer briefly.', reasoningLoopMaxSteps: 5, env: [{ name: 'MODEL_NAME', value: 'ollama/smollm2:135m' }] },
    container: { image: 'axsauze/kaos-agent:latest' },
  };
  const base = { apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name: `agent-${i}`, namespace: NS, uid: `u-${i}`, annotations: { 'kaos.tools/defaulted': 'spec.agentNetwork.expose,spec.config.env,spec.container.image' } }, spec };
  const deps = {
    modelAPI: { endpoint: `http://modelapi-model-${i % 10}.${NS}.svc.cluster.local:8000`, model: 'ollama/smollm2:135m' },
    mcpServers: spec.mcpServers.map((name) => ({ name, endpoint: `http://mcpserver-${name}.${NS}.svc.cluster.local:8000` })),
    peers: spec.agentNetwork.access.map((name) => ({ name, endpoint: `http://agent-${name}.${NS}.svc.cluster.local:8000` })),
  };
  const rendered = renderAgent(base as unknown as AgentInput, deps, config);
  const deploymentStatus = {
    observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1,
    conditions: [
      { type: 'Available', status: 'True', lastUpdateTime: '2026-11-25T03:00:02Z', lastTransitionTime: '2026-11-25T03:00:02Z', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' },
      { type: 'Progressing', status: 'True', lastUpdateTime: '2026-11-25T03:00:02Z', lastTransitionTime: '2026-11-25T03:00:01Z', reason: 'NewReplicaSetAvailable', message: `ReplicaSet "agent-agent-${i}-5d8f7c9b6d" has successfully progressed.` },
    ],
  };
  const deployment = served({ ...rendered.deployment, status: deploymentStatus } as unknown as KubeObject, [
    { manager: FIELD_MANAGER, operation: 'Apply', fields: fieldsV1({ metadata: { labels: rendered.deployment.metadata.labels, ownerReferences: rendered.deployment.metadata.ownerReferences }, spec: rendered.deployment.spec }) },
    { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status', fields: fieldsV1({ metadata: { annotations: { 'deployment.kubernetes.io/revision': '1' } }, status: deploymentStatus }) },
  ], false);
  const service = served({ ...rendered.service, spec: { ...rendered.service?.spec, clusterIP: '10.96.12.34', clusterIPs: ['10.96.12.34'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster', sessionAffinity: 'None' }, status: { loadBalancer: {} } } as unknown as KubeObject, [
    { manager: FIELD_MANAGER, operation: 'Apply', fields: fieldsV1({ metadata: { labels: rendered.service?.metadata.labels, ownerReferences: rendered.service?.metadata.ownerReferences }, spec: rendered.service?.spec }) },
  ], false);
  const status = nextStatus(undefined, 1, { ...deploymentProgress(deployment), endpoint: rendered.endpoint ?? '', linkedResources: { modelapi: spec.modelAPI } }, new Date('2026-11-25T03:00:03Z'));
  const agent = served({ ...base, status } as KubeObject, [
    { manager: 'kubectl-client-side-apply', operation: 'Update', fields: fieldsV1({ metadata: { annotations: base.metadata.annotations }, spec }) },
    { manager: FIELD_MANAGER, operation: 'Update', subresource: 'status', fields: fieldsV1({ status }) },
  ], true);
  return { agent, deployment, service };
}

function dependencyObjects(i: number): { modelAPI: KubeObject; mcpServer: KubeObject } {
  const m = { apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: `model-${i}`, namespace: NS, uid: `m-${i}` }, spec: { mode: 'Proxy', proxyConfig: { apiBase: 'http://ollama.example:11434', model: 'ollama/smollm2:135m' }, container: { image: 'ghcr.io/berriai/litellm:main-latest' } } };
  const t = { apiVersion: 'kaos.tools/v1alpha1', kind: 'MCPServer', metadata: { name: `tools-${i}`, namespace: NS, uid: `t-${i}` }, spec: { type: 'python-runtime', config: { tools: { fromString: `def echo_${i}(text: str) -> str:\n    return text\n` } }, container: { image: 'axsauze/kaos-agent:latest' } } };
  const mr = renderModelAPI(m as unknown as ModelAPIInput, {}, config);
  const tr = renderMCPServer(t as unknown as MCPServerInput, config, {});
  const statusOf = (endpoint: string | undefined) => nextStatus(undefined, 1, { phase: 'Ready', reason: 'DeploymentReady', message: 'Deployment ready replicas: 1/1', deployment: { replicas: 1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1 }, endpoint: endpoint ?? '' }, new Date('2026-11-25T03:00:03Z'));
  const wrap = (o: KubeObject, endpoint: string | undefined): KubeObject => {
    const status = statusOf(endpoint);
    return served({ ...o, status }, [
      { manager: 'kubectl-client-side-apply', operation: 'Update', fields: fieldsV1({ spec: o.spec }) },
      { manager: FIELD_MANAGER, operation: 'Update', subresource: 'status', fields: fieldsV1({ status }) },
    ], true);
  };
  return { modelAPI: wrap(m, mr.endpoint), mcpServer: wrap(t, tr.endpoint) };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Heap bytes per object of holding `n` frozen objects made by `make` (JSON round trip: as parsed from the wire). */
function bytesPerObject(n: number, make: (i: number) => KubeObject, transform: (o: KubeObject) => KubeObject): { bytes: number; json: number } {
  const wire = Array.from({ length: n }, (_, i) => JSON.stringify(make(i)));
  const json = wire.reduce((a, w) => a + JSON.stringify(transform(JSON.parse(w) as KubeObject)).length, 0) / n;
  gc?.(); gc?.();
  const before = process.memoryUsage().heapUsed;
  const held: KubeObject[] = [];
  for (const w of wire) held.push(deepFreeze(transform(JSON.parse(w) as KubeObject)));
  gc?.(); gc?.();
  const after = process.memoryUsage().heapUsed;
  if (held.length !== n) throw new Error('unreachable');
  return { bytes: (after - before) / n, json };
}

const identity = (o: KubeObject): KubeObject => o;
const kinds: { kind: string; make: (i: number) => KubeObject; slim: (o: KubeObject) => KubeObject; count: string }[] = [
  { kind: 'Agent', make: (i) => agentObjects(i).agent, slim: (o) => slimObject(o), count: 'one per Agent' },
  { kind: 'Deployment (an Agent\'s)', make: (i) => agentObjects(i).deployment, slim: (o) => slimDeployment(o, FIELD_MANAGER), count: 'one per object' },
  { kind: 'Service (an Agent\'s)', make: (i) => agentObjects(i).service, slim: (o) => slimChild(o, FIELD_MANAGER), count: 'one per exposed object' },
  { kind: 'ModelAPI', make: (i) => dependencyObjects(i).modelAPI, slim: (o) => slimObject(o), count: '' },
  { kind: 'MCPServer', make: (i) => dependencyObjects(i).mcpServer, slim: (o) => slimObject(o), count: '' },
];

const rows: string[][] = [['kind', 'as sent (heap B)', 'slim (heap B)', 'saved', 'as sent (JSON B)', 'slim (JSON B)']];
let perAgentBefore = 0;
let perAgentAfter = 0;
for (const k of kinds) {
  const full = bytesPerObject(N, k.make, identity);
  const slim = bytesPerObject(N, k.make, k.slim);
  if (k.kind.startsWith('Agent') || k.kind.includes("an Agent's")) { perAgentBefore += full.bytes; perAgentAfter += slim.bytes; }
  rows.push([k.kind, full.bytes.toFixed(0), slim.bytes.toFixed(0), `${(100 * (1 - slim.bytes / full.bytes)).toFixed(0)} %`, full.json.toFixed(0), slim.json.toFixed(0)]);
}
const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd()}\n`);
process.stdout.write(`\nper Agent (the Agent, its Deployment and Service): ${(perAgentBefore / 1024).toFixed(1)} KiB as sent → ${(perAgentAfter / 1024).toFixed(1)} KiB slim; ` +
  `at 1,000 Agents ${(perAgentBefore * 1000 / 2 ** 20).toFixed(1)} → ${(perAgentAfter * 1000 / 2 ** 20).toFixed(1)} MiB of cache (N=${N} copies per kind; Agents carry last-applied-configuration as after kubectl apply)\n`);
