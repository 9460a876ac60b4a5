// ModelAPI (docs/api.md, "ModelAPI"): no KAOS dependencies to resolve; a Proxy's API key Secret
// or ConfigMap must exist. Render (Proxy: ConfigMap + Deployment + Service; Hosted: Deployment + Service; HTTPRoute with the gateway), apply, prune what the
// other mode left (Proxy → Hosted deletes the ConfigMap), and report the Deployment's progress.
import { renderModelAPI } from '../../render/index.ts';
import { converge } from './children.ts';
import { apiKeyDeps, configSourceDeps } from './config-source.ts';
import type { KindReconciler } from './context.ts';
import { reconciler, settleStatus } from './frame.ts';
import { configMapUnresolved, secretUnresolved } from '../status.ts';

export const reconcileModelAPI: KindReconciler = reconciler('ModelAPI', async (run) => {
  const { ctx } = run;
  const modelAPI = run.parent;
  const deps = configSourceDeps(ctx.reads, 'ModelAPI', modelAPI);
  const apiKey = apiKeyDeps(ctx.reads, modelAPI);
  if ('missing' in apiKey) {
    // Like an Agent's missing dependency: a status, children left as they are; the Secret's or
    // ConfigMap's creation wakes this ModelAPI (the kind table's apiKeySecret and apiKeyConfigMap
    // roles), so nothing is polled.
    const { kind, name } = apiKey.missing;
    await settleStatus(run, kind === 'Secret' ? secretUnresolved(name) : configMapUnresolved(name));
    return;
  }
  const rendered = renderModelAPI(modelAPI, { ...deps, ...apiKey.deps }, ctx.config);
  return converge(run, rendered);
});
