// MCPServer (docs/api.md, "MCPServer"): no dependencies to resolve. Render (Deployment + Service, HTTPRoute
// with the gateway), apply, prune, and report the Deployment's progress.
import { renderMCPServer } from '../../render/index.ts';
import { converge } from './children.ts';
import { configSourceDeps } from './config-source.ts';
import type { KindReconciler } from './context.ts';
import { reconciler } from './frame.ts';

export const reconcileMCPServer: KindReconciler = reconciler('MCPServer', async (run) => {
  const { ctx } = run;
  const mcp = run.parent;
  const deps = configSourceDeps(ctx.reads, 'MCPServer', mcp);
  const rendered = renderMCPServer(mcp, ctx.config, deps);
  await converge(run, rendered);
});
