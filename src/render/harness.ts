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
 * The git credential helper an https:// workspace gets: it answers git's `get` with user
 * `x-access-token` (as KAOS puts it into the URL) and the token from the env `GIT_TOKEN` of
 * whichever container runs git, at the moment git asks. The token is never in a command's
 * arguments (echo is the shell's builtin) and never written to disk: the clone's remote stays the
 * URL as written, and the helper stored in /workspace/.git/config holds no secret, only where to
 * read one (the agent container's GIT_TOKEN, so a harness that pushes authenticates as the clone did).
 */
export const WORKSPACE_CREDENTIAL_HELPER =
  '!f() { if [ "$1" = get ] && [ -n "${GIT_TOKEN:-}" ]; then echo username=x-access-token; echo "password=${GIT_TOKEN}"; fi; }; f';

/**
 * Clones the branch into /workspace. The repository and the branch come from the env, always
 * double-quoted, never spliced into the script (KAOS splices them in Go-quoted, where `$(…)` still
 * runs): whatever characters they hold reach git as one argument each and are never parsed by the
 * shell. With a token and an https:// URL, git gets the token from WORKSPACE_CREDENTIAL_HELPER
 * (`-c` for the clone, then stored in the repository's config for later pushes) instead of from
 * the URL, where KAOS puts it: there it would be an argument of git, visible in the process table,
 * and stay in `remote.origin.url` on the workspace volume. `--` ends git's options before the URL.
 * The helper holds no single quote, so the script holds it single-quoted.
 */
export const WORKSPACE_CLONE_SCRIPT = [
  'set -e',
  'set -- clone --depth 1 --single-branch --branch "$WORKSPACE_BRANCH" -- "$WORKSPACE_REPO_URL" /workspace',
  'helper=',
  'if [ -n "${GIT_TOKEN:-}" ]; then',
  '  case "$WORKSPACE_REPO_URL" in',
  `    https://*) helper='${WORKSPACE_CREDENTIAL_HELPER}' ;;`,
  '  esac',
  'fi',
  'if [ -z "$helper" ]; then exec git "$@"; fi',
  'git -c credential.helper="$helper" "$@"',
  'exec git -C /workspace config credential.helper "$helper"',
].join('\n');

/** HARNESS_DRIVER, HARNESS_WORKSPACE, HARNESS_STATE_DIR: after LOG_LEVEL in the agent's env. */
export function harnessEnv(driver: string): EnvVar[] {
  return [env('HARNESS_DRIVER', driver), env('HARNESS_WORKSPACE', WORKSPACE_PATH), env('HARNESS_STATE_DIR', STATE_PATH)];
}

/**
 * The agent container's GIT_TOKEN (after HARNESS_*), by reference to the workspace's credentials:
 * the credential helper the clone stores reads it when the harness pushes. None without credentials.
 */
export function workspaceTokenEnv(harness: AgentHarnessInput | undefined): EnvVar[] {
  const credentials = harness?.workspace?.credentialsSecretRef;
  return credentials === undefined ? [] : [{ name: WORKSPACE_ENV.token, valueFrom: { secretKeyRef: copySecretKeySelector(credentials) } }];
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
  const clone: Container = {
    name: WORKSPACE_CLONE_CONTAINER,
    image: WORKSPACE_CLONE_IMAGE,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', WORKSPACE_CLONE_SCRIPT],
    env: [
      env(WORKSPACE_ENV.repoURL, workspace.repoURL),
      env(WORKSPACE_ENV.branch, branch),
      ...workspaceTokenEnv(harness),
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
