// The import directions of src/ (docs/architecture.md), checked by `npm run lint:deps` in `npm test`.
// kube/ is a generic Kubernetes runtime (client, reflectors, server-side apply, events, leader
// election, metav1 shapes, JSON reading): it imports nothing of KAOS, so it could be lifted into
// another operator. Above it, bottom to top: api/ (the API: schemas, defaulting, validation) →
// render/ (pure desired state) → admission/ (the AdmissionReview protocol and rules) and cluster/
// (the KAOS cluster state: the kind table, the cache of the three kinds, who depends on what, the
// RBAC rules) → server/ (HTTP around admission) and controller/ → admission-thread/ (the admission
// thread's machinery) → the entry points, main.ts and admission-worker.ts (wiring). config/ holds the
// settings; leaves/ the shared leaves (logger, Prometheus registry, time formats, error text, the
// node:http loader), which import nothing of ours. Type-only imports count: a type is a dependency too.
/** @type {import('dependency-cruiser').IConfiguration} */
const IO = '^(node:)?(fs|fs/promises|net|http|https|http2|tls|dgram|child_process|cluster|worker_threads)$';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'Modules (and so folders) import one way; a cycle means two layers know each other.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'api-imports-only-config',
      severity: 'error',
      comment: 'api/ is the bottom of KAOS: of ours it may import only itself, config types and the runtime\'s pure leaves (metav1 shapes, JSON reading, quantities).',
      from: { path: '^src/api/' },
      to: { path: '^src/', pathNot: ['^src/api/', '^src/config/config\\.ts$', '^src/leaves/error-message\\.ts$', '^src/kube/(meta|json|quantity)\\.ts$'] },
    },
    {
      name: 'render-imports-only-api-and-config',
      severity: 'error',
      comment: 'render/ is pure: it sees the API and the config (with the facts the security settings derive), nothing above it.',
      from: { path: '^src/render/' },
      to: { path: '^src/', pathNot: ['^src/render/', '^src/api/', '^src/config/(config|security)\\.ts$'] },
    },
    {
      name: 'api-and-render-do-no-io',
      severity: 'error',
      comment: 'api/ and render/ are pure functions of their inputs: no files, sockets or processes.',
      from: { path: '^src/(api|render)/' },
      to: { dependencyTypes: ['core'], path: IO },
    },
    {
      name: 'admission-knows-no-server-kube-or-controller',
      severity: 'error',
      comment: 'The server wraps admission; admission reaches the API server only through functions it is given.',
      from: { path: '^src/admission/' },
      to: { path: '^src/(server|kube|cluster|controller)/' },
    },
    {
      name: 'controller-knows-no-admission',
      severity: 'error',
      from: { path: '^src/controller/' },
      to: { path: '^src/(admission|server|admission-thread)/' },
    },
    {
      name: 'kube-is-a-generic-runtime',
      severity: 'error',
      comment: 'kube/ is a generic Kubernetes runtime: of ours it imports only itself and the generic leaves (logger, error message, metav1 time, node:http, Prometheus helpers) — nothing of api/, render/, admission/, cluster/, controller/, server/ or the config.',
      from: { path: '^src/kube/' },
      to: { path: '^src/', pathNot: ['^src/(kube|leaves)/'] },
    },
    {
      name: 'cluster-knows-no-admission-server-or-controller',
      severity: 'error',
      comment: 'cluster/ is the KAOS cluster state (kind table, cache, indexes, RBAC): the controller and main use it; it knows neither them nor admission or the server.',
      from: { path: '^src/cluster/' },
      to: { path: '^src/(admission|server|controller|cli|admission-thread)/' },
    },
    {
      name: 'server-knows-no-rule',
      severity: 'error',
      comment: 'The server carries HTTP around admission; the rules (defaulting, validation, render) are not its business.',
      from: { path: '^src/server/' },
      to: { path: '^src/(api/(defaulting|validation|schema)|render|kube|cluster|controller)/' },
    },
    {
      name: 'server-enters-admission-through-admit',
      severity: 'error',
      comment: 'Admission has one owner: the server hands it bytes through admission/admit.ts and writes the answer.',
      from: { path: '^src/server/' },
      to: { path: '^src/admission/', pathNot: '^src/admission/(admit|types)\\.ts$' },
    },
    {
      name: 'cli-imports-only-what-it-runs',
      severity: 'error',
      comment: 'cli/ (kaos-operator lint/default) runs the webhooks\' handlers offline: api, render, admission, kube and cluster (for --cluster), config.',
      from: { path: '^src/cli/' },
      to: { path: '^src/', pathNot: ['^src/(cli|api|render|admission|kube|cluster|config)/', '^src/leaves/error-message\\.ts$'] },
    },
    {
      name: 'nothing-imports-the-cli',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'leaves-are-leaves',
      severity: 'error',
      comment: 'leaves/ is shared by every layer, kube/ included: it imports nothing of ours but another leaf.',
      from: { path: '^src/leaves/' },
      to: { path: '^src/', pathNot: '^src/leaves/' },
    },
    {
      name: 'config-sees-only-the-api',
      severity: 'error',
      comment: 'The settings are parsed against the API\'s enums and name rules, nothing above them.',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: ['^src/(config|api|leaves)/'] },
    },
    {
      name: 'only-the-entry-points-start-the-admission-thread',
      severity: 'error',
      comment: 'admission-thread/ wires the webhook server and both ends of its thread: only the entry points use it.',
      from: { path: '^src/', pathNot: ['^src/admission-thread/', '^src/(main|admission-worker)\\.ts$'] },
      to: { path: '^src/admission-thread/' },
    },
    {
      name: 'main-is-the-top',
      severity: 'error',
      from: {},
      to: { path: '^src/(main|admission-worker)\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(node_modules|dist)/' },
  },
};
