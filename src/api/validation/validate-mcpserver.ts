// The MCPServer's rules beyond its schema (docs/api.md, "Validation"): exactly one tools source, sources that
// only the python runtime supports, and a package name that is safe and valid for the runtime.
import { MCP_RUNTIMES, type MCPRuntime } from '../enums.ts';
import { forbidden, invalid, required, type FieldError } from '../field-error.ts';
import { asRecord, getIn, isSet } from '../json.ts';
import type { KubeObject } from '../lookup.ts';
import { isValidPackage, PACKAGE_RULES } from './package-names.ts';
import type { ValidationResult } from './validation-types.ts';

const TOOLS = 'spec.config.tools';
const SOURCES = ['fromPackage', 'fromString', 'fromSecretKeyRef'] as const;

const isRuntime = (v: unknown): v is MCPRuntime => (MCP_RUNTIMES as readonly unknown[]).includes(v);

export function validateMCPServer(object: KubeObject): ValidationResult {
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
