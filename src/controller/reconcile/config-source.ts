// A Secret that feeds a config file (ModelAPI configYaml.fromSecretKeyRef, MCPServer
// tools.fromSecretKeyRef), or the Secret or ConfigMap of a Proxy's API key, enters the config
// hash by its resourceVersion only, read from a metadata-only watch: any change of it rolls the
// pods, and its data never reaches the operator.
import { asRecord, getIn } from '../../api/json.ts';
import type { KaosKind } from '../../api/kinds.ts';
import type { KubeObject } from '../../api/meta.ts';
import { dependencyNames } from '../../cluster/kind-table.ts';
import type { ConfigSourceDeps } from '../../render/index.ts';
import type { ReconcileReads } from './context.ts';

/**
 * What render needs of the Secret `object` reads its config from (the kind table's
 * `configSecret`, the same answer that wakes it when the Secret changes): its resourceVersion,
 * when known.
 */
export function configSourceDeps(reads: ReconcileReads, kind: KaosKind, object: KubeObject): ConfigSourceDeps {
  const name = dependencyNames(kind, 'configSecret', object)[0];
  if (name === undefined) return {};
  const namespace = object.metadata?.namespace ?? '';
  const version = reads.secretResourceVersion(namespace, name);
  return version === undefined ? {} : { secretResourceVersion: version };
}

/** What is known of a Proxy ModelAPI's API key source: render's deps, or the one that is missing. */
export type ApiKeyDeps =
  | { readonly deps: Pick<ConfigSourceDeps, 'apiKeySecretResourceVersion' | 'apiKeyConfigMapResourceVersion'> }
  | { readonly missing: { readonly kind: 'Secret' | 'ConfigMap'; readonly name: string } };

/**
 * A Proxy ModelAPI's API key from a Secret or a ConfigMap (docs/api.md, "Newer KAOS shapes"; the
 * kind table's `apiKeySecret` and `apiKeyConfigMap`, the same answers that wake it when the object
 * changes) is a dependency like the config file's: its resourceVersion enters the config hash (env
 * from either is read only at container start, so a new key must roll the pods), and one that does
 * not exist (unless `optional`) is reported instead of rendering a pod that cannot start.
 */
export function apiKeyDeps(reads: ReconcileReads, modelAPI: KubeObject): ApiKeyDeps {
  const namespace = modelAPI.metadata?.namespace ?? '';
  const secret = dependencyNames('ModelAPI', 'apiKeySecret', modelAPI)[0];
  if (secret !== undefined) {
    const version = reads.secretResourceVersion(namespace, secret);
    if (version !== undefined) return { deps: { apiKeySecretResourceVersion: version } };
    return optional(modelAPI, 'secretKeyRef') ? { deps: {} } : { missing: { kind: 'Secret', name: secret } };
  }
  const configMap = dependencyNames('ModelAPI', 'apiKeyConfigMap', modelAPI)[0];
  if (configMap !== undefined) {
    const version = reads.configMapResourceVersion(namespace, configMap);
    if (version !== undefined) return { deps: { apiKeyConfigMapResourceVersion: version } };
    return optional(modelAPI, 'configMapKeyRef') ? { deps: {} } : { missing: { kind: 'ConfigMap', name: configMap } };
  }
  return { deps: {} };
}

function optional(modelAPI: KubeObject, ref: 'secretKeyRef' | 'configMapKeyRef'): boolean {
  return asRecord(getIn(modelAPI.spec, 'proxyConfig', 'apiKey', 'valueFrom', ref))?.optional === true;
}
