// The harness parts of an Agent's pod (docs/api.md, "Agent harness"): the HARNESS_* env the
// harness image reads and, with a workspace, the clone that runs before it, its two volumes and
// their mounts in `agent`. All of it is generated before spec.container and spec.podSpec apply,
// so a user can still override any of it.
import { AGENT_DEFAULTS } from '../api/defaults.ts';
import { copySecretKeySelector, env } from './container.ts';
import type { AgentHarnessInput } from './inputs.ts';
import type { Container, EnvVar, Volume, VolumeMount } from './k8s.ts';

export const WORKSPACE_CLONE_CONTAINER = 'workspace-clone';
/** KAOS's clone image: git and a POSIX sh, a pinned release. */
export const WORKSPACE_CLONE_IMAGE = 'alpine/git:2.45.2';
export const WORKSPACE_VOLUME = 'workspace';
export const WORKSPACE_PATH = '/workspace';
export const STATE_VOLUME = 'state';
export const STATE_PATH = '/state';

/** The env that carries the repository, the branch and the token into the clone (WORKSPACE_CLONE_SCRIPT reads these names). */
export const WORKSPACE_ENV = { repoURL: 'WORKSPACE_REPO_URL', branch: 'WORKSPACE_BRANCH', token: 'GIT_TOKEN' } as const;

/**
 * Clones the branch into /workspace. The repository and the branch come from the env, always
 * double-quoted, never spliced into the script (KAOS splices them in Go-quoted, where `$(…)` still
 * runs): whatever characters they hold reach git as one argument each and are never parsed by the
 * shell. With a token, an https:// URL gets it as KAOS puts it there (user `x-access-token`),
 * by parameter expansion, so the token is never an argument of any command either. `--` ends git's
 * options before the URL.
 */
export const WORKSPACE_CLONE_SCRIPT = [
  'set -e',
  'url="$WORKSPACE_REPO_URL"',
  'if [ -n "${GIT_TOKEN:-}" ]; then',
  '  case "$url" in',
  '    https://*) url="https://x-access-token:${GIT_TOKEN}@${url#https://}" ;;',
  '  esac',
  'fi',
  'exec git clone --depth 1 --single-branch --branch "$WORKSPACE_BRANCH" -- "$url" /workspace',
].join('\n');

/** HARNESS_DRIVER, HARNESS_WORKSPACE, HARNESS_STATE_DIR: after LOG_LEVEL in the agent's env. */
export function harnessEnv(driver: string): EnvVar[] {
  return [env('HARNESS_DRIVER', driver), env('HARNESS_WORKSPACE', WORKSPACE_PATH), env('HARNESS_STATE_DIR', STATE_PATH)];
}

/** What a workspace adds to the pod; undefined without one. */
export interface WorkspaceParts {
  readonly initContainers: Container[];
  readonly volumes: Volume[];
  /** The `agent` container's mounts. */
  readonly mounts: VolumeMount[];
}

export function workspaceParts(harness: AgentHarnessInput | undefined): WorkspaceParts | undefined {
  const workspace = harness?.workspace;
  if (workspace === undefined) return undefined;
  const branch = workspace.branch !== undefined && workspace.branch !== '' ? workspace.branch : AGENT_DEFAULTS.workspaceBranch;
  const credentials = workspace.credentialsSecretRef;
  const clone: Container = {
    name: WORKSPACE_CLONE_CONTAINER,
    image: WORKSPACE_CLONE_IMAGE,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', WORKSPACE_CLONE_SCRIPT],
    env: [
      env(WORKSPACE_ENV.repoURL, workspace.repoURL),
      env(WORKSPACE_ENV.branch, branch),
      ...(credentials === undefined ? [] : [{ name: WORKSPACE_ENV.token, valueFrom: { secretKeyRef: copySecretKeySelector(credentials) } }]),
    ],
    volumeMounts: [{ name: WORKSPACE_VOLUME, mountPath: WORKSPACE_PATH }],
  };
  return {
    initContainers: [clone],
    volumes: [
      { name: WORKSPACE_VOLUME, emptyDir: {} },
      { name: STATE_VOLUME, emptyDir: {} },
    ],
    mounts: [
      { name: WORKSPACE_VOLUME, mountPath: WORKSPACE_PATH },
      { name: STATE_VOLUME, mountPath: STATE_PATH },
    ],
  };
}
