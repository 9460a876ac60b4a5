// Default images per kind, mode and tools source (docs/api.md, each kind's section; docs/configuration.md). The mutating webhook
// writes the result into spec.container.image; render falls back to it when that is unset,
// so both agree by construction.
import type { WorkloadKind } from '../api/kinds.ts';
import type { AgentSpecInput, MCPServerSpecInput, MemoryStoreInput, ModelAPISpecInput, RenderConfig } from './inputs.ts';
import { defaultImage } from '../api/defaulting/derived-defaults.ts';

export function defaultAgentImage(config: RenderConfig): string {
  return config.images.agent;
}

// The mapping is the webhook's (api/derived-defaults.ts), written once; render only adds a
// fallback for specs the validating webhook would refuse (no mode, no single tools source).
export function defaultModelAPIImage(spec: ModelAPISpecInput, config: RenderConfig): string {
  return defaultImage('ModelAPI', spec, config.images) ?? config.images.litellm;
}

export function defaultMCPServerImage(spec: MCPServerSpecInput, config: RenderConfig): string {
  return defaultImage('MCPServer', spec, config.images) ?? config.images.mcpServer;
}

/** The image the webhook defaults spec.container.image to. */
export function defaultImageFor(kind: 'Agent', spec: AgentSpecInput, config: RenderConfig): string;
export function defaultImageFor(kind: 'ModelAPI', spec: ModelAPISpecInput, config: RenderConfig): string;
export function defaultImageFor(kind: 'MCPServer', spec: MCPServerSpecInput, config: RenderConfig): string;
export function defaultImageFor(kind: 'MemoryStore', spec: MemoryStoreInput['spec'], config: RenderConfig): string;
export function defaultImageFor(
  kind: WorkloadKind,
  spec: AgentSpecInput | ModelAPISpecInput | MCPServerSpecInput | MemoryStoreInput['spec'],
  config: RenderConfig,
): string;
export function defaultImageFor(
  kind: WorkloadKind,
  spec: AgentSpecInput | ModelAPISpecInput | MCPServerSpecInput | MemoryStoreInput['spec'],
  config: RenderConfig,
): string {
  switch (kind) {
    case 'Agent':
      return defaultAgentImage(config);
    case 'ModelAPI':
      return defaultModelAPIImage(spec as ModelAPISpecInput, config);
    case 'MCPServer':
      return defaultMCPServerImage(spec as MCPServerSpecInput, config);
    case 'MemoryStore':
      return config.images.memoryService;
  }
}

/** spec.container.image when set, else the default. */
export function imageOf(spec: { readonly container?: { readonly image?: string } }, fallback: string): string {
  const image = spec.container?.image;
  return image !== undefined && image !== '' ? image : fallback;
}
