// MCPServer (docs/api.md, "MCPServer" and "Newer KAOS shapes"): no dependencies to resolve but,
// for a runtime MCPServer, its entry in the runtime registry. Render (Deployment + Service,
// HTTPRoute with the gateway), apply, prune, and report the Deployment's progress.
import { RUNTIMES_CONFIG_MAP, resolveRuntime } from '../../api/mcp-runtimes.ts';
import { isRuntimeShape, renderMCPServer } from '../../render/index.ts';
import { failed } from '../status.ts';
import { converge } from './children.ts';
import { configSourceDeps } from './config-source.ts';
import type { KindReconciler } from './context.ts';
import { reconciler, settleStatus } from './frame.ts';

export const reconcileMCPServer: KindReconciler = reconciler('MCPServer', async (run) => {
  const { ctx } = run;
  const mcp = run.parent;
  if (!isRuntimeShape(mcp.spec)) {
    return converge(run, renderMCPServer(mcp, ctx.config, configSourceDeps(ctx.reads, 'MCPServer', mcp)));
  }
  const runtime = mcp.spec.runtime ?? '';
  const resolution = resolveRuntime(ctx.reads.mcpRuntimes(), runtime);
  switch (resolution.kind) {
    case 'unreadable':
      // Not the object's fault: a Warning Event (the frame's), a retry with backoff, and a wake-up
      // as soon as the registry changes. The children stay as they are meanwhile.
      throw new Error(`MCP runtime "${runtime}" cannot be resolved: ${resolution.reason}`);
    case 'unknown':
      // KAOS fails the object; editing the registry or the object wakes it.
      await settleStatus(run, failed('RuntimeNotFound', `runtime "${runtime}" not found in registry ConfigMap ${RUNTIMES_CONFIG_MAP}`, { terminal: true }));
      return;
    case 'custom':
      if (mcp.spec.container?.image === undefined || mcp.spec.container.image === '') {
        await settleStatus(run, failed('ImageRequired', `runtime "custom" requires spec.container.image`, { terminal: true }));
        return;
      }
      return converge(run, renderMCPServer(mcp, ctx.config));
    case 'entry':
      return converge(run, renderMCPServer(mcp, ctx.config, { runtime: resolution.entry }));
  }
});
