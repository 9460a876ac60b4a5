// Where the project keeps what it builds outside the repository (the control plane's binaries,
// the image's lock, Node's compile cache of the tests): KAOS_CACHE_DIR, else
// $XDG_CACHE_HOME/kaos-operator, else ~/.cache/kaos-operator — the same rule as test/cluster/build.sh.
import { homedir } from 'node:os';
import { join } from 'node:path';

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env['KAOS_CACHE_DIR'] ?? join(env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'kaos-operator');
}
