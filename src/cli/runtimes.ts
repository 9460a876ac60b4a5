// The MCP runtime registry for `lint` and `default` (docs/api.md, "MCPServer runtimes"): from a file given with
// --runtimes (a runtimes.yaml, or the ConfigMap manifest that holds one), else from a
// kaos-mcp-runtimes ConfigMap among the manifests themselves (applying the set installs it),
// else from the cluster with --cluster. Without any of them, runtimes are not judged (a warning
// per MCPServer that names one), as the webhook does while it cannot read the registry.
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { asRecord } from '../api/json.ts';
import type { KubeObject } from '../api/lookup.ts';
import { RUNTIMES_CONFIG_MAP, parseRuntimes, registryFromConfigMap, type RegistryState } from '../api/mcp-runtimes.ts';
import { InputError, type Manifest } from './manifests.ts';

const isRegistryConfigMap = (value: unknown): value is KubeObject => {
  const object = asRecord(value);
  return object?.kind === 'ConfigMap' && asRecord(object.metadata)?.name === RUNTIMES_CONFIG_MAP;
};

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
  const found = manifests.filter((m) => isRegistryConfigMap(m.value)).at(-1);
  if (found === undefined) return undefined;
  return registryFromConfigMap(found.value as KubeObject, `${found.origin.file} (ConfigMap ${RUNTIMES_CONFIG_MAP})`);
}
