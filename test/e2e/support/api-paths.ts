// A resource as kubectl names it — plural, singular or short name, optionally `.group` — resolved
// to its API path through the API server's discovery, so that a test reads an object over the
// client's HTTP connection instead of a kubectl process. A read that a wait repeats every few
// hundred milliseconds costs 3–4 ms of CPU this way against about 200 ms as `kubectl get` (a Go
// binary started, its kubeconfig and discovery cache read, each time): kubectl stays what the tests
// drive the cluster with and whose output they check, not how they poll.
import type { KubeClient } from '../../../src/kube/client.ts';

interface ApiResource {
  name: string;
  singularName?: string;
  shortNames?: string[];
  namespaced: boolean;
}
interface ApiResourceList {
  groupVersion: string;
  resources: ApiResource[];
}
interface ApiGroupList {
  groups: Array<{ name: string; preferredVersion: { groupVersion: string } }>;
}

interface Resolved {
  /** `/api/v1` or `/apis/<group>/<version>`. */
  prefix: string;
  plural: string;
  namespaced: boolean;
}

/** Every name a resource answers to (plural, singular, short names, each also with `.group`), by client. */
const catalogs = new WeakMap<KubeClient, Promise<Map<string, Resolved>>>();

async function discover(client: KubeClient): Promise<Map<string, Resolved>> {
  const out = new Map<string, Resolved>();
  const add = (prefix: string, group: string, list: ApiResourceList): void => {
    for (const r of list.resources) {
      if (r.name.includes('/')) continue; // a subresource
      const entry = { prefix, plural: r.name, namespaced: r.namespaced };
      for (const name of [r.name, r.singularName, ...(r.shortNames ?? [])]) {
        if (name === undefined || name === '') continue;
        // The first group to claim a bare name keeps it, as kubectl prefers the core group.
        if (!out.has(name)) out.set(name, entry);
        if (group !== '') out.set(`${name}.${group}`, entry);
      }
    }
  };
  add('/api/v1', '', await client.get<ApiResourceList>('/api/v1'));
  const groups = await client.get<ApiGroupList>('/apis');
  const lists = await Promise.all(groups.groups.map((g) => client.get<ApiResourceList>(`/apis/${g.preferredVersion.groupVersion}`)));
  for (const [i, g] of groups.groups.entries()) add(`/apis/${g.preferredVersion.groupVersion}`, g.name, lists[i]!);
  return out;
}

/**
 * The API path of `name` of `resource` (kubectl's names for it) in `namespace` (ignored for a
 * cluster-scoped resource). Discovery is read once per client and again when a name is not found,
 * since a CRD may have been installed since.
 */
export async function objectPath(client: KubeClient, resource: string, namespace: string, name: string): Promise<string> {
  let catalog = catalogs.get(client);
  if (catalog === undefined) catalogs.set(client, (catalog = discover(client)));
  let found = (await catalog).get(resource);
  if (found === undefined) {
    catalogs.set(client, (catalog = discover(client)));
    found = (await catalog).get(resource);
  }
  if (found === undefined) throw new Error(`the API server serves no resource named "${resource}"`);
  return found.namespaced
    ? `${found.prefix}/namespaces/${namespace}/${found.plural}/${name}`
    : `${found.prefix}/${found.plural}/${name}`;
}
