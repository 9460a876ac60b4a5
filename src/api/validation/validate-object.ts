// The validating webhook's decision, as a pure function (docs/api.md, "Validation"): the schema's
// errors, then the kind's own rules, all reported at once in a stable order.
import type { ReferencePolicy } from '../kinds.ts';
import type { KaosKind } from '../kinds.ts';
import type { KubeObject } from '../lookup.ts';
import { resolveReferencePolicy } from './reference-policy.ts';
import type { FieldError } from '../field-error.ts';
import type { HarnessRegistryState } from '../harness-runtimes.ts';
import type { RegistryState } from '../mcp-runtimes.ts';
import { isAboutCutString } from './schema-limits.ts';
import { checkSchema } from './schema-validation.ts';
import { validateAccessGrant, type AccessGrantValidationContext } from './validate-accessgrant.ts';
import { validateAgent } from './validate-agent.ts';
import { validateMCPServer } from './validate-mcpserver.ts';
import { validateModelAPI } from './validate-modelapi.ts';
import { validateMemoryStore } from './validate-memorystore.ts';
import type { AgentReferences, ValidationPosture, ValidationResult } from './validation-types.ts';
import { clampWarning, namingWarning, stillReferencedWarnings, type NamedObject } from '../warnings.ts';
import { goQuote } from '../go-format.ts';
import { strandedByCeiling } from '../memory-rules.ts';
import { getIn } from '../json.ts';
import { servedPatterns, strandedBindings } from '../model-patterns.ts';
import { mixedShapeErrors } from '../shapes.ts';
import { unsupportedFeatureErrors } from '../unsupported-features.ts';
import { deprecationWarnings, strandedWarnings, telemetryWarnings } from './new-shapes.ts';

/** An object that asks a ModelAPI for a model (the kind table's `asks` of a ModelAPI dependency). */
export interface ModelBinding {
  readonly kind: KaosKind;
  readonly name: string;
  readonly model: string;
}

export interface ValidationContext {
  /** The stored object on UPDATE; absent on CREATE. */
  oldObject?: KubeObject;
  /** Labels of the object's namespace, when known (they may set the reference policy). */
  namespaceLabels?: Readonly<Record<string, string>>;
  /** The operator-wide reference policy (Config.referencePolicy). */
  referencePolicy: ReferencePolicy;
  /** Agents: the objects they reference, looked up by the caller. */
  references?: AgentReferences;
  /** MemoryStores: the ModelAPIs their model bindings name, looked up by the caller (unchecked: not looked up, with why). */
  memoryStoreReferences?: { modelAPIs: ReadonlyMap<string, KubeObject | undefined>; unchecked?: ReadonlyMap<string, string> };
  /**
   * MemoryStore UPDATE: the Agents bound to it that name their own maxReadScope, from the cache;
   * those a lowered ceiling strands are warned about. Absent: not judged.
   */
  memoryStoreDependents?: readonly { name: string; maxReadScope: string }[];
  /** The operator's DEFAULT_TELEMETRY_ENDPOINT ('' or absent: none). */
  defaultTelemetryEndpoint?: string;
  /**
   * ModelAPI UPDATE: the objects that bind it asking for a model — an Agent's `spec.model`, a
   * MemoryStore's `models.<role>.model`, one entry per binding — from the cache; those the change
   * of its models strands are warned about. Absent: not judged.
   */
  modelAPIDependents?: readonly ModelBinding[];
  /** DEPRECATION_WARNINGS: warn about original-shape fields the newer shapes replace. */
  deprecationWarnings?: boolean;
  /** MCPServers: the runtime registry as the cache holds it (docs/api.md, "Newer KAOS shapes"); absent: not checked. */
  mcpRuntimes?: RegistryState;
  /** AccessGrants: what their warnings read (the resources they name, the projection's namespaces, the gates). */
  accessGrant?: AccessGrantValidationContext;
  /** The operator's security posture (the `user` read scope, agent identity); absent: none of it. */
  posture?: ValidationPosture;
  /** Agents: the harness runtime registry as the cache holds it (docs/api.md, "Agent harness"); absent: not known here. */
  harnessRuntimes?: HarnessRegistryState;
  /** Agents: the resources the operator's defaults request for the agent container (DEFAULT_AGENT_RESOURCES); absent: none. */
  agentDefaultRequests?: readonly string[];
}

export function validateObject(kind: KaosKind, object: KubeObject, ctx: ValidationContext): ValidationResult {
  const schema = checkSchema(kind, object);
  const schemaErrors = schema.errors;
  // The kind's own rules read the spec as the schema check clipped it (lists cut to maxItems,
  // strings to maxLength), so their work is bounded too; what they say about a cut string judges
  // the cut, not the value, and is dropped: "Too long" already says what is wrong with it.
  const clipped: KubeObject = schema.spec === object.spec ? object : { ...object, spec: schema.spec };
  const ownErrors = (errors: FieldError[]): FieldError[] =>
    schema.cutStrings.size === 0 ? errors : errors.filter((e) => !isAboutCutString(e.field, schema.cutStrings));
  if (kind === 'AccessGrant') {
    // One shape, no env, no telemetry: only its own rules.
    const own = validateAccessGrant(clipped, ctx.accessGrant);
    return { errors: [...schemaErrors, ...ownErrors(own.errors)], warnings: own.warnings };
  }
  // Both shapes (docs/api.md, "Newer KAOS shapes"): one shape per object part; telemetry that cannot export.
  // KAOS features this operator leaves out are refused by name, whatever the shape.
  const shapeErrors = [...mixedShapeErrors(kind, clipped.spec), ...unsupportedFeatureErrors(kind, clipped.spec)];
  const shapeWarnings = [
    ...telemetryWarnings(kind, clipped.spec, ctx.defaultTelemetryEndpoint ?? ''),
    ...(ctx.deprecationWarnings === true ? deprecationWarnings(kind, clipped.spec) : []),
  ];
  switch (kind) {
    case 'Agent': {
      const policy = resolveReferencePolicy(object, ctx.namespaceLabels, ctx.referencePolicy);
      const own = validateAgent(clipped, {
        oldObject: ctx.oldObject,
        references: ctx.references,
        policy: policy.policy,
        ...(ctx.posture === undefined ? {} : { posture: ctx.posture }),
        ...(ctx.harnessRuntimes === undefined ? {} : { harnessRuntimes: ctx.harnessRuntimes }),
        ...(ctx.agentDefaultRequests === undefined ? {} : { agentDefaultRequests: ctx.agentDefaultRequests }),
      });
      return {
        errors: [...policy.errors, ...schemaErrors, ...ownErrors([...shapeErrors, ...own.errors])],
        warnings: [...policy.warnings, ...own.warnings, ...shapeWarnings],
      };
    }
    case 'ModelAPI': {
      const own = validateModelAPI(clipped);
      const stranded =
        ctx.oldObject === undefined || ctx.modelAPIDependents === undefined
          ? []
          : strandedBindings(servedPatterns(ctx.oldObject.spec), servedPatterns(clipped.spec), ctx.modelAPIDependents);
      return {
        errors: [...schemaErrors, ...ownErrors([...shapeErrors, ...own.errors])],
        warnings: [...own.warnings, ...shapeWarnings, ...strandedWarnings(object.metadata?.name ?? '', stranded)],
      };
    }
    case 'MCPServer': {
      const own = validateMCPServer(clipped, ctx.mcpRuntimes === undefined ? {} : { runtimes: ctx.mcpRuntimes });
      return { errors: [...schemaErrors, ...ownErrors([...shapeErrors, ...own.errors])], warnings: [...own.warnings, ...shapeWarnings] };
    }
    case 'MemoryStore': {
      const policy = resolveReferencePolicy(object, ctx.namespaceLabels, ctx.referencePolicy);
      const references = ctx.memoryStoreReferences;
      const own = validateMemoryStore(clipped, {
        ...(ctx.oldObject === undefined ? {} : { oldObject: ctx.oldObject }),
        policy: policy.policy,
        ...(references === undefined ? {} : { modelAPIs: references.modelAPIs, ...(references.unchecked === undefined ? {} : { unchecked: references.unchecked }) }),
        ...(ctx.posture === undefined ? {} : { posture: ctx.posture }),
      });
      const stranded =
        ctx.oldObject === undefined || ctx.memoryStoreDependents === undefined
          ? []
          : strandedByCeiling(ctx.oldObject.spec, clipped.spec, ctx.memoryStoreDependents);
      return {
        errors: [...policy.errors, ...schemaErrors, ...ownErrors([...shapeErrors, ...own.errors])],
        warnings: [...policy.warnings, ...own.warnings, ...shapeWarnings, ...strandedCeilingWarning(object.metadata?.name ?? '', clipped.spec, stranded)],
      };
    }
  }
}

/** `MemoryStore "s" maxReadScope "session" is below the maxReadScope of Agents: a1, a2` (names sorted). */
function strandedCeilingWarning(store: string, spec: unknown, agents: readonly string[]): string[] {
  if (agents.length === 0) return [];
  const ceiling = getIn(spec, 'maxReadScope');
  const scope = typeof ceiling === 'string' ? ceiling : 'agent';
  return [namingWarning(`MemoryStore ${goQuote(store)} maxReadScope ${goQuote(scope)} is below the maxReadScope of Agents: `, agents, 'Agent')];
}

/**
 * Warnings for deleting an object that others still name (docs/api.md, "Warnings"): deletion is
 * never refused, only flagged. `referrers` are the objects that name it (Agents, and for a ModelAPI
 * the MemoryStores that bind it): one warning per kind. A MemoryStore in local mode takes its
 * memories with it (its PersistentVolumeClaim goes too): said beside the names.
 */
export function deletionWarnings(kind: KaosKind, name: string, referrers: readonly NamedObject[], old?: KubeObject): string[] {
  if (referrers.length === 0) return [];
  const warnings = stillReferencedWarnings(kind, name, referrers);
  if (kind === 'MemoryStore' && getIn(old?.spec, 'storage', 'type') === 'local') {
    warnings.push(clampWarning(`MemoryStore ${goQuote(name)}: its PersistentVolumeClaim, and the memories on it, are deleted with it`));
  }
  return warnings;
}
