// The identity of a KAOS object: one reference type and its one string form `Kind/namespace/name`
// — the controller's queue keys and the ids of the dependency index. '/' occurs in none of a
// kind, a namespace or an object name, so the string splits back unambiguously.
import { isKaosKind, KINDS, type KaosKind } from '../api/kinds.ts';
import type { KubeObject } from '../kube/meta.ts';

/** An object of a KAOS kind: what a queue key and an index id stand for. */
export interface ObjectRef<K extends KaosKind = KaosKind> {
  readonly kind: K;
  readonly namespace: string;
  readonly name: string;
}

/**
 * The string form of a reference: `Kind/namespace/name`. Also names the objects of other kinds
 * KAOS objects depend on (`Secret/namespace/name`, dependency-index.ts), never parsed back.
 */
export function refKey(kind: KaosKind | string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/** The reference a string form stands for; a clear error for anything refKey() cannot have produced. */
export function parseRefKey(key: string): ObjectRef {
  const parts = key.split('/');
  const [kind, namespace, name] = parts;
  if (parts.length !== 3 || !isKaosKind(kind) || namespace === undefined || namespace === '' || name === undefined || name === '') {
    throw new TypeError(`invalid queue key ${JSON.stringify(key)}: expected "<${KINDS.join('|')}>/<namespace>/<name>"`);
  }
  return { kind, namespace, name };
}

/** The reference of an object read as `kind`; undefined when it lacks a namespace or a name. */
export function refOf<K extends KaosKind>(kind: K, object: KubeObject): ObjectRef<K> | undefined {
  const namespace = object.metadata?.namespace ?? '';
  const name = object.metadata?.name ?? '';
  return namespace === '' || name === '' ? undefined : { kind, namespace, name };
}
