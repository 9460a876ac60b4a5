// ModelAPI (api.md §3): no dependencies to resolve. Render (Proxy: ConfigMap + Deployment +
// Service; Hosted: Deployment + Service; HTTPRoute with the gateway), apply, prune what the
// other mode left (Proxy → Hosted deletes the ConfigMap), and report the Deployment's progress.
import { getIn } from '../../api/json.ts';
import { renderModelAPI, type ModelAPIInput } from '../../render/index.ts';
import { converge } from './children.ts';
import { apiKeySecretDeps, configSourceDeps } from './config-source.ts';
import type { KindReconciler } from './context.ts';
import { reconciler, settleStatus } from './frame.ts';
import { secretUnresolved } from '../status.ts';

export const reconcileModelAPI: KindReconciler = reconciler('ModelAPI', async (run) => {
  const { ctx, key } = run;
  // The API server checked the spec against the CRD schema: its shape is ModelAPIInput's.
  const modelAPI = run.parent as unknown as ModelAPIInput;
  const deps = configSourceDeps(ctx.reads, key.namespace, getIn(modelAPI.spec, 'proxyConfig', 'configYaml', 'fromSecretKeyRef'));
  const apiKey = apiKeySecretDeps(ctx.reads, key.namespace, modelAPI.spec);
  if ('missing' in apiKey) {
    // Like an Agent's missing dependency: a status, children left as they are; the Secret's
    // creation wakes this ModelAPI (secret-index.ts), so nothing is polled.
    await settleStatus(run, secretUnresolved(apiKey.missing));
    return;
  }
  const rendered = renderModelAPI(modelAPI, { ...deps, ...apiKey.deps }, ctx.config);
  await converge(run, rendered);
});
