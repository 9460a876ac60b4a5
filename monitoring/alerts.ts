// The operator's alerts, written once: monitoring/generate.ts renders them into the chart's
// PrometheusRule and into monitoring/prometheus-rules.yaml (what promtool checks and tests:
// test/prometheus/), docs/runbooks.md has an entry per alert, and the end-to-end test evaluates
// them over the live operator's metrics with shorter thresholds. Each alert is a query (what is
// measured, which must return series whenever the operator runs) and a condition on it, so that a
// test can tell "the metric is there" from "the alert fires".
import { METRIC, PROCESS_METRIC } from '../src/leaves/metric-names.ts';
import { TIMEOUT_SECONDS } from '../src/admission/webhook-configs.ts';

/**
 * The API server's count of admission requests it refused because a webhook failed (its
 * `error_type` says how): the one view of a webhook the API server cannot reach at all (a timeout,
 * a refused connection, a certificate it does not trust), which the operator never sees.
 * kube-prometheus-stack scrapes it; the webhooks' names all end in `.kaos.tools`.
 */
export const API_SERVER_WEBHOOK_REJECTIONS = 'apiserver_admission_webhook_rejection_count';

/** Where each alert's runbook entry is: docs/runbooks.md#<alert name, lowercased>. */
export const RUNBOOK_BASE = 'https://github.com/kaos-tools/kaos-operator/blob/main/docs/runbooks.md';

/** The job label of the operator's series as the chart's ServiceMonitor scrapes them (the metrics Service's name). */
export const DEFAULT_JOB = 'kaos-operator-metrics';

/** Every threshold, with its default: docs/runbooks.md explains each, and the chart's values can change them. */
export interface Thresholds {
  /** Share of admission requests answered 5xx. */
  webhookErrorRatio: number;
  webhookErrorsFor: string;
  webhookUnreachableFor: string;
  /** Seconds of p99 admission latency (the API server gives up at TIMEOUT_SECONDS). */
  webhookLatencySeconds: number;
  webhookSlowFor: string;
  operatorDownFor: string;
  noLeaderFor: string;
  certificateExpiryDays: number;
  reconcileFailingFor: string;
  /** Seconds an object may stay not Ready. */
  notReadySeconds: number;
  queueDepth: number;
  queueBacklogFor: string;
  eventLoopLagSeconds: number;
  eventLoopFor: string;
  projectionFailingFor: string;
  /** Restarts of one replica within `restartWindow`. */
  restarts: number;
  restartWindow: string;
  /** The window of the rates. */
  rateWindow: string;
}

export const DEFAULT_THRESHOLDS: Thresholds = {
  webhookErrorRatio: 0.05,
  webhookErrorsFor: '5m',
  webhookUnreachableFor: '5m',
  webhookLatencySeconds: TIMEOUT_SECONDS / 2,
  webhookSlowFor: '10m',
  operatorDownFor: '5m',
  noLeaderFor: '5m',
  certificateExpiryDays: 7,
  reconcileFailingFor: '15m',
  notReadySeconds: 900,
  queueDepth: 100,
  queueBacklogFor: '15m',
  eventLoopLagSeconds: 0.5,
  eventLoopFor: '10m',
  projectionFailingFor: '15m',
  restarts: 2,
  restartWindow: '30m',
  rateWindow: '5m',
};

/** Thresholds or stand-ins for them (the chart's template puts a values lookup where each goes). */
export type ThresholdValues = { readonly [K in keyof Thresholds]: Thresholds[K] | string };

export interface Alert {
  alert: string;
  severity: 'critical' | 'warning';
  /** What is measured: returns series whenever the operator runs (and, for an object's alert, while one is affected). */
  query: string;
  /** Appended to the query: when it pages. */
  condition: string;
  for?: string;
  summary: string;
  /** Go template: names the object or replica from the query's labels. */
  description: string;
}

/** The alerts, over the series of `job`. */
export function alerts(t: ThresholdValues = DEFAULT_THRESHOLDS, job = DEFAULT_JOB): Alert[] {
  const s = (extra = ''): string => `{job="${job}"${extra === '' ? '' : `,${extra}`}}`;
  const w = t.rateWindow;
  const requests = (extra = ''): string => `sum by (webhook) (rate(${METRIC.webhookRequests}${s(extra)}[${w}]))`;
  return [
    {
      alert: 'KaosOperatorDown',
      severity: 'critical',
      query: `sum(up${s()}) or vector(0)`,
      condition: '< 1',
      for: t.operatorDownFor,
      summary: 'No kaos-operator replica is up.',
      description: `No replica of kaos-operator (job ${job}) has answered a scrape for ${t.operatorDownFor}: every create and update of a KAOS object is refused (the validating and mutating webhooks' failurePolicy is Fail) and nothing is reconciled.`,
    },
    {
      alert: 'KaosWebhookErrors',
      severity: 'critical',
      query: `(sum by (webhook) (rate(${METRIC.webhookRequests}${s('code=~"5.."')}[${w}])) or ${requests()} * 0) / ${requests()}`,
      condition: `> ${t.webhookErrorRatio}`,
      for: t.webhookErrorsFor,
      summary: 'The admission webhook answers with server errors.',
      description: '{{ $value | humanizePercentage }} of the admission requests to {{ $labels.webhook }} were answered with HTTP 5xx over the last ' + w + ': the API server refuses those requests.',
    },
    {
      alert: 'KaosWebhookUnreachable',
      severity: 'critical',
      query: `sum by (name) (rate(${API_SERVER_WEBHOOK_REJECTIONS}{name=~".+[.]kaos[.]tools",error_type="calling_webhook_error"}[${w}]))`,
      condition: '> 0',
      for: t.webhookUnreachableFor,
      summary: 'The API server cannot call the admission webhook.',
      description: `The API server refused {{ $value | printf "%.2f" }} requests/s for ${t.webhookUnreachableFor} because it could not call the webhook {{ $labels.name }} (a timeout, a refused connection, a certificate it does not trust): every create and update of that kind fails.`,
    },
    {
      alert: 'KaosWebhookSlow',
      severity: 'warning',
      query: `histogram_quantile(0.99, sum by (webhook, le) (rate(${METRIC.webhookLatency}_bucket${s()}[${w}])))`,
      condition: `> ${t.webhookLatencySeconds}`,
      for: t.webhookSlowFor,
      summary: 'The admission webhook is close to the API server\'s timeout.',
      description: `The p99 latency of {{ $labels.webhook }} is {{ $value | humanizeDuration }}; the API server gives up after ${TIMEOUT_SECONDS}s and then refuses the request.`,
    },
    {
      alert: 'KaosNoLeader',
      severity: 'critical',
      query: `sum by (name) (${METRIC.leaderStatus}${s()})`,
      condition: '< 1',
      for: t.noLeaderFor,
      summary: 'No kaos-operator replica holds the Lease: nothing is reconciled.',
      description: `No replica has held the Lease {{ $labels.name }} for ${t.noLeaderFor}: no KAOS object is reconciled and no status is updated (admission still works).`,
    },
    {
      alert: 'KaosWebhookCertificateExpiry',
      severity: 'warning',
      query: `min by (pod) (${METRIC.certificateExpiry}${s()}) / 86400`,
      condition: `< ${t.certificateExpiryDays}`,
      summary: 'The webhook\'s serving certificate expires soon.',
      description: 'The certificate {{ $labels.pod }} serves expires in {{ $value | printf "%.1f" }} days: its renewal did not reach the pod. Once it expires, every create and update of a KAOS object is refused.',
    },
    {
      alert: 'KaosReconcileErrors',
      severity: 'warning',
      query: `max by (controller) (${METRIC.reconcileFailing}${s()})`,
      condition: '> 0',
      for: t.reconcileFailingFor,
      summary: 'Reconciles keep failing.',
      description: `{{ $value }} objects of the {{ $labels.controller }} controller have failed every reconcile for ${t.reconcileFailingFor} (retried with backoff); ${METRIC.reconcileErrorsByReason} says why, the operator's log which object.`,
    },
    {
      alert: 'KaosObjectNotReady',
      severity: 'warning',
      query: `max by (kind, object_namespace, name, reason) (${METRIC.objectNotReady}${s()})`,
      condition: `> ${t.notReadySeconds}`,
      summary: 'A KAOS object has not been Ready for long.',
      description: '{{ $labels.kind }} {{ $labels.object_namespace }}/{{ $labels.name }} has not been Ready for {{ $value | humanizeDuration }} (reason {{ $labels.reason }}).',
    },
    {
      alert: 'KaosWorkQueueBacklog',
      severity: 'warning',
      query: `max by (controller) (${METRIC.queueDepth}${s()})`,
      condition: `> ${t.queueDepth}`,
      for: t.queueBacklogFor,
      summary: 'The controller\'s work queue is not draining.',
      description: `{{ $value }} objects wait in the {{ $labels.controller }} work queue, which has stayed above ${t.queueDepth} for ${t.queueBacklogFor}: changes reach the cluster late.`,
    },
    {
      alert: 'KaosEventLoopBlocked',
      severity: 'warning',
      query: `max by (pod, thread) (label_replace(${PROCESS_METRIC.eventLoopLagP99}${s()}, "thread", "main", "thread", ""))`,
      condition: `> ${t.eventLoopLagSeconds}`,
      for: t.eventLoopFor,
      summary: 'An event loop of the operator is held.',
      description: `The {{ $labels.thread }} thread of {{ $labels.pod }} ran its timers {{ $value | humanizeDuration }} late (p99) for ${t.eventLoopFor}: requests wait that long before they are read (on the admission thread, every admission request).`,
    },
    {
      alert: 'KaosAccessGrantProjectionFailing',
      severity: 'warning',
      query: `sum by (pod) (increase(${METRIC.projectionPasses}${s('result="error"')}[${t.projectionFailingFor}]))`,
      condition: `> 0 unless sum by (pod) (increase(${METRIC.projectionPasses}${s('result="success"')}[${t.projectionFailingFor}])) > 0`,
      summary: 'The AccessGrant policy projection fails.',
      description: `Every pass of the AccessGrant policy projection on {{ $labels.pod }} failed over the last ${t.projectionFailingFor}: AccessGrants say ProjectionFailed and the policy decision point keeps the last data written.`,
    },
    {
      alert: 'KaosOperatorRestarting',
      severity: 'warning',
      query: `max by (pod) (changes(${PROCESS_METRIC.startTime}${s()}[${t.restartWindow}]))`,
      condition: `> ${t.restarts}`,
      summary: 'A kaos-operator replica keeps restarting.',
      description: `{{ $labels.pod }} restarted {{ $value }} times in ${t.restartWindow}.`,
    },
  ];
}

/** The anchor of an alert's entry in docs/runbooks.md (its heading is the alert's name). */
export const runbookUrl = (alert: string, base = RUNBOOK_BASE): string => `${base}#${alert.toLowerCase()}`;

/**
 * The rule groups (the rules file format, and a PrometheusRule's spec.groups). The query is
 * parenthesised: a condition binds tighter than its `or`.
 */
export function ruleGroups(t: ThresholdValues = DEFAULT_THRESHOLDS, job = DEFAULT_JOB, runbookBase = RUNBOOK_BASE): { name: string; rules: Record<string, unknown>[] }[] {
  return [{
    name: 'kaos-operator',
    rules: alerts(t, job).map((a) => ({
      alert: a.alert,
      expr: `(${a.query}) ${a.condition}`,
      ...(a.for === undefined ? {} : { for: a.for }),
      labels: { severity: a.severity },
      annotations: { summary: a.summary, description: a.description, runbook_url: runbookUrl(a.alert, runbookBase) },
    })),
  }];
}
