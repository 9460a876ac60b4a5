// One object through the webhooks' own handlers, as the API server would send it on a create:
// the mutating handler's patch applied, then the validating handler's verdict on the result.
import jsonPatch from 'fast-json-patch';
import type { Config } from '../config/config.ts';
import { cloneJson } from '../api/json.ts';
import { GROUP, KIND_NAMES, KINDS, VERSION, type KaosKind } from '../api/kinds.ts';
import type { KubeObject, ObjectLookup } from '../api/lookup.ts';
import { createMutatingHandler } from '../admission/mutate.ts';
import type { AdmissionHandler, AdmissionRequest } from '../admission/types.ts';
import { createValidatingHandler, type PodSpecCheck } from '../admission/validate.ts';

export interface Verdict {
  /** The object as the mutating webhook leaves it. */
  defaulted: KubeObject;
  /** The validating webhook's causes, `<field>: <message>` as kubectl prints them. */
  errors: { field?: string; message: string }[];
  /** Both webhooks' warnings. */
  warnings: string[];
}

export interface Handlers {
  mutate: Record<KaosKind, AdmissionHandler>;
  validate: Record<KaosKind, AdmissionHandler>;
}

export function createHandlers(lookup: ObjectLookup, config: Config, podSpecCheck: PodSpecCheck): Handlers {
  const each = (make: (kind: KaosKind) => AdmissionHandler): Record<KaosKind, AdmissionHandler> =>
    Object.fromEntries(KINDS.map((k) => [k, make(k)])) as Record<KaosKind, AdmissionHandler>;
  return {
    mutate: each((kind) => createMutatingHandler(kind, { lookup, config })),
    validate: each((kind) => createValidatingHandler(kind, { lookup, config, podSpecCheck })),
  };
}

/** The AdmissionRequest kube-apiserver sends for creating `object` (its namespace filled in). */
export function createRequest(kind: KaosKind, object: KubeObject): AdmissionRequest {
  const gvk = { group: GROUP, version: VERSION, kind };
  const gvr = { group: GROUP, version: VERSION, resource: KIND_NAMES[kind].plural };
  return {
    uid: 'kaos-operator-lint',
    kind: gvk,
    resource: gvr,
    requestKind: gvk,
    requestResource: gvr,
    ...(object.metadata?.name ? { name: object.metadata.name } : {}),
    namespace: object.metadata?.namespace ?? '',
    operation: 'CREATE',
    object,
    dryRun: true,
  };
}

/** What the mutating webhook makes of `object`; with `validate`, also the validating webhook's verdict. */
export async function judge(handlers: Handlers, kind: KaosKind, object: KubeObject, validate: boolean): Promise<Verdict> {
  const mutation = await handlers.mutate[kind](createRequest(kind, object));
  const defaulted = applyPatch(object, mutation.patch);
  const verdict: Verdict = { defaulted, errors: [], warnings: [...(mutation.warnings ?? [])] };
  if (!validate) return verdict;
  const decision = await handlers.validate[kind](createRequest(kind, defaulted));
  verdict.warnings.push(...(decision.warnings ?? []));
  if (!decision.allowed) {
    const causes = decision.status?.details?.causes ?? [];
    verdict.errors =
      causes.length > 0
        ? causes.map((c) => (c.field === undefined || c.field === '' ? { message: c.message } : { field: c.field, message: `${c.field}: ${c.message}` }))
        : [{ message: decision.status?.message ?? 'denied' }];
  }
  return verdict;
}

/** `object` with a mutating handler's patch applied (a copy; the object is left alone). */
export function applyPatch(object: KubeObject, patch: readonly jsonPatch.Operation[] | undefined): KubeObject {
  if (patch === undefined || patch.length === 0) return object;
  return jsonPatch.applyPatch(cloneJson(object), patch as jsonPatch.Operation[], false, true).newDocument;
}
