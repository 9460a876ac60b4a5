// A Secret that feeds a config file (ModelAPI configYaml.fromSecretKeyRef, MCPServer
// tools.fromSecretKeyRef) enters the config hash by its resourceVersion only, read from a
// metadata-only watch: any change of the Secret rolls the pods, and its data never reaches
// the operator.
import { asRecord, asString, getIn } from '../../api/json.ts';
import { apiKeySecretOf } from '../secret-index.ts';
import type { ConfigSourceDeps } from '../../render/index.ts';
import type { ReconcileReads } from './context.ts';

/** What render needs of the Secret a SecretKeySelector names: its resourceVersion, when known. */
export function configSourceDeps(reads: ReconcileReads, namespace: string, secretKeyRef: unknown): ConfigSourceDeps {
  const name = asString(asRecord(secretKeyRef)?.name);
  if (name === undefined || name === '') return {};
  const version = reads.secretResourceVersion(namespace, name);
  return version === undefined ? {} : { secretResourceVersion: version };
}

/**
 * A Proxy ModelAPI's API key from a Secret (docs/api.md §7.1) is a dependency like the config
 * file's: its resourceVersion enters the config hash (a new key rolls the pods), and a Secret that
 * does not exist (unless `optional`) is reported instead of rendering a pod that cannot start.
 * A key from a ConfigMap (`configMapKeyRef`) is rendered but not yet a watched dependency: the
 * operator watches only the ConfigMaps it owns, so neither its absence nor its change is seen.
 */
export function apiKeySecretDeps(
  reads: ReconcileReads,
  namespace: string,
  spec: unknown,
): { deps: Pick<ConfigSourceDeps, 'apiKeySecretResourceVersion'> } | { missing: string } {
  const name = apiKeySecretOf(spec);
  if (name === undefined) return { deps: {} };
  const version = reads.secretResourceVersion(namespace, name);
  if (version !== undefined) return { deps: { apiKeySecretResourceVersion: version } };
  const optional = asRecord(getIn(spec, 'proxyConfig', 'apiKey', 'valueFrom', 'secretKeyRef'))?.optional === true;
  return optional ? { deps: {} } : { missing: name };
}
