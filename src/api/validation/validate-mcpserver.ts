// The MCPServer's rules beyond its schema (docs/api.md, "Validation"): exactly one tools source, sources that
// only the python runtime supports, and a package name that is safe and valid for the runtime.
// Two shapes (docs/api.md, "MCPServer runtimes"): the original `type` + `config`, or `runtime` + `params` +
// `serviceAccountName`, judged against the runtime registry; never both.
import { MCP_RUNTIMES, type MCPRuntime } from '../enums.ts';
import { clampWarning } from '../warnings.ts';
import { forbidden, invalid, notSupported, required, type FieldError } from '../field-error.ts';
import { asArray, asRecord, asString, getIn, isSet } from '../json.ts';
import type { KubeObject } from '../lookup.ts';
import { CUSTOM_RUNTIME, resolveRuntime, runtimeNames, type RegistryState } from '../mcp-runtimes.ts';
import { isValidPackage, PACKAGE_RULES } from './package-names.ts';
import type { ValidationResult } from './validation-types.ts';

const TOOLS = 'spec.config.tools';
const SOURCES = ['fromPackage', 'fromString', 'fromSecretKeyRef'] as const;

const isRuntime = (v: unknown): v is MCPRuntime => (MCP_RUNTIMES as readonly unknown[]).includes(v);

/** The fields of each shape: a field of one is refused beside the other's key field. */
const RUNTIME_FIELDS = ['runtime', 'params', 'serviceAccountName'] as const;
const TYPE_FIELDS = ['type', 'config'] as const;

export interface MCPServerValidationOptions {
  /** The runtime registry as the cache holds it; absent: runtimes are not checked (a warning). */
  runtimes?: RegistryState;
}

export function validateMCPServer(object: KubeObject, options: MCPServerValidationOptions = {}): ValidationResult {
  const spec = asRecord(object.spec) ?? {};
  const hasType = isSet(spec.type);
  const hasRuntime = isSet(spec.runtime);
  if (hasType) {
    // The original shape; upstream's fields beside it are the minority (docs/api.md, "One shape per part").
    const mixed = RUNTIME_FIELDS.filter((f) => spec[f] !== undefined).map((f) => forbidden(`spec.${f}`, 'may not be set together with spec.type'));
    const own = validateTypeShape(object);
    return { errors: [...mixed, ...own.errors], warnings: own.warnings };
  }
  if (hasRuntime) {
    const mixed = TYPE_FIELDS.filter((f) => spec[f] !== undefined).map((f) => forbidden(`spec.${f}`, 'may not be set together with spec.runtime'));
    const own = validateRuntimeShape(spec, options.runtimes);
    return { errors: [...mixed, ...own.errors], warnings: own.warnings };
  }
  return { errors: [required('spec', 'must specify exactly one of spec.type (with spec.config) or spec.runtime')], warnings: [] };
}

/**
 * spec.runtime against the registry: a known entry (whose requiredEnv spec.container.env must
 * name), or `custom` with spec.container.image. A registry that cannot be read only warns: the
 * controller retries until it can.
 */
function validateRuntimeShape(spec: Record<string, unknown>, runtimes: RegistryState | undefined): ValidationResult {
  const name = asString(spec.runtime) ?? '';
  const errors: FieldError[] = [];
  const warnings: string[] = [];
  const hasParams = isSet(spec.params);
  const resolution = resolveRuntime(runtimes ?? { problem: 'the runtime registry is not known here' }, name);
  switch (resolution.kind) {
    case 'custom':
      if (!isSet(getIn(spec, 'container', 'image'))) {
        errors.push(required('spec.container.image', `runtime ${CUSTOM_RUNTIME} takes its image from spec.container`));
      }
      if (hasParams) warnings.push(`spec.params is not used: runtime ${CUSTOM_RUNTIME} has no paramsEnvVar`);
      break;
    case 'unknown':
      errors.push(notSupported('spec.runtime', name, runtimeNames(runtimes ?? { problem: '' })));
      break;
    case 'unreadable':
      warnings.push(clampWarning(`spec.runtime "${name}" not checked: ${resolution.reason}`));
      break;
    case 'entry': {
      const given = new Set((asArray(getIn(spec, 'container', 'env')) ?? []).map((e) => asString(getIn(e, 'name'))));
      for (const needed of resolution.entry.requiredEnv ?? []) {
        if (!given.has(needed)) errors.push(required('spec.container.env', `runtime ${name} requires env ${needed}`));
      }
      if (hasParams && resolution.entry.paramsEnvVar === undefined) warnings.push(clampWarning(`spec.params is not used: runtime ${name} has no paramsEnvVar`));
      break;
    }
  }
  return { errors, warnings };
}

function validateTypeShape(object: KubeObject): ValidationResult {
  const runtime = getIn(object.spec, 'type');
  const tools = asRecord(getIn(object.spec, 'config', 'tools')) ?? {};
  const errors: FieldError[] = [];

  const given = SOURCES.filter((s) => isSet(tools[s]));
  const [first, ...extra] = given;
  if (first === undefined) errors.push(required(TOOLS, `must specify exactly one of ${SOURCES.join(', ')}`));
  for (const source of extra) errors.push(forbidden(`${TOOLS}.${source}`, `may not be set when ${first} is set`));

  if (isRuntime(runtime)) {
    if (runtime !== 'python-runtime') {
      for (const source of given.filter((s) => s !== 'fromPackage')) {
        errors.push(forbidden(`${TOOLS}.${source}`, 'only supported when type is python-runtime'));
      }
    }
    const pkg = tools.fromPackage;
    if (typeof pkg === 'string' && pkg !== '' && !isValidPackage(runtime, pkg)) {
      errors.push(invalid(`${TOOLS}.fromPackage`, pkg, PACKAGE_RULES[runtime]));
    }
  }
  return { errors, warnings: [] };
}
