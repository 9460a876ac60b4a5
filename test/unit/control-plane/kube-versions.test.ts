// The Kubernetes minors the control plane builds (test/cluster/versions/table) and their Go
// modules cannot drift apart: each row's module requires that row's Kubernetes and etcd (a row
// changed without running gen-gomod.sh fails here, not in a cold build), the default minor's
// module is test/cluster/go.mod; and the release a run expects is the row KAOS_KUBE_VERSION names.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { expectedKubeVersion } from '../../cluster/kube-version.ts';

const CLUSTER = fileURLToPath(new URL('../../cluster/', import.meta.url));
const rows = readFileSync(join(CLUSTER, 'versions', 'table'), 'utf8').split('\n')
  .filter((l) => /^\d/.test(l)).map((l) => l.trim().split(/\s+/));
const required = (gomod: string, module: string): string | undefined =>
  new RegExp(`^\\s*(?:require )?${module.replaceAll('.', '\\.')} (v\\S+)`, 'm').exec(readFileSync(gomod, 'utf8'))?.[1];
const defaultKube = required(join(CLUSTER, 'go.mod'), 'k8s.io/kubernetes');

t.test("each row's module requires the row's Kubernetes, etcd, kwok, helm and cert-manager", async (t) => {
  t.ok(rows.length >= 4, `rows: ${rows.map((r) => r[0]).join(', ')}`);
  t.equal(rows.filter((r) => r[1] === defaultKube).length, 1, `one row is test/cluster/go.mod's ${defaultKube}`);
  for (const [minor, kube, etcd, kwok, helm, certManager] of rows) {
    const gomod = kube === defaultKube ? join(CLUSTER, 'go.mod') : join(CLUSTER, 'versions', minor!, 'go.mod');
    t.ok(existsSync(gomod), `${minor}: ${gomod} exists (gen-gomod.sh ${minor})`);
    if (!existsSync(gomod)) continue;
    t.ok(kube!.startsWith(`v${minor}.`), `${minor}: ${kube} is of that minor`);
    t.same(
      ['k8s.io/kubernetes', 'go.etcd.io/etcd/server/v3', 'sigs.k8s.io/kwok', 'helm.sh/helm/v3', 'github.com/cert-manager/cert-manager'].map((m) => required(gomod, m)),
      [kube, etcd, kwok, helm, certManager],
      `${minor}: ${gomod} was written from its row`,
    );
  }
});

t.test('the release a run expects: KAOS_KUBE_VERSION as a minor or its patch, else the default', async (t) => {
  t.equal(expectedKubeVersion({}), defaultKube);
  for (const [minor, kube] of rows) {
    t.equal(expectedKubeVersion({ KAOS_KUBE_VERSION: minor }), kube, `${minor}`);
    t.equal(expectedKubeVersion({ KAOS_KUBE_VERSION: kube }), kube, `${kube}`);
  }
  t.throws(() => expectedKubeVersion({ KAOS_KUBE_VERSION: '1.29' }), /no row for 1\.29/);
});
