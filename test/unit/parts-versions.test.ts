// README's table of the parts around the operator holds: the versions the tests use are the ones
// the build takes (test/cluster/versions/clients, envoy-gateway.version and the Gateway API release
// Envoy Gateway's chart ships), and each oldest version the chart claims for the Gateway API and
// Envoy Gateway is the first whose CRD schema has every field the operator writes, read from those
// releases' own CRDs (go mod download, as test/cluster/build.sh fetches Envoy Gateway's): the
// rendered HTTPRoute and SecurityPolicy fit the oldest and not the release before it. No Go
// toolchain or proxy is a failure, never a skip.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/config.ts';
import { versionRows } from '../cluster/kube-version.ts';
import { renderHTTPRoute } from '../../src/render/gateway.ts';
import { parentIdentity } from '../../src/render/labels.ts';
import { renderSecurityPolicy, type SecurityInputs } from '../../src/render/security.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLUSTER = join(ROOT, 'test', 'cluster');

/** The oldest release README claims, and the release before it that the Go proxy serves. */
const OLDEST = {
  'Gateway API': { module: 'sigs.k8s.io/gateway-api', oldest: 'v1.2.0', before: 'v1.1.0' },
  'Envoy Gateway': { module: 'github.com/envoyproxy/gateway', oldest: 'v1.5.0', before: 'v1.2.8' },
} as const;

const scratch = mkdtempSync(join(tmpdir(), 'kaos-parts-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
/** A module's directory in the module cache, downloaded outside any module (as build.sh does). */
function moduleDir(module: string, version: string): string {
  const out = execFileSync('go', ['mod', 'download', '-json', `${module}@${version}`], { cwd: scratch, env: { ...process.env, GOFLAGS: '', GOWORK: 'off' }, encoding: 'utf8' });
  const info = JSON.parse(out) as { Dir?: string; Error?: string };
  if (info.Dir === undefined) throw new Error(`go mod download ${module}@${version}: ${info.Error ?? out}`);
  return info.Dir;
}

type Schema = { properties?: Record<string, Schema>; items?: Schema; additionalProperties?: Schema | boolean; 'x-kubernetes-preserve-unknown-fields'?: boolean };
type Crd = { spec: { names: { kind: string }; versions: { name: string; schema: { openAPIV3Schema: Schema } }[] } };

/** The version's schema of `kind` among the CRDs of the YAML files. */
function crdSchema(files: readonly string[], kind: string, version: string): Schema {
  for (const file of files) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const crd = doc.toJS() as Crd | null;
      if (crd?.spec?.names?.kind !== kind) continue;
      const served = crd.spec.versions.find((v) => v.name === version);
      if (served !== undefined) return served.schema.openAPIV3Schema;
    }
  }
  throw new Error(`no ${kind} ${version} CRD in ${files.join(', ')}`);
}

/** The paths of `value` the schema has no field for (metadata is the API server's, not the CRD's). */
function unknownFields(value: unknown, schema: Schema, path = ''): string[] {
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) return [];
  if (Array.isArray(value)) return schema.items === undefined ? [path] : value.flatMap((v, i) => unknownFields(v, schema.items!, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, v]) => {
    if (path === '' && (key === 'metadata' || key === 'apiVersion' || key === 'kind')) return [];
    const field = schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    return field === undefined ? [`${path}.${key}`] : unknownFields(v, field, `${path}.${key}`);
  });
}

const readmeRow = (part: string): string[] => {
  const row = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').find((l) => l.startsWith(`| ${part} |`) || l.startsWith(`| ${part} (`));
  if (row === undefined) throw new Error(`README's parts table has no ${part} row`);
  return row.split(' | ').map((c) => c.replace(/^\| |\s*\|$/g, ''));
};
const firstVersion = (cell: string): string | undefined => /v\d+\.\d+(?:\.\d+)?/.exec(cell)?.[0];

t.test("the versions the tests use are the build's", async (t) => {
  const clients = Object.fromEntries(versionRows('clients').map(([name, , version]) => [name!, version!]));
  const envoyGateway = readFileSync(join(CLUSTER, 'envoy-gateway.version'), 'utf8').trim();
  const egCrds = join(moduleDir('github.com/envoyproxy/gateway', envoyGateway), 'charts', 'gateway-helm', 'charts', 'crds', 'crds', 'gatewayapi-crds.yaml');
  const gatewayApi = /gateway\.networking\.k8s\.io\/bundle-version: (v\S+)/.exec(readFileSync(egCrds, 'utf8'))?.[1];
  t.equal(firstVersion(readmeRow('Helm')[1]!), clients['helm']);
  t.equal(firstVersion(readmeRow('cert-manager')[1]!), clients['cert-manager']);
  t.equal(firstVersion(readmeRow('Envoy Gateway')[1]!), envoyGateway);
  t.equal(firstVersion(readmeRow('Gateway API')[1]!), gatewayApi, `Envoy Gateway ${envoyGateway} ships Gateway API ${gatewayApi}`);
  t.match(readmeRow('Gateway API')[1]!, `Envoy Gateway ${envoyGateway}`);
});

// Every optional field on: a route timeout, the ext_authz check, both JWT providers.
const config = loadConfig({ GATEWAY_API_ENABLED: 'true', GATEWAY_NAME: 'gw', GATEWAY_NAMESPACE: 'gw-system' });
const agent = parentIdentity('Agent', { name: 'a', namespace: 'ns', uid: 'u' });
const route = renderHTTPRoute(agent, { name: 'agent-a', port: 8000 }, undefined, config);
const inputs: SecurityInputs = {
  enabled: true,
  extAuthz: { name: 'pdp', namespace: 'kaos-system', port: 9191 },
  agentIssuer: { issuer: 'https://kubernetes.default.svc', jwks: { keys: [] } },
  agentAudience: 'kaos-gateway',
  user: { issuer: 'https://idp.example', jwksUri: 'https://idp.example/keys', audience: 'web' },
  networkPolicies: true,
  egress: false,
  gatewayNamespace: 'gw-system',
  operatorNamespace: 'kaos-system',
};
const policy = renderSecurityPolicy(agent, inputs);

t.test("the oldest Gateway API the chart claims is the first whose standard HTTPRoute has every field the operator writes", async (t) => {
  const { module, oldest, before } = OLDEST['Gateway API'];
  t.equal(firstVersion(readmeRow('Gateway API')[2]!), oldest, 'README states it');
  t.ok(route?.spec.rules[0]?.timeouts, 'the route has the default timeout');
  const schemaOf = (version: string): Schema => crdSchema([join(moduleDir(module, version), 'config', 'crd', 'standard', 'gateway.networking.k8s.io_httproutes.yaml')], 'HTTPRoute', 'v1');
  t.same(unknownFields(route, schemaOf(oldest)), [], `${oldest} has every field`);
  t.not(unknownFields(route, schemaOf(before)).length, 0, `${before} lacks some: ${unknownFields(route, schemaOf(before)).join(', ')}`);
});

t.test("the oldest Envoy Gateway the chart claims is the first whose SecurityPolicy has every field the operator writes", async (t) => {
  const { module, oldest, before } = OLDEST['Envoy Gateway'];
  t.equal(firstVersion(readmeRow('Envoy Gateway')[2]!), oldest, 'README states it');
  t.match(readmeRow('Envoy Gateway')[2]!, before, 'and the release before it');
  t.ok(policy?.spec.jwt?.providers.length === 2 && policy.spec.extAuth !== undefined, 'the policy has both providers and the ext_authz check');
  const schemaOf = (version: string): Schema => {
    const dir = moduleDir(module, version);
    // The chart moved its CRDs into a subchart after v1.2.
    const candidates = [join(dir, 'charts', 'gateway-helm', 'charts', 'crds', 'crds', 'generated'), join(dir, 'charts', 'gateway-helm', 'crds', 'generated')];
    return crdSchema(candidates.map((d) => join(d, 'gateway.envoyproxy.io_securitypolicies.yaml')).filter((f) => existsSync(f)), 'SecurityPolicy', 'v1alpha1');
  };
  t.same(unknownFields(policy, schemaOf(oldest)), [], `${oldest} has every field`);
  t.not(unknownFields(policy, schemaOf(before)).length, 0, `${before} lacks some: ${unknownFields(policy, schemaOf(before)).join(', ')}`);
});
