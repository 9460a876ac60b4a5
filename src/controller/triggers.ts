// Pure: which queue keys a cache event wakes, and the key format. A key is `Kind/namespace/name`
// ('/' occurs in none of the three, so a key splits back unambiguously).
// - A KAOS object's change wakes itself, and, as a dependency, the Agents that use it: a ModelAPI
//   or MCPServer the Agents naming it, an Agent the Agents whose `access` lists it — answered by
//   the reference index ("who references X"), never by scanning.
// - An owned child's change wakes its parent, found through its controller ownerReference.
import type { KubeObject } from '../api/lookup.ts';
import { GROUP, isKaosKind, type KaosKind } from '../api/kinds.ts';
import type { ReflectorEvent } from '../kube/reflector.ts';
import { jsonEqual } from '../api/json.ts';

export interface ObjectKey {
  kind: KaosKind;
  namespace: string;
  name: string;
}

export function makeKey(kind: KaosKind, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/** The parts of a key; a clear error for anything makeKey() cannot have produced. */
export function parseKey(key: string): ObjectKey {
  const parts = key.split('/');
  const [kind, namespace, name] = parts;
  if (parts.length !== 3 || !isKaosKind(kind) || namespace === undefined || namespace === '' || name === undefined || name === '') {
    throw new TypeError(`invalid queue key ${JSON.stringify(key)}: expected "<Agent|ModelAPI|MCPServer>/<namespace>/<name>"`);
  }
  return { kind, namespace, name };
}

/** "Who references X": the Agents of `namespace` that name the object (src/kube/references.ts). */
export interface ReferenceLookup {
  referencedBy(kind: KaosKind, namespace: string, name: string): string[];
}

/**
 * The keys a change of a KAOS object wakes: its own, then (sorted) the Agents that depend on it.
 * Dependents are woken on create, delete, and a change of spec, status (not an Agent's) or
 * deletion — what an Agent's reconcile reads of them — but not on a change of labels, annotations or
 * resourceVersion alone, so that a ModelAPI used by 1,000 Agents does not wake them for nothing.
 */
export function keysForKaosEvent(kind: KaosKind, event: ReflectorEvent<KubeObject>, references: ReferenceLookup): string[] {
  const { namespace, name } = identity(event.object);
  if (name === '' || namespace === '') return [];
  const keys = [makeKey(kind, namespace, name)];
  if (event.type === 'update' && !dependentsCare(kind, event.old, event.object)) return keys;
  for (const agent of references.referencedBy(kind, namespace, name)) {
    const key = makeKey('Agent', namespace, agent);
    if (key !== keys[0]) keys.push(key);
  }
  return keys;
}

/**
 * An Agent is read as a peer through its spec only (reconcile/agent.ts: its endpoint follows from
 * its spec), so its status writes wake no other Agent; a ModelAPI's or MCPServer's readiness is
 * in its status.
 */
function dependentsCare(kind: KaosKind, old: KubeObject, object: KubeObject): boolean {
  return (
    !jsonEqual(old.spec, object.spec) ||
    (kind !== 'Agent' && !jsonEqual(old.status, object.status)) ||
    old.metadata?.deletionTimestamp !== object.metadata?.deletionTimestamp
  );
}

/**
 * The keys a change of an owned child (Deployment, Service, ConfigMap, HTTPRoute) wakes: its
 * controller owner, when that is a KAOS object. On an update whose owner changed, both owners.
 */
export function keysForChildEvent(event: ReflectorEvent<KubeObject>): string[] {
  const keys = [controllerOwnerKey(event.object)];
  if (event.type === 'update') keys.push(controllerOwnerKey(event.old));
  return [...new Set(keys.filter((k): k is string => k !== undefined))];
}

/** The key of the object's controller ownerReference when it is a kaos.tools kind (any version). */
export function controllerOwnerKey(object: KubeObject): string | undefined {
  const { namespace, name } = identity(object);
  if (name === '' || namespace === '') return undefined;
  const refs = object.metadata?.ownerReferences;
  if (!Array.isArray(refs)) return undefined;
  for (const ref of refs as unknown[]) {
    if (typeof ref !== 'object' || ref === null) continue;
    const { controller, apiVersion, kind, name: owner } = ref as Record<string, unknown>;
    if (controller !== true || typeof apiVersion !== 'string' || !apiVersion.startsWith(`${GROUP}/`)) continue;
    // Owners are always in the child's namespace: Kubernetes forbids cross-namespace owners.
    if (isKaosKind(kind) && typeof owner === 'string' && owner !== '') return makeKey(kind, namespace, owner);
  }
  return undefined;
}

function identity(object: KubeObject): { namespace: string; name: string } {
  return { namespace: object.metadata?.namespace ?? '', name: object.metadata?.name ?? '' };
}
