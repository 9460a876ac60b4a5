// The Kubernetes release a run's control plane is meant to be, from the sources build-version.sh
// builds it from: KAOS_KUBE_VERSION's row of versions/table (asked as a minor or as its patch),
// else the release test/cluster/go.mod requires. What the e2e tests expect the binaries to report.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));

/** The rows of a whitespace-separated table in versions/ (`table`, `clients`), comments left out. */
export function versionRows(file: 'table' | 'clients'): string[][] {
  return readFileSync(join(HERE, 'versions', file), 'utf8').split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#')).map((l) => l.trim().split(/\s+/));
}

export function expectedKubeVersion(env: NodeJS.ProcessEnv = process.env): string {
  const asked = env['KAOS_KUBE_VERSION'];
  if (asked === undefined || asked === '') {
    const required = /^\s*k8s\.io\/kubernetes (v\S+)/m.exec(readFileSync(join(HERE, 'go.mod'), 'utf8'));
    if (required === null) throw new Error('test/cluster/go.mod requires no k8s.io/kubernetes');
    return required[1]!;
  }
  const minor = asked.replace(/^v/, '').split('.').slice(0, 2).join('.');
  const row = versionRows('table').find((cells) => cells[0] === minor);
  if (row?.[1] === undefined) throw new Error(`KAOS_KUBE_VERSION=${asked}: test/cluster/versions/table has no row for ${minor}`);
  return row[1];
}
