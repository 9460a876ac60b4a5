// `node scripts/image/build-manifest.ts DIR`: the package.json and package-lock.json of the
// image's build stage (Dockerfile), written into DIR: every production dependency (the bundle is
// made of them) and, of the devDependencies, only what the bundle step runs (BUNDLER_PACKAGES),
// at the versions package-lock.json locked. The Dockerfile's first stage runs this on the
// project's package.json, so that its `npm ci` layer is rebuilt only when this output changes:
// not for an edit of a script, the version or a test tool.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BUNDLER_PACKAGES, writeInstallManifest } from '../build.ts';
import { lockfileSubset, manifestSubset, type Lockfile, type Manifest } from '../lockfile-subset.ts';

/** The build stage's package.json and lockfile, from the project's. */
export function buildManifest(pkg: Manifest, lock: Lockfile): { manifest: Manifest; lock: Lockfile } {
  const manifest = manifestSubset(pkg, Object.keys(pkg.dependencies ?? {}), BUNDLER_PACKAGES);
  return { manifest, lock: lockfileSubset(manifest, lock) };
}

if (import.meta.main) {
  const out = process.argv[2];
  if (out === undefined) {
    process.stderr.write('usage: node scripts/image/build-manifest.ts DIR\n');
    process.exit(2);
  }
  const root = resolve(import.meta.dirname, '..', '..');
  const read = <T>(file: string): T => JSON.parse(readFileSync(join(root, file), 'utf8')) as T;
  const { manifest, lock } = buildManifest(read<Manifest>('package.json'), read<Lockfile>('package-lock.json'));
  writeInstallManifest(resolve(out), manifest, lock);
}
