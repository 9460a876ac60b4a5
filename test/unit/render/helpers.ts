// Shared inputs for the render tests: operator configs and the KAOS samples (copied verbatim
// from the KAOS repository into test/fixtures/samples/).
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../../src/config/config.ts';
import type { AgentInput, MCPServerInput, ModelAPIInput, RenderConfig } from '../../../src/render/inputs.ts';
import type { Container, Deployment, EnvVar } from '../../../src/render/k8s.ts';

/** Defaults from the environment-less configuration: gateway off. */
export const config: RenderConfig = loadConfig({});

export const gatewayConfig: RenderConfig = loadConfig({
  GATEWAY_API_ENABLED: 'true',
  GATEWAY_NAME: 'kaos-gateway',
  GATEWAY_NAMESPACE: 'gateway-system',
});

interface SampleObject {
  kind: string;
  metadata: { name: string; namespace: string };
  spec: unknown;
}

/** Every document of a sample file, with a made-up uid as the API server would add. */
export function sample(file: string): SampleObject[] {
  const text = readFileSync(new URL(`../../fixtures/samples/${file}`, import.meta.url), 'utf8');
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as SampleObject | null)
    .filter((o): o is SampleObject => o !== null)
    .map((o) => ({ ...o, metadata: { ...o.metadata, uid: `uid-${o.metadata.name}` } }));
}

function find(file: string, kind: string, name: string): SampleObject {
  const found = sample(file).find((o) => o.kind === kind && o.metadata.name === name);
  if (found === undefined) throw new Error(`${kind} ${name} not in ${file}`);
  return found;
}

export function sampleAgent(file: string, name: string): AgentInput {
  return find(file, 'Agent', name) as AgentInput;
}
export function sampleModelAPI(file: string, name: string): ModelAPIInput {
  return find(file, 'ModelAPI', name) as ModelAPIInput;
}
export function sampleMCPServer(file: string, name: string): MCPServerInput {
  return find(file, 'MCPServer', name) as MCPServerInput;
}

export function mainContainer(deployment: Deployment): Container {
  const c = deployment.spec.template.spec.containers[0];
  if (c === undefined) throw new Error('no container');
  return c;
}

export function envNames(list: readonly EnvVar[] | undefined): string[] {
  return (list ?? []).map((e) => e.name);
}

export function envValue(list: readonly EnvVar[] | undefined, name: string): string | undefined {
  return (list ?? []).find((e) => e.name === name)?.value;
}
