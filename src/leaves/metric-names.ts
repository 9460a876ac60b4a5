// The name of every metric the operator exports, in one place: the modules that register them,
// the alerts and the dashboard (monitoring/) read them from here, so that a query cannot name a
// metric the operator does not export. docs/metrics.md is their reference (test/unit/monitoring
// checks it lists exactly these; the end-to-end test, that the live operator exports exactly them).

/** Ours, and controller-runtime's and client-go's names for what they measure too. */
export const METRIC = {
  webhookRequests: 'controller_runtime_webhook_requests_total',
  webhookLatency: 'controller_runtime_webhook_latency_seconds',
  webhookInFlight: 'controller_runtime_webhook_requests_in_flight',
  certificateExpiry: 'kaos_operator_webhook_certificate_expiry_seconds',
  queueDepth: 'workqueue_depth',
  queueAdds: 'workqueue_adds_total',
  queueRetries: 'workqueue_retries_total',
  queueDuration: 'workqueue_queue_duration_seconds',
  reconciles: 'controller_runtime_reconcile_total',
  reconcileErrors: 'controller_runtime_reconcile_errors_total',
  reconcileTime: 'controller_runtime_reconcile_time_seconds',
  activeWorkers: 'controller_runtime_active_workers',
  maxConcurrentReconciles: 'controller_runtime_max_concurrent_reconciles',
  reconcileErrorsByReason: 'kaos_operator_reconcile_errors_total',
  reconcileFailing: 'kaos_operator_reconcile_failing_objects',
  objects: 'kaos_operator_objects',
  objectNotReady: 'kaos_operator_object_not_ready_seconds',
  leaderStatus: 'leader_election_master_status',
  projectionPasses: 'kaos_authz_projection_passes_total',
  projectionWrites: 'kaos_authz_projection_writes_total',
  projectionPassSeconds: 'kaos_authz_projection_pass_seconds',
  userIssuerKeysLastSuccess: 'kaos_authz_user_issuer_keys_last_success_timestamp_seconds',
} as const;

/** prom-client's default metrics (leaves/prometheus.ts registers them), those the alerts and the dashboard read. */
export const PROCESS_METRIC = {
  startTime: 'process_start_time_seconds',
  cpu: 'process_cpu_seconds_total',
  rss: 'process_resident_memory_bytes',
  heapUsed: 'nodejs_heap_size_used_bytes',
  heapTotal: 'nodejs_heap_size_total_bytes',
  eventLoopLagP99: 'nodejs_eventloop_lag_p99_seconds',
  eventLoopLagMax: 'nodejs_eventloop_lag_max_seconds',
  gcDuration: 'nodejs_gc_duration_seconds',
} as const;
