// Shared by the admission e2e files (admission-defaulting, admission-validation): the local stack
// (scripts/local-stack.ts: CRDs from crds/, webhook configurations from the operator's own
// renderer, the operator started as `node dist/main.js` with images and a model name of its own)
// and the kubectl helpers whose output the tests compare whole.
import type { Test } from 'tap';
import { fileURLToPath } from 'node:url';
import type { LocalStack } from '../../../scripts/local-stack.ts';
import { useStack, OPERATOR_ENV } from './stack.ts';
import { OPERATOR_USER } from '../../../src/cluster/rbac.ts';
import type { KubectlResult } from '../../cluster/control-plane.ts';
import type { KaosKind } from '../../../src/api/kinds.ts';

export type Json = Record<string, unknown>;
export type Kind = 'Agent' | 'ModelAPI' | 'MCPServer';

export { IMAGES, DEFAULT_MODEL, OPERATOR_ENV } from './stack.ts';

export const SAMPLES = fileURLToPath(new URL('../../fixtures/samples/', import.meta.url));
export const DEFAULTED = 'kaos.tools/defaulted';
export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
export const RESOURCE: Readonly<Record<Kind, string>> = { Agent: 'agents', ModelAPI: 'modelapis', MCPServer: 'mcpservers' };

// ---- the shared stack -------------------------------------------------------------------------

export let stack: LocalStack | undefined;

/**
 * The shared stack (support/stack.ts) for the admission files; `stack` is set once it runs. The
 * API server audits the operator's requests, so a test can assert what the webhook read live.
 */
export function useAdmissionStack(t: Test): void {
  const live = useStack(t, OPERATOR_ENV, { users: [OPERATOR_USER] });
  t.before(() => {
    stack = live();
  });
}

// ---- helpers ----------------------------------------------------------------------------------

export async function kubectl(args: readonly string[], input?: string): Promise<KubectlResult> {
  if (stack === undefined) throw new Error('no local stack: it failed to start (see the error before this one)');
  return stack.plane.kubectl(args, input === undefined ? {} : { input });
}

export const kaos = (kind: KaosKind, name: string, spec: Json, metadata: Json = {}): Json => ({
  apiVersion: 'kaos.tools/v1alpha1',
  kind,
  metadata: { name, ...metadata },
  spec,
});

export const namespaceObject = (name: string, labels?: Record<string, string>): Json => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: labels === undefined ? { name } : { name, labels },
});

/** A multi-document manifest. JSON documents (valid YAML) so no value is ever re-typed by YAML 1.1. */
export const manifest = (objects: readonly Json[]): string => objects.map((o) => JSON.stringify(o, null, 2)).join('\n---\n') + '\n';

export const nameOf = (o: Json): string => String((o.metadata as Json).name);
export const kindOf = (o: Json): string => String(o.kind);

/** `kubectl apply -n ns -f -` of the objects. */
export const apply = (ns: string, objects: readonly Json[], extra: readonly string[] = []): Promise<KubectlResult> =>
  kubectl(['apply', '-n', ns, '-f', '-', ...extra], manifest(objects));

export const lines = (...l: string[]): string => l.map((s) => `${s}\n`).join('');
export const warnings = (...w: string[]): string => lines(...w.map((s) => `Warning: ${s}`));
export const created = (objects: readonly Json[], suffix = ''): string =>
  lines(...objects.map((o) => `${kindOf(o).toLowerCase()}.kaos.tools/${nameOf(o)} created${suffix}`));

/**
 * What kubectl prints when the only failure of a command is one object refused with 422 Invalid,
 * whether by the API server's own validation or by a webhook (which then carries the same causes):
 * one error inline, several as a bulleted list after "is invalid: " (with kubectl's trailing space).
 */
export function invalid(kind: KaosKind, name: string, errors: readonly string[]): string {
  if (errors.length === 1) return `The ${kind} "${name}" is invalid: ${errors[0]}\n`;
  return `The ${kind} "${name}" is invalid: \n${errors.map((e) => `* ${e}\n`).join('')}`;
}

/** Creates a namespace (with labels, in one request) and the objects it needs; asserts success. */
export async function setup(t: Test, ns: string, objects: readonly Json[] = [], labels?: Record<string, string>): Promise<void> {
  const res = await kubectl(['apply', '-f', '-'], manifest([namespaceObject(ns, labels)]));
  t.strictSame(res, { code: 0, stdout: `namespace/${ns} created\n`, stderr: '' }, `namespace ${ns}`);
  if (objects.length > 0) {
    const made = await apply(ns, objects);
    t.strictSame(made, { code: 0, stdout: created(objects), stderr: made.stderr }, `setup objects in ${ns}`);
  }
}

/** Stored object (kubectl get -o json), or undefined when it does not exist. */
export async function get(ns: string, kind: Kind, name: string): Promise<Json | undefined> {
  const res = await kubectl(['get', `${RESOURCE[kind]}.kaos.tools/${name}`, '-n', ns, '-o', 'json', '--ignore-not-found']);
  if (res.code !== 0) throw new Error(`kubectl get ${kind} ${ns}/${name}: ${res.stderr}`);
  return res.stdout.trim() === '' ? undefined : (JSON.parse(res.stdout) as Json);
}

export async function resourceVersions(ns: string): Promise<string> {
  const res = await kubectl([
    'get', 'agents,modelapis,mcpservers', '-n', ns, '-o',
    'jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion} {end}',
  ]);
  if (res.code !== 0) throw new Error(res.stderr);
  return res.stdout;
}

/**
 * The object is refused with exactly `stderr`, both with --dry-run=server and for real (a dry run
 * is judged exactly like the real request), and nothing is stored.
 */
export async function expectDenied(t: Test, ns: string, object: Json, stderr: string, what: string): Promise<void> {
  const dry = await apply(ns, [object], ['--dry-run=server']);
  t.strictSame(dry, { code: 1, stdout: '', stderr }, `${what} (--dry-run=server)`);
  const real = await apply(ns, [object]);
  t.strictSame(real, { code: 1, stdout: '', stderr }, what);
  t.equal(await get(ns, kindOf(object) as Kind, nameOf(object)), undefined, `${what}: nothing stored`);
}

export const podSpecOf = (o: Json | undefined): Json => ((o?.spec as Json | undefined) ?? {});
export const annotationsOf = (o: Json | undefined): Record<string, string> =>
  (((o?.metadata as Json | undefined)?.annotations as Record<string, string> | undefined) ?? {});
export const withoutLastApplied = (a: Record<string, string>): Record<string, string> => {
  const { [LAST_APPLIED]: _dropped, ...rest } = a;
  return rest;
};

// Objects used by many subtests.
export const hostedModel = (name: string, model = 'qwen2:0.5b'): Json => kaos('ModelAPI', name, { mode: 'Hosted', hostedConfig: { model } });
export const pythonTools = (name: string): Json =>
  kaos('MCPServer', name, { type: 'python-runtime', config: { tools: { fromPackage: 'mcp-server-fetch' } } });
export const agent = (name: string, spec: Json, metadata: Json = {}): Json => kaos('Agent', name, spec, metadata);
