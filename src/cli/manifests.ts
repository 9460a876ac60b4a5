// Reading manifests: files, directories (every *.yaml, *.yml and *.json below, in name order) and
// `-` for stdin, each a stream of YAML documents (JSON is YAML). Knows nothing of KAOS: it yields
// every document with where it came from — file, document number, the line it starts on, and the
// template it was rendered from when a Helm `# Source:` comment says so — and unpacks `List`s.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isMap, isNode, isSeq, LineCounter, parseAllDocuments } from 'yaml';
import { errorMessage } from '../leaves/error-message.ts';

/** Where a manifest came from. */
export interface Origin {
  /** The path as given (`-` for stdin). */
  file: string;
  /** 1-based position of the document in its file's stream. */
  document: number;
  /** 1-based line of the document's first node (of the item's, in a List). */
  line: number;
  /** 0-based index in a `List`'s items. */
  item?: number;
  /** The template a Helm-rendered document came from (its `# Source:` comment). */
  source?: string;
}

export interface Manifest {
  origin: Origin;
  value: unknown;
  /** For an item of a `List`: the whole List document, so that it can be written back as one. */
  list?: Record<string, unknown>;
}

/** The input cannot be read or parsed: the tool cannot give a verdict (exit 2). */
export class InputError extends Error {
  override name = 'InputError';
}

/**
 * Aliases a document may expand. YAML aliases can make a small file expand exponentially (a
 * "billion laughs"); kubectl's decoder refuses such documents too.
 */
export const MAX_ALIAS_COUNT = 100;
const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/** Every path as the files it stands for, in order; `-` stays `-`. */
export async function expandPaths(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    if (path === '-') {
      files.push(path);
      continue;
    }
    const info = await stat(path).catch((err: unknown) => {
      throw new InputError(`cannot read ${path}: ${reason(err)}`);
    });
    if (info.isDirectory()) files.push(...(await manifestFilesIn(path)));
    else files.push(path);
  }
  return files;
}

async function manifestFilesIn(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((err: unknown) => {
    throw new InputError(`cannot read ${dir}: ${reason(err)}`);
  });
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await manifestFilesIn(path)));
    else if (entry.isFile() && MANIFEST_FILE.test(entry.name)) files.push(path);
  }
  return files;
}

export async function readManifestFile(file: string, readStdin: () => Promise<string>): Promise<Manifest[]> {
  let text: string;
  try {
    text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (err) {
    throw new InputError(`cannot read ${file === '-' ? 'stdin' : file}: ${reason(err)}`);
  }
  return parseManifests(file, text);
}

/** The documents of one stream, `List`s unpacked; empty documents are skipped. */
export function parseManifests(file: string, text: string): Manifest[] {
  const lineCounter = new LineCounter();
  let docs: ReturnType<typeof parseAllDocuments>;
  try {
    // YAML 1.1, as kubectl and Helm read manifests (sigs.k8s.io/yaml): `yes` is a boolean there.
    docs = parseAllDocuments(text, { lineCounter, version: '1.1', prettyErrors: true });
  } catch (err) {
    throw new InputError(`${file}: cannot parse: ${reason(err)}`);
  }
  const manifests: Manifest[] = [];
  docs.forEach((doc, i) => {
    const error = doc.errors[0];
    if (error !== undefined) {
      const pos = error.linePos?.[0];
      const at = pos === undefined ? '' : `:${pos.line}:${pos.col}`;
      throw new InputError(`${file}${at}: document ${i + 1} is not valid YAML: ${error.message.split('\n')[0]}`);
    }
    if (doc.contents === null) return;
    const line = lineCounter.linePos(doc.contents.range?.[0] ?? doc.range?.[0] ?? 0).line;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      throw new InputError(`${file}:${line}: document ${i + 1} cannot be read: ${reason(err)}`);
    }
    if (value === null || value === undefined) return;
    const origin: Origin = { file, document: i + 1, line };
    const source = helmSource(doc.commentBefore) ?? helmSource(doc.contents.commentBefore);
    if (source !== undefined) origin.source = source;
    const items = isMap(doc.contents) ? doc.contents.get('items') : undefined;
    const itemLines = isSeq(items) ? items.items.map((n) => (isNode(n) && n.range ? lineCounter.linePos(n.range[0]).line : line)) : [];
    manifests.push(...unpackList({ origin, value }, itemLines));
  });
  return manifests;
}

function helmSource(comment: string | null | undefined): string | undefined {
  return comment?.match(/^\s*Source:\s*(\S.*?)\s*$/m)?.[1];
}

/** A `List` (kind v1 List, or any `*List` with items, as kubectl reads them) as its items. */
function unpackList(manifest: Manifest, itemLines: readonly number[]): Manifest[] {
  const { value } = manifest;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [manifest];
  const { kind, items } = value as { kind?: unknown; items?: unknown };
  if (typeof kind !== 'string' || !kind.endsWith('List') || !Array.isArray(items)) return [manifest];
  const list = value as Record<string, unknown>;
  return items.map((item: unknown, i) => ({ origin: { ...manifest.origin, item: i, line: itemLines[i] ?? manifest.origin.line }, value: item, list }));
}

function reason(err: unknown): string {
  if (err instanceof RangeError) return 'nested too deeply';
  if (err !== null && typeof err === 'object' && 'code' in err && typeof err.code === 'string' && 'syscall' in err) {
    return err.code === 'ENOENT' ? 'no such file or directory' : err.code === 'EACCES' ? 'permission denied' : err.code;
  }
  return errorMessage(err);
}
