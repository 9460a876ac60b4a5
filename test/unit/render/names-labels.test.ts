import t from 'tap';
import {
  APP_LABEL,
  CONTAINER_NAME,
  configMapName,
  endpointFor,
  modelAPIPort,
  persistentVolumeClaimName,
  routeName,
  workloadName,
} from '../../../src/render/names.ts';
import { childLabels, childMeta, ownerReference, parentIdentity, selectorLabels } from '../../../src/render/labels.ts';

t.test('child names', async (t) => {
  t.equal(workloadName('Agent', 'a1'), 'agent-a1');
  t.equal(workloadName('ModelAPI', 'm1'), 'modelapi-m1');
  t.equal(workloadName('MCPServer', 'x'), 'mcpserver-x');
  t.equal(routeName('Agent', 'a1'), 'agent-a1');
  t.equal(routeName('ModelAPI', 'm1'), 'modelapi-m1');
  t.equal(routeName('MCPServer', 'x'), 'mcp-x');
  t.equal(workloadName('MemoryStore', 's'), 'memorystore-s');
  t.equal(routeName('MemoryStore', 's'), 'memorystore-s');
  t.equal(persistentVolumeClaimName('s'), 'memorystore-s-data');
  t.equal(configMapName('m1'), 'litellm-config-m1');
  t.same(CONTAINER_NAME, { Agent: 'agent', ModelAPI: 'model-api', MCPServer: 'mcp-server', MemoryStore: 'memory' });
  t.same(APP_LABEL, { Agent: 'agent', ModelAPI: 'modelapi', MCPServer: 'mcpserver', MemoryStore: 'memorystore' });
});

t.test('endpoints', async (t) => {
  t.equal(endpointFor('Agent', 'a1', 'ns'), 'http://agent-a1.ns.svc.cluster.local:8000');
  t.equal(endpointFor('MCPServer', 'simple-echo-mcp', 'kaos-simple'), 'http://mcpserver-simple-echo-mcp.kaos-simple.svc.cluster.local:8000');
  t.equal(endpointFor('ModelAPI', 'm', 'ns', 'Proxy'), 'http://modelapi-m.ns.svc.cluster.local:8000');
  t.equal(endpointFor('ModelAPI', 'm', 'ns', 'Hosted'), 'http://modelapi-m.ns.svc.cluster.local:11434');
  t.equal(endpointFor('MemoryStore', 'shared', 'ns'), 'http://memorystore-shared.ns.svc.cluster.local:8080');
  t.equal(modelAPIPort('Hosted'), 11434);
  t.equal(modelAPIPort('Proxy'), 8000);
});

t.test('labels: selector has exactly the two KAOS labels, metadata adds managed-by', async (t) => {
  t.strictSame(selectorLabels('Agent', 'a1'), { app: 'agent', agent: 'a1' });
  t.strictSame(selectorLabels('ModelAPI', 'm1'), { app: 'modelapi', modelapi: 'm1' });
  t.strictSame(selectorLabels('MCPServer', 'x'), { app: 'mcpserver', mcpserver: 'x' });
  t.strictSame(selectorLabels('MemoryStore', 's'), { app: 'memorystore', memorystore: 's' });
  t.strictSame(childLabels('MCPServer', 'x'), {
    app: 'mcpserver',
    mcpserver: 'x',
    'app.kubernetes.io/managed-by': 'kaos-operator',
  });
});

t.test('owner reference and child metadata', async (t) => {
  const parent = parentIdentity('ModelAPI', { name: 'm1', namespace: 'ns', uid: 'u-1' });
  t.strictSame(ownerReference(parent), {
    apiVersion: 'kaos.tools/v1alpha1',
    kind: 'ModelAPI',
    name: 'm1',
    uid: 'u-1',
    controller: true,
    blockOwnerDeletion: true,
  });
  t.strictSame(childMeta(parent, 'litellm-config-m1'), {
    name: 'litellm-config-m1',
    namespace: 'ns',
    labels: { app: 'modelapi', modelapi: 'm1', 'app.kubernetes.io/managed-by': 'kaos-operator' },
    ownerReferences: [ownerReference(parent)],
  });
  // A CREATE seen by the webhook has no uid yet: render stays total.
  t.strictSame(parentIdentity('Agent', undefined), { kind: 'Agent', name: '', namespace: '', uid: '' });
});
