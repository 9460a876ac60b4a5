// The chart's pod, given to a container: the `run` arguments that give the operator's image what
// the Deployment of chart/ gives its pod — the user and groups, the read-only root filesystem, the
// capabilities, seccomp and no-new-privileges, the memory and CPU limits, the env (fieldRefs
// resolved as the kubelet would), the secret and emptyDir volumes, the grace period — so that a
// test runs the image as the chart does, read from the chart itself rather than restated. Pure:
// the caller renders the chart and starts the container (test/e2e/support/container.ts).
import type { EngineName } from '../../scripts/image/engine.ts';

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}

export interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  fsGroup?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type: string };
}

export interface HttpProbe { httpGet?: { path: string; port: string | number } }

export interface ChartContainer {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: Array<{ name?: string; containerPort: number }>;
  securityContext?: SecurityContext;
  resources?: { limits?: { memory?: string; cpu?: string } };
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean; subPath?: string }>;
  readinessProbe?: HttpProbe;
  livenessProbe?: HttpProbe;
}

export interface ChartDeployment {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: {
    template: {
      spec: {
        securityContext?: SecurityContext;
        terminationGracePeriodSeconds?: number;
        containers: ChartContainer[];
        volumes?: Array<{ name: string; secret?: { secretName: string }; emptyDir?: Record<string, unknown> }>;
      };
    };
  };
}

export interface PodContext {
  engine: EngineName;
  /** The container's name. */
  name: string;
  /** What the downward API would give: metadata.name and metadata.namespace. */
  podName: string;
  podNamespace: string;
  /** The host directory holding each Secret the pod mounts, by Secret name. */
  secrets: Readonly<Record<string, string>>;
  /** Set over the chart's env (what a container on the host's network must change: ports, hosts). */
  env: Readonly<Record<string, string>>;
  /** More read-only files or directories: host path → container path (a kubeconfig). */
  mounts: Readonly<Record<string, string>>;
  /** More arguments of `run`, before the image (labels, --detach). */
  extra?: readonly string[];
}

/**
 * The chart's values (`--set` arguments) that run `image` from the nodes' own images: the
 * README's and docs/helm.md's, and what the image's e2e tests render the chart with.
 */
export function imageValues(image: string): string[] {
  const [, repository, tag] = /^(.+):([^:/]+)$/.exec(image) ?? [];
  if (repository === undefined || tag === undefined) throw new Error(`${image}: not repository:tag`);
  return [`image.repository=${repository}`, `image.tag=${tag}`, 'image.pullPolicy=Never'];
}

/** The chart's one container (the operator). */
export function operatorContainer(deployment: ChartDeployment): ChartContainer {
  const [container, ...others] = deployment.spec.template.spec.containers;
  if (container === undefined || others.length > 0) throw new Error(`the chart's Deployment has ${deployment.spec.template.spec.containers.length} containers, not one`);
  return container;
}

/** A Kubernetes quantity ("512Mi", "1G", "250m") as a number of units ("250m" of a CPU is 0.25). */
export function quantity(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T|m)?$/.exec(text);
  if (m === null) throw new Error(`not a quantity: ${text}`);
  const factor: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12, m: 1e-3 };
  return Number(m[1]) * (m[2] === undefined ? 1 : (factor[m[2]] ?? 1));
}

/** The value the downward API gives a fieldRef. */
function fieldRef(path: string, ctx: PodContext): string {
  if (path === 'metadata.name') return ctx.podName;
  if (path === 'metadata.namespace') return ctx.podNamespace;
  throw new Error(`fieldRef ${path}: not given to the container`);
}

/**
 * The arguments of `<engine> run` (after `run`, image last) that give a container what the chart
 * gives the operator's pod. Anything in the pod this cannot give (another volume type, a subPath,
 * a command) throws rather than run something else than the chart says.
 */
export function chartRunArgs(deployment: ChartDeployment, ctx: PodContext): string[] {
  const pod = deployment.spec.template.spec;
  const c = operatorContainer(deployment);
  // The container's securityContext wins over the pod's, field by field, as in Kubernetes.
  const sc: SecurityContext = { ...pod.securityContext, ...c.securityContext };
  const args = ['--name', ctx.name, ...(ctx.extra ?? [])];

  if (sc.runAsUser !== undefined) {
    if (sc.runAsNonRoot === true && sc.runAsUser === 0) throw new Error('runAsNonRoot with runAsUser 0');
    args.push('--user', sc.runAsGroup === undefined ? String(sc.runAsUser) : `${sc.runAsUser}:${sc.runAsGroup}`);
  }
  // The kubelet adds fsGroup to the container's groups and gives it the volumes' files.
  if (pod.securityContext?.fsGroup !== undefined) args.push('--group-add', String(pod.securityContext.fsGroup));
  if (sc.readOnlyRootFilesystem === true) {
    args.push('--read-only');
    // podman's --read-only also mounts writable tmpfs on /run, /tmp and /var/tmp; the chart's
    // pod has only the volumes it declares.
    if (ctx.engine === 'podman') args.push('--read-only-tmpfs=false');
  }
  for (const cap of sc.capabilities?.drop ?? []) args.push('--cap-drop', cap.toLowerCase());
  for (const cap of sc.capabilities?.add ?? []) args.push('--cap-add', cap.toLowerCase());
  if (sc.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');
  const seccomp = sc.seccompProfile?.type;
  if (seccomp === 'Unconfined') args.push('--security-opt', 'seccomp=unconfined');
  else if (seccomp !== undefined && seccomp !== 'RuntimeDefault') throw new Error(`seccompProfile ${seccomp}: not mapped`);

  const limits = c.resources?.limits ?? {};
  if (limits.memory !== undefined) args.push('--memory', `${quantity(limits.memory)}b`);
  if (limits.cpu !== undefined) args.push('--cpus', String(quantity(limits.cpu)));
  if (pod.terminationGracePeriodSeconds !== undefined) args.push('--stop-timeout', String(pod.terminationGracePeriodSeconds));

  const env = new Map<string, string>();
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env.set(e.name, e.value);
    else if (e.valueFrom?.fieldRef !== undefined) env.set(e.name, fieldRef(e.valueFrom.fieldRef.fieldPath, ctx));
    else throw new Error(`env ${e.name}: neither a value nor a fieldRef`);
  }
  for (const [name, value] of Object.entries(ctx.env)) env.set(name, value);
  for (const [name, value] of env) args.push('--env', `${name}=${value}`);

  for (const m of c.volumeMounts ?? []) {
    if (m.subPath !== undefined) throw new Error(`volumeMount ${m.name}: subPath not mapped`);
    const volume = pod.volumes?.find((v) => v.name === m.name);
    if (volume?.secret !== undefined) {
      const dir = ctx.secrets[volume.secret.secretName];
      if (dir === undefined) throw new Error(`no directory given for Secret ${volume.secret.secretName}`);
      // A Secret volume is read-only whatever the mount says.
      args.push('--volume', `${dir}:${m.mountPath}:ro`);
    } else if (volume?.emptyDir !== undefined) {
      args.push('--tmpfs', m.mountPath);
    } else {
      throw new Error(`volume ${m.name}: only secret and emptyDir volumes are mapped`);
    }
  }
  for (const [host, path] of Object.entries(ctx.mounts)) args.push('--volume', `${host}:${path}:ro`);

  if (c.command !== undefined) throw new Error('a command over the image\'s entrypoint: not mapped');
  return [...args, c.image, ...(c.args ?? [])];
}
