// The resource types of the five KAOS kinds and the paths of their objects (kube/paths.ts's
// resourcePath, for kaos.tools/v1alpha1).
import { GROUP, KIND_NAMES, VERSION, type KaosKind } from '../api/kinds.ts';
import { resourcePath, type PathParts, type ResourceType } from '../kube/paths.ts';

export const KAOS_TYPES: Readonly<Record<KaosKind, ResourceType>> = {
  Agent: kaosType('Agent'),
  ModelAPI: kaosType('ModelAPI'),
  MCPServer: kaosType('MCPServer'),
  MemoryStore: kaosType('MemoryStore'),
  AccessGrant: kaosType('AccessGrant'),
};

function kaosType(kind: KaosKind): ResourceType {
  return { group: GROUP, version: VERSION, kind, plural: KIND_NAMES[kind].plural, namespaced: true };
}

/** Path of a KAOS object, of a namespace's collection, or (no namespace) of all of them. */
export function kaosPath(kind: KaosKind, parts: PathParts = {}): string {
  return resourcePath(KAOS_TYPES[kind], parts);
}
