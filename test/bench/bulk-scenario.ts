// The GitOps bulk apply's objects (bench:bulk, bench:scale, and bench:admission's converging
// state): a namespace's ModelAPIs and MCPServers, then its Agents. Agent i uses ModelAPI
// i mod modelAPIs, MCPServers 2i and 2i+1 mod mcpServers, and lists Agents i+1 and i+2 in
// agentNetwork.access (forward references: they do not exist yet when it is created),
// waitForDependencies true.
import type { KubeObject } from '../../src/api/meta.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { inParallel, kaosPath } from './reconcile.ts';

export type Named = KubeObject & { kind: 'Agent' | 'ModelAPI' | 'MCPServer'; metadata: { name: string; namespace: string } };

export interface BulkObjects { dependencies: Named[]; agents: Named[] }

export interface BulkSizes { agents: number; modelAPIs: number; mcpServers: number }

export function bulkScenario(namespace: string, sizes: BulkSizes): BulkObjects {
  const { agents: count, modelAPIs, mcpServers } = sizes;
  const dependencies: Named[] = [];
  for (let i = 0; i < modelAPIs; i++) {
    dependencies.push({
      apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: `model-${i}`, namespace },
      spec: { mode: 'Proxy', proxyConfig: { apiBase: 'http://ollama.example:11434', model: 'ollama/smollm2:135m' } },
    });
  }
  for (let i = 0; i < mcpServers; i++) {
    dependencies.push({
      apiVersion: 'kaos.tools/v1alpha1', kind: 'MCPServer', metadata: { name: `tools-${i}`, namespace },
      spec: { type: 'python-runtime', config: { tools: { fromString: `def echo_${i}(text: str) -> str:\n    return text\n` } } },
    });
  }
  const agents: Named[] = [];
  for (let i = 0; i < count; i++) {
    agents.push({
      apiVersion: 'kaos.tools/v1alpha1', kind: 'Agent', metadata: { name: `agent-${i}`, namespace },
      spec: {
        modelAPI: `model-${i % modelAPIs}`,
        mcpServers: [...new Set([`tools-${(2 * i) % mcpServers}`, `tools-${(2 * i + 1) % mcpServers}`])],
        agentNetwork: { access: [`agent-${i + 1}`, `agent-${i + 2}`] },
        waitForDependencies: true,
        config: { description: `bulk agent ${i}`, instructions: 'You answer briefly.' },
      },
    });
  }
  return { dependencies, agents };
}

/** Dependencies first, then the Agents, `inFlight` at a time; `created` sees each answer. */
export async function createBulk(client: KubeClient, objects: BulkObjects, inFlight: number, created?: (object: Named) => void): Promise<void> {
  for (const batch of [objects.dependencies, objects.agents]) {
    await inParallel(batch, inFlight, async (o) => {
      const made = await client.create<Named>(kaosPath(o.kind, o.metadata.namespace), o);
      created?.(made);
    });
  }
}
