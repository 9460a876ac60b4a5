// Day two, on one control plane (each part in namespaces of its own):
//
// - Upgrades roll nothing unannounced (docs/upgrade.md). Each release's snapshot
//   (test/fixtures/upgrade/snapshots/<version>.json, made by `npm run snapshot:upgrade`) is put
//   into the cluster as that release left it — its objects as stored, its children server-side
//   applied with the operator's field manager, so their managedFields, annotations and hashes are
//   that release's — with no operator running; then this tree's operator starts, converges every
//   object to Ready, and each write it made to a child (the API server's audit log of its
//   ServiceAccount) must be announced in the CHANGELOG's "Upgrading" notes of a later release
//   (test/support/upgrade-notes.ts). The snapshot of the version being made must hold exactly what
//   this tree leaves: no write at all.
// - Restore converges to the same children (docs/backup-restore.md). KAOS objects are exported as
//   Velero or a GitOps replay keeps them (no status, uid, resourceVersion or managedFields;
//   annotations kept), their namespaces deleted, and the export created again through the
//   webhooks: each object is admitted exactly as exported, every child comes back as the
//   operator applied it before (pod-spec hash included), and everything is Ready.
// - The one CRD upgrade command of docs/upgrade.md, run over CRDs an earlier install created.
// - Uninstall (docs/uninstall.md): the chart installed for real with `helm install` (values that
//   give the operator the snapshot's settings; the operator run from dist/ with the installed
//   Deployment's env, under the chart's ServiceAccount and RBAC). `helm uninstall` leaves the CRDs,
//   the objects and their children with their pods running, and no webhook configuration: an
//   invalid object is admitted. A new `helm install` adopts it all: no write to a child.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { renderWebhookConfigurations } from '../../src/admission/webhook-configs.ts';
import { CHILD_TYPES } from '../../src/cluster/child-apply.ts';
import { OPERATOR_IDENTITY, OPERATOR_USER, renderRbac } from '../../src/cluster/rbac.ts';
import { CONFIG_ENV, SECURITY_ENV } from '../../chart/generate.ts';
import { runCommand } from '../cluster/control-plane.ts';
import { isNotFound } from '../../src/kube/errors.ts';
import { DEPLOYMENT, resourcePath } from '../../src/kube/paths.ts';
import { installLocalStack, registerWebhooks, ROOT, startOperator, tail, type OperatorProcess } from '../../scripts/local-stack.ts';
import { auditMark, auditSince, describeRequest, operatorSettled, sleep, writesBy, type AuditEvent } from './support/lifecycle.ts';
import {
  CRD_UPGRADE_COMMAND, SNAPSHOT_DIR, UPGRADE_MANIFESTS, exportChildren, exportNamespaces, manifestObjects, notConverged, objectId, ownerKind,
  objectCollection, replaySnapshot, type Json, type UpgradeSnapshot,
} from './support/upgrade.ts';
import { announcedSince, changedPaths, coveringAnnouncement, isReleased, readReleaseNotes, type ChildWrite } from '../support/upgrade-notes.ts';
import { eventually } from '../support/poll.ts';

const log = (line: string): void => t.comment(line);
const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const notes = readReleaseNotes(await readFile(join(ROOT, 'CHANGELOG.md'), 'utf8'));
const byVersion = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });
const snapshots: UpgradeSnapshot[] = [];
for (const file of (await readdir(SNAPSHOT_DIR)).filter((f) => f.endsWith('.json')).sort(byVersion)) {
  snapshots.push(JSON.parse(await readFile(join(SNAPSHOT_DIR, file), 'utf8')) as UpgradeSnapshot);
}

const installed = await installLocalStack({
  log,
  audit: { users: [OPERATOR_USER] },
  gatewayCrds: [...new Set(snapshots.flatMap((s) => s.gatewayCrds))],
});
const { plane, client } = installed;
const auditLog = plane.logs.audit;
if (auditLog === undefined) throw new Error('the control plane was started without its audit log');
let operator: OperatorProcess | undefined;
t.teardown(async () => {
  if (!t.passing() && operator !== undefined) t.comment(`operator log (tail):\n${tail(operator.log(), 40)}`);
  await operator?.stop();
  await installed.stop();
});

const WAIT = { intervalMs: 500, retryErrors: true } as const;
const CHILD_RESOURCES = new Set(Object.values(CHILD_TYPES).map((type) => type.plural));

/** This tree's operator under `env`, its webhooks registered: what a `helm upgrade` starts. */
async function startCurrentOperator(name: string, env: Readonly<Record<string, string>>): Promise<OperatorProcess> {
  await operator?.stop();
  operator = await startOperator({
    kubeconfig: installed.operatorKubeconfig, certDir: installed.certDir, logFile: join(plane.dir, `operator-${name}.log`),
    env: { ...env, POD_NAME: `kaos-operator-${name}`, SHUTDOWN_DELAY_SECONDS: '0' },
  });
  await registerWebhooks(client, `https://127.0.0.1:${operator.webhookPort}`, installed.caPem);
  return operator;
}

/** No webhook configuration: the API server stores what it is given, as before an install. */
async function unregisterWebhooks(): Promise<void> {
  for (const config of renderWebhookConfigurations({ url: 'https://unused', caBundle: installed.caPem })) {
    const plural = config.kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
    await client.delete(`/apis/admissionregistration.k8s.io/v1/${plural}/${config.metadata.name}`).catch((err: unknown) => { if (!isNotFound(err)) throw err; });
  }
}

/** Until every object of `namespaces` is converged and the operator has nothing left to do. */
async function converged(namespaces: readonly string[], objects: number): Promise<void> {
  let waiting: string[] = [];
  const running = operator;
  if (running === undefined) throw new Error('no operator');
  await eventually(`every object of ${namespaces.join(', ')} converged`, async () => {
    waiting = await notConverged(client, namespaces);
    return waiting.length === 0 && await operatorSettled(running.metricsPort, objects);
  }, { timeoutMs: 240_000, ...WAIT }).catch((err: unknown) => {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; not converged: ${waiting.join(', ')}`);
  });
}

async function deleteNamespaces(namespaces: readonly string[]): Promise<void> {
  const r = await plane.kubectl(['delete', 'namespace', '--wait=false', ...namespaces]);
  if (r.code !== 0) throw new Error(`kubectl delete namespace: ${r.stderr}`);
  await eventually(`namespaces ${namespaces.join(', ')} gone`, async () => {
    const left = await plane.kubectl(['get', 'namespace', '-o', 'name', ...namespaces]);
    return left.stdout.trim() === '' ? true : undefined;
  }, { timeoutMs: 180_000, ...WAIT });
}

const kaosCount = (objects: readonly Json[]): number => objects.filter((o) => String(o['apiVersion']).startsWith('kaos.tools/')).length;

// ---- upgrades --------------------------------------------------------------------------------

t.test(`this version (${version}) has its snapshot`, async (t) => {
  t.ok(snapshots.some((s) => s.version === version), `test/fixtures/upgrade/snapshots/${version}.json (npm run snapshot:upgrade)`);
  for (const s of snapshots) t.ok(s.version === version || isReleased(notes, s.version), `${s.version}: the version being made, or a release with a section of its own in CHANGELOG.md`);
});

for (const [i, snapshot] of snapshots.entries()) {
  const released = snapshot.version !== version;
  t.test(`an upgrade from ${snapshot.version}${released ? '' : ' (this version, not released yet)'}: this operator writes no child the CHANGELOG does not announce`, async (t) => {
    const namespaces = snapshot.objects.filter((o) => o['kind'] === 'Namespace').map((o) => String((o['metadata'] as Json)['name']));
    const childNamespaces = [...namespaces, OPERATOR_IDENTITY.namespace];
    await operator?.stop();
    await unregisterWebhooks();
    await replaySnapshot(client, snapshot);
    const before = new Map((await exportChildren(client, childNamespaces)).map((c) => [objectId(c), c]));
    t.same([...before.keys()], snapshot.children.map(objectId), `the replay holds the snapshot's ${snapshot.children.length} children`);
    t.same([...before.values()], snapshot.children, 'each exactly as that release applied it (its field manager\'s fields)');

    const mark = auditMark(auditLog);
    await startCurrentOperator(`from-${snapshot.version}`, snapshot.operatorEnv);
    await converged(namespaces, kaosCount(snapshot.objects));
    await sleep(3000); // room for a late write
    await converged(namespaces, kaosCount(snapshot.objects));

    const childWrites = writesBy(auditSince(auditLog, mark), OPERATOR_USER)
      .filter((e) => CHILD_RESOURCES.has(e.objectRef?.resource ?? '') && e.objectRef?.subresource === undefined && childNamespaces.includes(e.objectRef?.namespace ?? ''));
    const after = new Map((await exportChildren(client, childNamespaces)).map((c) => [objectId(c), c]));
    const announced = released ? announcedSince(notes, snapshot.version) : [];
    const writes = describeWrites(childWrites, before, after);
    const unannounced = writes.filter((w) => coveringAnnouncement(w, announced) === undefined);
    t.comment(`${childWrites.length} write(s) to children, ${writes.length - unannounced.length} announced (${announced.length} announcement(s) since ${snapshot.version})`);
    t.same(unannounced.map((w) => `${w.verb} ${w.id} (of ${w.owner}) at ${w.paths.length === 0 ? '(nothing changed)' : w.paths.join(' ')}`), [],
      released ? 'every write to a child is announced under "### Upgrading" of a later release' : `no write at all: were the rendering meant to change, make the snapshot again (npm run snapshot:upgrade)`);
    if (i < snapshots.length - 1) await deleteNamespaces(namespaces);
  });
}

/** The children the audited writes touched, with what changed in each (as the operator applied it). */
function describeWrites(events: readonly AuditEvent[], before: ReadonlyMap<string, Json>, after: ReadonlyMap<string, Json>): ChildWrite[] {
  const byId = new Map<string, ChildWrite>();
  for (const e of events) {
    const type = Object.values(CHILD_TYPES).find((c) => c.plural === e.objectRef?.resource);
    const id = `${type?.kind ?? e.objectRef?.resource ?? '?'}/${e.objectRef?.namespace ?? ''}/${e.objectRef?.name ?? ''}`;
    const was = before.get(id);
    const is = after.get(id);
    const verbs = byId.get(id)?.verb;
    byId.set(id, {
      child: type?.kind ?? '?', owner: ownerKind(is ?? was ?? {}), id,
      verb: verbs === undefined ? describeRequest(e).split(' ')[0] ?? e.verb : verbs.includes(e.verb) ? verbs : `${verbs}+${e.verb}`,
      paths: changedPaths(was, is),
    });
  }
  return [...byId.values()];
}

// ---- restore ---------------------------------------------------------------------------------

const RESTORE_MANIFESTS: Readonly<Record<string, string>> = { ...UPGRADE_MANIFESTS, memory: 'kaos-2026/memory-agents.yaml' };
const restoreNamespace = (key: string): string => `restore-${key}`;
const RESTORE_NAMESPACES = Object.keys(RESTORE_MANIFESTS).map(restoreNamespace);
/** What reads a Secret: its config hash is of the Secret's resourceVersion, which a restore makes anew (docs/backup-restore.md). */
const SECRET_FED = new Set(['Deployment/restore-memory/modelapi-support-modelapi']);
const CONFIG_HASH = '/spec/template/metadata/annotations/kaos.tools~1config-hash';
const REPLICAS = '/spec/replicas';

/** `namespace/name=replicas` of every Deployment of the restore's namespaces. */
async function deploymentReplicas(): Promise<string[]> {
  const out: string[] = [];
  for (const namespace of RESTORE_NAMESPACES) {
    const items = (await client.list<Json>(resourcePath(DEPLOYMENT, { namespace }))).items;
    for (const d of items) out.push(`${namespace}/${String((d['metadata'] as Json)['name'])}=${String((d['spec'] as Json)['replicas'])}`);
  }
  return out.sort();
}

t.test('a restore (Velero, or a GitOps replay): every object admitted unchanged, every child as before, everything Ready', async (t) => {
  if (operator === undefined) await startCurrentOperator('restore', snapshots.at(-1)?.operatorEnv ?? {});
  for (const [key, file] of Object.entries(RESTORE_MANIFESTS)) {
    const r = await plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifestObjects(file, restoreNamespace(key)) }) });
    if (r.code !== 0) throw new Error(`kubectl apply of ${file}: ${r.stderr}`);
  }
  const objects = kaosCount(await exportNamespaces(client, RESTORE_NAMESPACES));
  await converged(RESTORE_NAMESPACES, objects);
  const backup = await exportNamespaces(client, RESTORE_NAMESPACES);
  const children = new Map((await exportChildren(client, RESTORE_NAMESPACES)).map((c) => [objectId(c), c]));
  t.ok(children.size > objects, `${objects} KAOS objects, ${children.size} children`);

  const replicasBefore = await deploymentReplicas();
  await deleteNamespaces(RESTORE_NAMESPACES);
  // As Velero restores: each object created as exported (a POST of it), through the webhooks.
  const refused: string[] = [];
  for (const o of backup) await client.create(objectCollection(o), o, { discardAnswer: true }).catch((err: unknown) => { refused.push(`${objectId(o)}: ${String(err)}`); });
  t.same(refused, [], 'every object of the export admitted');
  const stored = await exportNamespaces(client, RESTORE_NAMESPACES);
  t.same(stored.map(objectId), backup.map(objectId), 'every object of the export created');
  const exported = new Map(backup.map((o) => [objectId(o), o]));
  const changed = stored.flatMap((o) => changedPaths(exported.get(objectId(o)), o).map((p) => `${objectId(o)} ${p}`));
  t.same(changed, [], 'each stored exactly as exported: no defaulting changed a spec, no annotation moved');

  await converged(RESTORE_NAMESPACES, objects);
  t.same(await notConverged(client, RESTORE_NAMESPACES), [], 'everything Ready again');
  const restored = new Map((await exportChildren(client, RESTORE_NAMESPACES)).map((c) => [objectId(c), c]));
  t.same([...restored.keys()], [...children.keys()], 'the same children');
  const moved: string[] = [];
  for (const [id, child] of children) {
    for (const path of changedPaths(child, restored.get(id))) {
      if (SECRET_FED.has(id) && path === CONFIG_HASH) continue;
      // Whether the operator still owns spec.replicas depends on whether it applied the
      // Deployment again after creating it (applyIntent: replicas at creation only), not on what
      // it renders; the value itself is compared below.
      if (path === REPLICAS) continue;
      moved.push(`${id} ${path}`);
    }
  }
  t.same(moved, [], 'every child as the operator applied it before: pod-spec hashes, config hashes, labels, owners');
  t.same(await deploymentReplicas(), replicasBefore, 'every Deployment with the replicas it had');
  for (const id of SECRET_FED) {
    t.not(changedPaths(children.get(id), restored.get(id)).length, 0, `${id}: its config hash follows its Secret's new resourceVersion (one rollout, as docs/backup-restore.md says)`);
  }
});

// ---- the CRD upgrade command -----------------------------------------------------------------

type Schema = { schema: { openAPIV3Schema: { properties: { apiVersion: { description?: string } } } } };

t.test('the one CRD upgrade command of docs/upgrade.md takes the CRDs over from the install that created them', async (t) => {
  const doc = await readFile(join(ROOT, 'docs', 'upgrade.md'), 'utf8');
  const command = doc.split('\n').map((line) => line.trim()).find((line) => line === CRD_UPGRADE_COMMAND);
  t.ok(command, 'docs/upgrade.md gives it on a line of its own');
  const args = (command ?? '').split(' ').slice(1).map((a) => (a === 'chart/crds/' ? join(ROOT, 'chart', 'crds') : a));
  // As an earlier chart's `helm install` left them: created by helm, whose fields another manager
  // may change only by taking them over (here a description in every CRD's schema, changed since).
  const crds = (await readdir(join(ROOT, 'chart', 'crds'))).filter((f) => f.endsWith('.yaml'));
  const earlier = 'The schema of an earlier release.';
  for (const file of crds) {
    const crd = parse(await readFile(join(ROOT, 'chart', 'crds', file), 'utf8')) as Json & { metadata: { name: string }; spec: { versions: Schema[] } };
    for (const v of crd.spec.versions) v.schema.openAPIV3Schema.properties.apiVersion.description = earlier;
    await client.apply(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`, crd, { fieldManager: 'helm', force: true });
  }
  const plain = await plane.kubectl(args.filter((a) => a !== '--force-conflicts'));
  t.not(plain.code, 0, 'without --force-conflicts the apply stops at the fields the install owns');
  t.match(plain.stderr, /conflict/i, 'with a conflict');
  const r = await plane.kubectl(args);
  t.equal(r.code, 0, `${command ?? ''}: ${r.stderr}`);
  for (const file of crds) {
    const name = file.replace(/\.yaml$/, '');
    const live = await client.get<{ spec: { versions: Schema[] }; status: { conditions?: { type: string; status: string }[] } }>(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    t.ok(live.spec.versions.every((v) => v.schema.openAPIV3Schema.properties.apiVersion.description?.startsWith('APIVersion defines')), `${name}: the chart's schema`);
    t.ok(live.status.conditions?.some((c) => c.type === 'Established' && c.status === 'True'), `${name}: Established`);
  }
  // The API server reinitializes a CRD's storage after its update (429 meanwhile): read when it answers.
  const after = await eventually('the objects readable', () => notConverged(client, RESTORE_NAMESPACES), { timeoutMs: 60_000, ...WAIT });
  t.same(after, [], 'the objects stored under them are untouched, still Ready');
});

// ---- uninstall, and a new install -----------------------------------------------------------

const CHART = join(ROOT, 'chart');
const RELEASE = 'kaos-operator';
const helmEnv = { ...process.env, HELM_CACHE_HOME: join(plane.dir, 'helm-cache'), HELM_CONFIG_HOME: join(plane.dir, 'helm-config'), HELM_DATA_HOME: join(plane.dir, 'helm-data') };
const helm = (args: readonly string[]) => runCommand(join(plane.binDir, 'helm'), [...args, '--kubeconfig', plane.kubeconfigPath], { env: helmEnv, timeoutMs: 120_000 });

/** The chart's values that give the operator `env` (chart/generate.ts's CONFIG_ENV and SECURITY_ENV). */
function chartValues(env: Readonly<Record<string, string>>): string[] {
  return Object.entries(env).flatMap(([name, value]) => {
    const config = CONFIG_ENV.find((c) => c.env === name);
    const security = SECURITY_ENV.find((s) => s.env === name);
    const key = config !== undefined ? `config.${config.value}` : security !== undefined ? `security.${security.path}` : undefined;
    if (key === undefined) throw new Error(`no chart value sets ${name}`);
    return (config ?? security)?.type === 'json' ? ['--set-json', `${key}=${value}`] : ['--set-string', `${key}=${value}`];
  });
}

/**
 * This tree's operator as the installed chart's Deployment runs it: its container's env (the
 * downward API's fields filled in as the kubelet would), under the chart's ServiceAccount and
 * RBAC (the stack's token is that ServiceAccount's user), on local ports.
 */
async function startChartOperator(name: string): Promise<OperatorProcess> {
  type EnvVar = { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } };
  const deployment = await client.get<{ spec: { template: { spec: { containers: { env?: EnvVar[] }[] } } } }>(resourcePath(DEPLOYMENT, { namespace: OPERATOR_IDENTITY.namespace, name: RELEASE }));
  const podName = `${RELEASE}-${name}`;
  const fields: Readonly<Record<string, string>> = { 'metadata.namespace': OPERATOR_IDENTITY.namespace, 'metadata.name': podName };
  const local = new Set(['WEBHOOK_HOST', 'WEBHOOK_PORT', 'WEBHOOK_CERT_DIR', 'METRICS_HOST', 'METRICS_PORT']);
  const env: Record<string, string> = { SHUTDOWN_DELAY_SECONDS: '0' };
  for (const e of deployment.spec.template.spec.containers[0]?.env ?? []) {
    if (local.has(e.name)) continue;
    const value = e.value ?? fields[e.valueFrom?.fieldRef?.fieldPath ?? ''];
    if (value !== undefined) env[e.name] = value;
  }
  await operator?.stop();
  operator = await startOperator({ kubeconfig: installed.operatorKubeconfig, certDir: installed.certDir, logFile: join(plane.dir, `operator-${name}.log`), env });
  return operator;
}

/** `namespace/name ready/replicas` of every Deployment of the restore's namespaces. */
async function deploymentsReady(): Promise<string[]> {
  const out: string[] = [];
  for (const namespace of RESTORE_NAMESPACES) {
    for (const d of (await client.list<Json>(resourcePath(DEPLOYMENT, { namespace }))).items) {
      const status = (d['status'] ?? {}) as { readyReplicas?: number };
      out.push(`${namespace}/${String((d['metadata'] as Json)['name'])} ${status.readyReplicas ?? 0}/${String((d['spec'] as Json)['replicas'])}`);
    }
  }
  return out.sort();
}

/** The operator's writes to the children of the restore's namespaces since `mark`. */
const childWritesSince = (mark: number): string[] => writesBy(auditSince(auditLog, mark), OPERATOR_USER)
  .filter((e) => CHILD_RESOURCES.has(e.objectRef?.resource ?? '') && RESTORE_NAMESPACES.includes(e.objectRef?.namespace ?? ''))
  .map(describeRequest);

t.test('helm uninstall leaves the CRDs, the objects and their running children, unmanaged and unvalidated; a new install adopts them without a rollout', async (t) => {
  const env = snapshots.at(-1)?.operatorEnv ?? {};
  // The stack's url-based install makes way for the chart, which owns the same names.
  await operator?.stop();
  await unregisterWebhooks();
  for (const { kind, metadata } of renderRbac() as { kind: string; metadata: { name: string; namespace?: string } }[]) {
    if (kind === 'Namespace') continue;
    const r = await plane.kubectl(['delete', kind, metadata.name, ...(metadata.namespace === undefined ? [] : ['-n', metadata.namespace]), '--ignore-not-found']);
    if (r.code !== 0) throw new Error(r.stderr);
  }
  await plane.kubectl(['delete', 'configmap', '-n', OPERATOR_IDENTITY.namespace, 'kaos-mcp-runtimes', 'kaos-harness-runtimes', '--ignore-not-found']);
  const install = ['install', RELEASE, CHART, '--namespace', OPERATOR_IDENTITY.namespace, '--set', 'certManager.enabled=false', ...chartValues(env)];
  const first = await helm(install);
  t.equal(first.code, 0, `helm install: ${first.stderr}`);
  await startChartOperator('first');
  await converged(RESTORE_NAMESPACES, kaosCount(await exportNamespaces(client, RESTORE_NAMESPACES)));

  const objects = (await exportNamespaces(client, RESTORE_NAMESPACES)).map(objectId);
  const children = await exportChildren(client, RESTORE_NAMESPACES);
  const ready = await deploymentsReady();
  t.ok(ready.every((r) => /\s1\/1$/.test(r)), `${ready.length} Deployments, each with its pod ready`);

  const uninstall = await helm(['uninstall', RELEASE, '--namespace', OPERATOR_IDENTITY.namespace]);
  t.equal(uninstall.code, 0, `helm uninstall: ${uninstall.stderr}`);
  await operator?.stop(); // its pods go with the release's Deployment
  operator = undefined;
  for (const kind of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
    t.equal((await plane.kubectl(['get', kind, '-o', 'name'])).stdout.trim(), '', `no ${kind}: nothing validates or defaults KAOS objects`);
  }
  const crds = (await plane.kubectl(['get', 'crd', '-o', 'name'])).stdout;
  for (const crd of ['agents', 'modelapis', 'mcpservers', 'memorystores', 'accessgrants']) t.match(crds, `customresourcedefinition.apiextensions.k8s.io/${crd}.kaos.tools`, `the ${crd}.kaos.tools CRD stays`);
  t.same((await exportNamespaces(client, RESTORE_NAMESPACES)).map(objectId), objects, 'every KAOS object stays');
  t.same(await exportChildren(client, RESTORE_NAMESPACES), children, 'every child stays, as the operator applied it');
  t.same(await deploymentsReady(), ready, 'their pods keep running');
  const invalid = await plane.kubectl(['apply', '--dry-run=server', '-o', 'json', '-f', '-'], { input: JSON.stringify({ apiVersion: 'kaos.tools/v1alpha1', kind: 'ModelAPI', metadata: { name: 'no-model', namespace: RESTORE_NAMESPACES[0] }, spec: { mode: 'Hosted' } }) });
  t.equal(invalid.code, 0, `a Hosted ModelAPI without a model, which the webhook refuses, is admitted: ${invalid.stderr}`);
  t.notMatch(invalid.stdout, 'kaos.tools/defaulted', 'and not defaulted');

  const mark = auditMark(auditLog);
  const second = await helm(install);
  t.equal(second.code, 0, `helm install again: ${second.stderr}`);
  await startChartOperator('second');
  await converged(RESTORE_NAMESPACES, objects.length);
  await sleep(3000); // room for a late write
  await converged(RESTORE_NAMESPACES, objects.length);
  t.same(childWritesSince(mark), [], 'the new install writes no child');
  t.same(await exportChildren(client, RESTORE_NAMESPACES), children, 'every child as it was');
  t.same(await deploymentsReady(), ready, 'no pod rolled');
});
