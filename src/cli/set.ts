// A set of manifests as the webhooks would meet it: the KAOS objects (each with the namespace
// kubectl would give it), the Namespaces' labels (for the reference policy), and the problems
// that stop an object before any webhook sees it. Pure.
import { API_VERSION, GROUP, isKaosKind, KINDS, type KaosKind } from '../api/kinds.ts';
import { isRecord } from '../api/json.ts';
import type { KubeObject } from '../api/lookup.ts';
import { kubeObjectProblem } from '../api/object-meta.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../admission/json-depth.ts';
import { refKey } from '../cluster/object-ref.ts';
import type { Manifest, Origin } from './manifests.ts';

export interface Identity {
  kind: string;
  namespace: string;
  name: string;
}

export interface Finding {
  origin: Origin;
  object: Identity;
  severity: 'error' | 'warning';
  /** The field path of a webhook cause, when it names one. */
  field?: string;
  message: string;
}

export interface Entry {
  manifest: Manifest;
  kind: KaosKind;
  /** The object with metadata.namespace filled in, as the API server hands it to the webhooks. */
  object: KubeObject;
  identity: Identity;
}

export interface PreparedSet {
  entries: Entry[];
  namespaces: [string, Record<string, string>][];
  /** Problems found before any webhook would run. */
  findings: Finding[];
  /** Objects of other kinds, ignored. */
  ignored: number;
}

/** In an AdmissionReview the object sits at level 3 (review → request → object). */
const MAX_OBJECT_DEPTH = MAX_JSON_DEPTH - 2;

export function prepareSet(manifests: readonly Manifest[], defaultNamespace: string): PreparedSet {
  const set: PreparedSet = { entries: [], namespaces: [], findings: [], ignored: 0 };
  const seen = new Map<string, Origin>();
  for (const manifest of manifests) {
    const { value, origin } = manifest;
    const error = (object: Identity, message: string): void => {
      set.findings.push({ origin, object, severity: 'error', message });
    };
    if (!isRecord(value)) {
      error(UNKNOWN, 'not a Kubernetes object: a manifest is a mapping with apiVersion, kind and metadata');
      continue;
    }
    const apiVersion = typeof value.apiVersion === 'string' ? value.apiVersion : '';
    const kind = typeof value.kind === 'string' ? value.kind : '';
    if (kind === 'Namespace' && apiVersion === 'v1') {
      const name = isRecord(value.metadata) && typeof value.metadata.name === 'string' ? value.metadata.name : '';
      if (name !== '') set.namespaces.push([name, stringMap(isRecord(value.metadata) ? value.metadata.labels : undefined)]);
    }
    if (apiVersion.split('/')[0] !== GROUP || !apiVersion.includes('/')) {
      set.ignored++;
      continue;
    }
    const rough: Identity = { kind: kind || '?', namespace: roughString(value.metadata, 'namespace') ?? defaultNamespace, name: roughString(value.metadata, 'name') ?? '' };
    if (apiVersion !== API_VERSION || !isKaosKind(kind)) {
      error(rough, `no kind "${kind}" is served in version "${apiVersion}": ${GROUP} serves ${KINDS.join(', ')} in ${API_VERSION}`);
      continue;
    }
    // The webhook refuses such a body before reading it (HTTP 400), so the object never gets in.
    if (nestsDeeperThan(Buffer.from(JSON.stringify(value)), MAX_OBJECT_DEPTH)) {
      error(rough, `the object is nested deeper than ${MAX_OBJECT_DEPTH} levels (an AdmissionReview body deeper than ${MAX_JSON_DEPTH} is refused)`);
      continue;
    }
    const problem = kubeObjectProblem(value, 'object');
    if (problem !== undefined) {
      error(rough, problem);
      continue;
    }
    const object = value as unknown as KubeObject;
    const name = object.metadata?.name ?? '';
    if (name === '' && (object.metadata?.generateName ?? '') === '') {
      error(rough, 'metadata.name: Required value: name or generateName is required');
      continue;
    }
    const namespace = object.metadata?.namespace ?? defaultNamespace;
    const identity: Identity = { kind, namespace, name };
    const key = refKey(kind, namespace, name);
    const earlier = name === '' ? undefined : seen.get(key);
    if (earlier !== undefined) {
      set.findings.push({ origin, object: identity, severity: 'warning', message: `also defined at ${locate(earlier)}: applying the set leaves this later one` });
    }
    if (name !== '') seen.set(key, origin);
    set.entries.push({ manifest, kind, identity, object: { ...object, metadata: { ...object.metadata, namespace } } });
  }
  return set;
}

/** `file:document`, ` items[i]` inside a List, and the line (and Helm template) it starts at. */
export function locate(origin: Origin): string {
  const item = origin.item === undefined ? '' : ` items[${origin.item}]`;
  const source = origin.source === undefined ? '' : `, ${origin.source}`;
  return `${origin.file}:${origin.document}${item} (line ${origin.line}${source})`;
}

const UNKNOWN: Identity = { kind: '?', namespace: '', name: '' };

function roughString(metadata: unknown, field: string): string | undefined {
  const v = isRecord(metadata) ? metadata[field] : undefined;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function stringMap(value: unknown): Record<string, string> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
