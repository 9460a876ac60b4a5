// The Kubernetes minors the control plane builds (test/cluster/versions/table) and their Go
// modules cannot drift apart: each row's module requires that row's Kubernetes and etcd (a row
// changed without running gen-gomod.sh fails here, not in a cold build), the default minor's
// module is test/cluster/go.mod and holds the clients at versions/clients' versions, another
// minor's holds none of them; and the release a run expects is the row KAOS_KUBE_VERSION names.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { expectedKubeVersion, versionRows } from '../../cluster/kube-version.ts';

const CLUSTER = fileURLToPath(new URL('../../cluster/', import.meta.url));
const rows = versionRows('table');
const required = (gomod: string, module: string): string | undefined =>
  new RegExp(`^\\s*(?:require )?${module.replaceAll('.', '\\.')} (v\\S+)`, 'm').exec(readFileSync(gomod, 'utf8'))?.[1];
const defaultKube = required(join(CLUSTER, 'go.mod'), 'k8s.io/kubernetes');
const clients = versionRows('clients') as [string, string, string][];

t.test("each row's module requires the row's Kubernetes and etcd; the default's, the clients too", async (t) => {
  t.ok(rows.length >= 4, `rows: ${rows.map((r) => r[0]).join(', ')}`);
  t.equal(rows.filter((r) => r[1] === defaultKube).length, 1, `one row is test/cluster/go.mod's ${defaultKube}`);
  t.same(clients.map(([name]) => name), ['kwok', 'helm', 'cert-manager', 'gopher-lua'], 'versions/clients names the clients build.sh builds');
  for (const [minor, kube, etcd] of rows) {
    const isDefault = kube === defaultKube;
    const gomod = isDefault ? join(CLUSTER, 'go.mod') : join(CLUSTER, 'versions', minor!, 'go.mod');
    t.ok(existsSync(gomod), `${minor}: ${gomod} exists (gen-gomod.sh ${minor})`);
    if (!existsSync(gomod)) continue;
    t.ok(kube!.startsWith(`v${minor}.`), `${minor}: ${kube} is of that minor`);
    t.same(['k8s.io/kubernetes', 'go.etcd.io/etcd/server/v3'].map((m) => required(gomod, m)), [kube, etcd], `${minor}: ${gomod} was written from its row`);
    t.same(
      clients.map(([, module]) => required(gomod, module)),
      clients.map(([, , version]) => (isDefault ? version : undefined)),
      isDefault ? `${minor}: the default's module requires the clients at versions/clients' versions` : `${minor}: its module requires no client (they come from the default's build)`,
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

t.test("the chart's kubeVersion floor is the oldest minor the control plane builds, and README has a row for each", async (t) => {
  const root = join(CLUSTER, '..', '..');
  const oldest = rows.map(([minor]) => minor!).sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]))[0];
  t.match(readFileSync(join(root, 'chart', 'Chart.yaml'), 'utf8'), new RegExp(`^kubeVersion: ">=${oldest!.replace('.', '\\.')}\\.0-0"$`, 'm'), `Chart.yaml: >=${oldest}.0-0`);
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  for (const [minor] of rows) t.match(readme, new RegExp(`^\\| v${minor!.replace('.', '\\.')} \\|`, 'm'), `README's support table has v${minor}'s row`);
});
