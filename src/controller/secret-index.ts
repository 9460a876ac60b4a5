// "Which ModelAPIs and MCPServers read this Secret": the Secret behind a Proxy ModelAPI's
// `proxyConfig.configYaml.fromSecretKeyRef` or `proxyConfig.apiKey.valueFrom.secretKeyRef`, or an
// MCPServer's `config.tools.fromSecretKeyRef`, whose resourceVersion enters the pod's config hash
// (render/hash.ts). Maintained from cache
// events, so a Secret event wakes exactly those objects without a scan.
import type { KubeObject } from '../api/lookup.ts';
import type { KaosKind } from '../api/kinds.ts';
import type { MCPServerSpecInput, ModelAPISpecInput } from '../render/index.ts';
import { liteLLMConfigSource, mcpToolsSource } from '../render/sources.ts';
import { makeKey } from './triggers.ts';

/**
 * Pure: the names of the Secrets whose versions go into `object`'s config hash: the config
 * file's (configSecretOf) and a Proxy's API key's (docs/api.md §7.1). Sorted, distinct.
 */
export function configSecretsOf(kind: KaosKind, object: KubeObject): string[] {
  const names = [configSecretOf(kind, object), kind === 'ModelAPI' ? apiKeySecretOf(object.spec) : undefined];
  return [...new Set(names.filter((n): n is string => n !== undefined))].sort();
}

/** The Secret a Proxy ModelAPI's `apiKey.valueFrom.secretKeyRef` names, if any. */
export function apiKeySecretOf(spec: unknown): string | undefined {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return undefined;
  const s = spec as ModelAPISpecInput;
  const name = s.mode === 'Proxy' ? s.proxyConfig?.apiKey?.valueFrom?.secretKeyRef?.name : undefined;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/**
 * Pure: the name of the Secret whose version goes into `object`'s config hash as its config file,
 * exactly when render uses it (the same source selection); undefined for anything else or a
 * malformed spec.
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
  /** queue key → the `namespace/secret`s it currently reads, to undo it on change. */
  readonly #byObject = new Map<string, string[]>();

  upsert(kind: KaosKind, object: KubeObject): void {
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    if (namespace === '' || name === '') return;
    const key = makeKey(kind, namespace, name);
    this.#forget(key);
    const ids = configSecretsOf(kind, object).map((secret) => `${namespace}/${secret}`);
    if (ids.length === 0) return;
    this.#byObject.set(key, ids);
    for (const id of ids) {
      let keys = this.#bySecret.get(id);
      if (keys === undefined) {
        keys = new Set();
        this.#bySecret.set(id, keys);
      }
      keys.add(key);
    }
  }

  remove(kind: KaosKind, object: KubeObject): void {
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    if (namespace !== '' && name !== '') this.#forget(makeKey(kind, namespace, name));
  }

  /** Sorted queue keys of the ModelAPIs and MCPServers that read the Secret. */
  keysFor(namespace: string, secret: string): string[] {
    const keys = this.#bySecret.get(`${namespace}/${secret}`);
    return keys === undefined ? [] : [...keys].sort();
  }

  #forget(key: string): void {
    const ids = this.#byObject.get(key);
    if (ids === undefined) return;
    this.#byObject.delete(key);
    for (const id of ids) {
      const keys = this.#bySecret.get(id);
      keys?.delete(key);
      if (keys?.size === 0) this.#bySecret.delete(id);
    }
  }
}
