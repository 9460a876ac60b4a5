// Helpers for the controller's lifecycle e2e tests (dependencies, idle/restart, HA): what a user
// does with kubectl, what the API server records about the operator (its audit log), what the
// operator reports (its /metrics), and operator processes started again on the same ports.
import { readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import type { KubeObject } from '../../../src/api/lookup.ts';
import { KINDS, type KaosKind } from '../../../src/api/kinds.ts';
import type { KubeClient } from '../../../src/kube/client.ts';
import { isNotFound } from '../../../src/kube/errors.ts';
import { CONFIG_MAP, DEPLOYMENT, PERSISTENT_VOLUME_CLAIM, POD_DISRUPTION_BUDGET, HORIZONTAL_POD_AUTOSCALER, SERVICE, SERVICE_ACCOUNT, resourcePath, type ResourceType } from '../../../src/kube/paths.ts';
import { kaosPath } from '../../../src/cluster/kaos-resources.ts';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../../../src/render/index.ts';
import { startOperator, type LocalStack, type OperatorProcess } from '../../../scripts/local-stack.ts';
import type { ControlPlane } from '../../cluster/control-plane.ts';
import { eventually } from '../../support/poll.ts';

export const MANAGED_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;
export const CHILD_TYPES: readonly ResourceType[] = [DEPLOYMENT, SERVICE, CONFIG_MAP, PERSISTENT_VOLUME_CLAIM, POD_DISRUPTION_BUDGET, HORIZONTAL_POD_AUTOSCALER, SERVICE_ACCOUNT];

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

export interface KaosStatusView {
  phase?: string;
  ready?: boolean;
  message?: string;
  endpoint?: string;
  observedGeneration?: number;
  linkedResources?: Record<string, string>;
  conditions?: Condition[];
}

export type KaosView = KubeObject & { status?: KaosStatusView; metadata: NonNullable<KubeObject['metadata']> & { generation?: number; uid?: string; resourceVersion?: string } };

export interface EnvVar { name: string; value?: string }
export type DeploymentView = KubeObject & {
  metadata: { name: string; resourceVersion?: string; generation?: number; ownerReferences?: OwnerReference[] };
  spec?: { template?: { spec?: { containers?: Array<{ name: string; env?: EnvVar[] }> } } };
};

export interface OwnerReference { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}


/** kubectl as a user runs it; throws with its stderr on a non-zero exit. */
export async function kubectl(plane: ControlPlane, args: readonly string[], input?: string): Promise<string> {
  const result = await plane.kubectl(args, input === undefined ? {} : { input });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

/** `kubectl apply -f -` of these objects (one List). */
export function kubectlApply(plane: ControlPlane, objects: readonly KubeObject[]): Promise<string> {
  return kubectl(plane, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
}

export async function getOrUndefined<T>(client: KubeClient, path: string): Promise<T | undefined> {
  try {
    return await client.get<T>(path);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export function getKaos(client: KubeClient, kind: KaosKind, namespace: string, name: string): Promise<KaosView | undefined> {
  return getOrUndefined<KaosView>(client, kaosPath(kind, { namespace, name }));
}

export function getDeployment(client: KubeClient, namespace: string, name: string): Promise<DeploymentView | undefined> {
  return getOrUndefined<DeploymentView>(client, resourcePath(DEPLOYMENT, { namespace, name }));
}

/** The env of a Deployment's container `name`, as `NAME=value` lines (order kept). */
export function containerEnv(deployment: DeploymentView | undefined, container: string): string[] {
  const c = deployment?.spec?.template?.spec?.containers?.find((x) => x.name === container);
  return (c?.env ?? []).map((e) => `${e.name}=${e.value ?? '<valueFrom>'}`);
}

/** Waits for the object's status to satisfy `accept`, describing the status last seen on timeout. */
export async function waitForStatus(
  client: KubeClient, kind: KaosKind, namespace: string, name: string,
  accept: (object: KaosView) => boolean, what: string, timeoutMs = 30_000,
): Promise<KaosView> {
  let seen: KaosView | undefined;
  try {
    return await eventually(`${kind} ${namespace}/${name}: ${what}`, async () => {
      seen = await getKaos(client, kind, namespace, name);
      return seen !== undefined && accept(seen) ? seen : undefined;
    }, { timeoutMs: timeoutMs, intervalMs: 200, retryErrors: true });
  } catch (err) {
    throw new Error(`${(err as Error).message}; status: ${JSON.stringify(seen?.status)}`);
  }
}

export function condition(object: KaosView | undefined, type: string): Condition | undefined {
  return object?.status?.conditions?.find((c) => c.type === type);
}

/** phase + message, and observedGeneration current on the status and on each condition. */
export function statusIs(object: KaosView, phase: string, message: string): boolean {
  const generation = object.metadata.generation;
  return object.status?.phase === phase && object.status.message === message && object.status.observedGeneration === generation &&
    ['Ready', 'Reconciling', 'Stalled'].every((t) => condition(object, t)?.observedGeneration === generation);
}

// ---- snapshots -----------------------------------------------------------------------------

/** `Kind/namespace/name` → resourceVersion of every KAOS object and every managed child in `namespaces`. */
export async function resourceVersions(client: KubeClient, namespaces: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const namespace of namespaces) {
    for (const kind of KINDS) {
      for (const o of (await client.list<KubeObject>(kaosPath(kind, { namespace }))).items) out.set(`${kind}/${namespace}/${o.metadata?.name ?? ''}`, o.metadata?.resourceVersion ?? '');
    }
    for (const type of CHILD_TYPES) {
      for (const o of (await client.list<KubeObject>(resourcePath(type, { namespace }), { labelSelector: MANAGED_SELECTOR })).items) {
        out.set(`${type.kind}/${namespace}/${o.metadata?.name ?? ''}`, o.metadata?.resourceVersion ?? '');
      }
    }
  }
  return out;
}

/** The keys whose resourceVersion differs (or that appeared or vanished) between two snapshots. */
export function changedKeys(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((k) => before.get(k) !== after.get(k)).sort();
}

// ---- the audit log -------------------------------------------------------------------------

export interface AuditEvent {
  stage: string;
  verb: string;
  user: { username: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string; apiGroup?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
}

/** A position in the audit log: events after it are read by `auditSince`. */
export function auditMark(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

export function auditSince(file: string, mark: number): AuditEvent[] {
  const text = readFileSync(file).subarray(mark).toString('utf8');
  return text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as AuditEvent);
}

const READ_VERBS = new Set(['get', 'list', 'watch']);

/** Write requests by `user`: every verb but get/list/watch. */
export function writesBy(events: readonly AuditEvent[], user: string): AuditEvent[] {
  return events.filter((e) => e.user.username === user && e.stage === 'ResponseComplete' && !READ_VERBS.has(e.verb));
}

/** Write requests by every user but `user`. */
export function othersWrites(events: readonly AuditEvent[], user: string): AuditEvent[] {
  return events.filter((e) => e.user.username !== user && e.stage === 'ResponseComplete' && !READ_VERBS.has(e.verb));
}

export function describeRequest(e: AuditEvent): string {
  const o = e.objectRef ?? {};
  return `${e.verb} ${o.resource ?? '?'}${o.subresource === undefined ? '' : `/${o.subresource}`} ${o.namespace ?? ''}/${o.name ?? ''} → ${e.responseStatus?.code ?? '?'}`;
}

// ---- the operator's metrics ----------------------------------------------------------------

export function scrape(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(`http://127.0.0.1:${port}/metrics`, { timeout: 5000, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; });
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`/metrics answered ${res.statusCode}`))));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Sum of the samples of `name` whose labels include `labels` (undefined when there is none). */
export function metricSum(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ([^ ]+)/.exec(line);
    if (m === null || m[1] !== name) continue;
    const labelText = m[2] ?? '';
    if (!Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) continue;
    sum = (sum ?? 0) + Number(m[3]);
  }
  return sum;
}

/**
 * The operator has nothing left to do: it leads (or runs without election), has reconciled at
 * least `atLeast` keys since it started, and its work queues are empty.
 */
export async function operatorSettled(port: number, atLeast: number): Promise<boolean> {
  const text = await scrape(port);
  const reconciles = metricSum(text, 'controller_runtime_reconcile_total') ?? 0;
  const depth = metricSum(text, 'workqueue_depth') ?? 0;
  return reconciles >= atLeast && depth === 0;
}

// ---- operator processes --------------------------------------------------------------------

/**
 * Starts another operator process like the stack's (same kubeconfig, certificates), listening
 * for webhooks on `webhookPort` (the stack's, so the registered webhooks reach it, as a Service
 * would reach a new pod) or a free one.
 */
export function startAnotherOperator(stack: LocalStack, name: string, env: Readonly<Record<string, string>>, webhookPort?: number): Promise<OperatorProcess> {
  return startOperator({
    kubeconfig: stack.operatorKubeconfig,
    certDir: stack.certDir,
    logFile: join(stack.plane.dir, `operator-${name}.log`),
    env: { ...env, ...(webhookPort === undefined ? {} : { WEBHOOK_PORT: String(webhookPort) }) },
  });
}

/** SIGKILL: no shutdown, no Lease release, requests in flight cut. */
export async function killHard(operator: OperatorProcess): Promise<void> {
  process.kill(operator.pid, 'SIGKILL');
  await operator.stop();
}
