// ModelAPI (docs/api.md, "ModelAPI"): no dependencies to resolve. Render (Proxy: ConfigMap + Deployment +
// Service; Hosted: Deployment + Service; HTTPRoute with the gateway), apply, prune what the
// other mode left (Proxy → Hosted deletes the ConfigMap), and report the Deployment's progress.
import { renderModelAPI } from '../../render/index.ts';
import { converge } from './children.ts';
import { configSourceDeps } from './config-source.ts';
import type { KindReconciler } from './context.ts';
import { reconciler } from './frame.ts';

export const reconcileModelAPI: KindReconciler = reconciler('ModelAPI', async (run) => {
  const { ctx } = run;
  const modelAPI = run.parent;
  const deps = configSourceDeps(ctx.reads, 'ModelAPI', modelAPI);
  const rendered = renderModelAPI(modelAPI, deps, ctx.config);
  await converge(run, rendered);
});
