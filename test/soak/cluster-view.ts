// The checker's view of the cluster: the operator's own cache (KaosCache with the controller's
// watches and the MCP runtime registry, started here as main.ts starts them) and its reads bound
// as the controller binds them, so the final check resolves every dependency exactly as the
// controller does. It is a cache of its own, listed after the faults, so nothing the operator's
// caches went through (cut watches, restarts) is in it.
import { NO_GRANT_PROJECTION } from '../../src/controller/reconcile/context.ts';
import type { Config } from '../../src/config/config.ts';
import { KaosCache } from '../../src/cluster/cache.ts';
import { bindReads } from '../../src/controller/context-binding.ts';
import { watchRuntimeRegistry } from '../../src/controller/runtime-registry.ts';
import { httpRoutesWanted, registerControllerWatches } from '../../src/controller/watches.ts';
import { KIND_TABLE, type ChildKind } from '../../src/cluster/kind-table.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import type { ObjectLike } from '../../src/kube/apply.ts';
import { resourcePath } from '../../src/kube/paths.ts';
import { silentLogger } from '../../src/leaves/logger.ts';
import type { ClusterState } from './check.ts';

export interface ClusterView {
  /** The state to check now: the cache's reads, and a fresh list of every object of the owned types. */
  state(): Promise<ClusterState>;
  stop(): Promise<void>;
}

export async function watchCluster(client: KubeClient, namespaces: readonly string[], config: Config): Promise<ClusterView> {
  const cache = new KaosCache({ client, namespaces });
  const watches = registerControllerWatches(cache, { httpRoutes: await httpRoutesWanted(client, config) });
  watchRuntimeRegistry(cache, { namespace: config.operatorNamespace, logger: silentLogger });
  cache.start();
  await cache.waitForSync();
  const reads = bindReads({
    cache,
    children: watches.children,
    secrets: watches.dependencies.Secret,
    configMaps: watches.dependencies.ConfigMap,
    httpRoutesServed: watches.httpRoutesServed,
    grantProjection: () => NO_GRANT_PROJECTION,
  });
  const ownedKinds = Object.keys(watches.children) as ChildKind[];
  return {
    async state(): Promise<ClusterState> {
      // Every object of the owned types, labelled or not: a child that lost its label is still one.
      const children: ObjectLike[] = [];
      for (const namespace of namespaces) {
        for (const kind of ownedKinds) {
          const list = await client.list<ObjectLike>(resourcePath(KIND_TABLE.owned[kind].type, { namespace }));
          children.push(...list.items.map((item) => ({ ...item, kind })));
        }
      }
      return { reads, objects: (kind) => cache.reflector(kind).list(), children, config };
    },
    stop: () => cache.stop(),
  };
}
