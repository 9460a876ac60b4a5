// The shape of an object's metadata, as KubeObject's type promises it: the API server decodes
// metadata into a typed ObjectMeta before admission, so anything else did not come from it, and
// every reader of metadata (names, labels, the kaos.tools/defaulted annotation) may rely on it.
import { isRecord } from './json.ts';

const STRING_FIELDS = ['name', 'namespace', 'generateName', 'uid', 'resourceVersion'] as const;
const STRING_MAPS = ['labels', 'annotations'] as const;

/** What is wrong with `value` as a Kubernetes object, naming it `what`; undefined when nothing. */
export function kubeObjectProblem(value: unknown, what: string): string | undefined {
  if (!isRecord(value)) return `${what} must be an object, got ${typeName(value)}`;
  const metadata = value.metadata;
  if (metadata === undefined) return undefined;
  if (!isRecord(metadata)) return `${what}.metadata must be an object, got ${typeName(metadata)}`;
  for (const field of STRING_FIELDS) {
    const v = metadata[field];
    if (v !== undefined && typeof v !== 'string') return `${what}.metadata.${field} must be a string, got ${typeName(v)}`;
  }
  if (metadata.generation !== undefined && !Number.isSafeInteger(metadata.generation)) {
    return `${what}.metadata.generation must be an integer, got ${typeName(metadata.generation)}`;
  }
  for (const field of STRING_MAPS) {
    const map = metadata[field];
    if (map === undefined) continue;
    if (!isRecord(map)) return `${what}.metadata.${field} must be a map of strings, got ${typeName(map)}`;
    for (const key of Object.keys(map)) {
      if (typeof map[key] !== 'string') {
        return `${what}.metadata.${field} must be a map of strings, got ${typeName(map[key])} for a key`;
      }
    }
  }
  return undefined;
}

export function typeName(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
