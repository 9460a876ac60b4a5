// The worst input of each class of hostile input, for every kind and both webhooks, at the
// schema's limits and past them (docs/limits.md, "The work budget"): what the work budget is
// measured against (test/unit/admission/work-budget-*.test.ts, `npm run bench:budget`; the
// e2e test, test/e2e/admission-budget.test.ts, sends those of them the API server lets through).
//
// The paths and sizes come from the kinds' schemas (SPEC_SCHEMAS: every string with its
// maxLength, every list with its maxItems, every object), so a new kind or field is covered the
// day it is added. The values are the fuzz generator's (arbitraries.ts): `huge-string` of every
// character, `huge-list` of every element (and where a string belongs), `deep-nesting` of every
// shape; plus what a parser of the value would choke on (`parse-errors`: YAML that is one error
// per character, or deep, or a run of keys), and maps of many or huge keys (`many-keys`), which
// no schema limit bounds.
// Past the schema's limits means what the mutating webhook is sent (the API server checks the
// schema after it) and what the webhooks read at all: strings and lists as long as the largest
// object holds (MAX_OBJECT_BYTES), 20,000 items; an UPDATE from one such object to another (the
// largest review of a write the API server can store); and, refused unread, an object one step
// past the largest and a body past the body limit.
import { BODY_LIMIT_BYTES } from '../../src/admission/admit.ts';
import { MAX_JSON_DEPTH, MAX_JSON_MEMBERS, MAX_OBJECT_BYTES } from '../../src/admission/json-depth.ts';
import type { WebhookType } from '../../src/admission/types.ts';
import { webhookPath } from '../../src/admission/webhook-paths.ts';
import { DEFAULTED_ANNOTATION, GROUP, KINDS, KIND_NAMES, REFERENCE_POLICY_KEY, VERSION, type KaosKind } from '../../src/api/kinds.ts';
import type { KubeObject } from '../../src/api/lookup.ts';
import { MAX_NAME_LENGTH } from '../../src/api/schema/limits.ts';
import { SPEC_SCHEMAS } from '../../src/api/schema/index.ts';
import { deepJson, FILL_VALUES, fillItems, fillLength, hugeList, longNames, hugeString, HUGE_CHARS, LIMITS, LIST_ELEMENTS, NEST_SHAPES, RawJson, render, type Doc } from './arbitraries.ts';

export const HOSTILE_CLASSES = ['huge-string', 'huge-list', 'deep-nesting', 'parse-errors', 'many-keys'] as const;
export type HostileClass = (typeof HOSTILE_CLASSES)[number];

export interface WorstCase {
  readonly class: HostileClass;
  readonly kind: KaosKind;
  readonly type: WebhookType;
  /** The webhook's URL path. */
  readonly path: string;
  readonly operation: 'CREATE' | 'UPDATE';
  /** Where in the object the hostile value is: `spec.config.env[0].value`. */
  readonly field: string;
  /** Which value of its class: the character, the list element, the nesting shape, the YAML. */
  readonly variant: string;
  /** What is hostile, for a person: `spec.proxyConfig.configYaml.fromString = 65536 × "\""`. */
  readonly label: string;
  /** Whether the value is past the schema's limits (or in what no schema bounds). */
  readonly past: boolean;
  /** Whether the value is as large as the largest object holds (or larger): the cases that cost most and take longest. */
  readonly fills: boolean;
  /** The AdmissionReview, as sent: built on demand (megabytes), the same text each call. */
  body(): string;
}

type Path = readonly (string | number)[];

/** The schema keywords the walk reads; a TypeBox schema is a plain JSON Schema object. */
interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  maxLength?: number;
  maxItems?: number;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

interface Shape {
  strings: { path: Path; maxLength: number | undefined }[];
  lists: { path: Path; maxItems: number | undefined }[];
  objects: Path[];
}

/** Every string, list and object the schema describes, under `path`; a list's item as its [0]. */
function shapeOf(schema: Schema, path: Path, out: Shape = { strings: [], lists: [], objects: [] }): Shape {
  if (schema.type === 'string') out.strings.push({ path, maxLength: schema.maxLength });
  if (schema.type === 'array') {
    out.lists.push({ path, maxItems: schema.maxItems });
    if (schema.items !== undefined) shapeOf(schema.items, [...path, 0], out);
  }
  if (schema.type === 'object') {
    out.objects.push(path);
    for (const [key, child] of Object.entries(schema.properties ?? {})) shapeOf(child, [...path, key], out);
    if (typeof schema.additionalProperties === 'object') shapeOf(schema.additionalProperties, [...path, 'x'], out);
  }
  return out;
}

/**
 * Inside the opaque podSpec (and container.resources), which no schema describes: the lists the
 * podSpec merge keys (core/v1 PodSpec and Container), one it replaces whole, and the maps.
 */
const OPAQUE_LISTS: readonly Path[] = [
  ['spec', 'podSpec', 'containers'],
  ['spec', 'podSpec', 'initContainers'],
  ['spec', 'podSpec', 'volumes'],
  ['spec', 'podSpec', 'imagePullSecrets'],
  ['spec', 'podSpec', 'tolerations'],
  ['spec', 'podSpec', 'containers', 0, 'env'],
  ['spec', 'podSpec', 'containers', 0, 'ports'],
  ['spec', 'podSpec', 'containers', 0, 'volumeMounts'],
];
const OPAQUE_MAPS: readonly Path[] = [['spec', 'podSpec', 'nodeSelector'], ['spec', 'container', 'resources', 'limits'], ['metadata', 'labels'], ['metadata', 'annotations'], ['spec']];
/** Strings of metadata the webhooks read: names, the labels and annotations they act on. */
const METADATA_STRINGS: readonly { path: Path; maxLength: number | undefined }[] = [
  { path: ['metadata', 'name'], maxLength: MAX_NAME_LENGTH },
  { path: ['metadata', 'namespace'], maxLength: 63 },
  { path: ['metadata', 'annotations', DEFAULTED_ANNOTATION], maxLength: undefined },
  { path: ['metadata', 'annotations', REFERENCE_POLICY_KEY], maxLength: undefined },
  { path: ['metadata', 'labels', REFERENCE_POLICY_KEY], maxLength: 63 },
];

/**
 * The strings the operator parses (a LiteLLM config): every hostile document goes to both
 * webhooks and in the oldObject of an UPDATE there; to every other free-text string, to the
 * validating webhook, where a parser added some day would meet them.
 */
export const PARSED_FIELDS: readonly string[] = ['spec.proxyConfig.configYaml.fromString'];

/**
 * The strings an UPDATE between two objects that fill it is sent for (besides every opaque list):
 * the one the operator parses, and an annotation it reads. Every other string costs such an
 * UPDATE what these do: the parse of twice the bytes, and one comparison of two strings.
 */
const UPDATED: ReadonlySet<string> = new Set(['spec.proxyConfig.configYaml.fromString', `metadata.annotations.${REFERENCE_POLICY_KEY}`]);
/** Past the schema: the fuzz generator's longest list but one (beside the lists as long as an object holds). */
const PAST_LIST = Math.max(...LIMITS.listLengths);
/** A key past what an object holds for a string of it: the generator's 1 MiB (and, in a body, it is refused unread). */
const HUGE_KEY = Math.max(...LIMITS.stringLengths);
/** Keys of one map: far past the width limit (3.4 MiB). */
const MANY_KEYS = 200_000;

/**
 * YAML that costs a parser most (measured on the `yaml` package, which took up to 36 s on
 * 256 KiB of them): one error per character, unclosed or unbalanced nesting, runs of keys
 * (duplicate and distinct), anchors and aliases, merge keys, escapes, blank lines.
 */
export const HOSTILE_YAML: readonly string[] = [
  '"', "'", '[', '{', ']', '}', ':', '- ', 'a: ', '? ', '&a ', '*a ', '!!str ', '\\x', '\t', '\n ', ' a:\n', 'a:\n  ', 'a: 1\n', '- &a\n', '[a,', '{a: ',
  '- [{"a": \'b\', c: &x d}, *x]\n', '%YAML 1.2\n', '---\n', '|', '>\n x\n',
];

/** `length` code units of YAML made by repeating `unit`, with prefix and suffix for the structured ones. */
function hostileYaml(unit: string, length: number): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

/** A YAML document of `length` characters whose every line is a distinct key: the worst valid config. */
function manyKeysYaml(length: number): string {
  let text = 'model_list: []\nx:\n';
  for (let i = 0; text.length < length - 24; i++) text += `  k${i}: ${i}\n`;
  return text;
}

/** A valid config with merge keys at their cap, aliases, and anchors: what is costly when it parses. */
function mergesYaml(length: number): string {
  let text = `d: &d {${Array.from({ length: 500 }, (_, i) => `k${i}: 1`).join(', ')}}\nmodel_list:\n`;
  while (text.length < length - 16) text += '  - <<: *d\n';
  return text;
}

function setAt(root: Doc, path: Path, value: Doc): Doc {
  let node = root as Record<string | number, Doc>;
  for (const [i, key] of path.entries()) {
    if (i === path.length - 1) node[key] = value;
    else {
      const next = node[key];
      if (next === null || typeof next !== 'object' || next instanceof RawJson) node[key] = typeof path[i + 1] === 'number' ? [] : {};
      node = node[key] as Record<string | number, Doc>;
    }
  }
  return root;
}

/** How much of `path` exists in `object`: the base a value at `path` is most alive in. */
function depthIn(object: unknown, path: Path): number {
  let node = object;
  let depth = 0;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || !(String(key) in node)) break;
    node = (node as Record<string, unknown>)[String(key)];
    depth++;
  }
  return depth;
}

const showPath = (path: Path): string => path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');

/** The AdmissionReview around `object` (and `oldObject` for an UPDATE), rendered without JSON.stringify of the huge parts. */
export function reviewBody(kind: KaosKind, object: Doc, oldObject?: Doc): string {
  const gvk = JSON.stringify({ group: GROUP, version: VERSION, kind });
  const gvr = JSON.stringify({ group: GROUP, version: VERSION, resource: KIND_NAMES[kind].plural });
  const operation = oldObject === undefined ? 'CREATE' : 'UPDATE';
  const old = oldObject === undefined ? '' : `,"oldObject":${render(oldObject)}`;
  return `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"00000000-0000-4000-8000-000000000001","kind":${gvk},"resource":${gvr},"requestKind":${gvk},"requestResource":${gvr},"name":"worst","namespace":"kaos-multi","operation":"${operation}","object":${render(object)}${old}}}`;
}

export interface WorstCaseOptions {
  /** The objects the hostile values are set in, of every kind: for each path, the one where most of it exists. */
  bases: readonly KubeObject[];
  /** Only these classes (default: all). */
  classes?: readonly HostileClass[];
  /** Only these kinds (default: all). */
  kinds?: readonly KaosKind[];
}

/**
 * Every worst case, lazily (they are megabytes each). For each: both webhooks, CREATE; and for
 * the parse-errors, an UPDATE to the validating webhook whose oldObject carries them (the old
 * object's config is read for the stranding warning).
 */
export function* worstCases(options: WorstCaseOptions): Generator<WorstCase> {
  const classes = new Set(options.classes ?? HOSTILE_CLASSES);
  for (const kind of options.kinds ?? KINDS) {
    const ofKind = options.bases.filter((o) => o.kind === kind);
    const minimal: KubeObject = { apiVersion: `${GROUP}/${VERSION}`, kind, metadata: { name: 'worst', namespace: 'kaos-multi' }, spec: {} };
    const baseFor = (path: Path): KubeObject =>
      ofKind.reduce((best, o) => (depthIn(o, path) > depthIn(best, path) ? o : best), ofKind[0] ?? minimal);
    const withValue = (path: Path, value: Doc): Doc => setAt(structuredClone(baseFor(path)) as unknown as Doc, path, value);
    const shape = shapeOf(SPEC_SCHEMAS[kind] as Schema, ['spec']);
    const strings = [...shape.strings, ...METADATA_STRINGS];

    function* both(cls: HostileClass, path: Path, variant: string, label: string, past: boolean, object: () => Doc, fills = false): Generator<WorstCase> {
      let body: string | undefined;
      const build = (): string => (body ??= reviewBody(kind, object()));
      const field = showPath(path);
      for (const type of ['mutate', 'validate'] as const) {
        yield { class: cls, kind, type, path: webhookPath(type, kind), operation: 'CREATE', field, variant, label: `${field} = ${label}`, past, fills, body: build };
      }
    }
    /**
     * A value as large as an object holds, in a CREATE; where `update` says, also in an UPDATE
     * from an object that holds it with its end changed (so that comparing the two reads all of
     * them, and the spec counts as changed), to both webhooks.
     */
    function* filling(cls: HostileClass, path: Path, variant: string, label: string, value: () => Doc, changedEnd: (value: Doc) => Doc, update: boolean): Generator<WorstCase> {
      yield* both(cls, path, variant, label, true, () => withValue(path, value()), true);
      if (!update) return;
      let body: string | undefined;
      const build = (): string => {
        const now = value();
        return (body ??= reviewBody(kind, withValue(path, now), withValue(path, changedEnd(now))));
      };
      const field = showPath(path);
      for (const type of ['mutate', 'validate'] as const) {
        yield { class: cls, kind, type, path: webhookPath(type, kind), operation: 'UPDATE', field, variant, label: `${field} = ${label}, from one whose end differs`, past: true, fills: true, body: build };
      }
    }

    if (classes.has('huge-string')) {
      for (const { path, maxLength } of strings) {
        for (const char of HUGE_CHARS) {
          if (maxLength !== undefined) yield* both('huge-string', path, char, `${maxLength} × ${JSON.stringify(char)}`, false, () => withValue(path, hugeString(maxLength, char)));
          const length = fillLength(char);
          if (maxLength === undefined || length > maxLength) {
            const changedEnd = (value: Doc): Doc => new RawJson(`${(value as RawJson).text.slice(0, -1)}x"`);
            yield* filling('huge-string', path, char, `${length} × ${JSON.stringify(char)}`, () => hugeString(length, char), changedEnd, UPDATED.has(showPath(path)));
          }
        }
      }
      // Past what is read: an object a little larger than the largest (refused by the scan), and
      // a body larger than the body limit (refused from its head, unread).
      const name: Path = ['metadata', 'annotations', 'pad'];
      const over = (bytes: number): (() => Doc) => () => withValue(name, hugeString(bytes, 'a'));
      yield* both('huge-string', name, 'a', `${MAX_OBJECT_BYTES} × "a": an object past the largest`, true, over(MAX_OBJECT_BYTES), true);
      yield* both('huge-string', name, 'a', `${BODY_LIMIT_BYTES} × "a": a body past the limit`, true, over(BODY_LIMIT_BYTES), true);
    }
    if (classes.has('parse-errors')) {
      // Every free-text string (the ones long enough to hold a document), at its limit; where none
      // is, as long as the largest object holds of the characters JSON writes in two bytes.
      const unbounded = fillLength('"');
      for (const { path, maxLength } of strings.filter((s) => (s.maxLength ?? unbounded) >= 1024)) {
        const length = maxLength ?? unbounded;
        const documents: [string, string][] = [
          ...HOSTILE_YAML.map((unit): [string, string] => [unit, hostileYaml(unit, length)]),
          ['distinct keys', manyKeysYaml(length)],
          ['entries without a model_name', `model_list: [${'1,'.repeat(Math.floor((length - 15) / 2))}1]`],
          ['merge keys', mergesYaml(length)],
        ];
        const past = maxLength === undefined;
        for (const [variant, text] of documents) {
          const label = `${length} of ${JSON.stringify(variant)}`;
          yield* both('parse-errors', path, variant, label, past, () => withValue(path, text), past);
          yield {
            class: 'parse-errors',
            kind,
            type: 'validate',
            path: webhookPath('validate', kind),
            operation: 'UPDATE',
            field: showPath(path),
            variant,
            label: `oldObject ${showPath(path)} = ${label}`,
            past,
            fills: past,
            body: () => reviewBody(kind, structuredClone(baseFor(path)) as unknown as Doc, withValue(path, text)),
          };
        }
      }
    }
    if (classes.has('huge-list')) {
      const lists = [...shape.lists, ...OPAQUE_LISTS.map((path) => ({ path, maxItems: undefined }))];
      for (const { path, maxItems } of lists) {
        for (const element of LIST_ELEMENTS) {
          for (const length of new Set([maxItems ?? PAST_LIST, PAST_LIST])) {
            const past = maxItems === undefined || length > maxItems;
            yield* both('huge-list', path, element, `${length} × ${element}`, past, () => withValue(path, hugeList(length, element)));
          }
          const items = fillItems(element);
          const changedEnd = (value: Doc): Doc => [...(value as Doc[]).slice(0, -1), hugeList(1, element === 'null' ? 'number' : element)[0] ?? null];
          yield* filling('huge-list', path, element, `${items} × ${element}`, () => hugeList(items, element), changedEnd, maxItems === undefined);
        }
        if (maxItems === undefined) {
          // As many values as an object holds, and as many bytes: each a string of its own.
          const changedEnd = (value: Doc): Doc => [...(value as Doc[]).slice(0, -1), 'changed'];
          yield* filling('huge-list', path, 'long-names', `${FILL_VALUES} names of 40 bytes`, () => longNames(), changedEnd, true);
        }
      }
      // A list the schema bounds, as long as an object holds in the oldObject of an UPDATE: the
      // old spec is read as the review carries it (which of the names are new).
      for (const { path, maxItems } of shape.lists.filter((l) => l.maxItems !== undefined)) {
        const items = fillItems('distinct-names');
        const label = `oldObject ${showPath(path)} = ${items} × distinct-names`;
        const body = (): string => reviewBody(kind, structuredClone(baseFor(path)) as unknown as Doc, withValue(path, hugeList(items, 'distinct-names')));
        for (const type of ['mutate', 'validate'] as const) {
          yield { class: 'huge-list', kind, type, path: webhookPath(type, kind), operation: 'UPDATE', field: showPath(path), variant: 'distinct-names in the oldObject', label, past: (maxItems ?? 0) < items, fills: true, body };
        }
      }
      // Where a string belongs (a type error, which quotes the value it found): a list as large
      // as an object holds, of each element.
      for (const { path } of strings) {
        for (const element of ['env-entry', 'nested'] as const) {
          const items = fillItems(element);
          yield* both('huge-list', path, `${element} for a string`, `${items} × ${element}`, true, () => withValue(path, hugeList(items, element)), true);
        }
      }
    }
    if (classes.has('deep-nesting')) {
      for (const path of [...shape.objects, ...shape.lists.map((l) => l.path), ...OPAQUE_LISTS]) {
        // The object is level 3 of the review; as deep as the body's depth limit allows, and past it.
        const allowed = MAX_JSON_DEPTH - 3 - path.length - 2;
        for (const depth of [allowed, Math.max(...LIMITS.depths)]) {
          for (const shapeName of NEST_SHAPES) {
            yield* both('deep-nesting', path, shapeName, `${shapeName} nested ${depth} deep`, depth > allowed, () => withValue(path, deepJson(depth, shapeName)));
          }
        }
      }
    }
    if (classes.has('many-keys')) {
      for (const path of OPAQUE_MAPS) {
        const many = (value: (i: number) => string, keys = MANY_KEYS): RawJson =>
          new RawJson(`{${Array.from({ length: keys }, (_, i) => `"k${i}":${value(i)}`).join(',')}}`);
        yield* both('many-keys', path, 'keys', `${MANY_KEYS} keys`, true, () => withValue(path, many((i) => `"${i}"`)));
        yield* both('many-keys', path, 'keys', `${MAX_JSON_MEMBERS} keys`, true, () => withValue(path, many((i) => `"${i}"`, MAX_JSON_MEMBERS)));
        const hugeKey = new RawJson(`{${hugeString(HUGE_KEY, 'k').text}:"x"}`);
        yield* both('many-keys', path, 'huge key', `a key of ${HUGE_KEY} characters`, true, () => withValue(path, hugeKey));
      }
    }
  }
}
