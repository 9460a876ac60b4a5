// docs/api.md, "Validation": the merged pod must be a valid pod spec. The same holds for what the schema cannot
// check inside spec.container (resources) and env entries (valueFrom), so those are checked too. Kubernetes' own pod validation is large
// and versioned with the cluster, so instead of re-implementing it we render the Deployment the
// controller would create and ask the API server to validate it with a server-side dry run.
// Its field errors come back under spec.template.spec and are reported under spec.podSpec.
import type { Config } from '../config/config.ts';
import { clip } from '../api/bounded-text.ts';
import { FIELD_ERROR_TYPES, FieldError, TYPE_TEXT, invalid, type FieldErrorType } from '../api/field-error.ts';
import { MAX_CAUSES } from '../api/validation/answer-limits.ts';
import type { WorkloadKind } from '../api/kinds.ts';
import type { KubeObject, Refusal } from '../api/meta.ts';
import type { Logger } from '../leaves/logger.ts';
import type { WorkloadObject } from '../api/schema/index.ts';
import { fragmentPath, isRuntimeShape, renderPodSpec, type MCPServerDeps, type MCPServerInput } from '../render/index.ts';
import { resolveRuntime, type RegistryState } from '../api/mcp-runtimes.ts';
import type { PodSpecCheck } from './validate.ts';
import { errorMessage } from '../leaves/error-message.ts';

const TEMPLATE_SPEC = 'spec.template.spec';
const PODSPEC_FIELD = 'spec.podSpec';

/**
 * A server-side dry-run create of a Deployment (kube/dry-run.ts gives one): resolves with the API
 * server's verdict, rejects only when there is none (timeout, outage).
 */
export type DryRunCreate = (namespace: string, deployment: object) => Promise<{ ok: true } | { ok: false; status: Refusal }>;

export interface PodSpecCheckOptions {
  dryRunCreate: DryRunCreate;
  config: Config;
  logger: Logger;
  /** The MCP runtime registry (the cache's): a runtime MCPServer's pod is rendered from its entry. */
  mcpRuntimes?: () => RegistryState;
}

/**
 * Stands in for the image of a runtime the registry does not resolve (unknown: refused anyway;
 * unreadable: only warned about), so that the dry run judges only what the user wrote.
 */
const UNRESOLVED_RUNTIME_IMAGE = 'kaos.invalid/unresolved-runtime';

function mcpServerDeps(object: WorkloadObject, runtimes: RegistryState | undefined): MCPServerDeps {
  const spec = object.spec as MCPServerInput['spec'];
  if (!isRuntimeShape(spec)) return {};
  const resolution = resolveRuntime(runtimes ?? { problem: 'unknown' }, spec.runtime ?? '');
  if (resolution.kind === 'custom') return {};
  return { runtime: resolution.kind === 'entry' ? resolution.entry : { image: UNRESOLVED_RUNTIME_IMAGE } };
}

export function createPodSpecCheck(options: PodSpecCheckOptions): PodSpecCheck {
  const { dryRunCreate, config, logger } = options;
  return async (kind: WorkloadKind, object: WorkloadObject): Promise<FieldError[]> => {
    const namespace = object.metadata?.namespace ?? '';
    const fragment = (object.spec as { podSpec?: unknown } | undefined)?.podSpec;
    let podSpec: unknown;
    let probe: object;
    try {
      const deps = kind === 'MCPServer' ? mcpServerDeps(object, options.mcpRuntimes?.()) : undefined;
      const rendered = renderPodSpec(kind, object, config, deps);
      podSpec = rendered.podSpec;
      // generateName: the real Deployment may already exist, and a dry-run create must not collide
      // with it. No owner reference: the owner may not exist yet (CREATE) and it is not validated.
      const { name: _name, ownerReferences: _owners, ...metadata } = rendered.deployment.metadata;
      probe = { ...rendered.deployment, metadata: { ...metadata, generateName: 'kaos-podspec-check-' } };
    } catch (err) {
      // Rendering is pure: it can only fail for something in the object, so the object is refused.
      return [unbuildable(fragment, err)];
    }
    let answer: Awaited<ReturnType<DryRunCreate>>;
    try {
      answer = await dryRunCreate(namespace, probe);
    } catch (err) {
      return uncheckedWarning(logger, kind, object, String(err));
    }
    if (answer.ok) return [];
    const { status } = answer;
    if (isOutage(status.code)) return uncheckedWarning(logger, kind, object, `${status.code}: ${status.message}`);
    // 422: the pod is invalid. 400: the API server could not even decode it (e.g. a resource
    // quantity such as "lots"); 413: too large. Only the object can cause these.
    if (status.code === 422 || status.code === 400) return podSpecErrors(status, podSpec, fragment);
    return [invalid('spec', undefined, `the pod it generates is invalid: ${clipError(status.message)}`)];
  };
}

/**
 * Not a verdict on the pod (no answer, outage, RBAC): let the object through rather than block
 * every podSpec edit while the API server is unhappy; the controller reports the real error.
 */
function uncheckedWarning(logger: Logger, kind: WorkloadKind, object: KubeObject, err: string): FieldError[] {
  logger.warn({ kind, namespace: object.metadata?.namespace ?? '', name: object.metadata?.name, err }, 'spec.podSpec could not be checked');
  return [];
}

/**
 * Whether a refused dry run says nothing about the object: the API server failing or overloaded
 * (5xx, 429), or refusing us rather than the pod (401, 403; 404 when the namespace is gone; 408).
 * Any other answer is a verdict on what we sent.
 */
export function isOutage(code: number): boolean {
  return code >= 500 || [401, 403, 404, 408, 429].includes(code);
}

/** The refusal of an object whose pod cannot even be built (render or podSpec merge threw). */
export function unbuildable(fragment: unknown, err: unknown): FieldError {
  return invalid(fragment === undefined ? 'spec' : PODSPEC_FIELD, undefined, `no pod can be built from it: ${clipError(errorMessage(err))}`);
}

/** Error texts are ours or the API server's, but may quote the object: keep the denial short. */
const clipError = (text: string): string => clip(text, 200);

/**
 * The 422's causes under the pod template. A cause about a field the user wrote in spec.podSpec
 * points at it there (the merged pod puts generated containers, ports and env first); any other
 * (from spec.container, an env entry, or what the operator generates) is reported on `spec`,
 * naming the field of the generated pod, since no one field of the object holds it.
 */
export function podSpecErrors(err: Pick<Refusal, 'message' | 'details'>, merged: unknown, fragment: unknown): FieldError[] {
  const errors: FieldError[] = [];
  for (const cause of err.details?.causes ?? []) {
    const field = cause.field ?? '';
    if (field !== TEMPLATE_SPEC && !field.startsWith(`${TEMPLATE_SPEC}.`) && !field.startsWith(`${TEMPLATE_SPEC}[`)) continue;
    const inPod = field.slice(TEMPLATE_SPEC.length).replace(/^\./, '');
    // Finding a cause's field in the fragment scans its lists, and a fragment's list may hold
    // 100,000 items, each with a cause: only the causes a denial can show are traced (answer-limits.ts);
    // the others only count, so they name no more than the pod's field.
    const traced = errors.length < MAX_CAUSES;
    const path = fragment === undefined || !traced ? undefined : fragmentPath(merged, fragment, inPod);
    if (path === undefined) {
      errors.push(invalid('spec', undefined, `the pod it generates is invalid: ${inPod === '' ? '' : `${inPod}: `}${cause.message ?? ''}`));
      continue;
    }
    const rooted = path === '' ? PODSPEC_FIELD : path.startsWith('[') ? `${PODSPEC_FIELD}${path}` : `${PODSPEC_FIELD}.${path}`;
    errors.push(fromCause(rooted, cause.reason ?? '', cause.message ?? ''));
  }
  // A 422 without usable causes is still a refusal of the pod: say so rather than allow it.
  if (errors.length === 0) errors.push(invalid('spec', undefined, `the pod it generates is invalid: ${err.message}`));
  return errors;
}

/** A FieldError whose text is the API server's own (its message already carries value and detail). */
function fromCause(field: string, type: string, message: string): FieldError {
  const known = (FIELD_ERROR_TYPES as readonly string[]).includes(type) ? (type as FieldErrorType) : 'FieldValueInvalid';
  const prefix = TYPE_TEXT[known];
  const rest = message.startsWith(`${prefix}: `) ? message.slice(prefix.length + 2) : message === prefix ? '' : message;
  return new FieldError(known, field, undefined, rest);
}
