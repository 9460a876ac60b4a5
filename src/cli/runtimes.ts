// The MCP runtime registry for `lint` and `default` (docs/api.md, "MCPServer runtimes"): from a file given with
// --runtimes (a runtimes.yaml, or the ConfigMap manifest that holds one), else from a
// kaos-mcp-runtimes ConfigMap among the manifests themselves (applying the set installs it),
// else from the cluster with --cluster. Without any of them, runtimes are not judged (a warning
// per MCPServer that names one), as the webhook does while it cannot read the registry. The
// harness runtime registry (docs/api.md, "Agent harness") likewise, from a kaos-harness-runtimes
// ConfigMap in the set, else from the cluster.
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { asRecord } from '../api/json.ts';
import type { KubeObject } from '../api/lookup.ts';
import { HARNESS_RUNTIMES_CONFIG_MAP, harnessRegistryFromConfigMap, type HarnessRegistryState } from '../api/harness-runtimes.ts';
import { RUNTIMES_CONFIG_MAP, parseRuntimes, registryFromConfigMap, type RegistryState } from '../api/mcp-runtimes.ts';
import { InputError, type Manifest } from './manifests.ts';

/** Whether `value` is the ConfigMap `name`. */
const isConfigMapNamed = (name: string) => (value: unknown): value is KubeObject => {
  const object = asRecord(value);
  return object?.kind === 'ConfigMap' && asRecord(object.metadata)?.name === name;
};
const isRegistryConfigMap = isConfigMapNamed(RUNTIMES_CONFIG_MAP);

/** The last ConfigMap `name` among the manifests. */
function lastConfigMap(manifests: readonly Manifest[], name: string): Manifest | undefined {
  const named = isConfigMapNamed(name);
  return manifests.filter((m) => named(m.value)).at(-1);
}

/** The registry in `file`: a runtimes.yaml, or a YAML stream with the ConfigMap. A file that holds no usable registry is an input error (exit 2). */
export async function readRuntimesFile(file: string): Promise<RegistryState> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new InputError(`--runtimes ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  let configMap: KubeObject | undefined;
  try {
    const docs = parseAllDocuments(text);
    configMap = (Array.isArray(docs) ? docs : []).map((doc): unknown => doc.toJS({ maxAliasCount: 100 })).find(isRegistryConfigMap);
  } catch {
    configMap = undefined; // parseRuntimes below names the YAML problem
  }
  const state = configMap === undefined ? parseRuntimes(text) : registryFromConfigMap(configMap, `${file} (ConfigMap ${RUNTIMES_CONFIG_MAP})`);
  if ('problem' in state) throw new InputError(`--runtimes ${file}: ${state.problem}`);
  return state;
}

/** A kaos-mcp-runtimes ConfigMap among the manifests (the last one), as a registry. */
export function registryInManifests(manifests: readonly Manifest[]): RegistryState | undefined {
  const found = lastConfigMap(manifests, RUNTIMES_CONFIG_MAP);
  if (found === undefined) return undefined;
  return registryFromConfigMap(found.value as KubeObject, `${found.origin.file} (ConfigMap ${RUNTIMES_CONFIG_MAP})`);
}

/** A kaos-harness-runtimes ConfigMap among the manifests (the last one), as a registry. */
export function harnessRegistryInManifests(manifests: readonly Manifest[]): HarnessRegistryState | undefined {
  const found = lastConfigMap(manifests, HARNESS_RUNTIMES_CONFIG_MAP);
  return found === undefined ? undefined : harnessRegistryFromConfigMap(found.value as KubeObject);
}
