// An Agent's harness beyond its schema (docs/api.md, "Agent harness"): the workspace's repository
// and branch, which reach the clone's shell only as env but must still be something git clones
// (never an option, never a local path or a transport helper), and the runtime against the
// registry, as far as the cache can read it.
import { clampWarning } from '../warnings.ts';
import { invalid, notSupported, required, type FieldError } from '../field-error.ts';
import { goQuote } from '../go-format.ts';
import { briefProblem, harnessRuntimeNames, resolveHarness, type HarnessRegistryState } from '../harness-runtimes.ts';
import { asRecord, asString, getIn, jsonEqual, type JsonRecord } from '../json.ts';
import type { KubeObject } from '../lookup.ts';
import type { ValidationResult } from './validation-types.ts';

const WORKSPACE = 'spec.harness.workspace';

export interface HarnessValidationContext {
  /** The stored object on UPDATE: the runtime is judged only when the harness or the image changed. */
  oldObject?: KubeObject;
  /** The registry as the cache holds it; absent: not known here (a warning). */
  runtimes?: HarnessRegistryState;
}

export function validateAgentHarness(spec: JsonRecord, ctx: HarnessValidationContext): ValidationResult {
  const harness = asRecord(spec.harness);
  if (harness === undefined) return { errors: [], warnings: [] };
  const errors: FieldError[] = [];
  const warnings: string[] = [];

  const workspace = asRecord(harness.workspace);
  const repoURL = asString(workspace?.repoURL);
  if (repoURL !== undefined && repoURL !== '') {
    const problem = repoURLProblem(repoURL);
    if (problem !== undefined) errors.push(invalid(`${WORKSPACE}.repoURL`, repoURL, problem));
  }
  const branch = asString(workspace?.branch);
  if (branch !== undefined && branch !== '') {
    const problems = branchNameProblems(branch);
    if (problems.length > 0) errors.push(invalid(`${WORKSPACE}.branch`, branch, `must be a git branch name: ${problems.join('; ')}`));
  }

  // Judged when it may have changed: an Agent whose runtime left the registry since can still be relabelled.
  const image = asString(getIn(spec, 'container', 'image'));
  const old = ctx.oldObject?.spec;
  const changed = old === undefined || !jsonEqual(getIn(old, 'harness'), spec.harness) || getIn(old, 'container', 'image') !== image;
  const runtime = asString(harness.runtime);
  if (changed && runtime !== undefined && runtime !== '') {
    const state = ctx.runtimes ?? { problem: 'the harness runtime registry is not known here' };
    const resolution = resolveHarness(state, runtime, image);
    if (resolution.kind === 'unknown') errors.push(notSupported('spec.harness.runtime', runtime, harnessRuntimeNames(state)));
    else if (resolution.kind === 'no-image') errors.push(required('spec.container.image', `harness runtime ${goQuote(runtime)} has no image`));
    else if (resolution.kind === 'unreadable') warnings.push(clampWarning(`spec.harness.runtime ${goQuote(runtime)} not checked: ${briefProblem(resolution.reason)}`));
  }
  return { errors, warnings };
}

/** Whitespace or a control character: no URL git clones holds one. */
const UNPRINTABLE = /[\s\u0000-\u001f\u007f]/;
/** scp-like syntax as KAOS's users write it: `git@<host>:<path>`. */
const SCP_LIKE = /^git@[^/:@]+:.+$/;

/** Why `url` is not a repository the clone accepts, or undefined. */
export function repoURLProblem(url: string): string | undefined {
  if (UNPRINTABLE.test(url)) return 'must not contain whitespace or control characters';
  const scheme = ['https://', 'http://', 'ssh://'].find((s) => url.startsWith(s));
  if (scheme !== undefined ? url.length > scheme.length : SCP_LIKE.test(url)) return undefined;
  return 'must be an https://, http:// or ssh:// URL, or git@<host>:<path>';
}

/**
 * Why `name` is not a branch name git accepts (`git check-ref-format --branch`), every reason
 * found: no leading `-` (git would read an option), no `..`, `@{`, `//`, no space, control
 * character or any of `~^:?*[\`, no component that starts with `.` or ends with `.lock`, not
 * `@`, and no leading or trailing `/` or trailing `.`.
 */
export function branchNameProblems(name: string): string[] {
  const problems: string[] = [];
  if (name.startsWith('-')) problems.push('must not start with "-"');
  if (name === '@') problems.push('must not be "@"');
  if (UNPRINTABLE.test(name)) problems.push('must not contain whitespace or control characters');
  const forbidden = [...new Set([...name].filter((c) => '~^:?*[\\'.includes(c)))];
  if (forbidden.length > 0) problems.push(`must not contain ${forbidden.map((c) => goQuote(c)).join(', ')}`);
  for (const sequence of ['..', '@{', '//']) {
    if (name.includes(sequence)) problems.push(`must not contain ${goQuote(sequence)}`);
  }
  if (name.startsWith('/') || name.endsWith('/')) problems.push('must not start or end with "/"');
  if (name.endsWith('.')) problems.push('must not end with "."');
  const components = name.split('/');
  if (components.some((c) => c.startsWith('.'))) problems.push('no part between slashes may start with "."');
  if (components.some((c) => c.endsWith('.lock'))) problems.push('no part between slashes may end with ".lock"');
  return problems;
}
