// The kind table is the one place a child kind or a dependency is stated: adding one entry makes
// the reflectors, the RBAC rules, the apply types, the prune list and the triggers follow.
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import type { KubeObject } from '../../../src/api/meta.ts';
import { DependencyIndex } from '../../../src/cluster/dependency-index.ts';
import {
  KIND_TABLE,
  appliesReplicas,
  bindingsTo,
  childTypes,
  dependenciesOf,
  configMapMetadata,
  dependencyNames,
  inApplyOrder,
  possibleChildren,
  type ChildKind,
  type DependencyTypeKind,
  type KindTable,
} from '../../../src/cluster/kind-table.ts';
import { operatorRules, type PolicyRule } from '../../../src/cluster/rbac.ts';
import { registerControllerWatches } from '../../../src/controller/watches.ts';
import { CONFIG_MAP, type ResourceType } from '../../../src/kube/paths.ts';
import { Reflector } from '../../../src/kube/reflector.ts';
import { ReflectorGroup } from '../../../src/kube/reflector-group.ts';
import type { RegisterOptions } from '../../../src/cluster/cache.ts';

const VPA: ResourceType = { group: 'autoscaling.k8s.io', version: 'v1', kind: 'VerticalPodAutoscaler', plural: 'verticalpodautoscalers', namespaced: true };

/** KIND_TABLE plus one child kind (Agents own a VerticalPodAutoscaler) and one dependency (a ConfigMap an MCPServer names). */
const extended: KindTable<ChildKind | 'VerticalPodAutoscaler', DependencyTypeKind | 'ConfigMap'> = {
  owned: { ...KIND_TABLE.owned, VerticalPodAutoscaler: { type: VPA } },
  dependencyTypes: { ...KIND_TABLE.dependencyTypes, ConfigMap: { type: CONFIG_MAP } },
  kinds: {
    ...KIND_TABLE.kinds,
    Agent: { ...KIND_TABLE.kinds.Agent, children: [...KIND_TABLE.kinds.Agent.children, { kind: 'VerticalPodAutoscaler', name: (agent) => `agent-${agent}` }] },
    MCPServer: {
      ...KIND_TABLE.kinds.MCPServer,
      dependsOn: {
        ...KIND_TABLE.kinds.MCPServer.dependsOn,
        registry: { kind: 'ConfigMap', names: (o) => (typeof (o.spec as { registry?: unknown } | undefined)?.registry === 'string' ? [(o.spec as { registry: string }).registry] : []) },
      },
    },
  },
};

/** A cache that records what is registered on it (nothing is started). */
function recordingCache() {
  const registered: { type: ResourceType; options: RegisterOptions }[] = [];
  const client = { list: async () => ({ items: [], metadata: {} }), watch: async () => ({}) } as never;
  return {
    registered,
    registerGroup(type: ResourceType, options: RegisterOptions) {
      registered.push({ type, options });
      return new ReflectorGroup(type, [new Reflector({ client, type })]);
    },
  };
}

const grants = (rules: readonly PolicyRule[], group: string, resource: string, verb: string): boolean =>
  rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));

t.test('the table as shipped: the children and dependencies the reconcilers had', async (t) => {
  // The route's NetworkPolicy and SecurityPolicy are named as the route (docs/api.md, "Per-route SecurityPolicy and NetworkPolicy").
  t.same(possibleChildren('ModelAPI', 'm', KIND_TABLE), [
    { kind: 'ConfigMap', name: 'litellm-config-m' },
    { kind: 'NetworkPolicy', name: 'modelapi-m' },
    { kind: 'Deployment', name: 'modelapi-m' },
    { kind: 'Service', name: 'modelapi-m' },
    { kind: 'SecurityPolicy', name: 'modelapi-m' },
    { kind: 'HTTPRoute', name: 'modelapi-m' },
  ]);
  t.same(possibleChildren('MCPServer', 'x', KIND_TABLE), [
    { kind: 'NetworkPolicy', name: 'mcp-x' },
    { kind: 'Deployment', name: 'mcpserver-x' },
    { kind: 'Service', name: 'mcpserver-x' },
    { kind: 'SecurityPolicy', name: 'mcp-x' },
    { kind: 'HTTPRoute', name: 'mcp-x' },
  ]);
  t.same(possibleChildren('MemoryStore', 's', KIND_TABLE), [
    { kind: 'PersistentVolumeClaim', name: 'memorystore-s-data' },
    { kind: 'NetworkPolicy', name: 'memorystore-s' },
    { kind: 'Deployment', name: 'memorystore-s' },
    { kind: 'Service', name: 'memorystore-s' },
    { kind: 'SecurityPolicy', name: 'memorystore-s' },
    { kind: 'HTTPRoute', name: 'memorystore-s' },
    { kind: 'PodDisruptionBudget', name: 'memorystore-s' },
  ]);
  t.same(possibleChildren('AccessGrant', 'g', KIND_TABLE), [], 'an AccessGrant owns nothing');
  t.same(possibleChildren('Agent', 'a', KIND_TABLE), [
    { kind: 'ServiceAccount', name: 'kaos-agent-a' },
    { kind: 'NetworkPolicy', name: 'agent-a' },
    { kind: 'Deployment', name: 'agent-a' },
    { kind: 'Service', name: 'agent-a' },
    { kind: 'SecurityPolicy', name: 'agent-a' },
    { kind: 'HTTPRoute', name: 'agent-a' },
    // docs/api.md, "Agent replicas": the HPA and the PDB `agent-<name>`, after the Deployment.
    { kind: 'HorizontalPodAutoscaler', name: 'agent-a' },
    { kind: 'PodDisruptionBudget', name: 'agent-a' },
  ], 'an Agent\'s ServiceAccount first: its pods name it');
  t.same(Object.keys(childTypes(KIND_TABLE)), ['Deployment', 'Service', 'ConfigMap', 'HTTPRoute', 'PersistentVolumeClaim', 'PodDisruptionBudget', 'HorizontalPodAutoscaler', 'ServiceAccount', 'NetworkPolicy', 'SecurityPolicy']);
  for (const verb of ['get', 'create', 'patch', 'delete', 'list', 'watch']) {
    t.ok(grants(operatorRules(KIND_TABLE), 'autoscaling', 'horizontalpodautoscalers', verb), `the ClusterRole follows: HorizontalPodAutoscalers ${verb}`);
    t.ok(grants(operatorRules(KIND_TABLE), 'policy', 'poddisruptionbudgets', verb), `the ClusterRole follows: PodDisruptionBudgets ${verb}`);
  }
  t.ok(['create', 'patch', 'delete', 'list', 'watch'].every((verb) => grants(operatorRules(KIND_TABLE), '', 'serviceaccounts', verb)), 'the ClusterRole follows: ServiceAccounts applied, pruned, watched');
  const agent: KubeObject = {
    metadata: { name: 'a', namespace: 'ns' },
    spec: { modelAPI: 'm', mcpServers: ['x'], agentNetwork: { access: ['b'] }, config: { memory: { memoryStore: 'shared' } } },
  };
  t.same(dependenciesOf('Agent', agent, KIND_TABLE), [
    { role: 'modelAPI', kind: 'ModelAPI', name: 'm' },
    { role: 'mcpServers', kind: 'MCPServer', name: 'x' },
    { role: 'peers', kind: 'Agent', name: 'b' },
    { role: 'memoryStore', kind: 'MemoryStore', name: 'shared' },
  ]);
  const store = (storage: unknown): KubeObject => ({
    metadata: { name: 's', namespace: 'ns' },
    spec: { storage, models: { summarization: { modelAPI: 'chat', model: 'gpt' }, embedding: { modelAPI: 'embed', model: 'e' } } },
  });
  t.same(dependenciesOf('MemoryStore', store({ type: 'external', external: { connectionSecretRef: { name: 'dsn', key: 'url' } } }), KIND_TABLE), [
    { role: 'summarizationModelAPI', kind: 'ModelAPI', name: 'chat' },
    { role: 'embeddingModelAPI', kind: 'ModelAPI', name: 'embed' },
    { role: 'connectionSecret', kind: 'Secret', name: 'dsn' },
  ]);
  t.same(dependencyNames('MemoryStore', 'connectionSecret', store({ type: 'local', external: { connectionSecretRef: { name: 'dsn', key: 'url' } } })), [], 'only in external mode');
  t.equal(KIND_TABLE.kinds.MemoryStore.replicas, 'spec', "a MemoryStore's replicas is its spec's");
  t.equal(KIND_TABLE.kinds.Agent.replicas, 'declared', "an Agent's replicas is its spec's when it declares one");
  t.equal(KIND_TABLE.kinds.ModelAPI.replicas, undefined, 'the others: set at creation only');
  t.equal(KIND_TABLE.kinds.MCPServer.replicas, undefined, 'the others: set at creation only');
  t.ok(appliesReplicas('MemoryStore', {}), 'a MemoryStore: always');
  t.ok(appliesReplicas('Agent', { modelAPI: 'm', replicas: 3 }), 'an Agent with spec.replicas: on every change');
  t.ok(appliesReplicas('Agent', { modelAPI: 'm', replicas: 0 }), 'zero is declared too');
  t.notOk(appliesReplicas('Agent', { modelAPI: 'm' }), 'an Agent without it: at creation only, as before');
  t.notOk(appliesReplicas('Agent', { modelAPI: 'm', autoscaling: { maxReplicas: 4 } }), 'an autoscaled Agent: the HPA owns the count');
  t.notOk(appliesReplicas('ModelAPI', { replicas: 3 }), 'a ModelAPI: never (its schema has no replicas)');
  const proxy = (configYaml: unknown): KubeObject => ({ metadata: { name: 'm', namespace: 'ns' }, spec: { mode: 'Proxy', proxyConfig: { configYaml } } });
  t.same(dependencyNames('ModelAPI', 'configSecret', proxy({ fromSecretKeyRef: { name: 's', key: 'k' } })), ['s']);
  t.same(dependencyNames('ModelAPI', 'configSecret', proxy({ fromString: 'x', fromSecretKeyRef: { name: 's', key: 'k' } })), [], 'only the source render uses');
  t.same(dependencyNames('ModelAPI', 'configSecret', { spec: { mode: 'Hosted', proxyConfig: { configYaml: { fromSecretKeyRef: { name: 's', key: 'k' } } } } }), []);
  t.same(dependencyNames('MCPServer', 'configSecret', { spec: { type: 'python-runtime', config: { tools: { fromSecretKeyRef: { name: 't', key: 'k' } } } } }), ['t']);
  t.same(dependencyNames('MCPServer', 'configSecret', { spec: 'malformed' }), []);
  const apiKey = (valueFrom: unknown): KubeObject => ({ metadata: { name: 'm', namespace: 'ns' }, spec: { mode: 'Proxy', proxyConfig: { models: ['x'], apiKey: { valueFrom } } } });
  t.same(dependencyNames('ModelAPI', 'apiKeyConfigMap', apiKey({ configMapKeyRef: { name: 'c', key: 'k' } })), ['c']);
  t.same(dependencyNames('ModelAPI', 'apiKeyConfigMap', apiKey({ secretKeyRef: { name: 's', key: 'k' } })), []);
  t.same(dependencyNames('ModelAPI', 'apiKeySecret', apiKey({ configMapKeyRef: { name: 'c', key: 'k' } })), []);
});

t.test('the shipped table watches every ConfigMap twice: owned ones by label, and all as metadata only', async (t) => {
  const cache = recordingCache();
  const watches = registerControllerWatches(cache, { httpRoutes: false });
  const configMaps = cache.registered.filter((r) => r.type === CONFIG_MAP);
  t.same(configMaps.map((r) => [r.options.labelSelector, r.options.metadataOnly === true]), [
    ['app.kubernetes.io/managed-by=kaos-operator', false],
    [undefined, true],
  ]);
  t.not(watches.children.ConfigMap, watches.dependencies.ConfigMap, 'two reflector groups, read apart');
  const stored = configMapMetadata({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', namespace: 'ns', uid: 'u', resourceVersion: '7', labels: { a: 'b' }, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"k":"v"}}' }, managedFields: [{}] },
  });
  t.same(stored, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', uid: 'u', resourceVersion: '7' } }, 'identity and resourceVersion only');
  const rules = operatorRules();
  for (const verb of ['list', 'watch']) t.ok(grants(rules, '', 'configmaps', verb), `RBAC: ${verb}`);
  // get: an owned type's, for the fresh read before an apply that drops an element (kube/apply.ts).
  t.ok(grants(rules, '', 'configmaps', 'get'), 'RBAC: get, as an owned type');
});

t.test('a child kind added to the table: reflector, apply type, prune list and RBAC follow', async (t) => {
  const cache = recordingCache();
  const watches = registerControllerWatches(cache, { httpRoutes: false }, extended);
  const vpa = cache.registered.find((r) => r.type === VPA);
  t.ok(vpa, 'a reflector of VerticalPodAutoscalers');
  t.equal(vpa?.options.labelSelector, 'app.kubernetes.io/managed-by=kaos-operator', 'selected by the managed-by label, as every owned type');
  t.type(vpa?.options.transform, 'function', 'stored slim (kube/slim.ts), as every owned type');
  t.notOk(cache.registered.some((r) => r.type.kind === 'SecurityPolicy'), "no reflector of a type whose CRD is watched until the CRD is there");
  t.ok(watches.children.VerticalPodAutoscaler, 'among the controller\'s children');
  t.notOk(watches.children.HTTPRoute, 'a type that needs the Gateway API stays unwatched without it');

  t.equal(childTypes(extended).VerticalPodAutoscaler, VPA, 'server-side apply addresses it');
  t.same(possibleChildren('Agent', 'a', extended).at(-1), { kind: 'VerticalPodAutoscaler', name: 'agent-a' }, 'prune looks at its name');
  t.notOk(possibleChildren('ModelAPI', 'm', extended).some((c) => c.kind === 'VerticalPodAutoscaler'), 'only under the kind that owns it');

  const rules = operatorRules(extended);
  for (const verb of ['get', 'create', 'list', 'watch', 'patch', 'delete']) t.ok(grants(rules, 'autoscaling.k8s.io', 'verticalpodautoscalers', verb), `RBAC: ${verb}`);
  t.notOk(grants(rules, 'autoscaling.k8s.io', 'verticalpodautoscalers', 'update'), 'RBAC: never update (apply is a patch)');
  t.notOk(grants(operatorRules(), 'autoscaling.k8s.io', 'verticalpodautoscalers', 'list'), 'not in the shipped table');
});

t.test('a dependency added to the table: a metadata-only reflector, list+watch, and its changes wake the dependents', async (t) => {
  const cache = recordingCache();
  const watches = registerControllerWatches(cache, { httpRoutes: true }, extended);
  const configMaps = cache.registered.filter((r) => r.type === CONFIG_MAP);
  t.same(configMaps.map((r) => r.options.metadataOnly === true), [false, true], 'owned ConfigMaps by label, depended-on ones as metadata');
  t.ok(watches.dependencies.ConfigMap);
  t.ok(watches.children.HTTPRoute, 'with the Gateway API: HTTPRoutes watched');

  const index = new DependencyIndex(extended);
  index.upsert('MCPServer', { metadata: { name: 'tools', namespace: 'ns' }, spec: { type: 'python-runtime', registry: 'runtimes' } });
  t.same(index.dependents('ConfigMap', 'ns', 'runtimes'), ['MCPServer/ns/tools']);
  t.same(index.dependents('ConfigMap', 'other', 'runtimes'), []);
  const elsewhere = new DependencyIndex({
    ...extended,
    kinds: { ...extended.kinds, MCPServer: { ...extended.kinds.MCPServer, dependsOn: { registry: { kind: 'ConfigMap', names: () => [{ namespace: 'kaos-system', name: 'kaos-mcp-runtimes' }] } } } },
  });
  elsewhere.upsert('MCPServer', { metadata: { name: 'tools', namespace: 'ns' }, spec: {} });
  t.same(elsewhere.dependents('ConfigMap', 'kaos-system', 'kaos-mcp-runtimes'), ['MCPServer/ns/tools'], 'a dependency in another namespace (the operator\'s)');
  t.ok(grants(operatorRules(extended), '', 'configmaps', 'list'));
});

t.test('bindingsTo: the roles in which an object names another, with what it asks of it (the table\'s asks)', async (t) => {
  const store: KubeObject = {
    metadata: { name: 's', namespace: 'ns' },
    spec: { storage: { type: 'local' }, models: { summarization: { modelAPI: 'chat', model: 'gpt' }, embedding: { modelAPI: 'chat', model: 'e' } } },
  };
  const chat = { kind: 'ModelAPI' as const, namespace: 'ns', name: 'chat' };
  t.same(bindingsTo('MemoryStore', store, chat), [
    { role: 'summarizationModelAPI', asks: 'gpt' },
    { role: 'embeddingModelAPI', asks: 'e' },
  ], 'one ModelAPI for both models: two bindings');
  t.same(bindingsTo('MemoryStore', store, { ...chat, namespace: 'other' }), [], 'names in its own namespace only');
  t.same(bindingsTo('MemoryStore', store, { ...chat, kind: 'MCPServer' }), [], 'of the kind asked for only');
  const agent = (spec: unknown): KubeObject => ({ metadata: { name: 'a', namespace: 'ns' }, spec });
  t.same(bindingsTo('Agent', agent({ modelAPI: 'chat', model: 'gpt-4o' }), chat), [{ role: 'modelAPI', asks: 'gpt-4o' }]);
  t.same(bindingsTo('Agent', agent({ modelAPI: 'chat', model: '' }), chat), [{ role: 'modelAPI' }], 'an original-shape Agent asks no model');
  t.same(bindingsTo('Agent', agent({ config: { memory: { memoryStore: 'notes', maxReadScope: 'session' } } }), { kind: 'MemoryStore', namespace: 'ns', name: 'notes' }), [
    { role: 'memoryStore', asks: 'session' },
  ], 'an Agent asks its store for its read scope');
  t.same(bindingsTo('Agent', agent({ agentNetwork: { access: ['b'] } }), { kind: 'Agent', namespace: 'ns', name: 'b' }), [{ role: 'peers' }], 'a peer asks nothing');
  t.same(bindingsTo('MemoryStore', { metadata: { name: 's', namespace: 'ns' }, spec: 'malformed' }, chat), []);
});

t.test('relations between children are rows of the table: the route behind its SecurityPolicy, the Agent\'s identity before its dependencies', async (t) => {
  const relations = (kind: 'Agent' | 'ModelAPI' | 'MCPServer' | 'MemoryStore' | 'AccessGrant') =>
    KIND_TABLE.kinds[kind].children.flatMap((c) => [...(c.gatedOn === undefined ? [] : [`${c.kind} gatedOn ${c.gatedOn}`]), ...(c.beforeDependencies === true ? [`${c.kind} beforeDependencies`] : [])]);
  t.same(relations('Agent'), ['ServiceAccount beforeDependencies', 'HTTPRoute gatedOn SecurityPolicy']);
  for (const kind of ['ModelAPI', 'MCPServer', 'MemoryStore'] as const) t.same(relations(kind), ['HTTPRoute gatedOn SecurityPolicy'], kind);
  t.same(relations('AccessGrant'), []);
  const child = (kind: string) => ({ kind });
  t.same(inApplyOrder('ModelAPI', [child('HTTPRoute'), child('Deployment'), child('SecurityPolicy'), child('NetworkPolicy'), child('ConfigMap'), child('Service')]).map((c) => c.kind),
    ['ConfigMap', 'NetworkPolicy', 'Deployment', 'Service', 'SecurityPolicy', 'HTTPRoute'], "the table's order: the pods' NetworkPolicy before them, the route's SecurityPolicy before it");
  t.same(inApplyOrder('Agent', [child('Unlisted'), child('Deployment'), child('ServiceAccount')]).map((c) => c.kind), ['ServiceAccount', 'Deployment', 'Unlisted'], 'a kind the table does not list goes last');
});

t.test('no reconcile code branches on a child kind\'s name: the reconcile loop follows the table', async (t) => {
  const dir = new URL('../../../src/controller/reconcile/', import.meta.url);
  const childKinds = Object.keys(KIND_TABLE.owned).join('|');
  const branch = new RegExp(`kind\\s*[!=]==\\s*'(${childKinds})'|'(${childKinds})'\\s*[!=]==\\s*[\\w.]*kind`);
  const offending: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    readFileSync(new URL(file, dir), 'utf8').split('\n').forEach((line, i) => {
      if (branch.test(line)) offending.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  t.same(offending, []);
  t.ok(branch.test("if (child.kind === 'HTTPRoute') continue;"), 'the pattern finds such a branch');
});
