// A Secret that feeds a config file (ModelAPI configYaml.fromSecretKeyRef, MCPServer
// tools.fromSecretKeyRef) enters the config hash by its resourceVersion only, read from a
// metadata-only watch: any change of the Secret rolls the pods, and its data never reaches
// the operator.
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
