// "Which ModelAPIs and MCPServers read this Secret": the Secret behind a Proxy ModelAPI's
// `proxyConfig.configYaml.fromSecretKeyRef` or an MCPServer's `config.tools.fromSecretKeyRef`,
// whose resourceVersion enters the pod's config hash (render/hash.ts). Maintained from cache
// events, so a Secret event wakes exactly those objects without a scan.
import type { KubeObject } from '../api/lookup.ts';
import type { KaosKind } from '../api/kinds.ts';
import type { MCPServerSpecInput, ModelAPISpecInput } from '../render/index.ts';
import { liteLLMConfigSource, mcpToolsSource } from '../render/sources.ts';
import { refKey } from '../cluster/object-ref.ts';

/**
 * Pure: the name of the Secret whose version goes into `object`'s config hash, exactly when
 * render uses it (the same source selection); undefined for anything else or a malformed spec.
 */
export function configSecretOf(kind: KaosKind, object: KubeObject): string | undefined {
  const spec = object.spec;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return undefined;
  let name: unknown;
  if (kind === 'ModelAPI') {
    const s = spec as ModelAPISpecInput;
    if (s.mode !== 'Proxy' || liteLLMConfigSource(s) !== 'fromSecretKeyRef') return undefined;
    name = s.proxyConfig?.configYaml?.fromSecretKeyRef?.name;
  } else if (kind === 'MCPServer') {
    const s = spec as MCPServerSpecInput;
    if (mcpToolsSource(s) !== 'fromSecretKeyRef') return undefined;
    name = s.config?.tools?.fromSecretKeyRef?.name;
  }
  return typeof name === 'string' && name !== '' ? name : undefined;
}

export class SecretIndex {
  /** `namespace/secret` → queue keys of the objects reading it. */
  readonly #bySecret = new Map<string, Set<string>>();
  /** queue key → the `namespace/secret` it currently reads, to undo it on change. */
  readonly #byObject = new Map<string, string>();

  upsert(kind: KaosKind, object: KubeObject): void {
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    if (namespace === '' || name === '') return;
    const key = refKey(kind, namespace, name);
    this.#forget(key);
    const secret = configSecretOf(kind, object);
    if (secret === undefined) return;
    const id = `${namespace}/${secret}`;
    this.#byObject.set(key, id);
    let keys = this.#bySecret.get(id);
    if (keys === undefined) {
      keys = new Set();
      this.#bySecret.set(id, keys);
    }
    keys.add(key);
  }

  remove(kind: KaosKind, object: KubeObject): void {
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    if (namespace !== '' && name !== '') this.#forget(refKey(kind, namespace, name));
  }

  /** Sorted queue keys of the ModelAPIs and MCPServers that read the Secret. */
  keysFor(namespace: string, secret: string): string[] {
    const keys = this.#bySecret.get(`${namespace}/${secret}`);
    return keys === undefined ? [] : [...keys].sort();
  }

  #forget(key: string): void {
    const id = this.#byObject.get(key);
    if (id === undefined) return;
    this.#byObject.delete(key);
    const keys = this.#bySecret.get(id);
    keys?.delete(key);
    if (keys?.size === 0) this.#bySecret.delete(id);
  }
}
