// The GitOps bulk apply's objects (bench:bulk, bench:scale, and bench:admission's converging
// state): a namespace's ModelAPIs and MCPServers, a MemoryStore per ModelAPI (local storage, both
// of its models from that ModelAPI), then its Agents. Agent i uses ModelAPI i mod modelAPIs and
// its MemoryStore, MCPServers 2i and 2i+1 mod mcpServers, and lists Agents i+1 and i+2 in
// agentNetwork.access (forward references: they do not exist yet when it is created),
// waitForDependencies true.
import type { KubeObject } from '../../src/api/meta.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { inParallel, kaosPath } from './reconcile.ts';

export type Named = KubeObject & { kind: 'Agent' | 'ModelAPI' | 'MCPServer' | 'MemoryStore'; metadata: { name: string; namespace: string } };

export interface BulkObjects { dependencies: Named[]; stores: Named[]; agents: Named[] }

/** The model each ModelAPI of the scenario serves, which its MemoryStore uses for both roles. */
const MODEL = 'ollama/smollm2:135m';

export interface BulkSizes { agents: number; modelAPIs: number; mcpServers: number }

export function bulkScenario(namespace: string, sizes: BulkSizes): BulkObjects {
  const { agents: count, modelAPIs, mcpServers } = sizes;
  const dependencies: Named[] = [];
  for (let i = 0; i < modelAPIs; i++) {
    dependencies.push({
      apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: `model-${i}`, namespace },
      spec: { mode: 'Proxy', proxyConfig: { apiBase: 'http://ollama.example:11434', model: MODEL } },
    });
  }
  const stores: Named[] = [];
  for (let i = 0; i < modelAPIs; i++) {
    stores.push({
      apiVersion: 'kaos.tools/v1alpha1', kind: 'MemoryStore', metadata: { name: `memory-${i}`, namespace },
      spec: { storage: { type: 'local' }, models: { summarization: { modelAPI: `model-${i}`, model: MODEL }, embedding: { modelAPI: `model-${i}`, model: MODEL } } },
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
        config: { description: `bulk agent ${i}`, instructions: 'You answer briefly.', memory: { memoryStore: `memory-${i % modelAPIs}` } },
      },
    });
  }
  return { dependencies, stores, agents };
}

/**
 * Dependencies first, then the MemoryStores (which name ModelAPIs: the webhook checks they exist),
 * then the Agents, `inFlight` at a time; `created` sees each answer.
 */
export async function createBulk(client: KubeClient, objects: BulkObjects, inFlight: number, created?: (object: Named) => void): Promise<void> {
  for (const batch of [objects.dependencies, objects.stores, objects.agents]) {
    await inParallel(batch, inFlight, async (o) => {
      const made = await client.create<Named>(kaosPath(o.kind, o.metadata.namespace), o);
      created?.(made);
    });
  }
}
