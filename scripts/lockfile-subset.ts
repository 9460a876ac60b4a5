// A package.json and package-lock.json for installing part of the project's dependencies, at the
// versions the project's lockfile resolved: what `npm ci` needs to install only the packages some
// of the dependencies reach. The image installs two such parts (Dockerfile): what the bundle's
// build needs (scripts/image/build-manifest.ts) and what the bundle loads at run time
// (scripts/build.ts). Each derived pair changes only when what it installs changes, so an edit
// to a script in package.json or a dev tool's version reruns neither install.
//
// The subset is cut from the lockfile npm wrote, never re-resolved: each package keeps its path,
// version, `resolved` and `integrity`; only the flags (`dev`, `optional`, `devOptional`, `peer`)
// are worked out again for the smaller tree, as npm works them out, since `npm ci` trusts them
// (`--omit=dev` leaves out what is flagged `dev`; a failed `optional` one is skipped).

/** A package entry of a package-lock.json (lockfileVersion 2 or 3). */
export interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  peer?: boolean;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [field: string]: unknown;
}

export interface Lockfile {
  name?: string;
  version?: string;
  lockfileVersion: number;
  requires?: boolean;
  packages: Record<string, LockEntry>;
}

/** The fields of a package.json that this module reads or writes. */
export interface Manifest {
  name: string;
  private?: boolean;
  type?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  [field: string]: unknown;
}

/**
 * Fields of the project's package.json that change nothing `npm ci` installs in the image
 * (`allowScripts`: both of its installs run with --ignore-scripts). Any other field is either
 * carried (name, private, type) or read (dependencies, devDependencies); a field in neither list
 * is refused, so that one that changes an install (overrides, optionalDependencies, workspaces…)
 * cannot be dropped unseen.
 */
export const NOT_INSTALLED_FIELDS: ReadonlySet<string> = new Set(['version', 'description', 'license', 'bin', 'engines', 'scripts', 'tap', 'allowScripts']);
const CARRIED_FIELDS = ['name', 'private', 'type'] as const;
const READ_FIELDS = new Set(['dependencies', 'devDependencies']);

/**
 * `pkg` cut down to the `dependencies` and `devDependencies` named, with the specs it gives them,
 * and the fields that say what the project is (name, private, type: "module", which Node reads
 * beside dist/main.js). Throws on a name that `pkg` does not depend on that way, and on a field
 * this module does not know.
 */
export function manifestSubset(pkg: Manifest, dependencies: readonly string[], devDependencies: readonly string[] = []): Manifest {
  for (const field of Object.keys(pkg)) {
    if (!NOT_INSTALLED_FIELDS.has(field) && !READ_FIELDS.has(field) && !(CARRIED_FIELDS as readonly string[]).includes(field)) {
      throw new Error(`package.json field "${field}": scripts/lockfile-subset.ts does not know whether it changes what npm ci installs (NOT_INSTALLED_FIELDS)`);
    }
  }
  const pick = (from: Record<string, string> | undefined, names: readonly string[], field: string): Record<string, string> => Object.fromEntries(
    [...names].sort().map((name) => {
      const spec = from?.[name];
      if (spec === undefined) throw new Error(`${name} is not among package.json's ${field}`);
      return [name, spec];
    }),
  );
  const out: Manifest = { name: pkg.name };
  for (const field of CARRIED_FIELDS) if (pkg[field] !== undefined) (out as Record<string, unknown>)[field] = pkg[field];
  if (dependencies.length > 0) out.dependencies = pick(pkg.dependencies, dependencies, 'dependencies');
  if (devDependencies.length > 0) out.devDependencies = pick(pkg.devDependencies, devDependencies, 'devDependencies');
  return out;
}

/** The package name of an import specifier: `@scope/name/sub/path` → `@scope/name`, `name/sub` → `name`. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

/** The lockfile path of the package `name` as Node finds it from the package at `from` ('' for the root), if the lockfile has one. */
export function resolveIn(packages: Readonly<Record<string, unknown>>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = base === '' ? `node_modules/${name}` : `${base}/node_modules/${name}`;
    if (Object.hasOwn(packages, candidate)) return candidate;
    if (base === '') return undefined;
    base = parentPackage(base);
  }
}

/** The package whose node_modules holds `path` ('' for the root). */
function parentPackage(path: string): string {
  const i = path.lastIndexOf('/node_modules/');
  return i < 0 ? '' : path.slice(0, i);
}

interface Edge { to: string; dev: boolean; optional: boolean; peer: boolean }

/**
 * The edges out of the lockfile entry at `path`: its dependencies (for the root, `root`'s
 * dependencies and devDependencies), resolved within `packages`. A missing optional one (another
 * platform's, or an optional peer) is no edge; a missing required one is an inconsistent lockfile.
 */
function edgesOut(packages: Readonly<Record<string, LockEntry>>, path: string, entry: LockEntry): Edge[] {
  const edges: Edge[] = [];
  const add = (deps: Record<string, string> | undefined, kind: Omit<Edge, 'to'>, optionalIf: (name: string) => boolean = () => kind.optional): void => {
    for (const name of Object.keys(deps ?? {})) {
      const optional = optionalIf(name);
      const to = resolveIn(packages, path, name);
      if (to === undefined) {
        if (optional) continue;
        throw new Error(`package-lock.json: ${path === '' ? 'the root' : path} depends on ${name}, which it does not hold`);
      }
      edges.push({ ...kind, optional, to });
    }
  };
  const none = { dev: false, optional: false, peer: false };
  add(entry.dependencies, none);
  add(entry.optionalDependencies, { ...none, optional: true });
  add(entry.peerDependencies, { ...none, peer: true }, (name) => entry.peerDependenciesMeta?.[name]?.optional === true);
  if (path === '') add(entry.devDependencies, { ...none, dev: true });
  return edges;
}

type Flag = 'dev' | 'optional' | 'devOptional' | 'peer';
export type DependencyFlags = Record<Flag, boolean>;
const FLAGS: readonly Flag[] = ['dev', 'optional', 'devOptional', 'peer'];

/**
 * The flags of each package reachable from the root of `packages`, as npm's dependency-flag
 * calculation sets them: a flag holds unless some path from the root clears it. Along an edge a
 * package passes on the absence of `dev` (through any edge but a devDependency), of `optional`
 * (any edge but an optional one), of `devOptional` (neither), of `peer` (any but a peer edge); a
 * package that is not `devOptional` is neither `dev` nor `optional`; and the package whose
 * node_modules holds one without a flag is without it too (its folder must be installed).
 */
export function dependencyFlags(packages: Readonly<Record<string, LockEntry>>): Map<string, DependencyFlags> {
  const edges = new Map<string, Edge[]>();
  const out = (path: string): Edge[] => {
    let e = edges.get(path);
    if (e === undefined) edges.set(path, (e = edgesOut(packages, path, packages[path] ?? {})));
    return e;
  };
  // Every package reachable from the root starts with every flag set; the root has none.
  const flags = new Map<string, DependencyFlags>([['', { dev: false, optional: false, devOptional: false, peer: false }]]);
  const reached = [''];
  for (let i = 0; i < reached.length; i++) {
    for (const { to } of out(reached[i] as string)) {
      if (flags.has(to)) continue;
      flags.set(to, { dev: true, optional: true, devOptional: true, peer: true });
      reached.push(to);
    }
  }
  // Then each clearing spreads until nothing changes.
  const queue = [''];
  const clear = (path: string, flag: Flag): void => {
    const f = flags.get(path);
    if (f === undefined || !f[flag]) return;
    f[flag] = false;
    queue.push(path);
    if (flag === 'devOptional') { clear(path, 'dev'); clear(path, 'optional'); }
    const parent = parentPackage(path);
    if (parent !== '') clear(parent, flag);
  };
  while (queue.length > 0) {
    const path = queue.pop() as string;
    const from = flags.get(path) as DependencyFlags;
    for (const edge of out(path)) {
      if (!from.devOptional && !edge.dev && !edge.optional) clear(edge.to, 'devOptional');
      if (!from.dev && !edge.dev) clear(edge.to, 'dev');
      if (!from.optional && !edge.optional) clear(edge.to, 'optional');
      if (!from.peer && !edge.peer) clear(edge.to, 'peer');
    }
  }
  return flags;
}

/** The flags npm writes in a lockfile entry: `devOptional` only when neither `dev` nor `optional`. */
export function writtenFlags(f: DependencyFlags): Partial<DependencyFlags> {
  const written: Partial<DependencyFlags> = {};
  if (f.dev) written.dev = true;
  if (f.optional) written.optional = true;
  if (f.devOptional && !f.dev && !f.optional) written.devOptional = true;
  if (f.peer) written.peer = true;
  return written;
}

/**
 * The package-lock.json that installs `manifest` (a subset of the project's package.json: its
 * name and the dependencies it keeps) from `lock`, the project's lockfile: the packages those
 * dependencies reach, each entry as `lock` has it but for its flags, which are those of the
 * smaller tree. Throws when a dependency's spec differs from the one `lock` was resolved for.
 */
export function lockfileSubset(manifest: Manifest, lock: Lockfile): Lockfile {
  if (lock.lockfileVersion < 2) throw new Error(`package-lock.json: lockfileVersion ${lock.lockfileVersion} has no "packages"; npm 7 or later writes 2 or 3`);
  const root = lock.packages[''] ?? {};
  for (const field of ['dependencies', 'devDependencies'] as const) {
    for (const [name, spec] of Object.entries(manifest[field] ?? {})) {
      if (root[field]?.[name] !== spec) throw new Error(`package-lock.json was resolved for ${name}@${root[field]?.[name] ?? '(none)'} in ${field}, not ${spec}: run npm install`);
    }
  }
  const rootEntry: LockEntry = { name: manifest.name };
  if (manifest.dependencies !== undefined) rootEntry.dependencies = manifest.dependencies;
  if (manifest.devDependencies !== undefined) rootEntry.devDependencies = manifest.devDependencies;
  const flags = dependencyFlags({ ...lock.packages, '': rootEntry });
  const packages: Record<string, LockEntry> = { '': rootEntry };
  for (const [path, entry] of Object.entries(lock.packages)) {
    const f = flags.get(path);
    if (path === '' || f === undefined) continue;
    if (entry.link === true) throw new Error(`package-lock.json: ${path} is a link (a workspace), which an image build cannot install`);
    const copy: LockEntry = { ...entry };
    for (const flag of FLAGS) delete copy[flag];
    packages[path] = { ...copy, ...writtenFlags(f) };
  }
  return { name: manifest.name, lockfileVersion: lock.lockfileVersion, requires: true, packages };
}
