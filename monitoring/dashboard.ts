// The operator's Grafana dashboard as plain typed JSON (Grafana's dashboard model, schemaVersion
// 39), its queries built from the metric names the operator registers (src/leaves/metric-names.ts).
// monitoring/generate.ts writes it to chart/dashboards/kaos-operator.json, which the chart ships
// in a ConfigMap for Grafana's sidecar and users import as it is; the end-to-end test evaluates
// every query over the live operator's metrics (dashboardQueries).
import { METRIC, PROCESS_METRIC } from '../src/leaves/metric-names.ts';
import { TIMEOUT_SECONDS } from '../src/admission/webhook-configs.ts';

export const DASHBOARD_UID = 'kaos-operator';

interface Target {
  expr: string;
  legendFormat: string;
}
interface Panel {
  title: string;
  description: string;
  unit: string;
  targets: Target[];
  /** A line drawn at this value (e.g. the API server's timeout). */
  threshold?: number;
  /** A table of the current values rather than a graph. */
  table?: boolean;
}
interface Row {
  title: string;
  panels: Panel[];
}

/** The series of the job the dashboard's `job` variable selects. */
const s = (extra = ''): string => `{job=~"$job"${extra === '' ? '' : `,${extra}`}}`;
const RATE = '$__rate_interval';
const q = (expr: string, legendFormat: string): Target => ({ expr, legendFormat });
const p99 = (metric: string, by: string, extra = ''): string => `histogram_quantile(0.99, sum by (${by}, le) (rate(${metric}_bucket${s(extra)}[${RATE}])))`;
const p50 = (metric: string, by: string): string => `histogram_quantile(0.5, sum by (${by}, le) (rate(${metric}_bucket${s()}[${RATE}])))`;

export const ROWS: readonly Row[] = [
  {
    title: 'Admission',
    panels: [
      { title: 'Requests by webhook', description: 'Admission requests answered per second, by webhook path.', unit: 'reqps', targets: [q(`sum by (webhook) (rate(${METRIC.webhookRequests}${s()}[${RATE}]))`, '{{webhook}}')] },
      { title: 'Answers by webhook and HTTP code', description: 'Requests answered per second by HTTP code: a refusal is a 200; 5xx means the API server refuses the request itself.', unit: 'reqps', targets: [q(`sum by (webhook, code) (rate(${METRIC.webhookRequests}${s()}[${RATE}]))`, '{{webhook}} {{code}}')] },
      {
        title: 'Latency p50 / p99 against the timeout',
        description: `The webhooks' own latency; the API server gives up after ${TIMEOUT_SECONDS} s (the line).`,
        unit: 's',
        threshold: TIMEOUT_SECONDS,
        targets: [q(p50(METRIC.webhookLatency, 'webhook'), 'p50 {{webhook}}'), q(p99(METRIC.webhookLatency, 'webhook'), 'p99 {{webhook}}')],
      },
      { title: 'In flight', description: 'Admission requests being served now, by replica.', unit: 'short', targets: [q(`sum by (pod) (${METRIC.webhookInFlight}${s()})`, '{{pod}}')] },
    ],
  },
  {
    title: 'Controller',
    panels: [
      { title: 'Reconciles by result', description: 'Reconciles per second, by controller and result.', unit: 'ops', targets: [q(`sum by (controller, result) (rate(${METRIC.reconciles}${s()}[${RATE}]))`, '{{controller}} {{result}}')] },
      {
        title: 'Reconcile errors by reason',
        description: 'Failed reconciles per second by reason, and the objects whose last reconcile failed.',
        unit: 'short',
        targets: [
          q(`sum by (controller) (rate(${METRIC.reconcileErrors}${s()}[${RATE}]))`, 'errors/s {{controller}}'),
          q(`sum by (controller, reason) (rate(${METRIC.reconcileErrorsByReason}${s()}[${RATE}]))`, 'errors/s {{controller}} {{reason}}'),
          q(`max by (controller) (${METRIC.reconcileFailing}${s()})`, 'failing objects {{controller}}'),
        ],
      },
      { title: 'Work queue depth', description: 'Objects waiting to be reconciled, by controller.', unit: 'short', targets: [q(`max by (controller) (${METRIC.queueDepth}${s()})`, '{{controller}}')] },
      {
        title: 'Queue wait and reconcile time p99',
        description: 'How long an object waited in the queue, and how long its reconcile took.',
        unit: 's',
        targets: [q(p99(METRIC.queueDuration, 'controller'), 'wait {{controller}}'), q(p99(METRIC.reconcileTime, 'controller'), 'reconcile {{controller}}')],
      },
      { title: 'Objects by kind and phase', description: 'KAOS objects by kind and status.phase (Unknown: not reconciled yet).', unit: 'short', targets: [q(`max by (kind, phase) (${METRIC.objects}${s()})`, '{{kind}} {{phase}}')] },
      {
        title: 'Objects not Ready',
        description: 'Each object whose Ready (AccessGrant: Enforced) condition is not True, and for how long.',
        unit: 's',
        table: true,
        targets: [q(`max by (kind, object_namespace, name, reason) (${METRIC.objectNotReady}${s()})`, '{{kind}} {{object_namespace}}/{{name}} {{reason}}')],
      },
      { title: 'Workers busy', description: 'Reconciles running, against each controller\'s maximum.', unit: 'short', targets: [q(`sum by (controller) (${METRIC.activeWorkers}${s()})`, 'busy {{controller}}'), q(`max by (controller) (${METRIC.maxConcurrentReconciles}${s()})`, 'max {{controller}}')] },
      {
        title: 'AccessGrant projection',
        description: 'Policy projection passes by result, and writes of the policy ConfigMap, per second.',
        unit: 'ops',
        targets: [q(`sum by (result) (rate(${METRIC.projectionPasses}${s()}[${RATE}]))`, 'passes {{result}}'), q(`sum(rate(${METRIC.projectionWrites}${s()}[${RATE}]))`, 'writes')],
      },
    ],
  },
  {
    title: 'Process',
    panels: [
      {
        title: 'Event-loop lag p99 by thread',
        description: 'How late each thread ran its timers (main: controller and cache; admission: the webhooks once they have a thread).',
        unit: 's',
        targets: [q(`max by (pod, thread) (label_replace(${PROCESS_METRIC.eventLoopLagP99}${s()}, "thread", "main", "thread", ""))`, '{{pod}} {{thread}}')],
      },
      { title: 'Heap used by thread', description: 'V8 heap in use per thread.', unit: 'bytes', targets: [q(`max by (pod, thread) (label_replace(${PROCESS_METRIC.heapUsed}${s()}, "thread", "main", "thread", ""))`, '{{pod}} {{thread}}')] },
      { title: 'Resident memory', description: 'The process\'s RSS, against the chart\'s memory limit.', unit: 'bytes', targets: [q(`max by (pod) (${PROCESS_METRIC.rss}${s()})`, '{{pod}}')] },
      { title: 'GC pause time', description: 'Seconds per second spent in garbage collection, by kind.', unit: 'percentunit', targets: [q(`sum by (pod, kind) (rate(${PROCESS_METRIC.gcDuration}_sum${s()}[${RATE}]))`, '{{pod}} {{kind}}')] },
      { title: 'CPU', description: 'CPU seconds per second.', unit: 'short', targets: [q(`sum by (pod) (rate(${PROCESS_METRIC.cpu}${s()}[${RATE}]))`, '{{pod}}')] },
    ],
  },
  {
    title: 'Leadership and certificate',
    panels: [
      { title: 'Leader', description: 'Which replica holds the Lease (1).', unit: 'short', targets: [q(`max by (pod, name) (${METRIC.leaderStatus}${s()})`, '{{pod}}')] },
      { title: 'Certificate expires in', description: 'Days until the certificate each replica serves expires.', unit: 'd', targets: [q(`min by (pod) (${METRIC.certificateExpiry}${s()}) / 86400`, '{{pod}}')] },
      { title: 'Restarts', description: 'Process starts per replica in the last hour.', unit: 'short', targets: [q(`changes(${PROCESS_METRIC.startTime}${s()}[1h])`, '{{pod}}')] },
    ],
  },
];

/** Every query of the dashboard, its variables set (for the end-to-end test). */
export function dashboardQueries(job: string, rateWindow: string): { panel: string; expr: string }[] {
  return ROWS.flatMap((row) => row.panels.flatMap((panel) => panel.targets.map((target) => ({
    panel: `${row.title} / ${panel.title}`,
    expr: target.expr.replaceAll('$job', job).replaceAll('$__rate_interval', rateWindow),
  }))));
}

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/** The dashboard model Grafana imports. */
export function dashboard(): Record<string, unknown> {
  const panels: Record<string, unknown>[] = [];
  let id = 1;
  let y = 0;
  for (const row of ROWS) {
    panels.push({ id: id++, type: 'row', title: row.title, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] });
    y += 1;
    row.panels.forEach((panel, i) => {
      const x = (i % 3) * 8;
      if (i > 0 && i % 3 === 0) y += 8;
      panels.push({
        id: id++,
        type: panel.table === true ? 'table' : 'timeseries',
        title: panel.title,
        description: panel.description,
        datasource: DATASOURCE,
        gridPos: { h: 8, w: 8, x, y },
        fieldConfig: {
          defaults: {
            unit: panel.unit,
            ...(panel.threshold === undefined ? {} : {
              thresholds: { mode: 'absolute', steps: [{ color: 'green', value: null }, { color: 'red', value: panel.threshold }] },
              custom: { thresholdsStyle: { mode: 'line' } },
            }),
          },
          overrides: [],
        },
        options: panel.table === true ? { showHeader: true } : { legend: { displayMode: 'list', placement: 'bottom' }, tooltip: { mode: 'multi' } },
        targets: panel.targets.map((target, j) => ({
          refId: String.fromCharCode(65 + j),
          datasource: DATASOURCE,
          expr: target.expr,
          legendFormat: target.legendFormat,
          ...(panel.table === true ? { instant: true, format: 'table' } : { range: true }),
        })),
      });
    });
    y += 8;
  }
  return {
    uid: DASHBOARD_UID,
    title: 'kaos-operator',
    description: 'Admission, the controller, the process, leadership and the serving certificate of kaos-operator (docs/metrics.md).',
    tags: ['kaos', 'kaos-operator'],
    schemaVersion: 39,
    version: 1,
    editable: true,
    graphTooltip: 1,
    refresh: '30s',
    time: { from: 'now-3h', to: 'now' },
    timezone: '',
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {}, hide: 0 },
        {
          name: 'job',
          label: 'Job',
          type: 'query',
          datasource: DATASOURCE,
          query: { query: `label_values(${METRIC.objects}, job)`, refId: 'job' },
          definition: `label_values(${METRIC.objects}, job)`,
          refresh: 2,
          includeAll: false,
          multi: false,
          current: {},
          hide: 0,
        },
      ],
    },
    annotations: { list: [] },
    panels,
  };
}
