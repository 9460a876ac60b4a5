// fast-check arbitraries for fuzzing the admission webhooks: AdmissionReviews for both webhook
// types and all three kinds, built from the KAOS samples and the invalid fixtures and then
// broken the way an attacker (or a buggy client) would break them.
//
// A generated case is JSON *text*, not a value: duplicate keys, numbers JavaScript cannot hold
// (1e400) and nesting 20,000 levels deep cannot be made with JSON.stringify (which keeps the
// last of two keys and recurses). Values are therefore built as `Doc`s — plain JSON plus two
// leaves that carry their own text, RawJson and DuplicateKeys — and rendered by `render`.
// Deep nesting is always a RawJson made by string repetition, so nothing here recurses deeper
// than the samples themselves.
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { webhookPath } from '../../src/admission/webhook-paths.ts';
import type { WebhookType } from '../../src/admission/types.ts';
import { DEFAULTED_ANNOTATION, GROUP, isKaosKind, KIND_NAMES, KINDS, REFERENCE_POLICY_KEY, VERSION, type KaosKind } from '../../src/api/kinds.ts';
import { MAX_OBJECT_BYTES, MAX_OBJECT_VALUES } from '../../src/admission/json-depth.ts';
import type { KubeObject } from '../../src/api/lookup.ts';

// ---------------------------------------------------------------------------------------------
// JSON text

/** A leaf whose JSON text is given as is. */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** An object whose keys may repeat; JSON.parse (and so the server) keeps the last of each. */
export class DuplicateKeys {
  readonly entries: readonly (readonly [string, Doc])[];
  constructor(entries: readonly (readonly [string, Doc])[]) {
    this.entries = entries;
  }
}

export type Doc = null | boolean | number | string | RawJson | DuplicateKeys | Doc[] | { [key: string]: Doc };
type Container = Doc[] | { [key: string]: Doc };
type Path = readonly (string | number)[];

/**
 * Renders a Doc as JSON text. Recurses only as deep as the plain part of the Doc. Its pieces go
 * into one list joined once: a join per level would copy a megabytes-long value once per level
 * it is nested in, which made building the worst cases cost more than judging them.
 */
export function render(value: Doc): string {
  const out: string[] = [];
  renderInto(value, out);
  return out.join('');
}

function renderInto(value: Doc, out: string[]): void {
  if (value instanceof RawJson) out.push(value.text);
  else if (value instanceof DuplicateKeys || (value !== null && typeof value === 'object' && !Array.isArray(value))) {
    out.push('{');
    const entries = value instanceof DuplicateKeys ? value.entries : Object.entries(value);
    for (const [i, [k, v]] of entries.entries()) {
      out.push(i === 0 ? `${JSON.stringify(k)}:` : `,${JSON.stringify(k)}:`);
      renderInto(v, out);
    }
    out.push('}');
  } else if (Array.isArray(value)) {
    out.push('[');
    for (const [i, v] of value.entries()) {
      if (i > 0) out.push(',');
      renderInto(v, out);
    }
    out.push(']');
  } else out.push(JSON.stringify(value));
}

const isContainer = (value: Doc | undefined): value is Container =>
  value !== null && typeof value === 'object' && !(value instanceof RawJson) && !(value instanceof DuplicateKeys);

/** Every path below the root of a plain JSON value, breadth first, without recursion. */
function pathsOf(root: Doc, filter: (value: Doc) => boolean = () => true): Path[] {
  const out: Path[] = [];
  const queue: [Path, Doc][] = [[[], root]];
  for (let i = 0; i < queue.length; i++) {
    const [path, value] = queue[i] as [Path, Doc];
    if (!isContainer(value)) continue;
    const entries: [string | number, Doc][] = Array.isArray(value) ? value.map((v, j) => [j, v]) : Object.entries(value);
    for (const [key, child] of entries) {
      const childPath = [...path, key];
      if (filter(child)) out.push(childPath);
      queue.push([childPath, child]);
    }
  }
  return out;
}

/** Sets `value` at `path` (creating missing objects on the way); the root when path is []. */
function setAt(root: Doc, path: Path, value: Doc): Doc {
  if (path.length === 0) return value;
  let node: Doc = root;
  for (const [i, key] of path.entries()) {
    if (!isContainer(node)) return root; // a leaf made by an earlier mutation: leave it
    const last = i === path.length - 1;
    const record = node as Record<string | number, Doc>;
    if (last) record[key] = value;
    else {
      if (!isContainer(record[key])) record[key] = {};
      node = record[key] as Doc;
    }
  }
  return root;
}

function getAt(root: Doc, path: Path): Doc | undefined {
  let node: Doc | undefined = root;
  for (const key of path) {
    if (!isContainer(node)) return undefined;
    node = (node as Record<string | number, Doc>)[key];
  }
  return node;
}

function deleteAt(root: Doc, path: Path): Doc {
  const parent = getAt(root, path.slice(0, -1));
  const key = path.at(-1);
  if (key === undefined || !isContainer(parent)) return root;
  if (Array.isArray(parent) && typeof key === 'number') parent.splice(key, 1);
  else delete (parent as Record<string, Doc>)[String(key)];
  return root;
}

/** `arb` with the given probability, otherwise undefined. */
const sometimes = <T>(arb: fc.Arbitrary<T>, probability: number): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: Math.round((1 - probability) * 100), arbitrary: fc.constant(undefined) }, { weight: Math.round(probability * 100), arbitrary: arb });

const pick = <T>(list: readonly T[], index: number): T | undefined => (list.length === 0 ? undefined : list[index % list.length]);
const showPath = (path: Path): string => (path.length === 0 ? '(root)' : path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('').slice(1));

// ---------------------------------------------------------------------------------------------
// Seeds: the samples and the invalid fixtures

export interface Seed {
  source: string;
  kind: KaosKind;
  object: KubeObject;
}

const FIXTURES = new URL('../fixtures/', import.meta.url);

function yamlDocs(url: URL): unknown[] {
  return parseAllDocuments(readFileSync(url, 'utf8')).flatMap((d) => (Array.isArray(d) ? [] : [d.toJS() as unknown]));
}

/** Every object of every sample file, Namespaces included, as written. */
export function sampleObjects(): KubeObject[] {
  const dir = new URL('samples/', FIXTURES);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) => yamlDocs(new URL(f, dir)))
    .filter((d): d is KubeObject => d !== null && typeof d === 'object');
}

function seeds(): Seed[] {
  const out: Seed[] = [];
  for (const object of sampleObjects()) {
    if (isKaosKind(object.kind)) out.push({ source: `sample ${object.kind} ${object.metadata?.name ?? ''}`, kind: object.kind, object });
  }
  for (const doc of yamlDocs(new URL('invalid-objects.yaml', FIXTURES))) {
    const { case: name, object } = (doc ?? {}) as { case?: string; object?: KubeObject };
    if (object !== undefined && isKaosKind(object.kind)) out.push({ source: `invalid: ${name ?? '?'}`, kind: object.kind, object });
  }
  return out;
}

export const SEEDS: readonly Seed[] = seeds();

// ---------------------------------------------------------------------------------------------
// Hostile values

/**
 * How far the bounded sizes go: big enough to hurt unbounded code; beside them, `FILL`: as large
 * as the object may be (fillLength, fillItems: in bytes, and in values for a list), the largest
 * the webhooks read. 1 MiB of most characters is past that, as are 20,000 nested items: refused
 * unread.
 */
export const LIMITS = {
  depths: [64, 1_000, 5_000, 10_000, 20_000],
  stringLengths: [1_000, 64 * 1024, 256 * 1024, 1024 * 1024],
  listLengths: [100, 1_000, 5_000, 20_000],
} as const;

/** A size that makes a value as large as an object may hold: see fillLength and fillItems. */
export const FILL = 'fill' as const;

/**
 * Bytes of JSON a hostile value may take and leave its object within MAX_OBJECT_BYTES, the
 * largest the webhooks read: the rest is room for the sample object it goes into.
 */
export const FILL_BYTES = MAX_OBJECT_BYTES - 16 * 1024;

/** UTF-16 units of `char`, repeated, whose JSON string (escapes included) is at most `bytes`. */
export function fillLength(char: string, bytes = FILL_BYTES): number {
  return Math.floor(bytes / Buffer.byteLength(JSON.stringify(char).slice(1, -1))) * char.length;
}

/**
 * Values (as the depth scan counts them: each object and array, each member or item after the
 * first) a hostile list may hold and leave its object within MAX_OBJECT_VALUES: the rest is room
 * for the sample object it goes into.
 */
export const FILL_VALUES = MAX_OBJECT_VALUES - 1_000;

/** The values the scan counts in a JSON text: its objects and arrays, and its commas, outside strings. */
export function countedValues(text: string): number {
  let n = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[' || c === ',') n++;
  }
  return n;
}

const filled = new Map<string, number>();
/**
 * A list as large as an object may hold in both ways at once: FILL_VALUES strings of about 40
 * bytes each, FILL_BYTES in all. Every value parsed is a string of its own.
 */
export function longNames(): string[] {
  const width = Math.floor(FILL_BYTES / FILL_VALUES) - 3;
  return Array.from({ length: FILL_VALUES }, (_, i) => `${i}-`.padEnd(width, 'x'));
}

/** How many items of `element` make a JSON list of at most `bytes` and at most `values` (countedValues). */
export function fillItems(element: ListElement, bytes = FILL_BYTES, values = FILL_VALUES): number {
  const key = `${element} ${bytes} ${values}`;
  let items = filled.get(key);
  if (items === undefined) {
    let size = 2;
    let counted = 1;
    const item = (i: number): string => render(LIST_ITEMS[element](i));
    for (items = 0; size + item(items).length + 1 <= bytes && counted + countedValues(item(items)) + 1 <= values; items++) {
      size += item(items).length + 1;
      counted += countedValues(item(items)) + 1;
    }
    filled.set(key, items);
  }
  return items;
}

const LONE_SURROGATES = ['\ud800', '\udbff', '\udc00', '\udfff'];
const NASTY_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\u202eevil',
  'e\u0301',
  '🙂🙂',
  '\ufeff',
  'ｎａｍｅ',
  '\u2028\u2029',
  'İı',
  '\r\n\t',
  '"\\',
  '%00',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  'toString',
  ...LONE_SURROGATES,
  `x${'\ud83d'}y`,
];

/** Strings of any code points, with lone surrogates (which fc's 'binary' unit leaves out) spliced in. */
export const unicodeString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...NASTY_STRINGS),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc
    .tuple(fc.string({ unit: 'binary', maxLength: 20 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ unit: 'binary', maxLength: 20 }))
    .map(([a, surrogate, b]) => `${a}${String.fromCharCode(surrogate)}${b}`),
);

const SHAPES: readonly Doc[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2 ** 53 + 1,
  '',
  'x',
  [],
  [null],
  [1],
  [[[]]],
  {},
  { '': null },
  new RawJson('{"__proto__":{"polluted":1}}'),
  new RawJson('1e400'),
  new RawJson('-1e400'),
  new RawJson('-0'),
  new RawJson('1E-400'),
  new RawJson('123456789012345678901234567890'),
];

/** A small value of the wrong type, or of the right type with a nasty content. */
export const smallHostile: fc.Arbitrary<Doc> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SHAPES) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Doc> },
  { weight: 2, arbitrary: unicodeString },
);

export const NEST_SHAPES = ['object', 'array', 'mixed', 'env'] as const;
export type NestShape = (typeof NEST_SHAPES)[number];

/** JSON nested `depth` levels deep, built by repetition (never recursion). */
export function deepJson(depth: number, shape: NestShape): RawJson {
  const open: Record<NestShape, readonly [string, string]> = {
    object: ['{"a":', '}'],
    array: ['[', ']'],
    mixed: ['{"a":[', ']}'],
    env: ['[{"name":"X","value":', '}]'],
  };
  const [o, c] = open[shape];
  return new RawJson(`${o.repeat(depth)}1${c.repeat(depth)}`);
}

/** The characters a huge string is made of: plain, 2-byte, astral, NUL, one JSON escapes, a lone surrogate. */
export const HUGE_CHARS = ['a', 'é', '🙂', '\u0000', '"', '\ud800'];

/** A JSON string of about `length` UTF-16 units, rendered by repetition (JSON.stringify of megabytes of escapes is slow). */
export function hugeString(length: number, char: string): RawJson {
  return new RawJson(`"${JSON.stringify(char).slice(1, -1).repeat(Math.ceil(length / char.length))}"`);
}

export const LIST_ELEMENTS = ['number', 'invalid-name', 'null', 'distinct-names', 'env-entry', 'nested'] as const;
export type ListElement = (typeof LIST_ELEMENTS)[number];

const LIST_ITEMS: Record<ListElement, (i: number) => Doc> = {
  number: (i) => i,
  'invalid-name': (i) => `Not_A_Name_${i}`,
  null: () => null,
  'distinct-names': (i) => `missing-${i}`,
  'env-entry': (i) => ({ name: `VAR_${i}`, value: i }),
  nested: (i) => [[{ x: i }]],
};

export function hugeList(length: number, element: ListElement): Doc[] {
  return Array.from({ length }, (_, i) => LIST_ITEMS[element](i));
}

// ---------------------------------------------------------------------------------------------
// Mutations of an object

export interface Mutation {
  /** Stable name of the kind of damage, for counting (e.g. "deep-nesting"). */
  family: string;
  /** What exactly was done, for a human. */
  label: string;
  apply(object: Doc): Doc;
}

const mutation = (family: string, label: string, apply: (object: Doc) => Doc): Mutation => ({ family, label, apply });

/** A path into the object: any existing one (chosen by index once the object is known), or a named one. */
const pathChoice = (named: readonly Path[]): fc.Arbitrary<{ index: number; named: Path | undefined }> =>
  fc.record({ index: fc.nat({ max: 100_000 }), named: named.length === 0 ? fc.constant(undefined) : sometimes(fc.constantFrom(...named), 1 / 2) });

const resolvePath = (object: Doc, choice: { index: number; named: Path | undefined }): Path =>
  choice.named ?? pick(pathsOf(object), choice.index) ?? ['spec'];

const SPEC_PATHS: readonly Path[] = [
  ['spec'],
  ['spec', 'podSpec'],
  ['spec', 'podSpec', 'containers'],
  ['spec', 'container'],
  ['spec', 'container', 'resources'],
  ['spec', 'config'],
  ['spec', 'config', 'env'],
  ['spec', 'config', 'env', 0, 'value'],
  ['spec', 'mcpServers'],
  ['spec', 'agentNetwork', 'access'],
  ['spec', 'modelAPI'],
  ['spec', 'mode'],
  ['spec', 'proxyConfig'],
  ['spec', 'hostedConfig', 'env'],
  ['spec', 'type'],
  ['spec', 'config', 'tools'],
  ['metadata', 'annotations'],
  ['metadata', 'annotations', DEFAULTED_ANNOTATION],
  ['metadata', 'labels'],
  ['status'],
  ['extra'],
];

const METADATA_PATHS: readonly Path[] = [
  ['metadata'],
  ['metadata', 'name'],
  ['metadata', 'namespace'],
  ['metadata', 'labels'],
  ['metadata', 'labels', 'app'],
  ['metadata', 'annotations'],
  ['metadata', 'annotations', DEFAULTED_ANNOTATION],
  ['metadata', 'annotations', REFERENCE_POLICY_KEY],
  ['metadata', 'deletionTimestamp'],
  ['metadata', 'generation'],
  ['metadata', 'finalizers'],
  ['metadata', 'ownerReferences'],
  ['metadata', 'managedFields'],
  ['metadata', 'uid'],
];

const METADATA_SHAPES: readonly Doc[] = [null, [], [1], '', 'x', 'Not A Name!', false, true, 0, 1, -1, {}, { a: 1 }, [{}], { a: null }, { a: [] }];

const wrongType = fc
  .tuple(pathChoice([]), smallHostile)
  .map(([choice, value]) =>
    mutation('wrong-type', `a small hostile value at a random path`, (o) => {
      const path = resolvePath(o, choice);
      return setAt(o, path, value);
    }),
  );

const deleteField = pathChoice(SPEC_PATHS).map((choice) =>
  mutation('delete-field', 'a field removed', (o) => deleteAt(o, resolvePath(o, choice))),
);

const unknownKey = fc
  .tuple(pathChoice(SPEC_PATHS), unicodeString, smallHostile)
  .map(([choice, key, value]) =>
    mutation('unknown-key', 'an unknown key added', (o) => {
      const path = resolvePath(o, choice);
      const node = getAt(o, path);
      return isContainer(node) && !Array.isArray(node) ? setAt(o, [...path, key], value) : setAt(o, path, { [key]: value });
    }),
  );

const metadataShape = fc
  .tuple(fc.constantFrom(...METADATA_PATHS), fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...METADATA_SHAPES) }, { weight: 1, arbitrary: smallHostile }))
  .map(([path, value]) => mutation('metadata-shape', `${showPath(path)}: ${render(value).slice(0, 40)}`, (o) => setAt(o, path, value)));

const objectIdentity = fc
  .tuple(fc.constantFrom<Path>(['apiVersion'], ['kind']), fc.oneof(fc.constantFrom<Doc>('v1', 'kaos.tools/v1', 'Pod', 'agent', 'ModelAPI', 'MCPServer', 'Agent'), smallHostile))
  .map(([path, value]) => mutation('object-identity', `${showPath(path)}: ${render(value).slice(0, 40)}`, (o) => setAt(o, path, value)));

const deepNesting = fc
  .tuple(pathChoice(SPEC_PATHS), fc.constantFrom(...LIMITS.depths), fc.constantFrom(...NEST_SHAPES))
  .map(([choice, depth, shape]) =>
    mutation('deep-nesting', `${shape} nested ${depth} deep`, (o) => setAt(o, resolvePath(o, choice), deepJson(depth, shape))),
  );

const bigString = fc
  .tuple(pathChoice(SPEC_PATHS.concat(METADATA_PATHS.slice(1, 3))), fc.constantFrom(...LIMITS.stringLengths, FILL), fc.constantFrom(...HUGE_CHARS))
  .map(([choice, size, char]) => {
    const length = size === FILL ? fillLength(char) : size;
    return mutation('huge-string', `${length} × ${JSON.stringify(char)}`, (o) => setAt(o, resolvePath(o, choice), hugeString(length, char)));
  });

const bigList = fc
  .tuple(
    pathChoice(SPEC_PATHS),
    fc.constantFrom(...LIMITS.listLengths, FILL),
    fc.constantFrom(...LIST_ELEMENTS),
  )
  .map(([choice, size, element]) => {
    const length = size === FILL ? fillItems(element) : size;
    return mutation('huge-list', `${length} × ${element}`, (o) => setAt(o, resolvePath(o, choice), hugeList(length, element)));
  });

const unicode = fc
  .tuple(pathChoice(SPEC_PATHS.concat(METADATA_PATHS.slice(1, 3))), unicodeString, fc.boolean())
  .map(([choice, text, asKey]) =>
    mutation('unicode', `${asKey ? 'key' : 'value'} ${JSON.stringify(text).slice(0, 40)}`, (o) => {
      const path = resolvePath(o, choice);
      if (!asKey) return setAt(o, path, text);
      const node = getAt(o, path);
      return isContainer(node) && !Array.isArray(node) ? setAt(o, [...path, text], 'x') : setAt(o, path, { [text]: 'x' });
    }),
  );

/** Re-renders one object node with a key given twice: once as it was, once hostile. */
const duplicateKeys = fc
  .tuple(fc.nat({ max: 100_000 }), fc.nat({ max: 100 }), smallHostile, fc.boolean())
  .map(([nodeIndex, keyIndex, value, hostileLast]) =>
    mutation('duplicate-keys', `a key twice, the hostile value ${hostileLast ? 'last' : 'first'}`, (o) => {
      const objects = [[] as Path, ...pathsOf(o, (v) => isContainer(v) && !Array.isArray(v))];
      const path = pick(objects, nodeIndex) ?? [];
      const node = getAt(o, path) as Record<string, Doc>;
      const entries = Object.entries(node);
      const [key, original] = pick(entries, keyIndex) ?? ['metadata', null];
      const twice: [string, Doc][] = hostileLast ? [[key, original], [key, value]] : [[key, value], [key, original]];
      return setAt(o, path, new DuplicateKeys([...entries.filter(([k]) => k !== key), ...twice]));
    }),
  );

export const objectMutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(mutation('none', 'unchanged', (o) => o)) },
  { weight: 6, arbitrary: wrongType },
  { weight: 2, arbitrary: deleteField },
  { weight: 2, arbitrary: unknownKey },
  { weight: 5, arbitrary: metadataShape },
  { weight: 2, arbitrary: objectIdentity },
  { weight: 3, arbitrary: deepNesting },
  { weight: 2, arbitrary: bigString },
  { weight: 2, arbitrary: bigList },
  { weight: 3, arbitrary: unicode },
  { weight: 3, arbitrary: duplicateKeys },
);

// ---------------------------------------------------------------------------------------------
// Mutations of the AdmissionReview around the object

const ENVELOPE_VALUES: Record<string, readonly Doc[]> = {
  apiVersion: ['admission.k8s.io/v1beta1', 'v1', ''],
  kind: ['AdmissionResponse', 'admissionreview', ''],
  request: [null, [], 'x', {}],
  'request.uid': ['', 'x', 'a'.repeat(10_000), '\ud800'],
  'request.kind': ['Agent', { group: GROUP, version: VERSION, kind: 'Pod' }, { group: 'apps', version: 'v1', kind: 'Deployment' }, { kind: 'Agent' }],
  'request.kind.kind': ['Agent', 'ModelAPI', 'MCPServer', 'MemoryStore', 'agent'],
  'request.resource': [{ group: GROUP, version: VERSION, resource: 'pods' }, 'agents', { resource: 'agents' }],
  'request.resource.resource': ['agents', 'modelapis', 'mcpservers', 'agents/status'],
  'request.subResource': ['status', 'scale', ''],
  'request.operation': ['create', 'PATCH', 'CONNECT', 'DELETE', 'UPDATE', ''],
  'request.name': ['other', ''],
  'request.namespace': ['other', '', 'kube-system'],
  'request.userInfo': [{ username: 1, groups: 'x' }],
  'request.object': [null, [], 'x', 1],
  'request.oldObject': [null, [], 'x', {}],
  'request.dryRun': ['true', 1],
  'request.options': [{ kind: 'CreateOptions', dryRun: ['All'] }],
  'request.requestKind': [{ group: 'apps', version: 'v1', kind: 'Deployment' }],
};

const envelopeSet = fc
  .constantFrom(...Object.keys(ENVELOPE_VALUES))
  .chain((field) => fc.tuple(fc.constant(field), fc.oneof(fc.constantFrom(...(ENVELOPE_VALUES[field] ?? [null])), smallHostile)))
  .map(([field, value]) =>
    mutation('envelope', `${field}: ${render(value).slice(0, 40)}`, (review) => setAt(review, field.split('.'), value)),
  );

const envelopeDelete = fc
  .constantFrom('apiVersion', 'kind', 'request', 'request.uid', 'request.kind', 'request.resource', 'request.operation', 'request.object', 'request.oldObject')
  .map((field) => mutation('envelope', `${field} missing`, (review) => deleteAt(review, field.split('.'))));

const envelopeDuplicate = fc
  .tuple(fc.constantFrom('uid', 'operation', 'object', 'kind', 'resource', 'oldObject'), smallHostile, fc.boolean())
  .map(([key, value, hostileLast]) =>
    mutation('envelope', `request.${key} twice, the hostile value ${hostileLast ? 'last' : 'first'}`, (review) => {
      const request = getAt(review, ['request']);
      if (!isContainer(request) || Array.isArray(request)) return review;
      const entries = Object.entries(request);
      const original = request[key] ?? null;
      const twice: [string, Doc][] = hostileLast ? [[key, original], [key, value]] : [[key, value], [key, original]];
      return setAt(review, ['request'], new DuplicateKeys([...entries.filter(([k]) => k !== key), ...twice]));
    }),
  );

const envelopeDeep = fc
  .tuple(fc.constantFrom('request.userInfo', 'request.options', 'request.kind', 'request.extra', 'extra'), fc.constantFrom(...LIMITS.depths))
  .map(([field, depth]) =>
    mutation('envelope', `${field} nested ${depth} deep`, (review) => setAt(review, field.split('.'), deepJson(depth, 'mixed'))),
  );

export const envelopeMutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 5, arbitrary: envelopeSet },
  { weight: 2, arbitrary: envelopeDelete },
  { weight: 2, arbitrary: envelopeDuplicate },
  { weight: 1, arbitrary: envelopeDeep },
);

// ---------------------------------------------------------------------------------------------
// Whole cases

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface FuzzCase {
  type: WebhookType;
  /** The kind whose endpoint receives the request (usually the object's). */
  kind: KaosKind;
  path: string;
  operation: Operation;
  /** The kinds of damage, e.g. "deep-nesting" or "metadata-shape+envelope". */
  family: string;
  label: string;
  /** The request body as sent. */
  body: string;
  [fc.toStringMethod](): string;
}

const clone = (object: KubeObject): Doc => structuredClone(object) as unknown as Doc;

function gvk(kind: KaosKind) {
  return { group: GROUP, version: VERSION, kind };
}

function gvr(kind: KaosKind) {
  return { group: GROUP, version: VERSION, resource: KIND_NAMES[kind].plural };
}

export interface CaseChoices {
  seed: Seed;
  type: WebhookType;
  otherKind: KaosKind | undefined;
  operation: Operation;
  uid: string;
  objectMutation: Mutation;
  oldMutation: Mutation | undefined;
  envelopeMutation: Mutation | undefined;
}

/** Renders the AdmissionReview the choices describe. */
export function buildCase(c: CaseChoices): FuzzCase {
  const kind = c.otherKind ?? c.seed.kind;
  const mutated = c.objectMutation.apply(clone(c.seed.object));
  const old = c.operation === 'UPDATE' ? (c.oldMutation?.apply(clone(c.seed.object)) ?? clone(c.seed.object)) : undefined;
  const metadata = c.seed.object.metadata ?? {};
  const request: { [key: string]: Doc } = {
    uid: c.uid,
    kind: gvk(c.seed.kind),
    resource: gvr(c.seed.kind),
    requestKind: gvk(c.seed.kind),
    requestResource: gvr(c.seed.kind),
    name: metadata.name ?? '',
    namespace: metadata.namespace ?? '',
    operation: c.operation,
    userInfo: { username: 'fuzz', groups: ['system:authenticated'] },
    // On DELETE the API server sends the object being deleted as oldObject, and no object.
    object: c.operation === 'DELETE' ? null : mutated,
    oldObject: c.operation === 'DELETE' ? mutated : (old ?? null),
    dryRun: false,
  };
  let review: Doc = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request };
  if (c.envelopeMutation !== undefined) review = c.envelopeMutation.apply(review);
  const families = [c.objectMutation.family, ...(c.oldMutation === undefined || c.operation !== 'UPDATE' ? [] : [`old:${c.oldMutation.family}`]), ...(c.envelopeMutation === undefined ? [] : [c.envelopeMutation.family])];
  const labels = [
    `${c.objectMutation.family}: ${c.objectMutation.label}`,
    ...(c.oldMutation === undefined || c.operation !== 'UPDATE' ? [] : [`oldObject ${c.oldMutation.family}: ${c.oldMutation.label}`]),
    ...(c.envelopeMutation === undefined ? [] : [`envelope: ${c.envelopeMutation.label}`]),
  ];
  const body = render(review);
  const type = c.type;
  const path = webhookPath(type, kind);
  const label = `${c.seed.source}; ${labels.join('; ')}`;
  return {
    type,
    kind,
    path,
    operation: c.operation,
    family: families.join('+'),
    label,
    body,
    [fc.toStringMethod]: () =>
      `${c.operation} to ${path} (${label}), ${body.length.toLocaleString('en')} B: ${body.length <= 600 ? body : `${body.slice(0, 300)} … ${body.slice(-200)}`}`,
  };
}

export const caseChoices: fc.Arbitrary<CaseChoices> = fc.record({
  seed: fc.constantFrom(...SEEDS),
  type: fc.constantFrom<WebhookType>('mutate', 'validate'),
  otherKind: sometimes(fc.constantFrom(...KINDS), 1 / 12),
  operation: fc.oneof(
    { weight: 5, arbitrary: fc.constant<Operation>('CREATE') },
    { weight: 3, arbitrary: fc.constant<Operation>('UPDATE') },
    { weight: 1, arbitrary: fc.constant<Operation>('DELETE') },
  ),
  uid: fc.uuid(),
  objectMutation,
  oldMutation: sometimes(objectMutation, 1 / 3),
  // Most envelope damage is refused before any handler runs: keep it to one case in five.
  envelopeMutation: sometimes(envelopeMutation, 1 / 5),
});

/** A hostile (or, now and then, harmless) AdmissionReview for one of the six endpoints. */
export const fuzzCase: fc.Arbitrary<FuzzCase> = caseChoices.map(buildCase);

// ---------------------------------------------------------------------------------------------
// The largest cases

/**
 * The generator's largest input of each class, where it costs most: a string of every character
 * in the inline LiteLLM config as long as the object may hold (and of `"` in the oldObject of an
 * UPDATE, which the stranding warning reads), and bodies past the limits (1 MiB of `\u0000`: a
 * 6 MiB body; 1 MiB of `"`: an object over the largest); podSpec lists the podSpec merge keys by
 * name, a spec of nested lists and a list of 40-byte names, as long as the object may hold (its
 * values, or its bytes and values at once); an UPDATE of the largest
 * object to another as large, the largest review of a write the API server can store; and
 * 20,000 levels of nesting of every shape. The fuzz runs them before its random cases
 * (fast-check's `examples`), so a seeded run of any length includes them.
 */
export function largestCases(): FuzzCase[] {
  const seed = (kind: KaosKind, source: RegExp): Seed => {
    const found = SEEDS.find((s) => s.kind === kind && source.test(s.source));
    if (found === undefined) throw new Error(`no ${kind} seed matches ${source}`);
    return found;
  };
  const proxy = seed('ModelAPI', /proxy/);
  const agent = seed('Agent', /^sample/);
  const past = Math.max(...LIMITS.stringLengths);
  const depth = Math.max(...LIMITS.depths);
  const configYaml: Path = ['spec', 'proxyConfig', 'configYaml', 'fromString'];
  const choices = (s: Seed, type: WebhookType, objectMutation: Mutation, operation: Operation = 'CREATE', oldMutation?: Mutation): CaseChoices => ({
    seed: s,
    type,
    otherKind: undefined,
    operation,
    uid: '00000000-0000-4000-8000-00000000ffff',
    objectMutation,
    oldMutation,
    envelopeMutation: undefined,
  });
  const huge = (char: string, n = fillLength(char)): Mutation =>
    mutation('huge-string', `${n} × ${JSON.stringify(char)}`, (o) => setAt(o, configYaml, hugeString(n, char)));
  const list = (path: Path, element: ListElement, last?: Doc): Mutation => {
    const items = fillItems(element);
    return mutation('huge-list', `${items} × ${element}${last === undefined ? '' : ', the last one different'}`, (o) => {
      const value = hugeList(items, element);
      if (last !== undefined) value[items - 1] = last;
      return setAt(o, path, value);
    });
  };
  const containers: Path = ['spec', 'podSpec', 'containers'];
  const out: CaseChoices[] = [];
  for (const type of ['mutate', 'validate'] as const) {
    for (const char of HUGE_CHARS) out.push(choices(proxy, type, huge(char)));
    out.push(choices(proxy, type, huge('\u0000', past)), choices(proxy, type, huge('"', past)));
    for (const path of [containers, ['spec', 'podSpec', 'volumes']] as const) out.push(choices(agent, type, list(path, 'env-entry')));
    out.push(choices(agent, type, list(['spec'], 'nested')));
    out.push(choices(agent, type, mutation('huge-list', `${FILL_VALUES} names of 40 bytes`, (o) => setAt(o, ['spec', 'podSpec', 'hostAliases'], longNames()))));
    out.push(choices(agent, type, list(containers, 'env-entry'), 'UPDATE', list(containers, 'env-entry', { name: 'VAR_LAST', value: 'changed' })));
    for (const shape of NEST_SHAPES) out.push(choices(agent, type, mutation('deep-nesting', `${shape} nested ${depth} deep`, (o) => setAt(o, ['spec'], deepJson(depth, shape)))));
  }
  out.push(choices(proxy, 'validate', mutation('none', 'unchanged', (o) => o), 'UPDATE', huge('"')));
  return out.map(buildCase);
}
