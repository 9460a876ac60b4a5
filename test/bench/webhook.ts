// npm run bench:webhook — how fast the admission webhook answers, next to a bare HTTPS server.
//
// The real server (real router, express, TLS, metrics, the real mutating and validating
// handlers over a cache-like lookup holding the sample's ModelAPI, MCPServer and peer Agents)
// and a bare node:https server that only JSON.parses the body and returns a fixed allow run in
// this process; autocannon drives them from a child process (load-worker.ts) over loopback with
// the AdmissionReviews kube-apiserver would send for KAOS sample 2 (Agent, ModelAPI, MCPServer in
// turn). For validate and mutate it measures a fixed 1,000 req/s and saturation, and prints
// req/s, p50/p99 latency and the real/bare ratio. Never part of pass/fail; figures depend on the
// machine and on whatever else runs on it.
//
// Besides the client-side figures it reports the server's CPU time per request (this process's
// CPU time during the run over the requests answered): unlike req/s at saturation, that does not
// depend on how much CPU the load generator or a background job happened to take.
//
// Env: BENCH_SECONDS (per run, default 10), BENCH_LOOKUP=memory (use test/support/memory-lookup.ts),
// BENCH_HANDLERS=fake (trivial handlers: the cost of the protocol, router and server alone).
import { fork } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import jsonPatch from 'fast-json-patch';
import { createMutatingHandler } from '../../src/admission/mutate.ts';
import { createValidatingHandler } from '../../src/admission/validate.ts';
import type { HandlerFactory } from '../../src/admission/types.ts';
import { webhookPath } from '../../src/admission/webhook-paths.ts';
import type { AdmissionRequest, AdmissionReviewOut, WebhookType } from '../../src/admission/types.ts';
import { isKaosKind, KINDS, type KaosKind } from '../../src/api/kinds.ts';
import type { KubeObject, ObjectLookup } from '../../src/api/lookup.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/server/pino-logger.ts';
import { createRegistry } from '../../src/leaves/prometheus.ts';
import { createWebhookMetrics } from '../../src/server/webhook-metrics.ts';
import { startWebhookServer } from '../../src/server/webhook-server.ts';
import { makeTestCerts } from '../support/certs.ts';
import { MemoryLookup } from '../support/memory-lookup.ts';
import { CacheLikeLookup } from './lookup.ts';
import type { LoadJob, LoadResult } from './load-worker.ts';
import { admissionReview, asServerSees, sampleObjects, type BenchRequest } from './reviews.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = 3;
const FIXED_RATE = 1000;
const MODES = [
  { name: `${FIXED_RATE.toLocaleString('en')} req/s`, connections: 10, overallRate: FIXED_RATE },
  { name: 'saturated', connections: 16 },
] as const;
const TARGETS = { p99AtFixedRateMs: 2, saturatedRatio: 0.7 };

function lookupFor(objects: KubeObject[]): ObjectLookup {
  const kaos = objects.filter((o) => isKaosKind(o.kind));
  if (process.env.BENCH_LOOKUP === 'memory') {
    const lookup = new MemoryLookup().add(...kaos);
    for (const ns of objects.filter((o) => o.kind === 'Namespace')) lookup.setNamespace(ns.metadata?.name ?? '', ns.metadata?.labels ?? {});
    return lookup;
  }
  return new CacheLikeLookup().add(...objects);
}

/** Mutate bodies as written; validate bodies as the real mutating handler leaves them. */
async function buildRequests(objects: KubeObject[], handlers: HandlerFactory): Promise<Record<WebhookType, BenchRequest[]>> {
  const out: Record<WebhookType, BenchRequest[]> = { mutate: [], validate: [] };
  const headers = { 'content-type': 'application/json' };
  for (const [i, kind] of KINDS.entries()) {
    const written = objects.find((o) => o.kind === kind);
    if (written === undefined) throw new Error(`the sample has no ${kind}`);
    const asSent = asServerSees(written, i);
    const mutateBody = admissionReview(kind, asSent, i);
    const request = (JSON.parse(mutateBody) as { request: AdmissionRequest }).request;
    const decision = await handlers(kind, 'mutate')(request);
    const defaulted = jsonPatch.applyPatch(structuredClone(asSent), decision.patch ?? [], false, false).newDocument;
    out.mutate.push({ method: 'POST', path: webhookPath('mutate', kind), headers, body: mutateBody, kind, type: 'mutate' });
    out.validate.push({ method: 'POST', path: webhookPath('validate', kind), headers, body: admissionReview(kind, defaulted, i), kind, type: 'validate' });
  }
  return out;
}

function startBareServer(cert: Buffer, key: Buffer): Promise<Server> {
  const fixed = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'fixed', allowed: true } });
  const length = String(Buffer.byteLength(fixed));
  const server = createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': length });
      res.end(fixed);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function post(port: number, path: string, body: string, ca: string): Promise<AdmissionReviewOut> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', ca, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text) as AdmissionReviewOut) : reject(new Error(`${path}: HTTP ${res.statusCode}: ${text}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs jobs one at a time in a single load-generator process. */
function loadGenerator() {
  const child = fork(fileURLToPath(new URL('./load-worker.ts', import.meta.url)), [], { execArgv: ['--no-deprecation', '--no-warnings'] });
  let pending: { resolve: (r: LoadResult) => void; reject: (e: Error) => void } | undefined;
  child.on('message', (message: { ok: true; result: LoadResult } | { ok: false; error: string }) => {
    const p = pending;
    pending = undefined;
    if (message.ok) p?.resolve(message.result);
    else p?.reject(new Error(message.error));
  });
  return {
    run(job: LoadJob): Promise<LoadResult> {
      return new Promise((resolve, reject) => {
        pending = { resolve, reject };
        child.send(job);
      });
    },
    stop: () => child.kill(),
  };
}

const ms = (v: number) => (Number.isNaN(v) ? '-' : v.toFixed(2));

async function main(): Promise<void> {
  const before = loadavg();
  const certs = await makeTestCerts();
  const objects = sampleObjects();
  const config = loadConfig({});
  const lookup = lookupFor(objects);
  const realHandlers: HandlerFactory = (kind: KaosKind, type: WebhookType) =>
    type === 'mutate' ? createMutatingHandler(kind, { lookup, config }) : createValidatingHandler(kind, { lookup, config });
  const requests = await buildRequests(objects, realHandlers);
  const fake = process.env.BENCH_HANDLERS === 'fake';
  const fixedPatch = [{ op: 'add' as const, path: '/spec/waitForDependencies', value: true }];
  const handlers: HandlerFactory = fake
    ? (_kind, type) => async () => (type === 'mutate' ? { allowed: true, patch: fixedPatch } : { allowed: true })
    : realHandlers;

  // As in production: info level (successes are logged at debug, so not at all), metrics on.
  const logger = createLogger({ level: 'info', destination: { write: () => undefined } });
  const real = await startWebhookServer({
    config: { host: '127.0.0.1', port: 0, certDir: certs.dir, certCheckIntervalSeconds: 10 },
    handlers,
    logger,
    metrics: createWebhookMetrics(createRegistry()),
  });
  const { readFile } = await import('node:fs/promises');
  const bare = await startBareServer(await readFile(certs.certFile), await readFile(certs.keyFile));
  const barePort = (bare.address() as AddressInfo).port;

  console.log(`kaos-operator webhook benchmark — node ${process.version}, ${cpus().length} CPUs, load average ${before.map((l) => l.toFixed(2)).join(' ')}`);
  console.log(
    fake
      ? 'handlers: fake (allow; mutate returns a one-operation patch)'
      : `handlers: src/admission/mutate.ts, validate.ts; lookup: ${process.env.BENCH_LOOKUP === 'memory' ? 'test/support/memory-lookup.ts' : 'cache-like (test/bench/lookup.ts)'}`,
  );
  for (const type of ['mutate', 'validate'] as const) {
    for (const r of requests[type]) {
      const out = await post(real.port, r.path, r.body, certs.caPem);
      if (!out.response.allowed) throw new Error(`${r.path}: the sample was denied: ${out.response.status?.message ?? ''}`);
      const patch = out.response.patch === undefined ? [] : (JSON.parse(Buffer.from(out.response.patch, 'base64').toString('utf8')) as unknown[]);
      console.log(`  ${r.path.padEnd(40)} body ${String(r.body.length).padStart(5)} B, allowed, ${patch.length} patch ops, ${out.response.warnings?.length ?? 0} warnings`);
    }
  }

  const load = loadGenerator();
  const job = (port: number, type: WebhookType, mode: (typeof MODES)[number], seconds: number): LoadJob => ({
    url: `https://127.0.0.1:${port}`,
    requests: requests[type].map(({ method, path, headers, body }) => ({ method, path, headers, body })),
    connections: mode.connections,
    durationSeconds: seconds,
    ...('overallRate' in mode ? { overallRate: mode.overallRate } : {}),
  });
  const saturated = MODES[1];
  for (const type of ['validate', 'mutate'] as const) {
    for (const port of [barePort, real.port]) await load.run(job(port, type, saturated, WARMUP_SECONDS));
  }

  const rows: { type: WebhookType; mode: string; server: 'real' | 'bare'; result: LoadResult; cpuMicros: number }[] = [];
  for (const mode of MODES) {
    for (const type of ['validate', 'mutate'] as const) {
      // Bare then real, back to back, so both see the same background load.
      for (const [server, port] of [['bare', barePort], ['real', real.port]] as const) {
        const cpu = process.cpuUsage();
        const result = await load.run(job(port, type, mode, SECONDS));
        const used = process.cpuUsage(cpu);
        rows.push({ type, mode: mode.name, server, result, cpuMicros: (used.user + used.system) / Math.max(1, result.requests) });
        process.stderr.write('.');
      }
    }
  }
  process.stderr.write('\n');
  load.stop();
  await real.close();
  bare.close();
  bare.closeAllConnections();
  await certs.cleanup();

  const header = ['webhook', 'load', 'server', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'errors', 'real/bare', 'server CPU µs/req'];
  const table: string[][] = [header];
  const find = (type: WebhookType, mode: string, server: 'real' | 'bare') => rows.find((r) => r.type === type && r.mode === mode && r.server === server)?.result;
  for (const row of rows) {
    const bareRps = find(row.type, row.mode, 'bare')?.rps ?? Number.NaN;
    const r = row.result;
    table.push([
      row.type,
      row.mode,
      row.server,
      Math.round(r.rps).toLocaleString('en'),
      ms(r.p50),
      ms(r.p90),
      ms(r.p99),
      ms(r.max),
      String(r.errors + r.non2xx),
      row.server === 'real' ? `${((r.rps / bareRps) * 100).toFixed(0)} %` : '',
      row.cpuMicros.toFixed(0),
    ]);
  }
  const widths = header.map((_, i) => Math.max(...table.map((line) => (line[i] ?? '').length)));
  console.log('');
  for (const [i, line] of table.entries()) {
    console.log(line.map((cell, c) => (c < 3 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join('  '));
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  console.log('');
  for (const type of ['validate', 'mutate'] as const) {
    const fixed = find(type, MODES[0].name, 'real');
    const sat = find(type, saturated.name, 'real');
    const satBare = find(type, saturated.name, 'bare');
    const ratio = (sat?.rps ?? 0) / (satBare?.rps ?? Number.NaN);
    console.log(
      `${type}: p99 at ${MODES[0].name} ${ms(fixed?.p99 ?? Number.NaN)} ms (target ≤ ${TARGETS.p99AtFixedRateMs} ms: ${(fixed?.p99 ?? Infinity) <= TARGETS.p99AtFixedRateMs ? 'met' : 'missed'}); ` +
        `saturated ${(ratio * 100).toFixed(0)} % of bare (target ≥ ${TARGETS.saturatedRatio * 100} %: ${ratio >= TARGETS.saturatedRatio ? 'met' : 'missed'})`,
    );
  }
  const after = loadavg();
  console.log(`load average after: ${after.map((l) => l.toFixed(2)).join(' ')} (anything else using the CPUs, e.g. a Go build, makes these figures noisy)`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
