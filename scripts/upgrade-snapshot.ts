// `npm run snapshot:upgrade`: what this release leaves in a cluster, kept so that every later
// release is tested for rolling nothing it does not announce (docs/upgrade.md). On a local control
// plane with this tree's operator (scripts/local-stack.ts, the settings of SNAPSHOT_OPERATOR_ENV),
// it applies the fixed set of manifests (UPGRADE_MANIFESTS) through the webhooks as a user would,
// waits until every object is converged and the operator idle, and writes
// test/fixtures/upgrade/snapshots/<package.json version>.json: the KAOS objects as stored, and
// every child as the operator applied it (test/e2e/support/upgrade.ts). Run it for the version
// being made until it is released; a released version's snapshot is never made again.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OPERATOR_IDENTITY } from '../src/cluster/rbac.ts';
import { ROOT, startLocalStack } from './local-stack.ts';
import { operatorSettled } from '../test/e2e/support/lifecycle.ts';
import {
  SNAPSHOT_DIR, SNAPSHOT_GATEWAY_CRDS, SNAPSHOT_OPERATOR_ENV, UPGRADE_MANIFESTS, exportChildren, exportNamespaces, manifestObjects,
  notConverged, snapshotFile, type UpgradeSnapshot,
} from '../test/e2e/support/upgrade.ts';
import { eventually } from '../test/support/poll.ts';

/** The namespace a manifest of the snapshot is applied in. */
const snapshotNamespace = (key: string): string => `upgrade-${key}`;

const say = (line: string): void => { process.stderr.write(`[snapshot] ${line}\n`); };

async function main(): Promise<void> {
  const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const stack = await startLocalStack({ log: say, operatorEnv: SNAPSHOT_OPERATOR_ENV, gatewayCrds: SNAPSHOT_GATEWAY_CRDS });
  try {
    const namespaces = Object.keys(UPGRADE_MANIFESTS).map(snapshotNamespace);
    for (const [key, file] of Object.entries(UPGRADE_MANIFESTS)) {
      const objects = manifestObjects(file, snapshotNamespace(key));
      const r = await stack.plane.kubectl(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }) });
      if (r.code !== 0) throw new Error(`kubectl apply of ${file}: ${r.stderr}`);
      say(`applied ${file} in ${snapshotNamespace(key)}`);
    }
    let waiting: string[] = [];
    await eventually('every object converged', async () => {
      waiting = await notConverged(stack.client, namespaces);
      return waiting.length === 0 && await operatorSettled(stack.operator.metricsPort, 1);
    }, { timeoutMs: 180_000, intervalMs: 500, retryErrors: true }).catch((err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}; not converged: ${waiting.join(', ')}`);
    });
    // Converged twice in a row, two seconds apart: nothing was still on its way.
    const childNamespaces = [...namespaces, OPERATOR_IDENTITY.namespace];
    let children = await exportChildren(stack.client, childNamespaces);
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const again = await exportChildren(stack.client, childNamespaces);
      if (JSON.stringify(again) === JSON.stringify(children)) break;
      children = again;
    }
    const snapshot: UpgradeSnapshot = {
      version,
      operatorEnv: SNAPSHOT_OPERATOR_ENV,
      gatewayCrds: SNAPSHOT_GATEWAY_CRDS,
      objects: await exportNamespaces(stack.client, namespaces),
      children,
    };
    await mkdir(SNAPSHOT_DIR, { recursive: true });
    await writeFile(snapshotFile(version), `${JSON.stringify(snapshot, null, 2)}\n`);
    say(`wrote ${snapshotFile(version)}: ${snapshot.objects.length} objects, ${snapshot.children.length} children`);
  } finally {
    await stack.stop();
  }
}

if (import.meta.main) await main();
