// ModelAPI (docs/api.md, "ModelAPI"): no KAOS dependencies to resolve; a Proxy's API key Secret
// must exist. Render (Proxy: ConfigMap + Deployment + Service; Hosted: Deployment + Service; HTTPRoute with the gateway), apply, prune what the
// other mode left (Proxy → Hosted deletes the ConfigMap), and report the Deployment's progress.
import { renderModelAPI } from '../../render/index.ts';
import { converge } from './children.ts';
import { apiKeySecretDeps, configSourceDeps } from './config-source.ts';
import type { KindReconciler } from './context.ts';
import { reconciler, settleStatus } from './frame.ts';
import { secretUnresolved } from '../status.ts';

export const reconcileModelAPI: KindReconciler = reconciler('ModelAPI', async (run) => {
  const { ctx } = run;
  const modelAPI = run.parent;
  const deps = configSourceDeps(ctx.reads, 'ModelAPI', modelAPI);
  const apiKey = apiKeySecretDeps(ctx.reads, modelAPI);
  if ('missing' in apiKey) {
    // Like an Agent's missing dependency: a status, children left as they are; the Secret's
    // creation wakes this ModelAPI (the kind table's apiKeySecret role), so nothing is polled.
    await settleStatus(run, secretUnresolved(apiKey.missing));
    return;
  }
  const rendered = renderModelAPI(modelAPI, { ...deps, ...apiKey.deps }, ctx.config);
  await converge(run, rendered);
});
