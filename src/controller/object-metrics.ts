// What the KAOS objects' statuses say, as metrics computed from the cache when /metrics is
// scraped: no state of their own, no API request, nothing written (an idle operator stays idle).
// How many objects of each kind are in each phase (for the dashboard), and for each object whose
// readiness condition is not True, how long it has been so (for the "not Ready for long" alert,
// which names the object: docs/runbooks.md).
import { KINDS, type KaosKind } from '../api/kinds.ts';
import { AGENT_PHASES } from '../api/enums.ts';
import type { KubeObject } from '../api/lookup.ts';
import { OBJECT_SCHEMAS } from '../api/schema/index.ts';
import { METRIC } from '../leaves/metric-names.ts';
import { registerCollected, type MetricValue, type Registry } from '../leaves/prometheus.ts';

/** The `phase` label of an object whose status has none yet (the controller has not written it). */
export const NO_PHASE = 'Unknown';
/** Every phase any kind has (the Agent's are a superset), and NO_PHASE. */
const PHASE_LABELS: readonly string[] = [...AGENT_PHASES, NO_PHASE];

interface StatusView {
  phase?: unknown;
  conditions?: unknown;
}
interface ConditionView {
  type?: unknown;
  status?: unknown;
  reason?: unknown;
  lastTransitionTime?: unknown;
}

/**
 * The condition that says a kind's object is done (Ready; an AccessGrant's Enforced): the one its
 * schema's initial status carries, so that it is stated once, with the CRD's default.
 */
export function readinessCondition(kind: KaosKind): string {
  const status = OBJECT_SCHEMAS[kind].properties['status'] as { default?: { conditions?: readonly { type: string }[] } } | undefined;
  const type = status?.default?.conditions?.[0]?.type;
  if (type === undefined) throw new Error(`${kind}'s status schema has no initial condition`);
  return type;
}

/** The epoch: the initial status's lastTransitionTime, "no transition observed yet" (api/schema/status.ts). */
const NEVER = Date.parse('1970-01-01T00:00:00Z');

/**
 * The series of one kind's objects at `nowMs`: a count per phase (every phase, zeros included, so
 * that a phase that empties reads 0), and one series per object not ready, valued the seconds
 * since its condition last changed (since its creation while the controller has not judged it).
 */
export function objectSeries(kind: KaosKind, objects: readonly KubeObject[], nowMs: number): { counts: MetricValue[]; notReady: MetricValue[] } {
  const condition = readinessCondition(kind);
  const perPhase = new Map<string, number>(PHASE_LABELS.map((p) => [p, 0]));
  const notReady: MetricValue[] = [];
  for (const object of objects) {
    const status = (object.status ?? {}) as StatusView;
    const phase = typeof status.phase === 'string' && status.phase !== '' ? status.phase : NO_PHASE;
    perPhase.set(phase, (perPhase.get(phase) ?? 0) + 1);
    const found = (Array.isArray(status.conditions) ? (status.conditions as ConditionView[]) : []).find((c) => c.type === condition);
    if (found?.status === 'True') continue;
    const changed = typeof found?.lastTransitionTime === 'string' ? Date.parse(found.lastTransitionTime) : Number.NaN;
    const created = Date.parse(String(object.metadata?.creationTimestamp ?? ''));
    const since = Number.isFinite(changed) && changed !== NEVER ? changed : created;
    notReady.push({
      value: Number.isFinite(since) ? Math.max(0, Math.floor((nowMs - since) / 1000)) : 0,
      labels: {
        kind,
        object_namespace: object.metadata?.namespace ?? '',
        name: object.metadata?.name ?? '',
        reason: typeof found?.reason === 'string' ? found.reason : 'NoCondition',
      },
    });
  }
  return { counts: [...perPhase].map(([phase, value]) => ({ value, labels: { kind, phase } })), notReady };
}

/** Registers both metrics over `objects(kind)` (the cache's stores), read at each scrape. */
export function registerObjectMetrics(registry: Registry, objects: (kind: KaosKind) => readonly KubeObject[], now: () => number = Date.now): void {
  // A pass over the cache per metric and scrape: about a millisecond per 10,000 objects.
  const series = (): ReturnType<typeof objectSeries>[] => KINDS.map((kind) => objectSeries(kind, objects(kind), now()));
  registerCollected(registry, {
    name: METRIC.objects,
    help: 'KAOS objects the operator\'s cache holds, by kind and status.phase (Unknown: no status written yet).',
    type: 'gauge',
    values: () => series().flatMap((s) => s.counts),
  });
  registerCollected(registry, {
    name: METRIC.objectNotReady,
    help: 'Seconds since each KAOS object whose readiness condition (Ready; an AccessGrant\'s Enforced) is not True last changed; one series per such object.',
    type: 'gauge',
    values: () => series().flatMap((s) => s.notReady),
  });
}
