// The mutating webhook for one kind: resolve what the defaults depend on, then default (pure)
// and answer with the JSON Patch from the request's object to the defaulted one.
import jsonPatch from 'fast-json-patch';
import type { Config } from '../config/config.ts';
import { defaultObject } from '../api/defaulting/default-object.ts';
import { asString, getIn, isSet, type JsonRecord } from '../api/json.ts';
import type { KaosKind } from '../api/kinds.ts';
import { validateDNS1123Subdomain } from '../api/name-validation.ts';
import { requireKubeObject } from '../api/kube-object.ts';
import type { KubeObject, ObjectLookup } from '../api/lookup.ts';
import { LookupBudget, LookupNotMade } from '../api/lookup-budget.ts';
import type { AdmissionHandler } from './types.ts';

export interface MutatingHandlerDeps {
  lookup: ObjectLookup;
  config: Config;
}

export function createMutatingHandler(kind: KaosKind, deps: MutatingHandlerDeps): AdmissionHandler {
  return async (req) => {
    if (req.kind.kind !== kind) throw new Error(`${kind} mutating handler received a ${req.kind.kind} request`);
    if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return { allowed: true };

    const object = requireKubeObject(req.object, 'request.object');
    const oldObject = req.operation === 'UPDATE' ? requireKubeObject(req.oldObject, 'request.oldObject') : undefined;
    const namespace = req.namespace ?? object.metadata?.namespace ?? '';
    const modelAPI = kind === 'Agent' ? await referencedModelAPI(deps.lookup, namespace, object) : undefined;

    const result = defaultObject(kind, object, { config: deps.config, oldObject, modelAPI });
    const patch = jsonPatch.compare(patchableParts(object), patchableParts(result.object));
    return {
      allowed: true,
      ...(patch.length > 0 ? { patch } : {}),
      ...(result.warnings.length > 0 ? { warnings: result.warnings } : {}),
    };
  };
}

/** The ModelAPI an Agent names, for its MODEL_NAME; undefined when unnamed or absent. */
async function referencedModelAPI(lookup: ObjectLookup, namespace: string, agent: KubeObject): Promise<KubeObject | undefined> {
  const name = asString(getIn(agent.spec, 'modelAPI'));
  // An invalid name is validation's to report; looking it up could only make a nonsense URL.
  if (name === undefined || validateDNS1123Subdomain('', name).length > 0) return undefined;
  // With spec.model (docs/api.md, "Newer KAOS shapes") no MODEL_NAME is chosen: nothing to look up.
  if (isSet(getIn(agent.spec, 'model'))) return undefined;
  // One lookup, but within the same per-request deadline as validation's: past it, the ModelAPI
  // is unknown and MODEL_NAME takes the operator's default, as for a ModelAPI that does not exist.
  try {
    return await lookup.get('ModelAPI', namespace, name, new LookupBudget());
  } catch (err) {
    if (err instanceof LookupNotMade) return undefined;
    throw err;
  }
}

/**
 * The parts defaulting may change. Diffing only these keeps managedFields and status (often most
 * of the object) off the hot path; an absent part is left out, not set to undefined, so that
 * adding it is an `add`, never a `replace` of something that does not exist.
 */
function patchableParts(object: KubeObject): JsonRecord {
  const parts: JsonRecord = {};
  // No metadata at all (only a direct caller can send that): adding annotations must add the
  // whole `/metadata`, since a patch cannot add below a parent that does not exist.
  if (object.metadata !== undefined) {
    const annotations = object.metadata.annotations;
    parts.metadata = annotations === undefined ? {} : { annotations };
  }
  if (object.spec !== undefined) parts.spec = object.spec;
  return parts;
}
