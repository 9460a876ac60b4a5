// MCPServer (docs/api.md, "MCPServer"): no dependencies to resolve. Render (Deployment + Service, HTTPRoute
// with the gateway), apply, prune, and report the Deployment's progress.
import { getIn } from '../../api/json.ts';
import { renderMCPServer, type MCPServerInput } from '../../render/index.ts';
import { converge } from './children.ts';
import { configSourceDeps } from './config-source.ts';
import type { KindReconciler } from './context.ts';
import { reconciler } from './frame.ts';

export const reconcileMCPServer: KindReconciler = reconciler('MCPServer', async (run) => {
  const { ctx, key } = run;
  // The API server checked the spec against the CRD schema: its shape is MCPServerInput's.
  const mcp = run.parent as unknown as MCPServerInput;
  const deps = configSourceDeps(ctx.reads, key.namespace, getIn(mcp.spec, 'config', 'tools', 'fromSecretKeyRef'));
  const rendered = renderMCPServer(mcp, ctx.config, deps);
  await converge(run, rendered);
});
