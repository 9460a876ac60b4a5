// Operator-wide defaults for every generated pod: the JSON and list values of
// the IMAGE_PULL_SECRETS, DEFAULT_*_RESOURCES, DEFAULT_NODE_SELECTOR, DEFAULT_TOLERATIONS,
// DEFAULT_AFFINITY and POD_SECURITY_CONTEXT variables, checked here so that a typo is a start-up
// error and never a pod the API server refuses for every object. Each parser reports its
// problems as `<VAR>: <what is wrong>` and returns undefined for a value it refuses.
//
// Empty maps and lists normalise to "unset": the API server drops them from what it stores
// (omitempty), so rendering them would make the applied pod differ forever from the cached one.
import { dns1123SubdomainProblems } from '../api/name-validation.ts';
import { isRecord, type JsonRecord } from '../api/json.ts';
import { errorMessage } from '../leaves/error-message.ts';

/** core/v1 ResourceRequirements, without `claims` (those name claims of one pod only). */
export interface ResourceDefaults {
  readonly requests?: Readonly<Record<string, string>>;
  readonly limits?: Readonly<Record<string, string>>;
}

export interface Toleration {
  readonly key?: string;
  readonly operator?: 'Exists' | 'Equal';
  readonly value?: string;
  readonly effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  readonly tolerationSeconds?: number;
}

/**
 * `hardened`: allowPrivilegeEscalation false and every capability dropped on each generated
 * container, seccomp RuntimeDefault for the pod. `none`: no securityContext at all.
 */
export const POD_SECURITY_CONTEXTS = ['hardened', 'none'] as const;
export type PodSecurityContextMode = (typeof POD_SECURITY_CONTEXTS)[number];

export interface WorkloadDefaults {
  /** Names of Secrets of type kubernetes.io/dockerconfigjson, in the pod's namespace. */
  readonly imagePullSecrets: readonly string[];
  /** Resources of the generated main container, per kind (undefined: none). */
  readonly resources: {
    readonly agent?: ResourceDefaults;
    readonly modelAPI?: ResourceDefaults;
    readonly mcpServer?: ResourceDefaults;
    readonly memoryStore?: ResourceDefaults;
  };
  readonly nodeSelector?: Readonly<Record<string, string>>;
  readonly tolerations?: readonly Toleration[];
  /** core/v1 Affinity; only its shape is checked here, the API server checks the rest. */
  readonly affinity?: JsonRecord;
  readonly securityContext: PodSecurityContextMode;
}

type Problems = string[];

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** IsDNS1123Label's problems (namespace names); empty when the name is valid. */
export function dns1123LabelProblems(value: string): string[] {
  const problems: string[] = [];
  if (value.length > 63) problems.push('must be no more than 63 characters');
  if (!DNS1123_LABEL.test(value)) {
    problems.push("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character");
  }
  return problems;
}

/** `a,b` → ['a', 'b']: blanks around names and empty items ignored, duplicates dropped. */
export function parseNameList(name: string, raw: string, problems: Problems, check: (v: string) => string[]): string[] {
  const out: string[] = [];
  for (const item of raw.split(',').map((s) => s.trim())) {
    if (item === '' || out.includes(item)) continue;
    const itemProblems = check(item);
    if (itemProblems.length > 0) problems.push(`${name}: "${item}": ${itemProblems.join('; ')}`);
    else out.push(item);
  }
  return out;
}

export function parseImagePullSecrets(name: string, raw: string, problems: Problems): string[] {
  return parseNameList(name, raw, problems, dns1123SubdomainProblems);
}

function parseJSON(name: string, raw: string, problems: Problems): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch (err) {
    problems.push(`${name}: must be JSON: ${errorMessage(err)}`);
    return undefined;
  }
}

// Label keys and values as apimachinery's IsQualifiedName / IsValidLabelValue accept them.
const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function qualifiedNameProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const part = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix === '' || dns1123SubdomainProblems(prefix).length > 0)) {
    return `key "${key}": the prefix must be a DNS-1123 subdomain`;
  }
  if (part.length > 63 || !NAME_PART.test(part)) {
    return `key "${key}": must be at most 63 characters of alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`;
  }
  return undefined;
}

export function parseNodeSelector(name: string, raw: string, problems: Problems): Record<string, string> | undefined {
  const value = parseJSON(name, raw, problems);
  if (value === undefined) return undefined;
  if (!isRecord(value)) {
    problems.push(`${name}: must be a JSON object of label keys to values, e.g. {"pool":"agents"}`);
    return undefined;
  }
  const before = problems.length;
  for (const [key, v] of Object.entries(value)) {
    const keyProblem = qualifiedNameProblem(key);
    if (keyProblem !== undefined) problems.push(`${name}: ${keyProblem}`);
    if (typeof v !== 'string') problems.push(`${name}: "${key}": the value must be a string`);
    else if (v.length > 63 || !LABEL_VALUE.test(v)) problems.push(`${name}: "${key}": "${v}" is not a valid label value`);
  }
  if (problems.length > before || Object.keys(value).length === 0) return undefined;
  return value as Record<string, string>;
}

const TOLERATION_FIELDS = ['key', 'operator', 'value', 'effect', 'tolerationSeconds'];
const OPERATORS = ['Exists', 'Equal'];
const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

export function parseTolerations(name: string, raw: string, problems: Problems): Toleration[] | undefined {
  const value = parseJSON(name, raw, problems);
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    problems.push(`${name}: must be a JSON list of tolerations, e.g. [{"key":"gpu","operator":"Exists","effect":"NoSchedule"}]`);
    return undefined;
  }
  const before = problems.length;
  value.forEach((item: unknown, i) => {
    const at = `${name}[${i}]`;
    if (!isRecord(item)) {
      problems.push(`${at}: must be an object`);
      return;
    }
    for (const field of Object.keys(item)) {
      if (!TOLERATION_FIELDS.includes(field)) problems.push(`${at}: unknown field "${field}" (known: ${TOLERATION_FIELDS.join(', ')})`);
    }
    for (const field of ['key', 'value'] as const) {
      if (item[field] !== undefined && typeof item[field] !== 'string') problems.push(`${at}.${field}: must be a string`);
    }
    const { operator, effect, tolerationSeconds } = item;
    if (operator !== undefined && !OPERATORS.includes(operator as string)) problems.push(`${at}.operator: must be one of ${OPERATORS.join(', ')}`);
    if (effect !== undefined && !EFFECTS.includes(effect as string)) problems.push(`${at}.effect: must be one of ${EFFECTS.join(', ')}`);
    if (tolerationSeconds !== undefined && !Number.isInteger(tolerationSeconds)) problems.push(`${at}.tolerationSeconds: must be an integer`);
    if (operator === 'Exists' && item['value'] !== undefined && item['value'] !== '') problems.push(`${at}.value: must be empty when operator is Exists`);
    if ((item['key'] === undefined || item['key'] === '') && operator !== 'Exists') problems.push(`${at}.operator: must be Exists when key is empty`);
  });
  if (problems.length > before || value.length === 0) return undefined;
  return value as Toleration[];
}

const AFFINITY_FIELDS = ['nodeAffinity', 'podAffinity', 'podAntiAffinity'];

export function parseAffinity(name: string, raw: string, problems: Problems): JsonRecord | undefined {
  const value = parseJSON(name, raw, problems);
  if (value === undefined) return undefined;
  if (!isRecord(value)) {
    problems.push(`${name}: must be a JSON object (a core/v1 Affinity)`);
    return undefined;
  }
  const before = problems.length;
  for (const [field, v] of Object.entries(value)) {
    if (!AFFINITY_FIELDS.includes(field)) problems.push(`${name}: unknown field "${field}" (known: ${AFFINITY_FIELDS.join(', ')})`);
    else if (!isRecord(v)) problems.push(`${name}.${field}: must be an object`);
  }
  if (problems.length > before || Object.keys(value).length === 0) return undefined;
  return value;
}

// resource.Quantity's syntax: a decimal number, then a binary suffix, a decimal suffix or an
// exponent. Quantities are compared as floating-point numbers, which is exact enough to tell a
// request above its limit.
const QUANTITY = /^\+?(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][-+]?\d+)?$/;
const SUFFIX: Readonly<Record<string, number>> = {
  '': 1, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** A quantity's value, or undefined when the text is not a non-negative resource.Quantity. */
export function quantityValue(text: string): number | undefined {
  const match = QUANTITY.exec(text);
  if (match === null) return undefined;
  const number = Number(match[1]);
  const suffix = match[2] ?? '';
  const factor = SUFFIX[suffix] ?? 10 ** Number(suffix.slice(1));
  return number * factor;
}

export function parseResources(name: string, raw: string, problems: Problems): ResourceDefaults | undefined {
  const value = parseJSON(name, raw, problems);
  if (value === undefined) return undefined;
  if (!isRecord(value)) {
    problems.push(`${name}: must be a JSON object such as {"requests":{"cpu":"100m","memory":"256Mi"},"limits":{"memory":"1Gi"}}`);
    return undefined;
  }
  const before = problems.length;
  const out: { requests?: Record<string, string>; limits?: Record<string, string> } = {};
  for (const [field, list] of Object.entries(value)) {
    if (field !== 'requests' && field !== 'limits') {
      problems.push(`${name}: unknown field "${field}" (known: requests, limits)`);
      continue;
    }
    if (!isRecord(list)) {
      problems.push(`${name}.${field}: must be an object of resource names to quantities`);
      continue;
    }
    for (const [resource, quantity] of Object.entries(list)) {
      const keyProblem = qualifiedNameProblem(resource);
      if (keyProblem !== undefined) problems.push(`${name}.${field}: ${keyProblem}`);
      if (typeof quantity !== 'string' || quantityValue(quantity) === undefined) {
        problems.push(`${name}.${field}.${resource}: must be a quantity such as "500m", "1" or "256Mi", got ${JSON.stringify(quantity)}`);
      }
    }
    if (Object.keys(list).length > 0) out[field] = list as Record<string, string>;
  }
  for (const [resource, request] of Object.entries(out.requests ?? {})) {
    const limit = out.limits?.[resource];
    if (limit === undefined) continue;
    const [r, l] = [quantityValue(request), quantityValue(limit)];
    if (r !== undefined && l !== undefined && r > l) {
      problems.push(`${name}: requests.${resource} "${request}" is above limits.${resource} "${limit}"`);
    }
  }
  if (problems.length > before || (out.requests === undefined && out.limits === undefined)) return undefined;
  return out;
}
