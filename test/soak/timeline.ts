// The soak's flight recorder: every change of a KAOS object or of an object of an owned type, in
// every namespace, as one short line (time, event, identity, uid, resourceVersion, generation,
// controller owner, deletion, phase), kept in memory and written beside the logs of a run with
// violations — the history that explains one (who wrote a child for which incarnation of its
// owner, and when). It watches through the runtime's own reflectors (kube/reflector.ts), which
// resume after every fault.
import { WORKLOAD_KINDS } from '../../src/api/kinds.ts';
import type { KubeObject } from '../../src/api/meta.ts';
import type { ObjectLike } from '../../src/kube/apply.ts';
import { KAOS_TYPES } from '../../src/cluster/kaos-resources.ts';
import { KIND_TABLE } from '../../src/cluster/kind-table.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { Reflector } from '../../src/kube/reflector.ts';
import type { ResourceType } from '../../src/kube/paths.ts';
import { seconds } from './clock.ts';

export class Timeline {
  readonly #lines: string[] = [];
  readonly #reflectors: Reflector[] = [];

  constructor(client: KubeClient, clock: () => number) {
    const types: ResourceType[] = [...WORKLOAD_KINDS.map((k) => KAOS_TYPES[k]), ...Object.values(KIND_TABLE.owned).filter((o) => o.requires === undefined).map((o) => o.type)];
    for (const type of types) {
      const reflector = new Reflector({ client, type });
      reflector.on((event) => this.#lines.push(`${seconds(clock())} ${event.type} ${describe(type.kind, event.object)}`));
      this.#reflectors.push(reflector);
    }
  }

  start(): void {
    for (const r of this.#reflectors) r.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.#reflectors.map((r) => r.stop()));
  }

  /** Every line so far; `about` keeps those that mention it (a name, a uid). */
  lines(about?: string): string[] {
    return about === undefined ? [...this.#lines] : this.#lines.filter((l) => l.includes(about));
  }
}

function describe(kind: string, o: KubeObject): string {
  const m = (o as ObjectLike).metadata ?? {};
  const owner = m.ownerReferences?.find((r) => r.controller === true);
  const phase = (o.status as { phase?: unknown } | undefined)?.phase;
  return [
    `${kind} ${m.namespace ?? ''}/${m.name ?? ''}`,
    `uid=${m.uid ?? ''}`,
    `rv=${m.resourceVersion ?? ''}`,
    ...(typeof o.metadata?.generation === 'number' ? [`gen=${o.metadata.generation}`] : []),
    ...(owner === undefined ? [] : [`owner=${owner.kind}/${owner.name}/${owner.uid}`]),
    ...(m.deletionTimestamp === undefined ? [] : ['deleting']),
    ...(typeof phase === 'string' ? [`phase=${phase}`] : []),
  ].join(' ');
}
