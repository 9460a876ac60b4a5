// Another commit's src/ and test/, exported with `git archive` into a temporary directory beside
// this checkout's node_modules and package.json, so that a benchmark loads the same modules at two
// commits in one process and compares them side by side under the same background load.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** This checkout's root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Tree {
  /** The exported root: modules load from `<dir>/src/...`. */
  readonly dir: string;
  /** The commit, abbreviated. */
  readonly sha: string;
  remove(): void;
}

/** The tree of `ref` (a commit, a branch, `HEAD~1`), exported; `remove()` deletes it. */
export function treeAt(ref: string): Tree {
  const dir = mkdtempSync(join(tmpdir(), 'kaos-ab-'));
  const sha = execFileSync('git', ['rev-parse', '--short', ref], { cwd: ROOT, encoding: 'utf8' }).trim();
  execFileSync('sh', ['-c', `git archive ${sha} src test | tar -x -C ${dir}`], { cwd: ROOT });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  symlinkSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  return {
    dir,
    sha,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Where a module of this checkout stood in older trees, so that a benchmark still loads them. */
const FORMER_PATHS: Readonly<Record<string, string>> = {
  'src/config/config.ts': 'src/config.ts',
};

/** One module of the tree at `root` (ROOT or a Tree's dir), by its path in this checkout; typed by the caller as this checkout's. */
export const loadFrom = (root: string, path: string): Promise<Record<string, unknown>> => {
  const former = FORMER_PATHS[path];
  const at = former !== undefined && !existsSync(join(root, path)) ? former : path;
  return import(pathToFileURL(join(root, at)).href) as Promise<Record<string, unknown>>;
};
