// Persistent volumes on the local control plane, against the real binaries through kubectl: the
// default StorageClass (host-path, WaitForFirstConsumer, expansion allowed), a claim that binds
// when the pod mounting it is scheduled, that pod Running and Ready on a kwok node, its
// Deployment available, and, once they are deleted, the volume reclaimed and its directory gone;
// what growing a claim does (accepted, recorded by the expander, never carried out: host-path
// cannot resize) and what a class without expansion answers; stop() removing the volumes of
// claims still bound; and a control plane without pods, where a claim stays Pending and can still
// be deleted. Never skipped: if the control plane cannot start, these tests fail with the reason.
import { existsSync, readdirSync, statSync } from 'node:fs';
import t from 'tap';
import { eventually } from '../support/poll.ts';
import { buildBinaries, DEFAULT_STORAGE_CLASS, HOST_PATH_VOLUMES, startControlPlane, type ControlPlane } from '../cluster/control-plane.ts';

const log = (line: string): void => { t.comment(line); };
const WAIT = { timeoutMs: 60_000, intervalMs: 250 } as const;

type Json = Record<string, unknown>;
type Quantities = Record<string, string>;
interface Meta { name: string; annotations?: Record<string, string>; finalizers?: string[]; generation?: number }
interface Condition { type: string; status: string }
interface List<T> { items: T[] }
interface StorageClass { metadata: Meta; provisioner: string; reclaimPolicy: string; volumeBindingMode: string; allowVolumeExpansion?: boolean }
interface Claim {
  metadata: Meta;
  spec: { storageClassName?: string; volumeName?: string; resources: { requests: Quantities } };
  status: { phase: string; capacity?: Quantities; accessModes?: string[]; conditions?: Condition[] };
}
interface Volume {
  metadata: Meta;
  spec: { persistentVolumeReclaimPolicy: string; storageClassName: string; capacity: Quantities; accessModes: string[]; claimRef: { namespace: string; name: string }; hostPath: { path: string } };
  status: { phase: string };
}
interface Pod { spec: { nodeName: string }; status: { phase: string; conditions: Condition[] } }
interface Deployment { metadata: Meta; status: { readyReplicas?: number; conditions: Condition[] } }

/** kubectl against the plane; throws with its output when it fails, so no step fails silently. */
async function kubectlOk(plane: ControlPlane, args: readonly string[], input?: string): Promise<string> {
  const res = await plane.kubectl(args, input === undefined ? { timeoutMs: 90_000 } : { input, timeoutMs: 90_000 });
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${res.code}): ${res.stderr}${res.stdout}`);
  return res.stdout;
}

/** The object as stored, or undefined when it does not exist. */
async function get<T>(plane: ControlPlane, args: readonly string[]): Promise<T | undefined> {
  const out = await kubectlOk(plane, ['get', ...args, '-o', 'json', '--ignore-not-found']);
  return out.trim() === '' ? undefined : (JSON.parse(out) as T);
}

/** The messages of the Events of `reason` about the object named `name` in `ns`. */
async function eventMessages(plane: ControlPlane, ns: string, name: string, reason: string): Promise<string[]> {
  const out = await kubectlOk(plane, ['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name},reason=${reason}`, '-o', 'json']);
  return (JSON.parse(out) as List<{ message: string }>).items.map((e) => e.message);
}

function claim(name: string, size: string, storageClassName?: string): Json {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, ...(storageClassName === undefined ? {} : { storageClassName }) },
  };
}

/** One replica whose pod mounts the claim as volume `data` at /data/memory, as a MemoryStore's in local mode. */
function deployment(name: string, claimName: string): Json {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [{ name: 'memory', image: 'example.invalid/memory:1', volumeMounts: [{ name: 'data', mountPath: '/data/memory' }] }],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
        },
      },
    },
  };
}

async function apply(plane: ControlPlane, ns: string, ...objects: Json[]): Promise<void> {
  await kubectlOk(plane, ['apply', '-n', ns, '-f', '-'], objects.map((o) => JSON.stringify(o)).join('\n---\n'));
}

/** Waits until the claim is Bound and returns it with its volume. */
async function bound(plane: ControlPlane, ns: string, name: string): Promise<{ pvc: Claim; pv: Volume }> {
  const pvc = await eventually(`claim ${ns}/${name} Bound`, async () => {
    const o = await get<Claim>(plane, ['pvc', name, '-n', ns]);
    return o?.status.phase === 'Bound' ? o : undefined;
  }, WAIT);
  const pv = await get<Volume>(plane, ['pv', pvc.spec.volumeName ?? '']);
  if (pv === undefined) throw new Error(`volume ${pvc.spec.volumeName ?? '?'} of a bound claim not found`);
  return { pvc, pv };
}

/** The host-path volumes on disk, where kube-controller-manager makes them for this plane. */
function volumesOnDisk(plane: ControlPlane): string[] {
  const dir = plane.volumeOnDisk(HOST_PATH_VOLUMES);
  return existsSync(dir) ? readdirSync(dir) : [];
}

const binDir = await buildBinaries(log);
const plane = await startControlPlane({ binDir, log });
t.teardown(() => plane.stop());

t.test('the default StorageClass: host-path, WaitForFirstConsumer, Delete, expansion allowed', async (t) => {
  const classes = (await get<List<StorageClass>>(plane, ['storageclass']))?.items ?? [];
  t.same(classes.map((c) => c.metadata.name), ['standard'], 'one StorageClass');
  const sc = classes[0];
  if (sc === undefined) return;
  t.equal(sc.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'], 'true', 'the default');
  t.same(
    { provisioner: sc.provisioner, reclaimPolicy: sc.reclaimPolicy, volumeBindingMode: sc.volumeBindingMode, allowVolumeExpansion: sc.allowVolumeExpansion },
    { provisioner: 'kubernetes.io/host-path', reclaimPolicy: 'Delete', volumeBindingMode: 'WaitForFirstConsumer', allowVolumeExpansion: true },
  );
  t.equal(DEFAULT_STORAGE_CLASS.metadata.name, sc.metadata.name, 'exported as the launcher creates it');
});

t.test('a claim binds once the pod mounting it is scheduled; the pod runs, the Deployment is available; deleting them reclaims the volume', async (t) => {
  const ns = 'volumes';
  await kubectlOk(plane, ['create', 'namespace', ns]);
  await apply(plane, ns, claim('memorystore-mem-data', '1Gi'));

  // Alone, the claim waits for a consumer (WaitForFirstConsumer), with the class defaulted.
  const waiting = await get<Claim>(plane, ['pvc', 'memorystore-mem-data', '-n', ns]);
  t.equal(waiting?.spec.storageClassName, 'standard', 'the default StorageClass is set by the API server');
  await eventually('the WaitForFirstConsumer Event', async () => (await eventMessages(plane, ns, 'memorystore-mem-data', 'WaitForFirstConsumer')).length > 0, WAIT);
  t.same(await eventMessages(plane, ns, 'memorystore-mem-data', 'WaitForFirstConsumer'), ['waiting for first consumer to be created before binding']);
  t.equal((await get<Claim>(plane, ['pvc', 'memorystore-mem-data', '-n', ns]))?.status.phase, 'Pending', 'Pending until a pod mounts it');
  const growPending = await plane.kubectl(['patch', 'pvc', 'memorystore-mem-data', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { resources: { requests: { storage: '2Gi' } } } })]);
  t.not(growPending.code, 0, 'the request of a claim not yet bound cannot change');
  t.match(growPending.stderr, 'spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims');
  t.same(volumesOnDisk(plane), [], 'nothing provisioned yet');

  await apply(plane, ns, deployment('memorystore-mem', 'memorystore-mem-data'));
  const rollout = await plane.kubectl(['rollout', 'status', '-n', ns, 'deployment/memorystore-mem', '--timeout=60s'], { timeoutMs: 90_000 });
  t.equal(rollout.code, 0, `the Deployment rolls out: ${rollout.stdout}${rollout.stderr}`);
  const deploy = await get<Deployment>(plane, ['deployment', 'memorystore-mem', '-n', ns]);
  t.equal(deploy?.status.conditions.find((c) => c.type === 'Available')?.status, 'True', 'the Deployment is available');
  t.equal(deploy?.status.readyReplicas, 1);

  const pods = (await get<List<Pod>>(plane, ['pods', '-n', ns, '-l', 'app=memorystore-mem']))?.items ?? [];
  t.equal(pods.length, 1, 'one pod');
  const pod = pods[0];
  if (pod === undefined) return;
  t.equal(pod.status.phase, 'Running');
  t.equal(pod.status.conditions.find((c) => c.type === 'Ready')?.status, 'True', 'the pod is Ready');
  t.match(pod.spec.nodeName, /^kwok-node-\d$/, 'on a kwok node');

  const { pvc, pv } = await bound(plane, ns, 'memorystore-mem-data');
  t.equal(pvc.metadata.annotations?.['volume.kubernetes.io/selected-node'], pod.spec.nodeName, 'provisioned for the node the scheduler picked');
  t.same(pvc.status.capacity, { storage: '1Gi' });
  t.same(pvc.status.accessModes, ['ReadWriteOnce']);
  t.same(pvc.metadata.finalizers, ['kubernetes.io/pvc-protection'], 'the claim is protected while in use');
  t.equal(pv.metadata.annotations?.['pv.kubernetes.io/provisioned-by'], 'kubernetes.io/host-path', 'provisioned by the host-path plugin');
  t.same(
    { reclaim: pv.spec.persistentVolumeReclaimPolicy, class: pv.spec.storageClassName, capacity: pv.spec.capacity, modes: pv.spec.accessModes, claim: `${pv.spec.claimRef.namespace}/${pv.spec.claimRef.name}`, phase: pv.status.phase },
    { reclaim: 'Delete', class: 'standard', capacity: { storage: '1Gi' }, modes: ['ReadWriteOnce'], claim: `${ns}/memorystore-mem-data`, phase: 'Bound' },
  );
  t.same(pv.metadata.finalizers, ['kubernetes.io/pv-controller', 'kubernetes.io/pv-protection'], 'the volume is kept until its directory is deleted, and while bound');
  const path = pv.spec.hostPath.path;
  t.match(path, new RegExp(`^${HOST_PATH_VOLUMES}/[0-9a-f-]{36}$`), 'a directory of its own');
  const onDisk = plane.volumeOnDisk(path);
  t.ok(onDisk.startsWith(`${plane.dir}/`), `in the control plane's directory (${onDisk}), kube-controller-manager's private /tmp`);
  t.ok(statSync(onDisk).isDirectory(), 'made on disk');
  t.notOk(existsSync(path), `not at ${path} on the machine itself`);

  // Deleted: the pod goes, then the claim (its finalizer lifted), then the volume and its directory.
  await kubectlOk(plane, ['delete', 'deployment', 'memorystore-mem', '-n', ns, '--wait=true', '--timeout=60s']);
  const del = await plane.kubectl(['delete', 'pvc', 'memorystore-mem-data', '-n', ns, '--wait=true', '--timeout=60s'], { timeoutMs: 90_000 });
  t.equal(del.code, 0, `the claim is deleted once no pod uses it: ${del.stderr}`);
  await eventually(`volume ${pv.metadata.name} reclaimed`, async () => (await get<Volume>(plane, ['pv', pv.metadata.name])) === undefined, WAIT);
  t.notOk(existsSync(onDisk), 'its directory removed (reclaim policy Delete)');
  t.same(volumesOnDisk(plane), [], 'no volume directory left');
  t.equal((await kubectlOk(plane, ['get', 'pv', '-o', 'name'])).trim(), '', 'no PersistentVolume left');
  const nsDel = await plane.kubectl(['delete', 'namespace', ns, '--wait=true', '--timeout=60s'], { timeoutMs: 90_000 });
  t.equal(nsDel.code, 0, `the namespace is deleted: ${nsDel.stderr}`);
});

t.test('growing a bound claim: the API server accepts it, the expander records that nothing here can resize host-path, the capacity stays', async (t) => {
  const ns = 'expansion';
  await kubectlOk(plane, ['create', 'namespace', ns]);
  await apply(plane, ns, claim('grow-data', '1Gi'), deployment('grow', 'grow-data'));
  const before = await bound(plane, ns, 'grow-data');
  const rollout = await plane.kubectl(['rollout', 'status', '-n', ns, 'deployment/grow', '--timeout=60s'], { timeoutMs: 90_000 });
  t.equal(rollout.code, 0, `the Deployment rolls out: ${rollout.stderr}`);

  const grow = await plane.kubectl(['patch', 'pvc', 'grow-data', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { resources: { requests: { storage: '2Gi' } } } })]);
  t.equal(grow.code, 0, `the larger request is accepted (allowVolumeExpansion): ${grow.stderr}`);
  await eventually('the expander\'s ExternalExpanding Event', async () => (await eventMessages(plane, ns, 'grow-data', 'ExternalExpanding')).length > 0, WAIT);
  t.same(await eventMessages(plane, ns, 'grow-data', 'ExternalExpanding'), ['waiting for an external controller to expand this PVC'], 'host-path has no expander: the controller leaves it to one that never comes');

  // The expander is done with it (it does not retry a claim it leaves to another controller).
  const after = await bound(plane, ns, 'grow-data');
  t.same(after.pvc.spec.resources.requests, { storage: '2Gi' }, 'the request is the larger size');
  t.same(after.pvc.status.capacity, { storage: '1Gi' }, 'the capacity stays as provisioned');
  t.same(after.pv.spec.capacity, { storage: '1Gi' }, 'and so does the volume\'s');
  // Only the resize conditions: Kubernetes v1.37 also reports whether a pod uses the claim (Unused).
  t.same((after.pvc.status.conditions ?? []).filter((c) => ['Resizing', 'FileSystemResizePending'].includes(c.type)), [], 'no resize condition (Resizing, FileSystemResizePending)');
  t.equal(after.pv.metadata.name, before.pv.metadata.name, 'the same volume');
  const deploy = await get<Deployment>(plane, ['deployment', 'grow', '-n', ns]);
  t.same({ generation: deploy?.metadata.generation, ready: deploy?.status.readyReplicas }, { generation: 1, ready: 1 }, 'the pod keeps running, no rollout');

  // While the capacity lags, the request may come down again, but never to the capacity or below.
  const patch = (storage: string): ReturnType<ControlPlane['kubectl']> =>
    plane.kubectl(['patch', 'pvc', 'grow-data', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { resources: { requests: { storage } } } })]);
  const toCapacity = await patch('1Gi');
  t.not(toCapacity.code, 0, 'back to the capacity: refused');
  t.match(toCapacity.stderr, 'spec.resources.requests.storage: Forbidden: field can not be less than status.capacity');
  t.equal((await patch('1536Mi')).code, 0, 'between the capacity and the request: accepted');
});

t.test('a StorageClass without allowVolumeExpansion: the API server refuses to grow its claims', async (t) => {
  const ns = 'fixed-size';
  await kubectlOk(plane, ['create', 'namespace', ns]);
  // Immediate binding: the claim binds without a pod (the other mode works too).
  await kubectlOk(plane, ['apply', '-f', '-'], JSON.stringify({ ...DEFAULT_STORAGE_CLASS, metadata: { name: 'fixed' }, volumeBindingMode: 'Immediate', allowVolumeExpansion: undefined }));
  await apply(plane, ns, claim('fixed-data', '1Gi', 'fixed'));
  const { pv } = await bound(plane, ns, 'fixed-data');
  t.equal(pv.spec.storageClassName, 'fixed');
  const grow = await plane.kubectl(['patch', 'pvc', 'fixed-data', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { resources: { requests: { storage: '2Gi' } } } })]);
  t.not(grow.code, 0, 'refused');
  t.match(grow.stderr, 'persistentvolumeclaims "fixed-data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize', 'by the PersistentVolumeClaimResize admission plugin');
  t.same((await get<Claim>(plane, ['pvc', 'fixed-data', '-n', ns]))?.spec.resources.requests, { storage: '1Gi' }, 'the claim unchanged');
});

t.test('stop() removes the volumes of claims still bound, with the control plane\'s directory', async (t) => {
  const paths = ((await get<List<Volume>>(plane, ['pv']))?.items ?? []).map((pv) => plane.volumeOnDisk(pv.spec.hostPath.path));
  t.equal(paths.length, 2, 'two volumes still bound (the two claims above)');
  for (const p of paths) t.ok(existsSync(p), `${p} exists`);
  await plane.stop();
  for (const p of paths) t.notOk(existsSync(p), `${p} removed`);
  t.notOk(existsSync(plane.dir), 'the directory removed');
});

t.test('without pods: the default StorageClass, a claim stays Pending and can be deleted', async (t) => {
  const podless = await startControlPlane({ binDir, log, pods: false });
  t.teardown(() => podless.stop());
  t.equal((await kubectlOk(podless, ['get', 'storageclass', '-o', 'name'])).trim(), 'storageclass.storage.k8s.io/standard');
  await apply(podless, 'default', claim('data', '1Gi'));
  const pvc = await get<Claim>(podless, ['pvc', 'data', '-n', 'default']);
  t.same({ class: pvc?.spec.storageClassName, phase: pvc?.status.phase, finalizers: pvc?.metadata.finalizers }, { class: 'standard', phase: 'Pending', finalizers: ['kubernetes.io/pvc-protection'] });
  // The finalizer is lifted by the claim-protection controller, which runs without pods too.
  const del = await podless.kubectl(['delete', 'pvc', 'data', '-n', 'default', '--wait=true', '--timeout=60s'], { timeoutMs: 90_000 });
  t.equal(del.code, 0, `the claim is deleted: ${del.stderr}`);
  t.equal((await kubectlOk(podless, ['get', 'pv', '-o', 'name'])).trim(), '', 'nothing provisioned (no binder without pods)');
});
