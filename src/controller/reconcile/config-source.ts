// A Secret that feeds a config file (ModelAPI configYaml.fromSecretKeyRef, MCPServer
// tools.fromSecretKeyRef) enters the config hash by its resourceVersion only, read from a
// metadata-only watch: any change of the Secret rolls the pods, and its data never reaches
// the operator.
import { asRecord, asString } from '../../api/json.ts';
import type { ConfigSourceDeps } from '../../render/index.ts';
import type { ReconcileReads } from './context.ts';

/** What render needs of the Secret a SecretKeySelector names: its resourceVersion, when known. */
export function configSourceDeps(reads: ReconcileReads, namespace: string, secretKeyRef: unknown): ConfigSourceDeps {
  const name = asString(asRecord(secretKeyRef)?.name);
  if (name === undefined || name === '') return {};
  const version = reads.secretResourceVersion(namespace, name);
  return version === undefined ? {} : { secretResourceVersion: version };
}
