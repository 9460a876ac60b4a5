// Package names an MCPServer may install (docs/api.md, "MCPServer"). The renderer passes the name to pip/npx only
// through an environment variable, never spliced into a command line; these rules additionally keep
// out whitespace, quotes and shell metacharacters, and a leading "-" that would read as an option.
import type { MCPRuntime } from '../enums.ts';

// PEP 508 name, optional [extras], optional comma-separated version specifiers: pkg, pkg==1.2, pkg[cli]>=1,<2
const PYPI_NAME = '[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?';
const PYPI_SPECIFIER = '(?:===|==|!=|~=|>=|<=|>|<)[A-Za-z0-9.*+!_-]+';
const PYPI_REQUIREMENT = new RegExp(
  `^${PYPI_NAME}(?:\\[${PYPI_NAME}(?:,${PYPI_NAME})*\\])?(?:${PYPI_SPECIFIER}(?:,${PYPI_SPECIFIER})*)?$`,
);

// npm name rules for new packages (lowercase, URL-safe, no leading "." or "_", at most 214
// characters), optional @scope/, optional @version, @range or @dist-tag.
const NPM_PART = '[a-z0-9][a-z0-9._-]*';
const NPM_SPEC = new RegExp(`^(?<name>(?:@${NPM_PART}/)?${NPM_PART})(?:@[A-Za-z0-9.^~*+<>=_-]+)?$`);
const NPM_NAME_MAX_LENGTH = 214;

export const PACKAGE_RULES: Readonly<Record<MCPRuntime, string>> = {
  'python-runtime':
    "must be a PyPI package name with an optional version specifier and no spaces or shell characters (e.g. 'mcp-server-fetch' or 'mcp-server-fetch==1.2.0')",
  'node-runtime':
    "must be an npm package name with an optional version and no spaces or shell characters (e.g. '@modelcontextprotocol/server-everything' or 'my-tools@1.2.0')",
};

export function isValidPackage(runtime: MCPRuntime, spec: string): boolean {
  if (runtime === 'python-runtime') return PYPI_REQUIREMENT.test(spec);
  const name = NPM_SPEC.exec(spec)?.groups?.name;
  return name !== undefined && name.length <= NPM_NAME_MAX_LENGTH;
}
