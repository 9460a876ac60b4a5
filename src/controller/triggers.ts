// Pure: which queue keys a cache event wakes. A key is an object reference's string form,
// `Kind/namespace/name` (src/cluster/object-ref.ts).
// - A KAOS object's change wakes itself, and, as a dependency, the objects that use it: a ModelAPI
//   or MCPServer the Agents naming it, an Agent the Agents whose `access` lists it — answered by
//   the dependency index ("who depends on X", the kind table's dependsOn), never by scanning.
// - A dependency type's change (a Secret) wakes the objects that read it, from the same index.
// - An owned child's change wakes its parent, found through its controller ownerReference.
import type { KubeObject } from '../api/lookup.ts';
import { GROUP, isKaosKind, type KaosKind } from '../api/kinds.ts';
import type { ReflectorEvent } from '../kube/reflector.ts';
import { jsonEqual } from '../api/json.ts';
import { refKey } from '../cluster/object-ref.ts';

/** "Who depends on X": the refKeys of the objects of `namespace` that name it (src/cluster/dependency-index.ts). */
export interface DependentsLookup {
  dependents(kind: string, namespace: string, name: string): string[];
}

/**
 * The keys a change of a KAOS object wakes: its own, then (sorted) the objects that depend on it.
 * Dependents are woken on create, delete, and a change of spec, status (not an Agent's) or
 * deletion — what an Agent's reconcile reads of them — but not on a change of labels, annotations or
 * resourceVersion alone, so that a ModelAPI used by 1,000 Agents does not wake them for nothing.
 */
export function keysForKaosEvent(kind: KaosKind, event: ReflectorEvent<KubeObject>, index: DependentsLookup): string[] {
  const { namespace, name } = identity(event.object);
  if (name === '' || namespace === '') return [];
  const keys = [refKey(kind, namespace, name)];
  if (event.type === 'update' && !dependentsCare(kind, event.old, event.object)) return keys;
  for (const key of index.dependents(kind, namespace, name)) {
    if (key !== keys[0]) keys.push(key);
  }
  return keys;
}

/**
 * The keys a change of a dependency type's object (a Secret, kind-table.ts) wakes: the objects
 * that read it. Any change counts: its resourceVersion enters their config hash.
 */
export function keysForDependencyEvent(kind: string, event: ReflectorEvent<KubeObject>, index: DependentsLookup): string[] {
  const { namespace, name } = identity(event.object);
  if (name === '' || namespace === '') return [];
  return index.dependents(kind, namespace, name);
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
    if (isKaosKind(kind) && typeof owner === 'string' && owner !== '') return refKey(kind, namespace, owner);
  }
  return undefined;
}

function identity(object: KubeObject): { namespace: string; name: string } {
  return { namespace: object.metadata?.namespace ?? '', name: object.metadata?.name ?? '' };
}
