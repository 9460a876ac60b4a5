// The controller end to end: the samples applied with kubectl to a real kube-apiserver, the
// operator started by the harness through its real entry point (leader election on, its own
// ServiceAccount and the ClusterRole of src/cluster/rbac.ts). Every object gets its children —
// Deployment and Service, and the ConfigMap of a Proxy ModelAPI — each controlled by it, and
// reaches Ready (its pods run on kwok's nodes); the operator holds the Lease and says so in its metric. Never skipped.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { ROOT, startLocalStack, tail, type LocalStack } from '../../scripts/local-stack.ts';
import { configMapName } from '../../src/render/index.ts';
import { eventually } from '../support/poll.ts';

const SAMPLES = join(ROOT, 'test', 'fixtures', 'samples');
const PREFIX: Readonly<Record<string, string>> = { Agent: 'agent', ModelAPI: 'modelapi', MCPServer: 'mcpserver' };

interface Owned {
  metadata: { name: string; ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }> };
}
interface Parent {
  kind: string;
  metadata: { name: string; namespace: string; uid: string; generation: number };
  spec: { mode?: string };
  status?: { phase?: string; observedGeneration?: number; conditions?: Array<{ type: string; status?: string }> };
}

let stack: LocalStack | undefined;
const stackLog: string[] = [];
t.before(async () => {
  stack = await startLocalStack({ log: (line) => stackLog.push(line) });
});
t.teardown(async () => {
  if (stack !== undefined && !t.passing()) {
    process.stderr.write(`--- stack log ---\n${stackLog.join('\n')}\n--- operator log (tail) ---\n${tail(stack.operator.log(), 60)}\n`);
  }
  await stack?.stop();
});

async function kubectlJson<T>(args: readonly string[]): Promise<T | undefined> {
  const res = await stack!.plane.kubectl([...args, '-o', 'json']);
  return res.code === 0 ? (JSON.parse(res.stdout) as T) : undefined;
}


for (const file of ['1-simple-echo-agent.yaml', '2-multi-agent-mcp.yaml', '4-dev-ollama-proxy-agent.yaml']) {
  t.test(`${file}: every object gets its children, controlled by it, and a status`, async (t) => {
    const path = join(SAMPLES, file);
    const applied = await stack!.plane.kubectl(['apply', '-f', path]);
    t.equal(applied.code, 0, 'kubectl apply', { stderr: applied.stderr });
    const docs = parseAllDocuments(await readFile(path, 'utf8')).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string } });
    for (const doc of docs.filter((d) => PREFIX[d.kind] !== undefined)) {
      const ns = doc.metadata.namespace ?? 'default';
      const resource = `${doc.kind.toLowerCase()}.kaos.tools/${doc.metadata.name}`;
      // Pods run on the local control plane's kwok nodes: every object of the sample reaches
      // Ready (an Agent after waiting for its dependencies).
      const parent = await eventually(`${resource} Ready`, async () => {
        const p = await kubectlJson<Parent>(['get', resource, '-n', ns]);
        return p?.status?.observedGeneration === p?.metadata.generation && p?.status?.phase === 'Ready' ? p : undefined;
      }, { timeoutMs: 90_000, intervalMs: 250 });
      t.equal(parent.status?.phase, 'Ready', `${resource}: status.phase Ready`);
      t.ok((parent.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'), `${resource}: condition Ready=True`);
      const name = `${PREFIX[doc.kind]}-${doc.metadata.name}`;
      const kinds: Array<[string, string]> = [['deployment', name], ['service', name]];
      if (doc.kind === 'ModelAPI' && parent.spec.mode === 'Proxy') kinds.push(['configmap', configMapName(doc.metadata.name)]);
      for (const [kind, name] of kinds) {
        const child = await eventually(`${kind}/${name}`, () => kubectlJson<Owned>(['get', kind, name, '-n', ns]), { timeoutMs: 30_000, intervalMs: 250 });
        const controller = (child.metadata.ownerReferences ?? []).filter((r) => r.controller === true);
        t.same(
          controller.map((r) => [r.apiVersion, r.kind, r.name, r.uid]),
          [['kaos.tools/v1alpha1', doc.kind, doc.metadata.name, parent.metadata.uid]],
          `${kind}/${name} is controlled by ${resource}`,
        );
      }
    }
  });
}

t.test('the operator leads its Lease, says so in its metric, and reconciled without errors it could not retry', async (t) => {
  const metrics = await (await fetch(`http://127.0.0.1:${stack!.operator.metricsPort}/metrics`)).text();
  t.match(metrics, /leader_election_master_status\{name="kaos-operator"\} 1/, 'leader_election_master_status 1');
  for (const controller of ['agent', 'modelapi', 'mcpserver']) {
    t.match(metrics, new RegExp(`controller_runtime_reconcile_total\\{controller="${controller}",result="success"\\} [1-9]`), `${controller}: successful reconciles`);
  }
  const lease = await kubectlJson<{ spec: { holderIdentity?: string } }>(['get', 'lease', 'kaos-operator', '-n', 'kaos-system']);
  t.ok(lease?.spec.holderIdentity, `Lease kaos-system/kaos-operator held by ${lease?.spec.holderIdentity}`);
});
