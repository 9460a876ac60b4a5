// The validating webhook for one kind: look up everything the rules need at once, then validate
// (pure) and answer with Kubernetes' own 422 Invalid status, or allow with warnings.
import type { Config } from '../config/config.ts';
import { serviceAccountIdentity, userIdentityEnforced } from '../config/security.ts';
import { notListedIn, referencedNames, type ReferencedNames } from '../api/agent-references.ts';
import { DNS1123_SUBDOMAIN_MAX_LENGTH, validateDNS1123Subdomain } from '../api/name-validation.ts';
import type { FieldError } from '../api/field-error.ts';
import { invalidStatus } from '../api/validation/invalid-status.ts';
import { asRecord, getIn, isSet, jsonEqual } from '../api/json.ts';
import { MEMORY_MODEL_ROLES } from '../api/enums.ts';
import { GROUP, SCALE, VERSION, type KaosKind, type WorkloadKind } from '../api/kinds.ts';
import { isKubeObject, requireKubeObject } from '../api/kube-object.ts';
import type { KubeObject, ObjectLookup, Referrer } from '../api/lookup.ts';
import { LookupBudget, LookupNotMade } from '../api/lookup-budget.ts';
import { boundedWarnings } from '../api/validation/answer-limits.ts';
import { MAX_REFERENCES } from '../api/schema/limits.ts';
import type { WorkloadObject } from '../api/schema/index.ts';
import { conformsToSchema, specValidator } from '../api/validation/schema-validation.ts';
import { resourceKey } from '../api/validation/validate-accessgrant.ts';
import { namedResources } from '../api/access-grants.ts';
import { grantGateFacts, projectionNamespaces } from '../config/grant-gates.ts';
import { deletionWarnings, validateObject, type ModelBinding, type ValidationContext } from '../api/validation/validate-object.ts';
import { fieldUnchanged, ratchet } from '../api/validation/ratchet.ts';
import type { AgentReferences } from '../api/validation/validation-types.ts';
import type { AdmissionDecision, AdmissionHandler, AdmissionRequest } from './types.ts';

/**
 * Checks that an object's spec.podSpec, merged onto the pod the operator generates, is a valid
 * pod (docs/api.md, "Validation"). Called only when spec.podSpec is set and the spec conforms to its schema, since
 * the merge needs a well-formed spec. Its errors are appended to the object's other errors.
 */
export type PodSpecCheck = (kind: WorkloadKind, object: WorkloadObject) => Promise<FieldError[]>;

export interface ValidatingHandlerDeps {
  lookup: ObjectLookup;
  config: Config;
  podSpecCheck?: PodSpecCheck;
}

export function createValidatingHandler(kind: KaosKind, deps: ValidatingHandlerDeps): AdmissionHandler {
  // Compiled when the handler is built, so that the first request does not pay for it.
  specValidator(kind);
  // What the rules read of the security settings, derived once.
  const posture = { userIdentity: userIdentityEnforced(deps.config.security), serviceAccountIdentity: serviceAccountIdentity(deps.config.security) };
  // What the operator's defaults request for the agent container (an HPA measures against it).
  const agentDefaultRequests = Object.keys(deps.config.workload.resources.agent?.requests ?? {});
  const handle: AdmissionHandler = async (req) => {
    if (req.subResource === SCALE.subresource) return validateScale(kind, req, deps, handle);
    if (req.kind.kind !== kind) throw new Error(`${kind} validating handler received a ${req.kind.kind} request`);

    if (req.operation === 'DELETE') {
      // Deleting only ever warns: whatever is odd about the request, the answer is "allowed".
      const old = isKubeObject(req.oldObject) ? req.oldObject : undefined;
      const name = req.name ?? old?.metadata?.name ?? '';
      const namespace = req.namespace ?? old?.metadata?.namespace ?? '';
      return withWarnings({ allowed: true }, deletionWarnings(kind, name, deps.lookup.referencedBy(kind, namespace, name), old));
    }
    if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return { allowed: true };

    const object = requireKubeObject(req.object, 'request.object');
    const overlong = overlongName(object);
    if (overlong !== undefined) return { allowed: false, status: { status: 'Failure', message: overlong, reason: 'BadRequest', code: 400 } };
    const oldObject = req.operation === 'UPDATE' ? requireKubeObject(req.oldObject, 'request.oldObject') : undefined;
    // An object being deleted only ever loses finalizers (KAOS's among them, docs/api.md "Common behaviour"): never block that.
    if (oldObject !== undefined && isSet(object.metadata?.deletionTimestamp)) return { allowed: true };
    const namespace = req.namespace ?? object.metadata?.namespace ?? '';
    if (kind === 'AccessGrant') return validateGrantRequest(object, oldObject, namespace, deps);
    const isAgent = kind === 'Agent';
    const isStore = kind === 'MemoryStore';
    const { podSpecCheck } = deps;
    // The check costs a call to the API server: only when the spec (everything the pod is rendered
    // from) is new or changed, so labelling or annotating an object never waits on it.
    const specChanged = oldObject === undefined || !jsonEqual(object.spec, oldObject.spec);
    // How many pods run is not what they are: `kubectl scale` never waits on a dry run.
    const podSourceChanged = oldObject === undefined || !jsonEqual(withoutScale(object.spec), withoutScale(oldObject.spec));
    const checkPodSpec = podSpecCheck !== undefined && podSourceChanged && shapesThePod(object.spec) && conformsToSchema(kind, object);

    // This request's live reads on cache misses: a few, within a deadline, shared by its lookups only.
    const budget = new LookupBudget();
    const name = object.metadata?.name ?? req.name ?? '';
    const [references, storeReferences, namespaceLabels, podSpecErrors] = await Promise.all([
      isAgent ? resolveReferences(deps.lookup, namespace, namesToResolve(object.spec, oldObject?.spec), budget) : undefined,
      isStore ? resolveModelAPIs(deps.lookup, namespace, storeModelAPIsToResolve(object.spec, oldObject?.spec), budget) : undefined,
      isAgent || isStore ? namespaceLabelsWithin(deps.lookup, namespace, budget) : undefined,
      checkPodSpec ? podSpecCheck(kind, object as WorkloadObject) : [],
    ]);
    // Who a change of this object can strand, and what each asks of it: from the cache only (a
    // warning is never worth a live read).
    const judgeStranding = oldObject !== undefined && specChanged;
    const modelAPIDependents = kind === 'ModelAPI' && judgeStranding ? modelBindings(deps.lookup.referencedBy(kind, namespace, name)) : undefined;
    const memoryStoreDependents = isStore && judgeStranding ? readScopeBindings(deps.lookup.referencedBy(kind, namespace, name)) : undefined;

    const ctx: ValidationContext = {
      namespaceLabels,
      referencePolicy: deps.config.referencePolicy,
      references,
      ...(storeReferences === undefined ? {} : { memoryStoreReferences: storeReferences }),
      defaultTelemetryEndpoint: deps.config.telemetry.endpoint,
      modelAPIDependents,
      ...(memoryStoreDependents === undefined ? {} : { memoryStoreDependents }),
      deprecationWarnings: deps.config.deprecationWarnings,
      // The runtime registries from the cache only: unreadable is a warning, never a live read.
      ...(kind === 'MCPServer' && deps.lookup.mcpRuntimes !== undefined ? { mcpRuntimes: deps.lookup.mcpRuntimes() } : {}),
      posture,
      ...(isAgent && deps.lookup.harnessRuntimes !== undefined ? { harnessRuntimes: deps.lookup.harnessRuntimes() } : {}),
      ...(isAgent ? { agentDefaultRequests } : {}),
    };
    const result = validateObject(kind, object, { ...ctx, ...(oldObject === undefined ? {} : { oldObject }) });
    let errors = [...result.errors, ...podSpecErrors];
    if (oldObject !== undefined && errors.length > 0) {
      // Ratcheting (api/validation/ratchet.ts): what the stored object already was is not refused
      // again; its pod is dry-run only when a pod error sits at a field this UPDATE left alone.
      const podAgain = podSpecCheck !== undefined && podSpecErrors.some((e) => fieldUnchanged(e.field, object, oldObject)) && shapesThePod(oldObject.spec) && conformsToSchema(kind, oldObject);
      const storedPodErrors = podAgain ? await podSpecCheck(kind, oldObject as WorkloadObject) : [];
      errors = ratchet(errors, object, oldObject, () => [...validateObject(kind, oldObject, ctx).errors, ...storedPodErrors]);
    }
    const decision: AdmissionDecision =
      errors.length > 0 ? { allowed: false, status: invalidStatus(kind, name, errors) } : { allowed: true };
    return withWarnings(decision, result.warnings);
  };
  return handle;
}

/**
 * An UPDATE of `<plural>/scale` (`kubectl scale`, an HPA or a KEDA ScaledObject aimed at the
 * object: docs/api.md, "Agent replicas, kubectl scale and autoscaling"). The request carries an
 * autoscaling/v1 Scale, not the object, so the object is read as the API server holds it and
 * judged as the UPDATE that sets its `spec.replicas` to the Scale's: the same rules and messages
 * as `kubectl apply` (replicas beside autoscaling, more than one replica with in-process memory).
 */
async function validateScale(kind: KaosKind, req: AdmissionRequest, deps: ValidatingHandlerDeps, handle: AdmissionHandler): Promise<AdmissionDecision> {
  const replicas = getIn(req.object, 'spec', 'replicas');
  const namespace = req.namespace ?? '';
  const name = req.name ?? '';
  if (req.operation !== 'UPDATE' || typeof replicas !== 'number' || deps.lookup.current === undefined) return { allowed: true };
  let stored: KubeObject | undefined;
  try {
    stored = await deps.lookup.current(kind, namespace, name, new LookupBudget({ maxLiveLookups: 1 }));
  } catch (err) {
    if (!(err instanceof LookupNotMade)) throw err;
    // Unknown: refused, as a dependency that could not be checked is under the default policy, so
    // that an outage never lets two writers own the count.
    return { allowed: false, status: { status: 'Failure', message: `${kind} ${namespace}/${name} could not be read to judge its scale: ${err.message}`, reason: 'ServiceUnavailable', code: 503 } };
  }
  // Gone meanwhile: the API server answers the scale itself (NotFound).
  if (stored === undefined || !isKubeObject(stored)) return { allowed: true };
  const object = { ...stored, spec: { ...asRecord(stored.spec), replicas } };
  return handle({ ...req, kind: { group: GROUP, version: VERSION, kind }, subResource: '', object, oldObject: stored });
}

/**
 * An AccessGrant (docs/api.md, "AccessGrant"): its rules, and warnings that read the cache only — a
 * named resource that does not exist yet, like a missing peer, is never worth a live read. Its
 * rules read nothing outside the object; an UPDATE is ratcheted like any other kind's.
 */
async function validateGrantRequest(object: KubeObject, oldObject: KubeObject | undefined, namespace: string, deps: ValidatingHandlerDeps): Promise<AdmissionDecision> {
  const cacheOnly = new LookupBudget({ maxLiveLookups: 0 });
  const existing = new Map<string, boolean>();
  await Promise.all(
    namedResources(object.spec).slice(0, MAX_PEER_LOOKUPS).map(async ({ kind, name }) => {
      if (validateDNS1123Subdomain('', name).length > 0) return;
      try {
        existing.set(resourceKey(kind, name), await deps.lookup.exists(kind, namespace, name, cacheOnly));
      } catch (err) {
        if (err instanceof LookupNotMade) existing.set(resourceKey(kind, name), false);
        else throw err;
      }
    }),
  );
  const namespaces = projectionNamespaces(deps.config.security);
  const ctx: ValidationContext = {
    referencePolicy: deps.config.referencePolicy,
    accessGrant: { existing, gates: grantGateFacts(deps.config.security), ...(namespaces === undefined ? {} : { projectionNamespaces: namespaces }) },
  };
  const result = validateObject('AccessGrant', object, ctx);
  const errors = oldObject === undefined ? result.errors : ratchet(result.errors, object, oldObject, () => validateObject('AccessGrant', oldObject, ctx).errors);
  const name = object.metadata?.name ?? '';
  const decision: AdmissionDecision =
    errors.length > 0 ? { allowed: false, status: invalidStatus('AccessGrant', name, errors) } : { allowed: true };
  return withWarnings(decision, result.warnings);
}

/** A namespace is a DNS-1123 label. */
const MAX_NAMESPACE_LENGTH = 63;

/**
 * The API server validates an object's name and namespace before it calls a validating webhook,
 * so one longer than Kubernetes allows did not come from it. Judging it would put megabytes of
 * name into the pod's labels, its hash and the dry run, for an object that cannot exist.
 */
function overlongName(object: KubeObject): string | undefined {
  const { name = '', namespace = '' } = object.metadata ?? {};
  const never = 'which the API server never sends to a validating webhook';
  if (name.length > DNS1123_SUBDOMAIN_MAX_LENGTH) return `request.object.metadata.name is longer than ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters, ${never}`;
  if (namespace.length > MAX_NAMESPACE_LENGTH) return `request.object.metadata.namespace is longer than ${MAX_NAMESPACE_LENGTH} characters, ${never}`;
  return undefined;
}

/** Peers only ever warn: a handful of "does not exist yet" lines is all a user can read anyway. */
const MAX_PEER_LOOKUPS = 20;

/**
 * The references worth a lookup: valid names only; dependencies (a miss may cost a live read)
 * that are new, or all of them when waitForDependencies is false (their readiness is warned
 * about); peers (the cache alone) only when new, and only the first few, since they can only warn.
 */
function namesToResolve(spec: unknown, oldSpec: unknown): ReferencedNames {
  // Names past the schema's maxItems are refused as "Too many" and never judged one by one.
  const now = referencedNames(spec, MAX_REFERENCES);
  const valid = (name: string): boolean => validateDNS1123Subdomain('', name).length === 0;
  const isNew = (names: keyof ReferencedNames): Set<string> => notListedIn(oldSpec, names, now[names]);
  const newModelAPIs = isNew('modelAPIs');
  const newMCPServers = isNew('mcpServers');
  const newPeers = isNew('agents');
  const newMemoryStores = isNew('memoryStores');
  const everyDependency = getIn(spec, 'waitForDependencies') === false;
  // A new spec.model is judged against the ModelAPI it names (docs/api.md, "Newer KAOS shapes"), new or not;
  // a new maxReadScope against the MemoryStore's ceiling (docs/api.md, "Agent remote memory").
  const modelChanged = isSet(getIn(spec, 'model')) && getIn(spec, 'model') !== getIn(oldSpec, 'model');
  const scopeChanged = isSet(getIn(spec, 'config', 'memory', 'maxReadScope')) && getIn(spec, 'config', 'memory', 'maxReadScope') !== getIn(oldSpec, 'config', 'memory', 'maxReadScope');
  return {
    modelAPIs: now.modelAPIs.filter((n) => valid(n) && (everyDependency || modelChanged || newModelAPIs.has(n))),
    mcpServers: now.mcpServers.filter((n) => valid(n) && (everyDependency || newMCPServers.has(n))),
    agents: now.agents.filter((n) => valid(n) && newPeers.has(n)).slice(0, MAX_PEER_LOOKUPS),
    memoryStores: now.memoryStores.filter((n) => valid(n) && (everyDependency || scopeChanged || newMemoryStores.has(n))),
  };
}

/** A MemoryStore's ModelAPIs worth a lookup: valid names of the bindings that are new or changed. */
function storeModelAPIsToResolve(spec: unknown, oldSpec: unknown): string[] {
  const names = MEMORY_MODEL_ROLES.flatMap((role) => {
    const binding = asRecord(getIn(spec, 'models', role));
    const old = asRecord(getIn(oldSpec, 'models', role));
    const name = binding?.modelAPI;
    if (typeof name !== 'string' || validateDNS1123Subdomain('', name).length > 0) return [];
    return old === undefined || old.modelAPI !== name || old.model !== binding?.model ? [name] : [];
  });
  return [...new Set(names)];
}

/**
 * Looks up the named objects concurrently. Dependencies can deny, so a cache miss is confirmed
 * with a live read within the request's budget, and a dependency the budget did not allow is
 * "unchecked" (with the reason). Peers can only warn, so they are answered from the cache alone:
 * a miss is "does not exist yet" without a live read (a bulk apply lists peers created after
 * it, and confirming each miss was one GET per forward reference); a peer created a moment ago
 * that the watch has not delivered costs at worst a warning that is already out of date. A
 * peer lookup that fails otherwise is left out.
 */
async function resolveReferences(
  lookup: ObjectLookup,
  namespace: string,
  names: ReferencedNames,
  budget: LookupBudget,
): Promise<AgentReferences> {
  const found = {
    ModelAPI: new Map<string, KubeObject | undefined>(),
    MCPServer: new Map<string, KubeObject | undefined>(),
    MemoryStore: new Map<string, KubeObject | undefined>(),
  };
  const unchecked = { ModelAPI: new Map<string, string>(), MCPServer: new Map<string, string>(), MemoryStore: new Map<string, string>() };
  const dependency = async (kind: 'ModelAPI' | 'MCPServer' | 'MemoryStore', name: string): Promise<void> => {
    try {
      found[kind].set(name, await lookup.get(kind, namespace, name, budget));
    } catch (err) {
      if (!(err instanceof LookupNotMade)) throw err;
      unchecked[kind].set(name, err.message);
    }
  };
  // The budget of a lookup that may only warn: no live read at all, the cache's answer is final.
  const cacheOnly = new LookupBudget({ maxLiveLookups: 0 });
  const peer = async (name: string): Promise<[string, boolean][]> => {
    try {
      return [[name, await lookup.exists('Agent', namespace, name, cacheOnly)]];
    } catch (err) {
      // The cache missed and no live read was allowed: absent, as far as a warning goes.
      return err instanceof LookupNotMade ? [[name, false]] : [];
    }
  };
  const dependencies = Promise.all([
    ...names.modelAPIs.map((n) => dependency('ModelAPI', n)),
    ...names.mcpServers.map((n) => dependency('MCPServer', n)),
    ...names.memoryStores.map((n) => dependency('MemoryStore', n)),
  ]);
  const peers = Promise.all(names.agents.map(peer));
  const [, agents] = await Promise.all([dependencies, peers]);
  return {
    modelAPIs: found.ModelAPI,
    mcpServers: found.MCPServer,
    agents: new Map(agents.flat()),
    memoryStores: found.MemoryStore,
    unchecked: { modelAPIs: unchecked.ModelAPI, mcpServers: unchecked.MCPServer, memoryStores: unchecked.MemoryStore },
  };
}

/** A MemoryStore's ModelAPIs, looked up like an Agent's: a miss confirmed by a live read within the budget. */
async function resolveModelAPIs(
  lookup: ObjectLookup,
  namespace: string,
  names: readonly string[],
  budget: LookupBudget,
): Promise<{ modelAPIs: Map<string, KubeObject | undefined>; unchecked: Map<string, string> }> {
  const references = await resolveReferences(lookup, namespace, { modelAPIs: [...names], mcpServers: [], agents: [], memoryStores: [] }, budget);
  return { modelAPIs: new Map(references.modelAPIs), unchecked: new Map(references.unchecked?.modelAPIs) };
}

/** The objects that ask a ModelAPI for a model (an Agent, a MemoryStore's role), with that model. */
function modelBindings(referrers: readonly Referrer[]): ModelBinding[] {
  return referrers.flatMap(({ kind, name, asks }) => (asks === undefined ? [] : [{ kind, name, model: asks }]));
}

/** The Agents bound to a MemoryStore that name their own maxReadScope, with it. */
function readScopeBindings(referrers: readonly Referrer[]): { name: string; maxReadScope: string }[] {
  return referrers.flatMap(({ kind, name, asks }) => (kind === 'Agent' && asks !== undefined ? [{ name, maxReadScope: asks }] : []));
}

/** The namespace's labels; unknown (so the operator's policy applies) when its read would pass the deadline. */
async function namespaceLabelsWithin(lookup: ObjectLookup, namespace: string, budget: LookupBudget): Promise<Record<string, string> | undefined> {
  try {
    return await lookup.namespaceLabels(namespace, budget);
  } catch (err) {
    if (err instanceof LookupNotMade) return undefined;
    throw err;
  }
}

function withWarnings(decision: AdmissionDecision, warnings: readonly string[]): AdmissionDecision {
  return warnings.length > 0 ? { ...decision, warnings: boundedWarnings(warnings) } : decision;
}

/** The spec without how many pods run (`replicas`, `autoscaling`): what the pod is rendered from. */
function withoutScale(spec: unknown): unknown {
  const record = asRecord(spec);
  if (record === undefined) return spec;
  const { replicas: _replicas, autoscaling: _autoscaling, ...rest } = record;
  return rest;
}

/**
 * Whether the spec holds anything the schema leaves opaque that reaches the pod: a podSpec
 * override, a container override beyond its image (resources, command, env), an env entry with
 * valueFrom, or an API key from a Secret or ConfigMap. Only then is the pod worth a dry run.
 */
function shapesThePod(spec: unknown): boolean {
  if (isSet(getIn(spec, 'podSpec'))) return true;
  // The image alone (which the mutating webhook always sets) is the schema's to check.
  const container = getIn(spec, 'container');
  if (container !== null && typeof container === 'object' && Object.keys(container).some((k) => k !== 'image')) return true;
  const envLists = [getIn(spec, 'config', 'env'), getIn(spec, 'proxyConfig', 'env'), getIn(spec, 'hostedConfig', 'env')];
  // A Proxy's apiKey.valueFrom becomes PROXY_API_KEY's valueFrom (docs/api.md, "Newer KAOS shapes").
  if (isSet(getIn(spec, 'proxyConfig', 'apiKey', 'valueFrom'))) return true;
  return envLists.some((list) => Array.isArray(list) && list.some((e) => isSet(getIn(e, 'valueFrom'))));
}
