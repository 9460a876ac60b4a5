// A Secret that feeds a config file (ModelAPI configYaml.fromSecretKeyRef, MCPServer
// tools.fromSecretKeyRef) enters the config hash by its resourceVersion only, read from a
// metadata-only watch: any change of the Secret rolls the pods, and its data never reaches
// the operator.
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

/**
 * A Proxy ModelAPI's API key from a Secret (docs/api.md, "Newer KAOS shapes"; the kind table's
 * `apiKeySecret`, the same answer that wakes it when the Secret changes) is a dependency like the
 * config file's: its resourceVersion enters the config hash (a new key rolls the pods), and a
 * Secret that does not exist (unless `optional`) is reported instead of rendering a pod that
 * cannot start. A key from a ConfigMap (`configMapKeyRef`) is rendered but not yet a watched
 * dependency: the operator watches only the ConfigMaps it owns, so neither its absence nor its
 * change is seen.
 */
export function apiKeySecretDeps(
  reads: ReconcileReads,
  modelAPI: KubeObject,
): { deps: Pick<ConfigSourceDeps, 'apiKeySecretResourceVersion'> } | { missing: string } {
  const name = dependencyNames('ModelAPI', 'apiKeySecret', modelAPI)[0];
  if (name === undefined) return { deps: {} };
  const version = reads.secretResourceVersion(modelAPI.metadata?.namespace ?? '', name);
  if (version !== undefined) return { deps: { apiKeySecretResourceVersion: version } };
  const optional = asRecord(getIn(modelAPI.spec, 'proxyConfig', 'apiKey', 'valueFrom', 'secretKeyRef'))?.optional === true;
  return optional ? { deps: {} } : { missing: name };
}
