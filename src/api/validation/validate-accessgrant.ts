// An AccessGrant's rules beyond its schema (docs/api.md, "AccessGrant"): each resource names a kind
// and a name together, or a selector (KAOS's CEL rule, in its words), a name is one an object could
// have, and a selector is one Kubernetes can parse. Warnings say what the grant will not do: an
// Agent subject is not projected, a named resource does not exist yet, the namespace is not
// projected, or the operator's settings keep every grant from being enforced.
import { failingGate, namedResources, type GrantGateFacts } from '../access-grants.ts';
import { child, index, invalid, type FieldError } from '../field-error.ts';
import { goQuote } from '../go-format.ts';
import { asArray, asRecord } from '../json.ts';
import { labelSelectorErrors } from '../label-selector.ts';
import { validateDNS1123Subdomain } from '../name-validation.ts';
import { clampWarning } from '../warnings.ts';
import type { ValidationResult } from './validation-types.ts';

export const EXACTLY_ONE_FORM = 'exactly one of kind and name, or selector, must be set';

export interface AccessGrantValidationContext {
  /** Whether each resource the grant names exists, keyed `<Kind>/<name>`; a key not there is not judged. */
  existing?: ReadonlyMap<string, boolean>;
  /** The namespaces the projection reads (AUTHZ_PROJECTION_NAMESPACES); absent: every namespace. */
  projectionNamespaces?: readonly string[];
  /** What the operator's settings make of every grant; absent: not judged. */
  gates?: GrantGateFacts;
}

/** The key of a named resource in `existing`. */
export const resourceKey = (kind: string, name: string): string => `${kind}/${name}`;

const present = (value: unknown): boolean => value !== undefined && value !== null;

export function validateAccessGrant(object: { metadata?: { namespace?: string }; spec?: unknown }, ctx: AccessGrantValidationContext = {}): ValidationResult {
  const errors: FieldError[] = [];
  const warnings: string[] = [];
  const spec = asRecord(object.spec) ?? {};

  (asArray(spec.resources) ?? []).forEach((entry, i) => {
    const r = asRecord(entry);
    if (r === undefined) return; // the schema's to report
    const at = index('spec.resources', i);
    const named = present(r.kind) && present(r.name);
    const selected = present(r.selector);
    if (named === selected || (!named && (present(r.kind) || present(r.name)))) errors.push(invalid(at, 'object', EXACTLY_ONE_FORM));
    if (typeof r.name === 'string') errors.push(...validateDNS1123Subdomain(child(at, 'name'), r.name));
    if (selected) errors.push(...labelSelectorErrors(r.selector, child(at, 'selector')));
  });

  const gate = ctx.gates === undefined ? undefined : failingGate(ctx.gates);
  if (gate !== undefined) warnings.push(clampWarning(`this AccessGrant will not be enforced: ${gate.message}`));
  const namespace = object.metadata?.namespace ?? '';
  if (ctx.projectionNamespaces !== undefined && namespace !== '' && !ctx.projectionNamespaces.includes(namespace)) {
    warnings.push(clampWarning(`namespace ${goQuote(namespace)} is not in AUTHZ_PROJECTION_NAMESPACES: this AccessGrant is not projected`));
  }
  (asArray(spec.subjects) ?? []).forEach((subject, i) => {
    if (asRecord(subject)?.kind === 'Agent') {
      warnings.push(clampWarning(`${index('spec.subjects', i)}: an Agent subject is not projected; an Agent's access follows its own spec`));
    }
  });
  for (const { index: i, kind, name } of namedResources(spec)) {
    if (ctx.existing?.get(resourceKey(kind, name)) === false) {
      warnings.push(clampWarning(`${index('spec.resources', i)}.name: ${kind} ${goQuote(name)} does not exist yet; the grant covers it once it does`));
    }
  }
  return { errors, warnings };
}
