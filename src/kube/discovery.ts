// Whether the API server serves a resource type: one discovery GET of its group version
// (`/apis/<group>/<version>`), which every authenticated user may read (the `system:discovery`
// ClusterRole), so it costs the operator no permission on CustomResourceDefinitions.
import type { KubeClient } from './client.ts';
import { isNotFound } from './errors.ts';
import { apiVersionOf, type ResourceType } from './paths.ts';

interface APIResourceList {
  resources?: Array<{ name?: string }>;
}

/** True when `type`'s plural is among the resources of its group version; false on 404. */
export async function isServed(client: Pick<KubeClient, 'get'>, type: ResourceType, options: { signal?: AbortSignal } = {}): Promise<boolean> {
  const path = type.group === '' ? `/api/${type.version}` : `/apis/${apiVersionOf(type)}`;
  try {
    const list = await client.get<APIResourceList>(path, options);
    return (list.resources ?? []).some((r) => r.name === type.plural);
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
