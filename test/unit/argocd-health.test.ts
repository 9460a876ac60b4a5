// docs/argocd/health.lua, the Argo CD health check shipped for the four kinds, run
// in Argo CD's own Lua runtime (gopher-lua, as test/cluster/lua-health wires it: base and table
// libraries, `obj` global, returned `hs` table) against the statuses the operator writes —
// made by the controller's own nextStatus() from each verdict — and the CRD's default status of
// a brand-new object.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse } from 'yaml';
import { KIND_NAMES, WORKLOAD_KINDS } from '../../src/api/kinds.ts';
import {
  deploymentProgress,
  failed,
  mcpServerNotReady,
  modelAPINotReady,
  modelAPIUnresolved,
  nextStatus,
  notFoundReason,
  type Outcome,
} from '../../src/controller/status.ts';
import { buildBinaries } from '../cluster/control-plane.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'docs', 'argocd', 'health.lua');
const NOW = Date.parse('2030-01-01T00:00:00Z');

interface Health { status: string; message: string }
type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace: string; generation: number }; status?: unknown };

const bin = join(await buildBinaries(() => undefined), 'lua-health');

/** Runs the script on each object in one lua-health process. */
function health(objects: Obj[]): Promise<Health[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
    child.stderr.setEncoding('utf8').on('data', (c: string) => { err += c; });
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(JSON.parse(out) as Health[]) : reject(new Error(`lua-health exited ${code}: ${err}`))));
    child.stdin.end(JSON.stringify(objects));
  });
}

/** The status the CRD's schema defaults a new object to (before the operator writes one). */
function defaultStatus(kind: string): unknown {
  const file = join(ROOT, 'crds', `${KIND_NAMES[kind as keyof typeof KIND_NAMES].plural}.kaos.tools.yaml`);
  const crd = parse(readFileSync(file, 'utf8')) as { spec: { versions: { schema: { openAPIV3Schema: { properties: { status: { default: unknown } } } } }[] } };
  return crd.spec.versions[0]?.schema.openAPIV3Schema.properties.status.default;
}

const object = (kind: string, generation: number, status?: unknown): Obj => ({
  apiVersion: 'kaos.tools/v1alpha1', kind, metadata: { name: 'x', namespace: 'demo', generation }, ...(status === undefined ? {} : { status }),
});
/** What the operator writes after a reconcile of generation `observed` with `outcome`. */
const written = (kind: string, generation: number, outcome: Outcome, observed = generation): Obj =>
  object(kind, generation, nextStatus(defaultStatus(kind), observed, outcome, NOW));

const ready = deploymentProgress({ spec: { replicas: 1 }, status: { replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 } });
const pending = deploymentProgress({ spec: { replicas: 1 }, status: { replicas: 1, updatedReplicas: 1 } });

// The four workload kinds share one status shape; an AccessGrant's is its Enforced condition (no health check of its own).
for (const kind of WORKLOAD_KINDS) {
  t.test(`${kind}: Healthy, Progressing and Degraded from the operator's statuses`, async (t) => {
    const cases: [string, Obj, Health][] = [
      ['brand-new, the CRD\'s default status', object(kind, 1, defaultStatus(kind)), { status: 'Progressing', message: 'Waiting for kaos-operator to reconcile' }],
      ['no status at all', object(kind, 1), { status: 'Progressing', message: 'Waiting for kaos-operator to reconcile' }],
      ['Ready', written(kind, 1, ready), { status: 'Healthy', message: 'Deployment ready replicas: 1/1' }],
      ['Pending', written(kind, 1, pending), { status: 'Progressing', message: 'Pending: Deployment ready replicas: 0/1 (rolling out)' }],
      ['Ready, but a newer spec not yet observed', written(kind, 3, ready, 2), { status: 'Progressing', message: 'Waiting for kaos-operator to observe generation 3' }],
      ['Failed and retried (not terminal)', written(kind, 1, failed('ApplyFailed', 'Deployment apply failed: conflict')), { status: 'Progressing', message: 'Failed: Deployment apply failed: conflict' }],
      ['Failed, terminal (Stalled)', written(kind, 1, failed('InvalidSpec', 'the rendered pod is invalid', { terminal: true })), { status: 'Degraded', message: 'the rendered pod is invalid' }],
    ];
    if (kind === 'Agent') {
      cases.push(
        ['Waiting on its ModelAPI', written(kind, 1, modelAPINotReady()), { status: 'Progressing', message: 'Waiting: ModelAPI is not ready' }],
        ['Waiting on an MCPServer', written(kind, 1, mcpServerNotReady('tools')), { status: 'Progressing', message: 'Waiting: MCPServer tools is not ready' }],
        ['its ModelAPI not created yet (a sync wave later): retried, so Progressing', written(kind, 1, modelAPIUnresolved(notFoundReason('ModelAPI', 'gpt'))), { status: 'Progressing', message: 'Failed: Failed to resolve ModelAPI: modelapis.kaos.tools "gpt" not found' }],
        // docs/api.md, "Agent replicas": replicas 0 is where the user asked it to be (kstatus Current).
        ['scaled to zero (ScaledToZero, settled)', written(kind, 1, { phase: 'Pending', reason: 'ScaledToZero', message: 'Agent is scaled to zero replicas', settled: true }), { status: 'Healthy', message: 'Pending: Agent is scaled to zero replicas' }],
      );
    }
    const results = await health(cases.map(([, obj]) => obj));
    cases.forEach(([name, , expected], i) => t.same(results[i], expected, name));
  });
}

t.test('the runner fails where Argo CD would: a status it does not know, a string library it does not open', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lua-health-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const run = (script: string) => {
    writeFileSync(join(dir, 'check.lua'), script);
    return spawnSync(bin, [join(dir, 'check.lua')], { input: '[{}]', encoding: 'utf8' });
  };
  t.equal(run('return { status = "Healthy", message = "ok" }').status, 0, 'a valid result');
  const unknown = run('return { status = "Fine" }');
  t.equal(unknown.status, 1);
  t.match(unknown.stderr, 'status "Fine", which Argo CD does not know');
  t.equal(run('return { status = string.lower("Healthy") }').status, 1, 'no string library, as in Argo CD');
});
