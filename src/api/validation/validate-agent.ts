// The Agent's rules beyond its schema (docs/api.md, "Validation"): reference names, duplicates, self-reference,
// existence of the ModelAPI and MCPServers (under the reference policy), peers and readiness, and
// (docs/api.md, "Newer KAOS shapes") the model in spec.model served by that ModelAPI, under the same policy,
// and a non-blank autonomous goal; its harness (docs/api.md, "Agent harness"); its replicas and
// autoscaling (docs/api.md, "Agent replicas").
import { agentServiceAccountName, notListedIn } from '../agent-references.ts';
import { child, duplicate, index, invalid, invalidOmitValue, notFound, required, type FieldError } from '../field-error.ts';
import { goQuote } from '../go-format.ts';
import { asArray, asRecord, getIn, type JsonRecord } from '../json.ts';
import type { KubeObject } from '../lookup.ts';
import { validateDNS1123Subdomain } from '../name-validation.ts';
import { modelServedError } from './new-shapes.ts';
import { validateAgentHarness } from './agent-harness.ts';
import { validateAgentMemory } from './agent-memory.ts';
import { validateAgentScaling } from './agent-scaling.ts';
import { judgeReference } from './reference-policy.ts';
import type { AgentValidationContext, ValidationResult } from './validation-types.ts';
import { clampWarning } from '../warnings.ts';

const isReady = (object: KubeObject): boolean => getIn(object.status, 'ready') === true;

const notReadyWarning = (kind: 'ModelAPI' | 'MCPServer', name: string): string =>
  clampWarning(`${kind} ${goQuote(name)} is not ready; with waitForDependencies false the Agent starts without it`);

export function validateAgent(object: KubeObject, ctx: AgentValidationContext): ValidationResult {
  const spec: JsonRecord = asRecord(object.spec) ?? {};
  const oldSpec = ctx.oldObject?.spec;
  const noWait = spec.waitForDependencies === false;
  const result: ValidationResult = { errors: [], warnings: [] };
  const { errors, warnings } = result;

  /** A missing ModelAPI or MCPServer: a denial under Enforce, a warning under Warn. */
  const missing = (error: FieldError): void => judgeReference(ctx.policy, error, result);

  /** Checks a dependency that is new in this request and has a valid name. */
  const dependency = (
    kind: 'ModelAPI' | 'MCPServer',
    field: string,
    name: string,
    known: ReadonlyMap<string, KubeObject | undefined> | undefined,
    unchecked: ReadonlyMap<string, string> | undefined,
    isNew: boolean,
  ): void => {
    if (known === undefined) return;
    if (!known.has(name)) {
      const why = unchecked?.get(name);
      if (why !== undefined && isNew) missing(notFound(field, name, why));
      return;
    }
    const target = known.get(name);
    if (target === undefined) {
      if (isNew) missing(notFound(field, name));
    } else if (noWait && !isReady(target)) {
      warnings.push(notReadyWarning(kind, name));
    }
  };

  // spec.modelAPI (its type and presence are the schema's to report)
  if (typeof spec.modelAPI === 'string') {
    const field = 'spec.modelAPI';
    const nameErrors = spec.modelAPI === '' ? [required(field)] : validateDNS1123Subdomain(field, spec.modelAPI);
    errors.push(...nameErrors);
    if (nameErrors.length === 0) {
      const isNew = notListedIn(oldSpec, 'modelAPIs', [spec.modelAPI]).has(spec.modelAPI);
      dependency('ModelAPI', field, spec.modelAPI, ctx.references?.modelAPIs, ctx.references?.unchecked?.modelAPIs, isNew);
      // The model is judged when the pair (ModelAPI, model) is new: a stored Agent stranded by a
      // change of its ModelAPI can still be relabelled.
      const target = ctx.references?.modelAPIs.get(spec.modelAPI);
      const modelChanged = getIn(ctx.oldObject?.spec, 'model') !== spec.model;
      if (target !== undefined && (isNew || modelChanged)) {
        const error = modelServedError(spec, { name: spec.modelAPI, spec: target.spec });
        if (error !== undefined) missing(error);
      }
    }
  }

  // spec.mcpServers
  const servers = asArray(spec.mcpServers);
  const newServers = notListedIn(oldSpec, 'mcpServers', servers ?? []);
  forEachName(servers, 'spec.mcpServers', errors, (field, name) => {
    const { mcpServers, unchecked } = ctx.references ?? {};
    dependency('MCPServer', field, name, mcpServers, unchecked?.mcpServers, newServers.has(name));
  });

  // spec.agentNetwork.access
  const self = object.metadata?.name;
  const peers = asArray(getIn(spec, 'agentNetwork', 'access'));
  const newPeers = notListedIn(oldSpec, 'agents', peers ?? []);
  forEachName(peers, child('spec.agentNetwork', 'access'), errors, (field, name) => {
    if (name === self) {
      errors.push(invalid(field, name, 'an agent cannot list itself'));
      return;
    }
    // Peers are wired in whenever they appear (KAOS samples create a coordinator before its workers).
    if (ctx.references?.agents.get(name) === false && newPeers.has(name)) {
      warnings.push(clampWarning(`${field}: Agent ${goQuote(name)} does not exist yet; it is wired in once it does`));
    }
  });

  errors.push(...blankGoalErrors(spec));
  if (ctx.posture?.serviceAccountIdentity === true) warnings.push(...serviceAccountWarnings(spec, object.metadata?.name ?? ''));
  const memory = validateAgentMemory(spec, ctx);
  const harness = validateAgentHarness(spec, {
    ...(ctx.oldObject === undefined ? {} : { oldObject: ctx.oldObject }),
    ...(ctx.harnessRuntimes === undefined ? {} : { runtimes: ctx.harnessRuntimes }),
  });
  const scaling = validateAgentScaling(spec, ctx.agentDefaultRequests);
  return {
    errors: [...errors, ...memory.errors, ...harness.errors, ...scaling.errors],
    warnings: [...warnings, ...memory.warnings, ...harness.warnings, ...scaling.warnings],
  };
}

/**
 * Under ServiceAccount identity the pod runs as `kaos-agent-<name>`, the only ServiceAccount the
 * policy data maps to this Agent (docs/api.md, "Agent identity by ServiceAccount"): another one in
 * spec.podSpec wins the merge, and the Agent's token then proves nobody.
 */
function serviceAccountWarnings(spec: JsonRecord, name: string): string[] {
  const chosen = getIn(spec, 'podSpec', 'serviceAccountName');
  const own = agentServiceAccountName(name);
  if (typeof chosen !== 'string' || chosen === '' || chosen === own) return [];
  return [clampWarning(`spec.podSpec.serviceAccountName: ${goQuote(chosen)}: agent identity maps only ${goQuote(own)} to this Agent`)];
}

/**
 * A goal that is empty or only whitespace (docs/api.md, "Agent `config` from KAOS 2026"): KAOS
 * treats it as no goal at all, so an Agent meant to run on its own would silently wait for
 * requests instead (a Helm value left empty is the usual cause). The value is not echoed: it is blank.
 */
function blankGoalErrors(spec: JsonRecord): FieldError[] {
  const goal = getIn(spec, 'config', 'autonomous', 'goal');
  return typeof goal === 'string' && goal.trim() === '' ? [invalidOmitValue('spec.config.autonomous.goal', 'the goal is blank')] : [];
}

/**
 * Validates each string of a name list (DNS-1123 subdomain, no duplicates) and hands the valid,
 * first occurrences to `check`.
 */
function forEachName(
  list: readonly unknown[] | undefined,
  path: string,
  errors: FieldError[],
  check: (field: string, name: string) => void,
): void {
  const seen = new Set<string>();
  (list ?? []).forEach((name, i) => {
    if (typeof name !== 'string') return;
    const field = index(path, i);
    const nameErrors = validateDNS1123Subdomain(field, name);
    errors.push(...nameErrors);
    if (seen.has(name)) errors.push(duplicate(field, name));
    else if (nameErrors.length === 0) check(field, name);
    seen.add(name);
  });
}
