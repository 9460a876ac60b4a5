// --cluster: a read-only snapshot of what the cluster in KUBECONFIG already holds in the
// namespaces of the set (its KAOS objects and the namespaces' labels), taken once before any
// object is judged, so every reference the webhook would find in its cache is found here too.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KINDS } from '../api/kinds.ts';
import type { KubeObject } from '../api/lookup.ts';
import { KubeClient } from '../kube/client.ts';
import { ApiError } from '../kube/errors.ts';
import { CONFIG_MAP, NAMESPACE, resourcePath } from '../kube/paths.ts';
import { kaosPath } from '../cluster/kaos-resources.ts';
import { HARNESS_RUNTIMES_CONFIG_MAP, harnessRegistryFromConfigMap, type HarnessRegistryState } from '../api/harness-runtimes.ts';
import { RUNTIMES_CONFIG_MAP, registryFromConfigMap, type RegistryState } from '../api/mcp-runtimes.ts';
import type { RegistryStateOf } from '../api/runtime-registry.ts';
import { API_VERSION } from '../api/kinds.ts';
import { errorMessage } from '../leaves/error-message.ts';

/** The cluster could not be read: the tool cannot give the verdict that was asked for (exit 2). */
export class ClusterUnavailable extends Error {
  override name = 'ClusterUnavailable';
}

export interface ClusterSnapshot {
  objects: KubeObject[];
  namespaces: [string, Record<string, string>][];
  /** Notes for stderr, e.g. that the cluster serves no KAOS kinds. */
  notes: string[];
  /** The MCP runtime registry, when asked for (`runtimesNamespace`), as the cluster holds it. */
  runtimes?: RegistryState;
  /** The harness runtime registry, when asked for (`harnessNamespace`), as the cluster holds it. */
  harnessRuntimes?: HarnessRegistryState;
}

/** The registries to read besides the KAOS objects, each from its namespace. */
export interface RegistryNamespaces {
  /** ConfigMap kaos-mcp-runtimes in the operator's namespace. */
  runtimesNamespace?: string;
  /** ConfigMap kaos-harness-runtimes in SYSTEM_NAMESPACE. */
  harnessNamespace?: string;
}

/** kubectl's choice of kubeconfig: the first file in KUBECONFIG, else ~/.kube/config. */
export function kubeconfigPath(env: Readonly<Record<string, string | undefined>>): string {
  const first = (env.KUBECONFIG ?? '').split(':').find((p) => p !== '');
  return first ?? join(homedir(), '.kube', 'config');
}

const TIMEOUT_MS = 15_000;

/**
 * `registries`: also read the MCP runtime registry, ConfigMap kaos-mcp-runtimes in the operator's
 * namespace, and the harness runtime registry, kaos-harness-runtimes in SYSTEM_NAMESPACE (absent
 * or unreadable: a note, and their runtimes are judged as unreadable).
 */
export async function clusterSnapshot(kubeconfig: string, namespaces: readonly string[], registries: RegistryNamespaces = {}): Promise<ClusterSnapshot> {
  let client: KubeClient;
  try {
    client = await KubeClient.fromKubeConfig(kubeconfig, { userAgent: 'kaos-operator-lint', requestTimeoutMs: TIMEOUT_MS });
  } catch (err) {
    throw new ClusterUnavailable(`cannot load kubeconfig ${kubeconfig}: ${errorMessage(err)}`);
  }
  const where = client.server.origin;
  const snapshot: ClusterSnapshot = { objects: [], namespaces: [], notes: [] };
  try {
    for (const namespace of namespaces) {
      const ns = await readOrAbsent(() => client.get<KubeObject>(resourcePath(NAMESPACE, { name: namespace })));
      if (ns !== undefined) snapshot.namespaces.push([namespace, ns.metadata?.labels ?? {}]);
      for (const kind of KINDS) {
        const list = await readOrAbsent(() => client.list<KubeObject>(kaosPath(kind, { namespace })));
        if (list === undefined) {
          const note = `the cluster at ${where} serves no ${API_VERSION} ${kind} (are the CRDs installed?)`;
          if (!snapshot.notes.includes(note)) snapshot.notes.push(note);
          continue;
        }
        // List items carry no kind; the lookup keys on it.
        for (const item of list.items) snapshot.objects.push({ ...item, apiVersion: API_VERSION, kind });
      }
    }
    const { runtimesNamespace, harnessNamespace } = registries;
    if (runtimesNamespace !== undefined) {
      const where = `${runtimesNamespace}/${RUNTIMES_CONFIG_MAP}`;
      snapshot.runtimes = await readRegistry(client, runtimesNamespace, RUNTIMES_CONFIG_MAP, 'MCP', (cm) => registryFromConfigMap(cm, where), snapshot.notes);
    }
    if (harnessNamespace !== undefined) {
      snapshot.harnessRuntimes = await readRegistry(client, harnessNamespace, HARNESS_RUNTIMES_CONFIG_MAP, 'harness', harnessRegistryFromConfigMap, snapshot.notes);
    }
  } catch (err) {
    throw new ClusterUnavailable(`cannot read the cluster at ${where} (kubeconfig ${kubeconfig}): ${errorMessage(err)}`);
  } finally {
    client.close();
  }
  return snapshot;
}

/** A registry ConfigMap (`what`: MCP or harness) as `read` parses it; a note when it cannot be used. */
async function readRegistry<E>(
  client: KubeClient,
  namespace: string,
  name: string,
  what: string,
  read: (configMap: KubeObject | undefined) => RegistryStateOf<E>,
  notes: string[],
): Promise<RegistryStateOf<E>> {
  const where = `${namespace}/${name}`;
  let configMap: KubeObject | undefined;
  try {
    configMap = await readOrAbsent(() => client.get<KubeObject>(resourcePath(CONFIG_MAP, { namespace, name })));
  } catch (err) {
    // Reading one ConfigMap may be forbidden where listing KAOS objects is not: judge without it.
    if (!(err instanceof ApiError && err.code === 403)) throw err;
    notes.push(`the ${what} runtime registry ${where} may not be read (${errorMessage(err)}): runtimes are not checked`);
    return { problem: `ConfigMap ${where} may not be read` };
  }
  const state = read(configMap);
  if ('problem' in state) notes.push(`${state.problem}: ${what} runtimes are not checked`);
  return state;
}

/** Tries of a read the API server answered 429 or 5xx (e.g. "storage is (re)initializing" just after a CRD is installed). */
const TRIES = 5;

async function readOrAbsent<T>(read: () => Promise<T>): Promise<T | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      const transient = err instanceof ApiError && (err.code === 429 || err.code >= 500);
      if (!transient || attempt >= TRIES) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  }
}
