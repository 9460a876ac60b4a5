// Which branch of docs/api.md ("ModelAPI", "MCPServer") an object selects. The webhook refuses objects where more than
// one source is set; for such input render still picks one, in the order below, so it stays
// total and deterministic.
import type { MCPServerSpecInput, ModelAPISpecInput } from './inputs.ts';

/**
 * Where a Proxy ModelAPI's LiteLLM config comes from: a whole config (fromString, then
 * fromSecretKeyRef: `configYaml` is the user's complete config, so it beats the shorthands),
 * else one entry per model of the new shape's `models`, else the wildcard (apiBase), else a
 * single model. `none` only for input the webhook refuses.
 */
export type LiteLLMConfigSource = 'fromString' | 'fromSecretKeyRef' | 'models' | 'apiBase' | 'model' | 'none';

export function liteLLMConfigSource(spec: ModelAPISpecInput): LiteLLMConfigSource {
  const proxy = spec.proxyConfig;
  if (proxy?.configYaml?.fromString !== undefined) return 'fromString';
  if (proxy?.configYaml?.fromSecretKeyRef !== undefined) return 'fromSecretKeyRef';
  // The new shape (docs/api.md, "Newer KAOS shapes"): a config generated from the models.
  if (proxy?.models !== undefined && proxy.models.length > 0) return 'models';
  if (proxy?.apiBase !== undefined && proxy.apiBase !== '') return 'apiBase';
  if (proxy?.model !== undefined && proxy.model !== '') return 'model';
  return 'none';
}

/**
 * Where an MCPServer's tools come from, in KAOS's order. `none` (refused by the webhook)
 * renders like fromString without a source.
 */
export type MCPToolsSource = 'fromString' | 'fromSecretKeyRef' | 'fromPackage' | 'none';

// Not api/defaulting's toolsSource: render must pick a source even for input the webhook refuses
// (several set); defaulting must know whether exactly one is set.
export function mcpToolsSource(spec: MCPServerSpecInput): MCPToolsSource {
  const tools = spec.config?.tools;
  if (tools?.fromString !== undefined) return 'fromString';
  if (tools?.fromSecretKeyRef !== undefined) return 'fromSecretKeyRef';
  if (tools?.fromPackage !== undefined && tools.fromPackage !== '') return 'fromPackage';
  return 'none';
}

/** The toolchain that installs and runs a `fromPackage` server (pip or npx); spec.type is api/'s MCPRuntime. */
export type PackageToolchain = 'python' | 'node';

/** Only `node-runtime` selects Node; anything else is Python (KAOS's default). */
export function packageToolchain(spec: MCPServerSpecInput): PackageToolchain {
  return spec.type === 'node-runtime' ? 'node' : 'python';
}
